#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a program could not be run in the foreground.
public enum ChildProcessError: Error, Equatable, Sendable, CustomStringConvertible {
    case cannotStart(program: String, errno: Int32)

    public var description: String {
        switch self {
        case .cannotStart(let program, let code): return "cannot run \(program): \(PrivateFiles.message(for: code))"
        }
    }
}

/// A program run in the foreground on this process's terminal (an editor), waited for as `system(3)` waits: the
/// terminal's Ctrl-C and Ctrl-\ go to the program, while this process ignores them and so lives on to clean up
/// after it.
public enum ChildProcess {
    /// Runs `arguments[0]` (an absolute path) with the rest as its arguments and this process's environment and
    /// descriptors; returns its exit status, or 128 + the signal that ended it, as shells report it.
    public static func runInForeground(_ arguments: [String]) throws(ChildProcessError) -> Int32 {
        precondition(!arguments.isEmpty, "a program to run")
        let previousInterrupt = signal(SIGINT, SIG_IGN)
        let previousQuit = signal(SIGQUIT, SIG_IGN)
        defer {
            signal(SIGINT, previousInterrupt)
            signal(SIGQUIT, previousQuit)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGQUIT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], nil, &attributes, argv, currentEnvironment())
        guard spawned == 0 else { throw .cannotStart(program: arguments[0], errno: spawned) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    private static func currentEnvironment() -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
        #if canImport(Darwin)
        return _NSGetEnviron().pointee
        #else
        return environ
        #endif
    }
}
