import ArgumentParser
import Foundation

struct AgentBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "`coffer code NAME` through the agent (passphrase-only vault) against the device-key path (issue 13).",
        discussion: """
            Two vaults of one token each, made with the `coffer` binary next to this one: one opened by this device's
            key, one with no device key whose passphrase the agent holds. Both are timed as whole processes (spawn to
            exit; medians of --runs) in the same run, beside `coffer --version` (process start, the floor) and the
            one-time `coffer agent start` that runs the passphrase KDF. The agent path must cost no KDF.
            """)

    @Option(help: "Runs of each command; the median is reported (3 to 201).") var runs = 21
    @OptionGroup var smoke: SmokeOption

    func validate() throws {
        guard (3...201).contains(runs) else { throw ValidationError("--runs must be 3 to 201") }
    }

    func run() throws {
        let runs = smoke.smoke ? 3 : runs
        try CLIBench.requireBinaries()
        let passphrase = "Vq7-bench-Kz9-agent-mW4-Lp2"
        let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        let device = try Self.home("device")
        let agent = try Self.home("agent")
        defer {
            _ = try? CLIBench.run(["agent", "stop"], environment: CLIBench.environment(agent))
            try? FileManager.default.removeItem(atPath: device)
            try? FileManager.default.removeItem(atPath: agent)
        }
        let deviceEnvironment = CLIBench.environment(device)
        try CLIBench.run(["init"], environment: deviceEnvironment)
        try CLIBench.run(["add", "otp", "--issuer", "Bench", "--account", "me"], input: secret + "\n", environment: deviceEnvironment)

        let agentEnvironment = CLIBench.environment(agent)
        try CLIBench.run(["init", "--passphrase"], input: "\(passphrase)\n\(passphrase)\n", environment: agentEnvironment)
        try CLIBench.run(["add", "otp", "--issuer", "Bench", "--account", "me"], input: secret + "\n", environment: agentEnvironment)
        try CLIBench.run(["slots", "remove", "device", "--yes"], input: "\(passphrase)\n", environment: agentEnvironment)
        try FileManager.default.removeItem(atPath: agent + "/.local/state/coffer/keystore")
        let start = Date()
        try CLIBench.run(["agent", "start"], input: passphrase + "\n", environment: agentEnvironment)
        let unlock = Date().timeIntervalSince(start)

        print("coffer-bench agent: medians of \(runs) whole processes, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        func median(_ tool: ProcessTool) throws -> (wall: Double, cpu: Double) {
            var walls: [Double] = [], cpus: [Double] = []
            for _ in 0..<runs {
                let run = try tool.measure()
                walls.append(run.wall)
                cpus.append(run.cpu)
            }
            return (walls.sorted()[walls.count / 2], cpus.sorted()[cpus.count / 2])
        }
        let floor = try median(ProcessTool(label: "coffer --version", executable: CLIBench.coffer, arguments: ["--version"], environment: deviceEnvironment))
        let viaDevice = try median(
            ProcessTool(label: "coffer code (device key)", executable: CLIBench.coffer, arguments: ["code", "Bench"], environment: deviceEnvironment))
        // The agent's own CPU time over its runs: a KDF per request (hundreds of milliseconds) would show here.
        let agentPID = try Self.agentPID(environment: agentEnvironment)
        let agentBefore = try Self.cpuSeconds(of: agentPID)
        let viaAgent = try median(
            ProcessTool(label: "coffer code (agent)", executable: CLIBench.coffer, arguments: ["code", "Bench"], environment: agentEnvironment))
        let agentPerRequest = (try Self.cpuSeconds(of: agentPID) - agentBefore) / Double(runs)
        report("coffer --version (process start, the floor)", milliseconds(floor.wall) + "   CPU " + milliseconds(floor.cpu))
        report("code Bench, device-key vault", milliseconds(viaDevice.wall) + "   CPU " + milliseconds(viaDevice.cpu))
        report("code Bench, passphrase-only vault via the agent", milliseconds(viaAgent.wall) + "   CPU " + milliseconds(viaAgent.cpu))
        report("  the agent's CPU per request (no KDF)", milliseconds(agentPerRequest))
        report("  agent / device key (wall)", String(format: "%.2f×", viaAgent.wall / viaDevice.wall))
        report("agent start, once (spawn + the passphrase KDF)", milliseconds(unlock))
    }

    /// The running agent's process id, from `coffer agent status --json`.
    static func agentPID(environment: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLIBench.coffer)
        process.arguments = ["agent", "status", "--json"]
        var merged = ProcessInfo.processInfo.environment
        for assignment in environment {
            let parts = assignment.split(separator: "=", maxSplits: 1)
            merged[String(parts[0])] = String(parts[1])
        }
        process.environment = merged
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard let report = try JSONSerialization.jsonObject(with: data) as? [String: Any], let pid = report["pid"] as? Int else {
            throw BenchError("the agent did not report its process id")
        }
        return Int32(pid)
    }

    /// User plus system CPU time of `pid` so far (/proc/PID/stat fields 14 and 15, in clock ticks).
    static func cpuSeconds(of pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command name, which is in parentheses and may hold spaces.
        guard let close = stat.lastIndex(of: ")") else { throw BenchError("unreadable /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw BenchError("unreadable /proc/\(pid)/stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A fresh home directory for one vault (its runtime directory too, so each has its own agent socket).
    static func home(_ name: String) throws -> String {
        let home = NSTemporaryDirectory() + "coffer-bench-\(name)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return home
    }
}
