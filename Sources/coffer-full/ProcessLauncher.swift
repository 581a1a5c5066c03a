import CofferCLI
import CofferPlatform
import CofferReporting

/// The CLI's one place for starting programs.
enum ProcessLauncher {
    /// Replaces this process with `program` (looked up in PATH), adding `extraEnvironment` to the inherited
    /// environment. Only returns by throwing: on success the program takes over, its exit status becomes ours, and
    /// the secrets exist only in its environment, never in an argument list or our output.
    static func replaceProcess(program: String, arguments: [String], extraEnvironment: [String: String]) throws -> Never {
        do {
            try ProcessReplacement.replace(with: program, arguments: arguments, adding: extraEnvironment)
        } catch {
            // As shells do: 127 when there is no such program, 126 when it cannot be executed.
            throw CLIError.launch("cannot run \(program): \(error.message)", status: error.noSuchProgram ? .noProgram : .cannotExecute)
        }
    }
}
