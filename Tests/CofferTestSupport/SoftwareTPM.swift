import Foundation

/// A TPM 2.0 simulator (swtpm, Debian's `swtpm`) of a test's own: its own state directory and ports, started ready
/// for use (`startup-clear`), with its dictionary-attack counter reset. `tcti` is what `COFFER_TPM_TCTI` takes.
///
/// swtpm serves one connection at a time, so each test that needs a TPM of its own starts one. `stop()` shuts the
/// TPM down in order first: killed without `TPM2_Shutdown` after an authorisation, a TPM counts one dictionary-attack
/// failure at its next start.
public final class SoftwareTPM: @unchecked Sendable {
    public let stateDirectory: String
    public private(set) var port: Int
    public var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }
    /// The tpm2-tools TCTI environment for this TPM.
    public var toolsEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["TPM2TOOLS_TCTI": tcti, "TSS2_LOG": "all+NONE"]) { $1 }
    }

    /// Why no simulator can run here (a tool is missing; `.ci/run` installs them), or nil.
    public static let unavailableReason: String? = {
        for tool in ["swtpm", "tpm2_shutdown", "tpm2_dictionarylockout"] where TestSupport.which(tool) == nil {
            return "\(tool) is not installed (apt-get install swtpm tpm2-tools libtss2-dev)"
        }
        return nil
    }()

    /// A fresh TPM, or one on the state of `stateDirectory` (a TPM restarted, or a clone of a TPM's state).
    public init(stateDirectory: String? = nil) throws {
        self.stateDirectory = try stateDirectory ?? TestSupport.temporaryDirectory("swtpm")
        port = 0
        try start()
    }

    deinit { stop() }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module leaves out.
    private static let closeFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
            fatalError("this C library has no posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later has)")
        }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Starts the simulator on fresh ports (after `stop()`, the same TPM again: its seeds and counters are kept).
    public func start() throws {
        for _ in 0..<5 {
            port = TestSupport.unusedPort()
            // posix_spawn and waitpid rather than Foundation's Process, which (with GLib's child watch in the same
            // process, from libsecret) now and then never saw the daemonising parent exit. Output goes to /dev/null:
            // the daemon keeps whatever it is given open.
            let arguments = [
                "/usr/bin/env", "swtpm", "socket", "--tpm2", "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
                "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1", "--tpmstate", "dir=\(stateDirectory)",
                "--flags", "not-need-init,startup-clear", "--pid", "file=\(stateDirectory)/swtpm.pid", "--daemon",
            ]
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            for descriptor: Int32 in 0...2 {
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
            }
            // Nothing else of this process: libtss2's socket to another test's swtpm has no close-on-exec, and a
            // daemon that inherited it kept that connection open for good, so that swtpm, which serves one client
            // at a time, never answered its own test again (the test hung in Esys_Load).
            guard Self.closeFrom(&actions, 3) == 0 else { throw TestSupport.OracleError.failed("posix_spawn_file_actions_addclosefrom_np failed") }
            let argv = arguments.map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid: pid_t = 0
            guard posix_spawn(&pid, "/usr/bin/env", &actions, nil, argv, environ) == 0 else {
                throw TestSupport.OracleError.failed("swtpm could not be started")
            }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            if status == 0 {
                try tool("tpm2_dictionarylockout", ["-c"])
                return
            }
        }
        throw TestSupport.OracleError.failed("swtpm did not start")
    }

    /// Shuts the TPM down in order and stops the simulator.
    public func stop() {
        guard
            let pid = try? String(contentsOfFile: stateDirectory + "/swtpm.pid", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines), let number = Int32(pid)
        else { return }
        _ = try? tool("tpm2_shutdown", ["-c"])
        // SIGKILL: the daemon inherits the spawning thread's signal mask (the pool's, NIO's), where SIGTERM may be
        // blocked; after TPM2_Shutdown the kill costs no dictionary-attack try and loses no state.
        kill(number, SIGKILL)
        for _ in 0..<100 where kill(number, 0) == 0 { usleep(10_000) }
        try? FileManager.default.removeItem(atPath: stateDirectory + "/swtpm.pid")
    }

    /// Runs a tpm2-tools command against this TPM, `input` on its standard input (where `-p file:-` reads a PIN, which
    /// never goes on a command line); throws with its message when it fails. Unless `flush` is false,
    /// the transient objects it left loaded are flushed after it (swtpm has no resource manager and room for three;
    /// the tools' saved `.ctx` files still load).
    @discardableResult
    public func tool(_ name: String, _ arguments: [String], input: String = "", flush: Bool = true) throws -> String {
        let result = try TestSupport.run("/usr/bin/env", [name] + arguments, input: Array(input.utf8), environment: toolsEnvironment)
        if flush { _ = try? TestSupport.run("/usr/bin/env", ["tpm2_flushcontext", "-t"], environment: toolsEnvironment) }
        guard result.status == 0 else {
            throw TestSupport.OracleError.failed("\(name) \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        return result.stdout
    }
}
