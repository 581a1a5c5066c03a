#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `coffer-full`, the whole command tree, which `coffer` becomes for everything it does not do itself
/// (``EverydayCommands``). It sits beside `coffer` in a build directory, and in `../libexec/coffer/` of an install
/// prefix (`scripts/install.sh`), out of the way of PATH.
package enum FullCommandLine {
    package static let executableName = "coffer-full"

    /// Where `coffer-full` is looked for, given the directory of the running `coffer` (symbolic links resolved).
    package static func candidates(besides directory: String) -> [String] {
        let parent = directory.lastIndex(of: "/").map { String(directory[..<$0]) } ?? directory + "/.."
        return [directory + "/" + executableName, parent + "/libexec/coffer/" + executableName]
    }

    /// Replaces this process with `coffer-full` and the same arguments; the environment, standard streams and
    /// terminal carry over, and its exit status becomes `coffer`'s. Exits with a one-line error when it cannot.
    package static func replaceProcess(arguments: [String]) -> Never {
        // Never a path relative to the working directory: a coffer-full there is anyone's.
        guard let executable = runningExecutable(), let slash = executable.lastIndex(of: "/") else {
            ErrorReporter.exit(reporting: CLIError.other(
                "cannot tell where coffer is installed (/proc/self/exe), so cannot find coffer-full", status: .unavailable, hint: nil))
        }
        let candidates = candidates(besides: String(executable[..<slash]))
        guard let full = candidates.first(where: { access($0, X_OK) == 0 }) else {
            ErrorReporter.exit(reporting: CLIError.other(
                "coffer-full, which runs this command, is not installed beside coffer (looked for \(candidates.joined(separator: " and ")))",
                status: .unavailable, hint: "build it (swift build --product coffer-full), or install both with scripts/install.sh"))
        }
        let argv = ([CommandLine.arguments.first ?? "coffer"] + arguments).map { strdup($0) } + [nil]
        execv(full, argv)
        let reason = String(cString: strerror(errno))
        ErrorReporter.exit(reporting: CLIError.other("cannot run \(full): \(reason)", status: .unavailable, hint: nil))
    }

    /// The path of this process's executable, symbolic links resolved.
    private static func runningExecutable() -> String? {
        #if canImport(Darwin)
        var size: UInt32 = 0
        _ = _NSGetExecutablePath(nil, &size)
        var path = [CChar](repeating: 0, count: Int(size) + 1)
        guard _NSGetExecutablePath(&path, &size) == 0, let resolved = realpath(path, nil) else { return nil }
        #else
        guard let resolved = realpath("/proc/self/exe", nil) else { return nil }
        #endif
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
