import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real Secret Service for one test: `scripts/keyring-session.sh` runs gnome-keyring-daemon on a private session
/// bus (dbus-run-session) with a throwaway, unlocked login keyring. Stopping it (or the test process ending, which
/// closes its stdin) takes the bus and the daemon down.
public final class SecretServiceSession: @unchecked Sendable {
    /// The bus address to give programs as `DBUS_SESSION_BUS_ADDRESS`.
    public let address: String
    private let process: Process
    private let stdin: Pipe

    /// Why no session can be had here: a tool it needs is not installed (`.ci/run` installs them all). Tests that need
    /// a Secret Service are skipped with this as their visible notice. With the tools there, a session that does not
    /// start is the test's failure, never a skip: a keyring that stopped starting must not turn those tests green.
    public static let unavailableReason: String? = {
        for tool in ["dbus-run-session", "gnome-keyring-daemon", "gdbus", "secret-tool"] where TestSupport.which(tool) == nil {
            return "\(tool) is not installed (apt-get install dbus-daemon gnome-keyring libglib2.0-bin libsecret-tools)"
        }
        return nil
    }()

    public static var available: Bool { unavailableReason == nil }

    public init() throws {
        let directory = try TestSupport.temporaryDirectory("keyring-ready")
        let ready = directory + "/address"
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [TestSupport.repositoryRoot.path + "/scripts/keyring-session.sh", ready]
        stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: ready) && process.isRunning && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        guard let address = try? String(contentsOfFile: ready, encoding: .utf8), !address.isEmpty else {
            try? stdin.fileHandleForWriting.close()
            throw SessionError("the keyring session did not come up within 20 s")
        }
        self.address = address
    }

    /// `base` with this session's bus.
    public func environment(_ base: [String: String]) -> [String: String] {
        var environment = base
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        return environment
    }

    /// Locks the login collection, as a screen lock or `Lock` from another client would.
    public func lockLogin() throws {
        let result = try TestSupport.run(
            "/usr/bin/gdbus",
            [
                "call", "--session", "-d", "org.freedesktop.secrets", "-o", "/org/freedesktop/secrets",
                "-m", "org.freedesktop.Secret.Service.Lock", "['/org/freedesktop/secrets/collection/login']",
            ],
            environment: environment(ProcessInfo.processInfo.environment))
        guard result.status == 0 else { throw SessionError("gdbus Lock failed: \(result.stderr)") }
    }

    /// Stops (`SIGSTOP`) or resumes (`SIGCONT`) the keyring daemon of this session: stopped, it keeps its name on the
    /// bus and answers nothing, as a daemon that hangs does.
    public func suspendDaemon(_ suspended: Bool) throws {
        let result = try TestSupport.run(
            "/usr/bin/gdbus",
            [
                "call", "--session", "-d", "org.freedesktop.DBus", "-o", "/org/freedesktop/DBus",
                "-m", "org.freedesktop.DBus.GetConnectionUnixProcessID", "org.freedesktop.secrets",
            ],
            environment: environment(ProcessInfo.processInfo.environment))
        // "(uint32 12345,)"
        guard result.status == 0, let pid = Int32(result.stdout.filter(\.isNumber).dropFirst("32".count)) else {
            throw SessionError("cannot find the keyring daemon's pid: \(result.stderr)")
        }
        kill(pid, suspended ? SIGSTOP : SIGCONT)
    }

    /// Runs `secret-tool` (libsecret-tools: an independent client) against this session.
    public func secretTool(_ arguments: [String]) throws -> TestSupport.ProcessResult {
        try TestSupport.run("/usr/bin/secret-tool", arguments, environment: environment(ProcessInfo.processInfo.environment))
    }

    public func stop() {
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
    }

    struct SessionError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
