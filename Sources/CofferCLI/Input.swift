import ArgumentParser
import CofferKeystore
import CofferKit
import CofferPlatform
import CofferReporting
import CofferVault
import Foundation

/// Secrets come from the terminal without echo, or from standard input (one line per secret, in the order the
/// command asks for them); never from arguments. Standard input is handled as bytes: lines end at LF, one CR before
/// it is dropped, and whatever follows the lines a command asked for is kept byte for byte.
package final class SecretInput: @unchecked Sendable {
    package static let shared = SecretInput()
    package static let standardInputLimit = 1 << 20

    // Standard input not consumed yet, read once on first use; only touched from the main thread.
    private var buffer: ArraySlice<UInt8>?

    /// Whether secrets are prompted for on a terminal.
    package var interactive: Bool { Terminal.standardInputIsTTY }

    /// One secret line. On a terminal, prompts (twice when `confirm`); otherwise takes the next line of stdin.
    /// `check` runs on the first entry, before anything else is asked, so a PIN of the wrong shape is refused at once.
    package func secret(_ what: String, confirm: Bool = false, check: (String) throws -> Void = { _ in }) throws -> String {
        if interactive {
            // End of input at the prompt (Ctrl-D) is the user giving up, not a missing secret.
            guard let first = Terminal.readSecret(prompt: "\(what): ") else { throw CLIError.cancelled }
            try check(first)
            if confirm {
                guard let second = Terminal.readSecret(prompt: "Repeat \(Self.lowercasedFirst(what)): ") else { throw CLIError.cancelled }
                guard first == second else { throw CLIError.usage("the two entries do not match") }
            }
            return first
        }
        guard let line = try nextLine() else { throw CLIError.noInput(what) }
        guard let text = String(validating: line, as: UTF8.self) else {
            throw CLIError.usage("\(Self.lowercasedFirst(what)) is not valid UTF-8")
        }
        try check(text)
        return text
    }

    /// One line that is not a secret: typed with echo on a terminal (so the user sees it), else the next line of stdin.
    package func visibleLine(_ what: String) throws -> String {
        if interactive {
            guard let typed = Terminal.readVisible(prompt: "\(what): ") else { throw CLIError.cancelled }
            return typed
        }
        guard let line = try nextLine() else { throw CLIError.noInput(what) }
        guard let text = String(validating: line, as: UTF8.self) else {
            throw CLIError.usage("\(Self.lowercasedFirst(what)) is not valid UTF-8")
        }
        return text
    }

    /// "New PIN" → "new PIN": the first letter only, so that acronyms keep their case.
    package static func lowercasedFirst(_ text: String) -> String {
        guard let first = text.first, !(text.dropFirst().first?.isUppercase ?? false) else { return text }
        return first.lowercased() + text.dropFirst()
    }

    /// Goes on only with the user's yes: `--yes` (`confirmed`), or "y" at a terminal. Without a terminal the
    /// command stops with a usage error naming `--yes`, so a script never destroys something by default.
    package func requireConfirmation(_ question: String, confirmed: Bool, consequence: String) throws {
        if confirmed { return }
        guard interactive else { throw CLIError.usage("\(consequence); pass --yes to confirm") }
        // No, or Ctrl-D.
        guard Terminal.confirm(question) == true else { throw CLIError.cancelled }
    }

    /// Everything left on standard input as text (note text).
    package func remainingText(_ what: String) throws -> String {
        if interactive {
            Terminal.writeError("Enter \(what), then Ctrl-D:\n")
        }
        let bytes = try remainingBytes()
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIError.usage("\(what) is not valid UTF-8")
        }
        return text
    }

    /// Everything left on standard input, byte for byte (messages to sign, binary payloads).
    package func remainingBytes() throws -> [UInt8] {
        let rest = try pending()
        buffer = []
        return Array(rest)
    }

    private func nextLine() throws -> ArraySlice<UInt8>? {
        let rest = try pending()
        guard !rest.isEmpty else { return nil }
        var line: ArraySlice<UInt8>
        if let newline = rest.firstIndex(of: 0x0A) {
            line = rest[rest.startIndex..<newline]
            buffer = rest[(newline + 1)...]
        } else {
            line = rest
            buffer = []
        }
        if line.last == 0x0D { line = line.dropLast() }
        return line
    }

    private func pending() throws -> ArraySlice<UInt8> {
        if let buffer { return buffer }
        var bytes: [UInt8] = []
        if interactive {
            bytes = try CLIError.reading { () throws(StandardInputError) in try Terminal.readStandardInput(limit: Self.standardInputLimit, typed: true) }
        } else {
            while let chunk = try FileHandle.standardInput.read(upToCount: 65_536), !chunk.isEmpty {
                bytes += chunk
                if bytes.count > Self.standardInputLimit { throw CLIError.usage("standard input is larger than 1 MiB") }
            }
        }
        buffer = bytes[...]
        return bytes[...]
    }
}

/// `--allow-weak-passphrase`, and the reading of a new passphrase: asked twice on a terminal, its strength shown after
/// the first entry, refused below `PassphraseStrength.floorBits` unless the flag insists.
package struct NewPassphraseOptions: ParsableArguments {
    package init() {}

    @Flag(
        name: .customLong("allow-weak-passphrase"),
        help: "Keep a new passphrase even when it is easy to guess (below about \(PassphraseStrength.floorBits) bits).")
    package var allowWeak = false

    package func read(_ what: String = "New passphrase") throws -> String {
        try SecretInput.shared.secret(what, confirm: true) { typed in
            try Self.check(PassphraseStrength(estimating: typed), allowWeak: allowWeak)
        }
    }

    package static func check(_ strength: PassphraseStrength, allowWeak: Bool) throws {
        let reason = strength.weakness.map { ": \($0.rawValue)" } ?? ""
        switch strength.rating {
        case .tooWeak where !allowWeak:
            throw CLIError.other(
                "this passphrase is too easy to guess, \(strength.description)\(reason); at least \(PassphraseStrength.floorBits) bits are needed",
                status: .badData, hint: "four or more random words make a strong one; --allow-weak-passphrase keeps this one anyway")
        case .tooWeak, .weak:
            Output.warning("this passphrase is weak, \(strength.description)\(reason); four or more random words make a strong one")
        case .fair, .strong:
            if SecretInput.shared.interactive { Output.note("Passphrase strength: \(strength.description)") }
        }
    }
}
