import ArgumentParser
import CofferKit
import CofferLogging
import CofferPlatform
import CofferReporting
import Foundation

/// What `coffer` does itself, in a process that links only the vault and the everyday commands: `code`, `show`,
/// `list` and `use` in their common forms, `barcode --symbology` from standard input to an image file, `--version`,
/// and the clipboard restorer `--clip` starts. Everything else, help and every error in the arguments included, is
/// `coffer-full`'s, the whole command tree with sync, places and the agent, which `coffer` becomes
/// (`FullCommandLine.replaceProcess`). The split is for speed alone: starting the full executable (its size,
/// relocations and protocol conformances) costs more than a lookup's work.
package enum EverydayCommands {
    /// The version `coffer --version` prints, and the full command tree's (every Coffer program's).
    package static let version = CofferVersion.current

    /// Runs what `arguments` (without the program name) ask when this process can do it alone, and exits; returns
    /// when they are for the full command tree.
    package static func runIfEveryday(_ arguments: [String]) {
        AllocatorTuning.reuseLargeBlocks()
        // Before anything else: a plain stdin-to-image run needs neither the vault nor logging.
        if let barcode = BarcodeFastPath(arguments: arguments[...]) { barcode.run() }
        // The same line ArgumentParser prints, without building the command tree first.
        if arguments == ["--version"] {
            print(version)
            exit(0)
        }
        guard let work = everydayWork(arguments) else { return }
        CofferLog.bootstrap(environment: processEnvironment)
        do {
            try work.run()
            exit(0)
        } catch {
            ErrorReporter.exit(reporting: error)
        }
    }

    /// The commands people run many times a day, parsed on their own: building the whole command tree (every
    /// command's options, by reflection) costs more than such a command's work. Anything these arguments do not
    /// parse into cleanly, help included, goes to the root parser (`coffer-full`), so messages and exit codes stay its
    /// own; so do photo requests (`show CARD --photo SIDE --out FILE`).
    package static func everydayWork(_ arguments: [String]) -> (any EverydayWork)? {
        guard let name = arguments.first, !arguments.contains(where: { $0 == "-h" || $0 == "--help" || $0 == "--version" }) else {
            return nil
        }
        let rest = Array(arguments.dropFirst())
        if let plain = plainForm(name, rest) { return plain }
        switch name {
        case "code": return (try? Code.parse(rest))?.work
        case "show": return (try? Show.parse(rest)).flatMap { $0.photoOutput.isAsked ? nil : $0.work }
        case "list": return (try? List.parse(rest))?.work
        case "use": return (try? Use.parse(rest))?.work
        // Started by `--clip` from this very program: clearing the clipboard must not depend on coffer-full.
        case "clipboard-restore": return (try? ClipboardRestore.parse(rest))?.work
        default: return nil
        }
    }

    /// The commonest forms, a command and at most one name without options, made without the parser: making even
    /// one command's option wrappers costs about as much as the lookup itself. Every value is what parsing these
    /// arguments gives; anything else (an option, a name starting with "-") is left to the parser. `CLITests` runs
    /// these forms throughout, and `PlainFormTests` checks them against it.
    package static func plainForm(_ name: String, _ rest: [String]) -> (any EverydayWork)? {
        guard rest.count <= 1, !(rest.first?.hasPrefix("-") ?? false) else { return nil }
        let query = rest.first
        let vault = VaultSelection()
        guard (try? vault.validate()) != nil else { return nil }
        switch (name, query) {
        case ("code", _): return Code.Work(vault: vault, query: query)
        case ("show", let query?): return Show.Work(vault: vault, query: query)
        case ("list", let query): return List.Work(vault: vault, words: query.map { [$0] } ?? [])
        case ("use", let query?): return Use.Work(vault: vault, query: query)
        default: return nil
        }
    }
}

/// What an everyday command does, in plain values: its parsed command makes one (`work`), and so does
/// ``EverydayCommands/plainForm(_:_:)`` without the parser.
package protocol EverydayWork: Equatable {
    func run() throws
}
