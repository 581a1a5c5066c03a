import CofferServerStore
import CofferSync
import Foundation
import Logging

/// Sync as a person runs it (issue #33): `coffer sync register` with its first push of every item, then a new device's
/// `coffer sync login` with its verified pull, each a whole process of the `coffer` beside this bench, against a
/// server in this process on loopback. The client's CPU time is the child's; the server's is this process's while
/// the child runs, since nothing else runs here meanwhile (PostgreSQL's own backends are not in it).
struct SyncCLIBench {
    let itemCount: Int
    let runs: Int
    let logger: Logger

    static let passphrase = "orbit lantern meadow harbour bench"

    /// One command's wall time and the CPU time of each side.
    struct Sample {
        var wall: Double
        var client: Double
        var server: Double
    }

    func run(backends: [String]) async throws {
        try CLIBench.requireBinaries()
        emit(
            "Sync through the CLI: \(itemCount) tokens and a card, whole `coffer` processes against a server in this process on loopback; medians of \(runs) runs"
        )
        let template = try CLIBench.vault(tokens: itemCount)
        defer { try? FileManager.default.removeItem(atPath: template) }
        let input = template + ".passphrase"
        try (Self.passphrase + "\n").write(toFile: input, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: input) }
        for backend in backends {
            let directory = try temporaryDirectory("sync-cli")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            if backend == "sqlite" {
                let store = try SQLiteServerStore(path: directory + "/server.sqlite")
                try await store.migrate()
                try await measure("SQLite", store: store, directory: directory, template: template, input: input)
            } else {
                try await withBenchPostgres(connections: 4, logger: logger) { store, _, _ in
                    try await measure("PostgreSQL", store: store, directory: directory, template: template, input: input)
                }
            }
        }
    }

    private func measure(_ title: String, store: any ServerStore, directory: String, template: String, input: String) async throws {
        emit("  \(title)")
        try await withBenchServer(store: store, dataDirectory: directory, http: SyncClient.defaultHTTP, logger: logger) { base in
            var registers: [Sample] = []
            var logins: [Sample] = []
            let tag = UUID().uuidString.prefix(8).lowercased()
            for run in 0..<runs {
                let first = directory + "/first-\(run)"
                try FileManager.default.copyItem(atPath: template, toPath: first)
                let email = "cli-\(run)-\(tag)@bench.invalid"
                registers.append(
                    try await sample(
                        ProcessTool(
                            label: "coffer sync register", executable: CLIBench.coffer,
                            arguments: ["sync", "register", "--server", base, "--email", email], input: input,
                            environment: CLIBench.environment(first), errorOutput: directory + "/stderr")))
                let second = directory + "/second-\(run)"
                try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: true)
                logins.append(
                    try await sample(
                        ProcessTool(
                            label: "coffer sync login", executable: CLIBench.coffer,
                            arguments: ["sync", "login", "--server", base, "--email", email], input: input,
                            environment: CLIBench.environment(second), errorOutput: directory + "/stderr")))
                let pulled = try Self.itemCount(home: second)
                guard pulled == itemCount + 1 else {
                    throw BenchError("the new device holds \(pulled) items, not \(itemCount + 1)")
                }
                try? FileManager.default.removeItem(atPath: first)
                try? FileManager.default.removeItem(atPath: second)
            }
            report("    register + first push (goal ≤ 1 s)", registers)
            report("    new device: login + pull (goal ≤ 0.5 s)", logins)
        }
    }

    private func report(_ label: String, _ samples: [Sample]) {
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        row(
            label,
            String(
                format: "%.0f ms   client CPU %.0f ms   server CPU %.0f ms",
                median(samples.map(\.wall)) * 1000, median(samples.map(\.client)) * 1000, median(samples.map(\.server)) * 1000))
    }

    /// Runs `tool` on a thread of its own (it blocks in wait4) and takes this process's CPU time around it; a
    /// failure says what the command printed.
    private func sample(_ tool: ProcessTool) async throws -> Sample {
        let before = ServerBenchRun.processorSeconds()
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<(wall: Double, cpu: Double), any Error>, Never>) in
            Thread.detachNewThread { continuation.resume(returning: Result { try tool.time() }) }
        }
        switch outcome {
        case .success(let run):
            return Sample(wall: run.wall, client: run.cpu, server: ServerBenchRun.processorSeconds() - before)
        case .failure(let error):
            let said = tool.errorOutput.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
            throw BenchError("\(error): \(said.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    /// How many items `coffer list --json` lists in the vault of `home`.
    static func itemCount(home: String) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLIBench.coffer)
        process.arguments = ["list", "--json"]
        process.environment = CLIBench.environmentAdding(CLIBench.environment(home))
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let listed = try? JSONSerialization.jsonObject(with: data) as? [Any] else {
            throw BenchError("coffer list --json failed on the new device (exit \(process.terminationStatus))")
        }
        return listed.count
    }
}
