import ArgumentParser
import CofferCLI

/// Second lines for argument errors: the command meant, or where an option lives.
enum ArgumentHints {
    static var commandNames: [String] { CofferCommand.configuration.subcommands.map { $0._commandName } }

    /// The hint for ArgumentParser's error `message` about `arguments`, if there is one worth giving.
    static func hint(for arguments: [String], message: String) -> String? {
        if message.lowercased().contains("unexpected argument"), let (path, nearest) = misspeltSubcommand(in: arguments) {
            return "did you mean `\((["coffer"] + path + [nearest]).joined(separator: " "))`?"
        }
        if message.hasPrefix("Unknown option"), let command = arguments.first, ["show", "code", "list"].contains(command),
            let image = arguments.first(where: { ["--png", "--svg", "--pgm"].contains($0) || $0.hasPrefix("--png=") || $0.hasPrefix("--svg=") })
        {
            let flag = image.prefix { $0 != "=" }
            return "images are written by `coffer barcode NAME \(flag) FILE`"
        }
        return nil
    }

    /// The first argument when it names no command and help is asked for (`coffer near2 --help`).
    static func unknownCommandAskingForHelp(_ arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-"), first != "help",
            arguments.contains(where: { $0 == "--help" || $0 == "-h" }), !commandNames.contains(first)
        else { return nil }
        return first
    }

    /// The first word along the command path (`coffer sync stauts`, `coffer add crad`) that names no subcommand of the
    /// command before it, as the words up to it and the subcommand it most likely means.
    static func misspeltSubcommand(in arguments: [String]) -> (path: [String], nearest: String)? {
        var subcommands = CofferCommand.configuration.subcommands
        var path: [String] = []
        for word in arguments {
            if word.hasPrefix("-") { continue }
            if subcommands.isEmpty { return nil }
            var next: [any ParsableCommand.Type]?
            for command in subcommands where command._commandName == word || command.configuration.aliases.contains(word) {
                next = command.configuration.subcommands
            }
            if let next {
                subcommands = next
                path.append(word)
                continue
            }
            let names = subcommands.map { $0._commandName }
            guard let nearest = nearest(to: word, among: names) else { return nil }
            return (path, nearest)
        }
        return nil
    }

    /// The command `word` most likely means: a unique prefix, or the nearest name within two edits.
    static func nearestCommand(to word: String) -> String? {
        nearest(to: word, among: commandNames)
    }

    /// The one of `names` that `word` most likely means: a unique prefix, or the nearest within two edits.
    static func nearest(to word: String, among names: [String]) -> String? {
        let prefixed = names.filter { $0.hasPrefix(word.lowercased()) }
        if prefixed.count == 1 { return prefixed[0] }
        let scored = names.map { ($0, distance(word.lowercased(), $0)) }.filter { $0.1 <= 2 }
        guard let best = scored.min(by: { $0.1 < $1.1 }), scored.filter({ $0.1 == best.1 }).count == 1 else { return nil }
        return best.0
    }

    /// Levenshtein distance, with a transposition counted as one edit (`lsit` → `list`).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { current[j] = min(current[j], previous2[j - 2] + 1) }
            }
            previous2 = previous
            previous = current
        }
        return previous[b.count]
    }
}
