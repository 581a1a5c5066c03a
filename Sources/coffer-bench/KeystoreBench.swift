import ArgumentParser
import Foundation

/// What a key store costs a whole `coffer code NAME`: the same one-token vault with its device key in the file store
/// and sealed by a TPM (issue 30's goal: the TPM ≤ 50 ms above the file store). The TPM is `COFFER_TPM_TCTI`'s, else
/// a swtpm this bench starts on a loopback port (Debian: swtpm) — a software TPM: a real chip is slower, and its
/// figure is the one to quote for a machine.
struct KeystoreBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keystore",
        abstract: "`coffer code NAME` with the device key in the file store and sealed by a TPM (swtpm unless COFFER_TPM_TCTI names one).")

    @Option(help: "Runs of each command; the median is reported (3 to 201).") var runs = 21
    @OptionGroup var smoke: SmokeOption

    func validate() throws {
        guard (3...201).contains(runs) else { throw ValidationError("--runs must be 3 to 201") }
    }

    func run() async throws {
        try CLIBench.requireBinaries()
        let runs = smoke.smoke ? 3 : runs
        let state = try AgentBenchCommand.home("swtpm")
        defer { try? FileManager.default.removeItem(atPath: state) }
        let tcti: String
        var simulator: Int32?
        if let configured = ProcessInfo.processInfo.environment["COFFER_TPM_TCTI"], !configured.isEmpty {
            tcti = configured
        } else {
            let port = Int.random(in: 20_000..<30_000)
            let status = try await PGBench.spawn(
                "/usr/bin/env",
                arguments: [
                    "swtpm", "socket", "--tpm2", "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1", "--ctrl",
                    "type=tcp,port=\(port + 1),bindaddr=127.0.0.1", "--tpmstate", "dir=\(state)", "--flags",
                    "not-need-init,startup-clear", "--pid", "file=\(state)/swtpm.pid", "--daemon",
                ],
                output: state + "/swtpm.log")
            guard status == 0,
                let pid = Int32(
                    (try? String(contentsOfFile: state + "/swtpm.pid", encoding: .utf8))?
                        .trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
            else { throw BenchError("swtpm did not start (Debian: apt-get install swtpm), or set COFFER_TPM_TCTI") }
            simulator = pid
            tcti = "swtpm:host=127.0.0.1,port=\(port)"
        }
        // The simulator holds no state worth an orderly shutdown: its directory goes with it.
        defer { if let simulator { kill(simulator, SIGKILL) } }

        let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        var environments: [String: [String]] = [:]
        for store in ["file", "tpm2"] {
            let home = try AgentBenchCommand.home(store)
            let environment = CLIBench.environment(home) + ["COFFER_TPM_TCTI=\(tcti)"]
            try CLIBench.run(["init", "--keystore", store], environment: environment)
            try CLIBench.run(["add", "otp", "--issuer", "Bench", "--account", "me"], input: secret + "\n", environment: environment)
            environments[store] = environment
        }
        defer { for environment in environments.values { try? FileManager.default.removeItem(atPath: String(environment[0].dropFirst(5))) } }

        print("coffer-bench keystore: medians of \(runs) whole processes, TPM at \(tcti), \(ProcessInfo.processInfo.activeProcessorCount) cores")
        var medians: [String: (wall: Double, cpu: Double)] = [:]
        var walls: [String: [Double]] = [:]
        var cpus: [String: [Double]] = [:]
        // Interleaved, so that load from elsewhere falls on both alike.
        for _ in 0..<runs {
            for store in ["file", "tpm2"] {
                let run = try ProcessTool(
                    label: "coffer code (\(store))", executable: CLIBench.coffer, arguments: ["code", "Bench"],
                    environment: environments[store] ?? []
                ).measure()
                walls[store, default: []].append(run.wall)
                cpus[store, default: []].append(run.cpu)
            }
        }
        for store in ["file", "tpm2"] {
            medians[store] = (walls[store]!.sorted()[runs / 2], cpus[store]!.sorted()[runs / 2])
        }
        let file = medians["file"]!, tpm = medians["tpm2"]!
        report("coffer code Bench, device key in the file store", milliseconds(file.wall) + "   CPU " + milliseconds(file.cpu))
        report("coffer code Bench, device key sealed by the TPM", milliseconds(tpm.wall) + "   CPU " + milliseconds(tpm.cpu))
        report("  TPM - file (goal ≤ 50 ms)", milliseconds(tpm.wall - file.wall))
    }
}
