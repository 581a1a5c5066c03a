import ArgumentParser
import CofferKit

/// Item names for shell completion (bash, zsh and fish call `coffer ---completion …` on Tab). Names come from the
/// sealed catalogue, and only when the vault opens without asking (this device's key, or the agent): completion
/// never prompts, never warns, and offers nothing for a vault behind a passphrase.
package enum ItemCompletion {
    /// Completion for an item argument, of `kind` when given.
    package static func names(_ kind: ItemKind? = nil) -> CompletionKind {
        .custom { words, _, prefix in candidates(words: words, prefix: prefix, kind: kind) }
    }

    /// The names of `kind` starting with `prefix` (any case) in the vault that `words` (the command line) choose.
    package static func candidates(words: [String], prefix: String, kind: ItemKind?) -> [String] {
        let selection = VaultSelection(vault: value(of: "--vault", in: words), keystore: value(of: "--keystore", in: words))
        guard (try? selection.validate()) != nil, let vault = selection.openWithoutAsking() else { return [] }
        let names: [String]
        if let coffer = vault as? Coffer {
            names = (try? coffer.itemNames(kind: kind)) ?? []
        } else {
            names = (try? vault.items(kind: kind) { $0.content.name }) ?? []
        }
        let wanted = unquoted(prefix).lowercased()
        var seen = Set<String>()
        return names.filter { $0.lowercased().hasPrefix(wanted) && seen.insert($0).inserted }
    }

    /// The value given to `option` on the command line (`--vault DIR` or `--vault=DIR`), without shell quotes.
    package static func value(of option: String, in words: [String]) -> String? {
        for (index, word) in words.enumerated() {
            if word == option, index + 1 < words.count { return unquoted(words[index + 1]) }
            if word.hasPrefix(option + "=") { return unquoted(String(word.dropFirst(option.count + 1))) }
        }
        return nil
    }

    /// A shell word as typed (shells pass words verbatim), with its quotes and backslashes taken away.
    package static func unquoted(_ word: String) -> String {
        var result = ""
        var quote: Character?
        var escaped = false
        for character in word {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\", quote != "'" {
                escaped = true
            } else if let open = quote {
                if character == open { quote = nil } else { result.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
            } else {
                result.append(character)
            }
        }
        return result
    }
}
