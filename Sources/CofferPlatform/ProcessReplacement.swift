#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place a Coffer program becomes another: `coffer` becoming `coffer-full`, `coffer run` becoming the
/// program it runs, the agent restarting itself with different allocator settings.
public enum ProcessReplacement {
    /// Why a replacement did not happen: the system's error number and its message.
    public struct Failure: Error, Sendable {
        public let errno: Int32
        public var message: String { String(cString: strerror(errno)) }
        /// No such program (or a path through something that is not a directory): shells answer 127 for it.
        public var noSuchProgram: Bool { errno == ENOENT || errno == ENOTDIR }
    }

    /// Replaces this process with `program` (a path, or a name looked up in `PATH`), run with `arguments` (the
    /// first is its name as it sees it) and this process's environment plus `adding`. Returns only by throwing: on
    /// success the program takes over the process, its standard streams and its exit status.
    public static func replace(with program: String, arguments: [String], adding environment: [String: String] = [:]) throws(Failure) -> Never {
        for (name, value) in environment { setenv(name, value, 1) }
        let argv = arguments.map { strdup($0) } + [nil]
        if program.contains("/") {
            execv(program, argv)
        } else {
            execvp(program, argv)
        }
        let code = errno
        argv.forEach { free($0) }
        throw Failure(errno: code)
    }
}
