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

    func validate() throws {
        guard (3...201).contains(runs) else { throw ValidationError("--runs must be 3 to 201") }
    }

    func run() throws {
        guard FileManager.default.isExecutableFile(atPath: CLIBench.coffer) else {
            throw BenchError("no coffer binary at \(CLIBench.coffer): build it with `swift build -c release --product coffer`")
        }
        let passphrase = "bench agent passphrase"
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
        try CLIBench.run(["slots", "remove", "device"], input: "\(passphrase)\n", environment: agentEnvironment)
        try FileManager.default.removeItem(atPath: agent + "/data/coffer/keystore")
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
        let viaDevice = try median(ProcessTool(label: "coffer code (device key)", executable: CLIBench.coffer, arguments: ["code", "Bench"], environment: deviceEnvironment))
        let viaAgent = try median(ProcessTool(label: "coffer code (agent)", executable: CLIBench.coffer, arguments: ["code", "Bench"], environment: agentEnvironment))
        report("coffer --version (process start, the floor)", milliseconds(floor.wall) + "   CPU " + milliseconds(floor.cpu))
        report("coffer code Bench, device-key vault", milliseconds(viaDevice.wall) + "   CPU " + milliseconds(viaDevice.cpu))
        report("coffer code Bench, passphrase-only vault held by the agent", milliseconds(viaAgent.wall) + "   CPU " + milliseconds(viaAgent.cpu))
        report("  agent / device key", String(format: "%.2f×", viaAgent.wall / viaDevice.wall))
        report("coffer agent start (once: spawns the agent, runs the KDF)", milliseconds(unlock))
    }

    /// A fresh home directory for one vault (its runtime directory too, so each has its own agent socket).
    static func home(_ name: String) throws -> String {
        let home = NSTemporaryDirectory() + "coffer-bench-\(name)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return home
    }
}
