import ArgumentParser
import CofferReporting
import CofferTestSupport
import Foundation
import Testing

@testable import CofferCLI
@testable import coffer_full

/// The walk-through's findings (issue 14, point 5): what a person meets at the terminal, driven through a
/// pseudo-terminal where a terminal matters.
@Suite("Kind at every step", .offCooperativePool)
struct KindnessTests {
    // MARK: - Passphrases

    @Test("a new passphrase that is easy to guess is refused in one line, nothing is created; --allow-weak-passphrase keeps it with a warning")
    func weakPassphrase() throws {
        let cli = try CLI()
        let refused = try cli.run(["init", "--passphrase"], input: "password1\n")
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("coffer: error: this passphrase is too easy to guess, about"))
        #expect(refused.stderr.contains("one of the most common passwords"))
        #expect(refused.stderr.contains("--allow-weak-passphrase"))
        #expect(!refused.stderr.contains("password1"))
        #expect(!FileManager.default.fileExists(atPath: cli.vaultFile))

        let kept = try cli.ok(["init", "--passphrase", "--allow-weak-passphrase"], input: "password1\n")
        #expect(kept.stderr.contains("coffer: warning: this passphrase is weak, about"))
        try cli.ok(["add", "credential", "Mail"], input: "hunter2\n")

        // Changing to a weak one is refused the same way; the vault keeps its passphrase.
        #expect(try cli.run(["passphrase", "change"], input: "password1\nqwerty\n").status == 65)
        try cli.ok(["passphrase", "change"], input: "password1\nvelvet thistle copper orbit\n")
    }

    @Test("at a terminal the strength is shown after the first entry, before the passphrase is asked again")
    func strengthShown() throws {
        let cli = try CLI()
        let session = try SyncCLITests.atTerminal(
            cli, ["init", "--passphrase"],
            answers: [("New passphrase:", "velvet thistle copper orbit"), ("Repeat new passphrase:", "velvet thistle copper orbit")])
        #expect(session.status == 0, "\(session.transcript)")
        let strength = try #require(session.transcript.range(of: "Passphrase strength: about"))
        let repeatPrompt = try #require(session.transcript.range(of: "Repeat new passphrase:"))
        #expect(strength.lowerBound < repeatPrompt.lowerBound)
        #expect(!session.transcript.contains("velvet"))

        let weak = try SyncCLITests.atTerminal(try CLI(), ["init", "--passphrase"], answers: [("New passphrase:", "abcabcabc")])
        #expect(weak.status == 65)
        #expect(weak.transcript.contains("repeats characters or a pattern"))
        #expect(!weak.transcript.contains("Repeat new passphrase:"))
    }

    // MARK: - Cards and tokens at the prompt

    @Test("a card's payload is typed in view and shown back as it will be drawn; no keeps nothing, yes adds it")
    func cardShownBack() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        let declined = try SyncCLITests.atTerminal(
            cli, ["add", "card", "Costco", "--symbology", "ean13"],
            answers: [("Barcode payload:", "400638133393"), ("Add this card? [Y/n]", "n")])
        #expect(declined.status == 1)
        // Echoed while typed, then shown with the check digit the symbol carries.
        #expect(declined.transcript.contains("Barcode payload: 400638133393"))
        #expect(declined.transcript.contains("Costco: ean13 4006381333931"))
        #expect(declined.transcript.contains("cancelled; nothing changed"))
        #expect(try cli.ok(["list", "--json"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")

        let accepted = try SyncCLITests.atTerminal(
            cli, ["add", "card", "Gym", "--symbology", "none"], answers: [("Card number:", "G-1234"), ("Add this card? [Y/n]", "")])
        #expect(accepted.status == 0, "\(accepted.transcript)")
        #expect(accepted.transcript.contains("Gym: no barcode, number G-1234"))
        #expect(try cli.ok(["show", "Gym"]).stdout.contains("G-1234"))
    }

    @Test("add otp at a terminal takes a bare base32 secret, then asks issuer and account; the code matches oathtool")
    func bareSecret() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        let secret = "JBSWY3DPEHPK3PXP"
        let session = try SyncCLITests.atTerminal(
            cli, ["add", "otp", "--type", "hotp"],
            answers: [("otpauth:// URI or base32 secret:", secret), ("Issuer (e.g. GitHub):", "GitHub"), ("Account (e.g. you@example.org):", "alice")])
        #expect(session.status == 0, "\(session.transcript)")
        #expect(!session.transcript.contains(secret))
        let code = try cli.ok(["code", "GitHub (alice)"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let oathtool = try TestSupport.run("/usr/bin/env", ["oathtool", "--hotp", "-b", "-c", "0", secret])
        #expect(code == String(decoding: oathtool.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))

        // A bad character is named by position and kind before anything else is asked.
        let bad = try SyncCLITests.atTerminal(cli, ["add", "otp"], answers: [("otpauth:// URI or base32 secret:", "JBSWY3DPEHPK3PX1")])
        #expect(bad.status == 65)
        #expect(bad.transcript.contains("character 16 is a digit base32 does not use"))
        #expect(!bad.transcript.contains("Issuer"))

        // From a script, a bare secret needs --account.
        let piped = try cli.run(["add", "otp"], input: secret + "\n")
        #expect(piped.status == 64)
        #expect(piped.stderr.contains("give --account"))
    }

    // MARK: - Clipboard

    /// Stand-ins for wl-copy and wl-paste that keep the clipboard in a file.
    static func fakeClipboard() throws -> (environment: [String: String], file: String) {
        let directory = try TestSupport.temporaryDirectory("clip")
        let file = directory + "/clipboard"
        let copy = "#!/bin/sh\nif [ \"$1\" = \"--clear\" ]; then : > \"$CLIP_FILE\"; else cat > \"$CLIP_FILE\"; fi\n"
        let paste = "#!/bin/sh\n[ -s \"$CLIP_FILE\" ] || exit 1\ncat \"$CLIP_FILE\"\n"
        for (name, script) in [("wl-copy", copy), ("wl-paste", paste)] {
            let path = directory + "/" + name
            try script.write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
        try "what was there before".write(toFile: file, atomically: true, encoding: .utf8)
        return (["PATH": directory + ":/usr/bin:/bin", "WAYLAND_DISPLAY": "wayland-test", "CLIP_FILE": file, "COFFER_CLIP_TIME": "1"], file)
    }

    static func waitFor(_ file: String, toHold expected: String) -> Bool {
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if (try? String(contentsOfFile: file, encoding: .utf8)) == expected { return true }
            Thread.sleep(forTimeInterval: 0.2)
        }
        return false
    }

    @Test("--clip copies a code or a credential, prints nothing on stdout, and puts back the earlier clipboard after the time")
    func clip() throws {
        let (environment, file) = try Self.fakeClipboard()
        let cli = try CLI(extraEnvironment: environment)
        try cli.ok(["init"])
        try cli.ok(["add", "otp", "--issuer", "GitHub", "--account", "alice", "--type", "hotp"], input: "JBSWY3DPEHPK3PXP\n")
        let copied = try cli.ok(["code", "git", "--clip"])
        #expect(copied.stdout.isEmpty)
        #expect(copied.stderr.contains("cleared in 1 s"))
        let oathtool = try TestSupport.run("/usr/bin/env", ["oathtool", "--hotp", "-b", "-c", "0", "JBSWY3DPEHPK3PXP"])
        #expect(try String(contentsOfFile: file, encoding: .utf8) == String(decoding: oathtool.standardOutput, as: UTF8.self).trimmingCharacters(in: .newlines))
        #expect(Self.waitFor(file, toHold: "what was there before"))

        // Something copied meanwhile is left alone.
        try cli.ok(["add", "credential", "OpenAI"], input: "sk-CLIPCANARY\n")
        try cli.ok(["show", "OpenAI", "--clip"])
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "sk-CLIPCANARY")
        try "the user's own copy".write(toFile: file, atomically: true, encoding: .utf8)
        Thread.sleep(forTimeInterval: 3)
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "the user's own copy")

        // No clipboard tool: unavailable, in one line.
        let tools = try TestSupport.temporaryDirectory("no-tools")
        let bare = try CLI(extraEnvironment: ["PATH": tools])
        try bare.ok(["init"])
        try bare.ok(["add", "credential", "OpenAI"], input: "sk-x\n")
        let none = try bare.run(["show", "OpenAI", "--clip"])
        #expect(none.status == 69)
        #expect(none.stderr.contains("no clipboard tool found") && none.stderr.contains("install wl-clipboard"))
        // A tool but no display (a console, SSH without forwarding): the display is what is missing, not the tool.
        try "#!/bin/sh\nexit 1\n".write(toFile: tools + "/xclip", atomically: true, encoding: .utf8)
        chmod(tools + "/xclip", 0o755)
        let headless = try bare.run(["show", "OpenAI", "--clip"])
        #expect(headless.status == 69 && headless.stderr.contains("there is no display, so no clipboard (xclip"))
        #expect(!headless.stderr.contains("install"))
    }

    // MARK: - Output

    @Test("multi-line note text and notes continue under their first line")
    func multiLineNotes() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "note", "Plumber"], input: "Phone: 555-0100\nCall after six.\nBring the key.\n\nCash only.\n")
        let lines = try cli.ok(["show", "Plumber"]).stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let text = try #require(lines.firstIndex { $0.hasPrefix("Text:") })
        let column = try #require(lines[text].range(of: "Call after six.")).lowerBound.utf16Offset(in: lines[text])
        #expect(lines[text + 1] == String(repeating: " ", count: column) + "Bring the key.")
        #expect(lines[text + 2] == "")
        #expect(lines[text + 3] == String(repeating: " ", count: column) + "Cash only.")
    }

    // MARK: - Exit codes

    /// The codes of the README's "Exit codes" table.
    static func documentedCodes() throws -> Set<Int32> {
        let readme = try String(contentsOf: TestSupport.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "### Exit codes").dropFirst().first)
        var codes: Set<Int32> = []
        for line in section.split(separator: "\n").prefix(while: { !$0.hasPrefix("#") }) where line.hasPrefix("| ") {
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            for number in cell.split(separator: ",") {
                if let code = Int32(number.trimmingCharacters(in: .whitespaces)) { codes.insert(code) }
            }
        }
        return codes
    }

    @Test("exit codes follow one table: the README's rows are ExitStatus's cases, and real failures give their row's code")
    func exitCodes() throws {
        #expect(try Self.documentedCodes() == Set(ExitStatus.allCases.map(\.rawValue)))

        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "credential", "Mail work"], input: "a\n")
        try cli.ok(["add", "credential", "Mail home"], input: "b\n")
        try cli.ok(["add", "card", "Costco", "--symbology", "qr"], input: String(repeating: "Q", count: 300) + "\n")
        try cli.ok(["add", "key", "Release"], input: String(repeating: "ab", count: 32) + "\n123456\n123456\n")
        let narrow = try TestSupport.run(
            "/usr/bin/script", ["-qec", "stty cols 30; \(CLI.binary) barcode Costco", "/dev/null"], input: [], environment: cli.environment)
        let cases: [(String, Int32, () throws -> Int32)] = [
            ("an unknown command", ExitStatus.usage.rawValue, { try cli.run(["lst"]).status }),
            ("a name two items match", ExitStatus.usage.rawValue, { try cli.run(["show", "mail"]).status }),
            ("an invalid base32 secret", ExitStatus.badData.rawValue, { try cli.run(["add", "otp", "--account", "a"], input: "0000\n").status }),
            ("no such item", ExitStatus.notFound.rawValue, { try cli.run(["show", "Nothing"]).status }),
            ("init over a vault", ExitStatus.alreadyExists.rawValue, { try cli.run(["init"]).status }),
            ("a terminal too narrow for the barcode", ExitStatus.tryAgain.rawValue, { narrow.status }),
            ("a wrong PIN", ExitStatus.notPermitted.rawValue, { try cli.run(["sign", "Release"], input: "999999\nmessage").status }),
            (
                "no such program for run", ExitStatus.noProgram.rawValue,
                {
                    try cli.run(["run", "--env", "MAIL=Mail work", "--", "/nonexistent/program"]).status
                }
            ),
            ("no clipboard tool", ExitStatus.unavailable.rawValue, { try cli.run(["show", "Mail work", "--clip"]).status }),
        ]
        for (what, expected, status) in cases {
            #expect(try status() == expected, "\(what)")
        }
    }

    // MARK: - Help

    /// Every command reachable from the root, with its path.
    static func commands(_ type: any ParsableCommand.Type = CofferCommand.self, path: [String] = ["coffer"]) -> [([String], any ParsableCommand.Type)] {
        var result = [(path, type)]
        for sub in type.configuration.subcommands where sub.configuration.shouldDisplay {
            let name = sub.configuration.commandName ?? String(describing: sub).lowercased()
            result += commands(sub, path: path + [name])
        }
        return result
    }

    @Test("every command's help has examples; paragraphs are one line each, wrapped once by the parser; 80 columns hold every line; defaults said once")
    func help() throws {
        let all = Self.commands()
        #expect(all.count >= 50)
        for (path, type) in all {
            let name = path.joined(separator: " ")
            let discussion = type.configuration.discussion
            let lines = discussion.split(separator: "\n", omittingEmptySubsequences: false)
            let examples = try #require(lines.firstIndex(of: "Examples:"), "\(name) has no examples")
            let exampleLines = lines[(examples + 1)...].filter { !$0.isEmpty }
            #expect(!exampleLines.isEmpty && exampleLines.allSatisfy { $0.hasPrefix("  ") && $0.count <= 78 }, "\(name)")
            #expect(exampleLines.contains { $0.hasPrefix("  coffer ") || $0.contains("| coffer ") }, "\(name)")
            // Before the examples: paragraphs of one line, separated by blank lines (no hard line breaks to wrap twice).
            let prose = lines[..<examples]
            for (line, next) in zip(prose, prose.dropFirst()) {
                #expect(line.isEmpty || next.isEmpty, "\(name): a paragraph is broken by hand")
            }
            let rendered = CofferCommand.helpMessage(for: type, columns: 80)
            // The usage line is the parser's own and is never wrapped; everything else fits.
            for line in rendered.split(separator: "\n") where !line.hasPrefix("USAGE:") {
                #expect(line.count <= 80, "\(name): \(line)")
            }
            // The parser adds "(default: …)" itself: an option's own help must not say it again.
            let unwrapped = CofferCommand.helpMessage(for: type, columns: 1_000)
            for line in unwrapped.split(separator: "\n") where line.contains("(default: ") {
                #expect(line.components(separatedBy: "default").count == 2, "\(name): \(line)")
            }
        }
    }
}

@Suite("The everyday forms made without the parser", .offCooperativePool)
struct PlainFormTests {
    struct NotEveryday: Error {}

    /// The work of the command the full command tree parses from `arguments`.
    static func parsedWork(_ arguments: [String]) throws -> any EverydayWork {
        switch try CofferCommand.parseAsRoot(arguments) {
        case let command as Code: return command.work
        case let command as Show: return command.work
        case let command as List: return command.work
        case let command as Use: return command.work
        default: throw NotEveryday()
        }
    }

    @Test(
        "each plain form is the work of the command the parser makes from the same arguments",
        arguments: [
            ["code"], ["code", "git"], ["show", "Costco"], ["list"], ["list", "Café"], ["use", "Costco"],
        ])
    func sameAsParsed(_ arguments: [String]) throws {
        let fast = try #require(EverydayCommands.plainForm(arguments[0], Array(arguments.dropFirst())))
        let parsed = try Self.parsedWork(arguments)
        #expect(type(of: fast) == type(of: parsed))
        #expect(String(reflecting: fast) == String(reflecting: parsed))
    }

    @Test(
        "forms with options are parsed by the command alone into the work the full tree would do",
        arguments: [
            ["code", "--json"], ["code", "git", "--clip"], ["show", "Costco", "--reveal", "--invert"], ["list", "--kind", "key"],
            ["list", "--archived", "--json", "--vault", "/tmp/v"], ["use", "Costco", "--keystore", "file"],
        ])
    func optionFormsAsParsed(_ arguments: [String]) throws {
        let fast = try #require(EverydayCommands.everydayWork(arguments))
        #expect(String(reflecting: fast) == String(reflecting: try Self.parsedWork(arguments)))
    }

    @Test(
        "help, errors, photos and other commands go to coffer-full",
        arguments: [
            ["code", "--help"], ["show"], ["show", "Costco", "--photo", "front", "--out", "/tmp/f.png"], ["list", "--kind", "nothing"], ["edit", "Costco"],
            ["code", "--clip"], ["sync"],
        ])
    func leftToFull(_ arguments: [String]) {
        #expect(EverydayCommands.everydayWork(arguments) == nil)
    }

    @Test(
        "options, help and names that look like options are left to the parser",
        arguments: [
            ["code", "--json"], ["code", "git", "--clip"], ["show"], ["show", "-x"], ["list", "-cards"], ["use"], ["edit", "Costco"],
        ])
    func leftToParser(_ arguments: [String]) {
        #expect(EverydayCommands.plainForm(arguments[0], Array(arguments.dropFirst())) == nil)
    }
}

@Suite("JSON listings element by element", .offCooperativePool)
struct JSONListingTests {
    struct Row: Encodable {
        let id: String
        let tags: [String]
        let nested: [String: [Int]]
        let at: Date
    }

    @Test("elements encoded one by one and joined print the same text as the whole array encoded at once")
    func sameText() throws {
        let rows = (0..<5).map { index in
            Row(
                id: "id-\(index)/x", tags: index.isMultiple(of: 2) ? [] : ["a", "b"], nested: ["k": index == 3 ? [] : [index]],
                at: Date(timeIntervalSince1970: Double(index) * 1_000_000))
        }
        let whole = try Output.jsonText(rows)
        let elements = try rows.map { try Output.jsonElement($0) }
        #expect("[\n" + elements.joined(separator: ",\n") + "\n]" == whole)
        #expect(try Output.jsonText([Row]()) == "[]")
    }
}

@Suite("Help examples run", .offCooperativePool)
struct HelpExampleTests {
    /// An example line as the words a shell would pass (single quotes honoured), without its comment, redirections
    /// and anything after a pipe; nil for lines that are not a `coffer` command.
    static func words(_ line: Substring) -> [String]? {
        var text = line.trimmingCharacters(in: .whitespaces)
        if let pipe = text.range(of: " | ") { text = String(text[pipe.upperBound...]) }
        if let comment = text.range(of: "  #") { text = String(text[..<comment.lowerBound]) }
        guard text.hasPrefix("coffer ") else { return nil }
        var words: [String] = [], current = "", quoted = false, skipNext = false
        for character in text + " " {
            if character == "'" { quoted.toggle(); continue }
            if character == " " && !quoted {
                if !current.isEmpty {
                    if skipNext { skipNext = false } else if current == "<" || current == ">" { skipNext = true } else { words.append(current) }
                }
                current = ""
            } else {
                current.append(character)
            }
        }
        return Array(words.dropFirst())
    }

    @Test("every example in every command's help parses and validates as written")
    func examplesParse() throws {
        var checked = 0
        for (path, type) in KindnessTests.commands() {
            for line in type.configuration.discussion.split(separator: "\n") where line.hasPrefix("  ") {
                guard let arguments = Self.words(line) else { continue }
                do {
                    _ = try CofferCommand.parseAsRoot(CueCommand.normalizedArguments(arguments))
                    checked += 1
                } catch {
                    Issue.record(
                        "\(path.joined(separator: " ")): `\(line.trimmingCharacters(in: .whitespaces))` does not parse: \(CofferCommand.message(for: error))")
                }
            }
        }
        #expect(checked >= 100)
    }
}

@Suite("Removing this device's own slot", .offCooperativePool)
struct OwnSlotTests {
    @Test("asks, or needs --yes from a script; another slot goes without asking")
    func ownSlot() throws {
        let cli = try CLI()
        try cli.ok(["init", "--passphrase"], input: "velvet thistle copper orbit\n")
        let refused = try cli.run(["slots", "remove", "device"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("this device's own slot") && refused.stderr.contains("--yes"))
        #expect(try cli.ok(["slots"]).stdout.contains("(this device)"))
        try cli.ok(["recovery-code", "new"])
        try cli.ok(["slots", "remove", "recovery"])
        try cli.ok(["slots", "remove", "device", "--yes"])
        #expect(try cli.run(["slots"]).status == 77)
    }
}
