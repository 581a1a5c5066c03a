import CofferPlatform
import CofferReporting

/// `coffer-full`, the whole command tree, which `coffer` becomes for everything it does not do itself
/// (``EverydayCommands``). It sits beside `coffer` in a build directory, and in `PREFIX/libexec/coffer/` when
/// `coffer` is in `PREFIX/bin` (`scripts/install.sh`), out of the way of PATH.
package enum FullCommandLine {
    /// Where `coffer-full` is looked for, given the directory of the running `coffer` (symbolic links resolved).
    package static func candidates(besides directory: String) -> [String] {
        var candidates = [directory + "/coffer-full"]
        if directory.hasSuffix("/bin") {
            candidates.append(String(directory.dropLast("/bin".count)) + "/libexec/coffer/coffer-full")
        }
        return candidates
    }

    /// Replaces this process with `coffer-full` and the same arguments; the environment, standard streams and
    /// terminal carry over, and its exit status becomes `coffer`'s. Exits with a one-line error when it cannot.
    package static func replaceProcess(arguments: [String]) -> Never {
        // Never a path relative to the working directory: a coffer-full there is anyone's.
        guard let executable = Executables.current() else {
            fail("cannot tell where coffer is installed, so cannot find coffer-full")
        }
        let candidates = candidates(besides: PrivateFiles.parentDirectory(of: executable))
        guard let found = candidates.first(where: { PrivateFiles.exists($0) }) else {
            fail(
                "coffer-full, which runs this command, is not installed beside coffer (looked for \(candidates.joined(separator: " and ")))",
                hint: "build it (swift build --product coffer-full), or install both with scripts/install.sh")
        }
        guard Executables.isTrustedProgram(found) else {
            fail(
                "\(found) is not run: it, or its directory, is writable by or belongs to another user",
                hint: "reinstall with scripts/install.sh, or make both owned by you or root and writable only by the owner")
        }
        do {
            try ProcessReplacement.replace(with: found, arguments: [CommandLine.arguments.first ?? "coffer"] + arguments)
        } catch {
            fail("cannot run \(found): \(error.message)")
        }
    }

    private static func fail(_ message: String, hint: String? = nil) -> Never {
        ErrorReporter.exit(reporting: CLIError.other(message, status: .unavailable, hint: hint))
    }
}
