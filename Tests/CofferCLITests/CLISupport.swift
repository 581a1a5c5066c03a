import CofferTestSupport
import Foundation

/// Drives the real `coffer` binary in a private data directory, as a user would.
struct CLI {
    let home: String
    let environment: [String: String]

    /// The `coffer` executable built next to this test bundle.
    static let binary = ProcessInfo.processInfo.environment["COFFER_BIN"] ?? TestSupport.builtExecutable("coffer")

    init(extraEnvironment: [String: String] = [:]) throws {
        home = try TestSupport.temporaryDirectory("cli")
        var environment = [
            "HOME": home, "XDG_DATA_HOME": home + "/data", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "NO_COLOR": "1",
            // Never the machine's own TPM: `auto` would take it on a machine that has one, and not in CI.
            "COFFER_TPM_TCTI": "device:/nonexistent/tpmrm0",
        ]
        environment.merge(extraEnvironment) { $1 }
        self.environment = environment
    }

    var vaultDirectory: String { home + "/data/coffer/vault" }
    var vaultFile: String { vaultDirectory + "/vault.sqlite" }
    /// The file key store's directory (`$XDG_STATE_HOME/coffer/keystore`, by default under `$HOME`).
    var keystoreDirectory: String { home + "/.local/state/coffer/keystore" }

    @discardableResult
    func run(_ arguments: [String], input: String = "") throws -> TestSupport.ProcessResult {
        try TestSupport.run(Self.binary, arguments, input: Array(input.utf8), environment: environment)
    }

    /// Runs and requires success.
    @discardableResult
    func ok(_ arguments: [String], input: String = "") throws -> TestSupport.ProcessResult {
        let result = try run(arguments, input: input)
        guard result.status == 0 else {
            throw CLIFailure(arguments: arguments, status: result.status, stderr: result.stderr)
        }
        return result
    }

    /// Starts `coffer` without waiting (for kill tests).
    func start(_ arguments: [String], input: String = "") throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        process.environment = environment
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        return (process, stdout)
    }
}

struct CLIFailure: Error, CustomStringConvertible {
    let arguments: [String]
    let status: Int32
    let stderr: String

    var description: String { "coffer \(arguments.joined(separator: " ")) exited \(status): \(stderr)" }
}
