import CofferKit
import CofferTestSupport
import Foundation
import Testing

@testable import CofferCLI

/// What a new user moving a real life in tripped on (issue 32): each refusal or guess the walk met, as it now goes.
@Suite("A new user's first steps", .offCooperativePool)
struct NewUserTests {
    @Test(
        "a card without --symbology gets the one its payload says",
        arguments: [
            ("4006381333931", "ean13"), ("036000291452", "upc_a"), ("96385074", "ean8"),
            // Digits whose check digit is wrong are not taken for a retail code.
            ("4006381333932", "code128"), ("036000291453", "code128"), ("MEMBER-0042", "code128"),
            (String(repeating: "7", count: 49), "qr"), ("café 42", "qr"), ("https://returns.example/qr/8f2k", "qr"),
        ])
    func symbologyFromThePayload(_ payload: String, _ expected: String) throws {
        #expect(Symbology.suggested(for: Array(payload.utf8)).rawValue == expected)
        let cli = try CLI()
        try cli.ok(["init"])
        let added = try cli.ok(["add", "card", "Card", "--json"], input: payload + "\n")
        #expect(added.stdout.contains("\"symbology\" : \"\(expected)\""), "\(payload): \(added.stdout)")
    }

    @Test(
        "--symbology is taken in any case, with or without dashes",
        arguments: [
            ("EAN13", Symbology.ean13), ("EAN-13", .ean13), ("upc-a", .upcA), ("UPC_A", .upcA), ("Code 128", .code128),
            ("GS1-128", .gs1_128), ("QR", .qr), ("QR code", .qr), ("DataMatrix", .dataMatrix), ("gs1 datamatrix", .gs1DataMatrix),
        ])
    func symbologyInAnyCase(_ typed: String, _ expected: Symbology) {
        #expect(Symbology(argument: typed) == expected)
    }

    @Test("several otpauth URIs piped into add otp are all added, or none when one is bad")
    func severalURIs() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        let uris = ["GitHub:alice", "Duo:bob", "AWS:carol"].map { label in
            "otpauth://totp/\(label)?secret=\(secret)&issuer=\(label.split(separator: ":")[0])"
        }
        let added = try cli.ok(["add", "otp"], input: uris.joined(separator: "\n") + "\n\n")
        #expect(added.stdout.split(separator: "\n").count == 3)
        let listed = try cli.ok(["list", "--kind", "otp"]).stdout
        #expect(listed.contains("GitHub (alice)") && listed.contains("Duo (bob)") && listed.contains("AWS (carol)"))
        // The same again: each is already there, and said so.
        let again = try cli.ok(["add", "otp"], input: uris.joined(separator: "\n") + "\n")
        #expect(again.stderr.contains("Skipped 3 already in the vault") && again.stdout.isEmpty)
        // One bad line: nothing is added, and the line is named.
        let bad = try cli.run(["add", "otp"], input: "otpauth://totp/New:dan?secret=\(secret)&issuer=New\nnot a uri\n")
        #expect(bad.status == 65 && bad.stderr.contains("standard input, line 2:") && bad.stderr.contains("nothing was added"))
        #expect(!(try cli.ok(["list", "--kind", "otp"]).stdout.contains("New")))
    }

    @Test("barcode image files are not replaced without --force, and a refusal writes none of them")
    func barcodeFilesAreKept() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "card", "Gym"], input: "MEMBER-0042\n")
        let png = cli.home + "/gym.png", svg = cli.home + "/gym.svg"
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: svg))
        for arguments in [["barcode", "Gym", "--png", png, "--svg", svg], ["barcode", "--symbology", "qr", "--svg", svg]] {
            let refused = try cli.run(arguments, input: "payload\n")
            #expect(refused.status == 64 && refused.stderr.contains("gym.svg exists; add --force to replace it"))
            #expect(!FileManager.default.fileExists(atPath: png))
            #expect(try String(contentsOfFile: svg, encoding: .utf8) == "keep me")
        }
        try cli.ok(["barcode", "Gym", "--png", png, "--svg", svg, "--force"])
        #expect(try String(contentsOfFile: svg, encoding: .utf8).hasPrefix("<?xml") || (try String(contentsOfFile: svg, encoding: .utf8)).hasPrefix("<svg"))
        #expect(FileManager.default.fileExists(atPath: png))
    }

    @Test("the tenth wrong PIN says the key is now locked, and a locked key says so before any PIN is asked")
    func lockedKey() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "key", "Release"], input: String(repeating: "ab", count: 32) + "\n246810\n")
        for attempt in 1...10 {
            let wrong = try cli.run(["sign", "Release"], input: "111111\nmessage")
            #expect(wrong.status == 77)
            if attempt == 9 { #expect(wrong.stderr.contains("1 attempt left before the key locks")) }
            if attempt == 10 { #expect(wrong.stderr.contains("wrong PIN; the key is now locked") && wrong.stderr.contains("coffer add key")) }
        }
        // No PIN on standard input at all: the lock is what is reported, not a missing PIN.
        let locked = try cli.run(["sign", "Release"])
        #expect(locked.status == 77 && locked.stderr.contains("this key is locked after too many wrong PINs"))
    }

    @Test("a wrong passphrase points at the recovery code; a backup's at the backup's own secrets")
    func wrongPassphraseHints() throws {
        let cli = try CLI()
        try cli.ok(["init", "--passphrase"], input: "first copper meadow harbor\n")
        let wrong = try cli.run(["passphrase", "change"], input: "not it\nnew copper meadow harbor\n")
        #expect(wrong.status == 77 && wrong.stderr.contains("coffer unlock --recovery-code"))
        let backup = cli.home + "/vault.cbk"
        try cli.ok(["export", "--format", "backup", backup], input: "backup copper meadow harbor\nbackup copper meadow harbor\n")
        let other = try CLI()
        let restore = try other.run(["import", "--format", "backup", backup], input: "wrong\n")
        #expect(restore.status == 77 && restore.stderr.contains("wrong passphrase for this backup"))
        #expect(!restore.stderr.contains("coffer unlock"))
    }

    @Test("an import that reads nothing fails; an empty file asks for no password")
    func emptyImports() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        let empty = cli.home + "/empty.json", garbage = cli.home + "/garbage.txt"
        try Data().write(to: URL(fileURLWithPath: empty))
        try Data("not a uri\nnor this\n".utf8).write(to: URL(fileURLWithPath: garbage))
        let nothing = try cli.run(["import", "--from", "andotp", empty])
        #expect(nothing.status == 65 && nothing.stderr.contains("empty.json is empty: nothing imported"))
        #expect(!nothing.stderr.contains("Password"))
        let unread = try cli.run(["import", "--from", "otpauth", garbage])
        #expect(unread.status == 65 && unread.stderr.contains("2 entries could not be imported"))
        #expect(unread.stderr.contains("coffer: error: nothing imported from") && !unread.stderr.contains("Imported 0"))
    }

    @Test("at a terminal, a note ends at one Ctrl-D, typed after its last line or at the start of a new one")
    func noteEndsAtOneControlD() throws {
        for ending in ["\u{04}", "\n\u{04}"] {
            let cli = try CLI()
            try cli.ok(["init"])
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-qec", "\(CLI.binary) add note Plans", "/dev/null"]
            process.environment = cli.environment
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            try process.run()
            var transcript = Data()
            while !String(decoding: transcript, as: UTF8.self).contains("then Ctrl-D:") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                transcript += chunk
            }
            Thread.sleep(forTimeInterval: 0.3)
            input.fileHandleForWriting.write(Data("first line\nsecond line".utf8))
            Thread.sleep(forTimeInterval: 0.3)
            input.fileHandleForWriting.write(Data(ending.utf8))
            // One Ctrl-D is the end: the command finishes without another.
            let deadline = Date().addingTimeInterval(20)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
            let finished = !process.isRunning
            if !finished { process.terminate() }
            try? input.fileHandleForWriting.close()
            #expect(finished, "the note waited for a second Ctrl-D")
            #expect(process.terminationStatus == 0)
            let shown = try cli.ok(["show", "Plans"]).stdout
            #expect(shown.contains("first line") && shown.contains("second line"))
        }
    }

    @Test("sync register and login say what they did; a server that refuses the connection is reported at once")
    func syncSaysWhatItDid() throws {
        try #require(FileManager.default.isExecutableFile(atPath: SyncCLITests.serverBinary), "build coffer-server first (swift build)")
        let server = try SyncCLITests.Server()
        try server.start()
        defer { server.stop() }
        let passphrase = "orbit lantern meadow \(UUID().uuidString.prefix(6))"
        let email = "new-\(UUID().uuidString.prefix(8).lowercased())@example.org"
        let a = try CLI()
        try a.ok(["init"])
        try a.ok(["add", "card", "Gym"], input: "MEMBER-0042\n")
        let registered = try a.ok(["sync", "register", "--server", server.url, "--email", email], input: "\(passphrase)\n")
        #expect(registered.stderr.contains("Registered \(email) on \(server.url); pushed 1 item."))
        #expect(registered.stderr.contains("coffer sync login --server \(server.url) --email \(email) --expect "))
        // The line it prints is the one to run on the other device, fingerprint and all.
        let printed = try #require(registered.stderr.split(separator: "\n").first { $0.contains("coffer sync login") })
        let expect = try #require(printed.split(separator: " ").last.map(String.init))
        #expect(expect.wholeMatch(of: /[0-9]+:[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}/) != nil, "printed: \(printed)")
        let b = try CLI()
        let loggedIn = try b.ok(
            ["sync", "login", "--server", server.url, "--email", email, "--expect", expect], input: "\(passphrase)\n")
        #expect(loggedIn.stderr.contains("Logged in as \(email) on \(server.url); pulled 1 item; verified state epoch"))

        // Nothing listens on the port: refused, and said so. How fast is checked in-process ("a refused connection is
        // reported at once…" in SyncTests), where a loaded machine's process start-up cannot blur it.
        let offline = try CLI()
        try offline.ok(["init"])
        let (port, socket) = try TestSupport.refusingPort()
        defer { TestSupport.release(socket) }
        let refused = try offline.run(
            ["sync", "register", "--server", "http://127.0.0.1:\(port)", "--email", email],
            input: "\(passphrase)\n")
        #expect(refused.status == 69 && refused.stderr.contains("cannot reach the sync server"))
    }

    @Test("a credential added by hand takes a user name and a URL, and edit changes or removes them")
    func credentialFields() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "credential", "Mail", "--username", "ada@example.org", "--url", "https://mail.example.org"], input: "s3cret-mail\n")
        let shown = try cli.ok(["show", "Mail"]).stdout
        #expect(shown.contains("ada@example.org") && shown.contains("https://mail.example.org") && !shown.contains("s3cret-mail"))
        try cli.ok(["edit", "Mail", "--username", "none", "--url", "https://login.example.org"])
        let edited = try cli.ok(["show", "Mail"]).stdout
        #expect(!edited.contains("ada@example.org") && edited.contains("https://login.example.org"))
        let wrongKind = try cli.run(["edit", "Mail", "--issuer", "X"])
        #expect(wrongKind.status == 64 && wrongKind.stderr.contains("does not apply to credential items"))
        try cli.ok(["add", "otp"], input: "otpauth://totp/A:a?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=A\n")
        let onToken = try cli.run(["edit", "A (a)", "--username", "x"])
        #expect(onToken.status == 64 && onToken.stderr.contains("--provider/--username/--url does not apply to otp items"))
    }

    @Test("notes of every kind are edited from standard input, and a note's fields are set and removed by label")
    func editNotesAndFields() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "note", "Plumber"], input: "Phone: 555-0100\nCall before 9\n")
        try cli.ok(["add", "otp"], input: "otpauth://totp/GitHub:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=GitHub\n")
        try cli.ok(["add", "credential", "OpenAI"], input: "sk-test-value\n")
        try cli.ok(["edit", "Plumber", "--notes"], input: "Ring twice\nthen wait\n\n")
        try cli.ok(["edit", "GitHub", "--notes"], input: "recovery codes are in the safe\n")
        try cli.ok(["edit", "OpenAI", "--notes"], input: "project key\n")
        let note = try cli.ok(["show", "Plumber"]).stdout
        #expect(note.contains("Ring twice\n") && note.contains("then wait") && !note.contains("Call before 9"))
        #expect(try cli.ok(["show", "GitHub"]).stdout.contains("Notes:     recovery codes are in the safe"))
        #expect(try cli.ok(["show", "OpenAI"]).stdout.contains("project key"))
        // Fields: a new one is added, an existing one (any case) changed, an empty value or --remove-field removes one.
        try cli.ok(["edit", "Plumber", "--field", "Email", "--field", "phone"], input: "bob@example.org\n555-0199\n")
        var fields = try cli.ok(["show", "Plumber"]).stdout
        #expect(fields.contains("Phone: 555-0199") && fields.contains("Email: bob@example.org") && !fields.contains("555-0100"))
        try cli.ok(["edit", "Plumber", "--remove-field", "EMAIL"])
        fields = try cli.ok(["show", "Plumber"]).stdout
        #expect(!fields.contains("bob@example.org"))
        let missing = try cli.run(["edit", "Plumber", "--remove-field", "Fax"])
        #expect(missing.status == 64 && missing.stderr == "coffer: error: Plumber has no field \"Fax\"; its fields: Phone\n")
        let onToken = try cli.run(["edit", "GitHub", "--field", "X"], input: "y\n")
        #expect(onToken.status == 64 && onToken.stderr.contains("--field/--remove-field does not apply to otp items"))
        // Empty notes remove them; a note left with neither fields nor text is refused, and kept as it was.
        try cli.ok(["edit", "GitHub", "--notes"], input: "\n")
        #expect(!(try cli.ok(["show", "GitHub"]).stdout.contains("Notes:")))
        try cli.ok(["add", "note", "Memo"], input: "just text\n")
        let emptied = try cli.run(["edit", "Memo", "--notes"], input: "")
        #expect(emptied.status != 0 && emptied.stderr.hasPrefix("coffer: error:"))
        #expect(try cli.ok(["show", "Memo"]).stdout.contains("just text"))
    }

    @Test("on a terminal --notes opens $EDITOR on a private file in /dev/shm, removed afterwards; a failing editor changes nothing")
    func editNotesInTheEditor() throws {
        let home = try TestSupport.temporaryDirectory("editor")
        let editor = home + "/editor.sh"
        // The editor records where the text is and how it is protected, then edits it.
        try """
        #!/bin/sh
        printf '%s\\n' "$1" > "\(home)/path"
        stat -c '%a' "$(dirname "$1")" "$1" > "\(home)/modes"
        sed -i 's/wait/knock/' "$1"
        """.write(toFile: editor, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: editor)
        let cli = try CLI(extraEnvironment: ["EDITOR": editor])
        try cli.ok(["init"])
        try cli.ok(["add", "note", "Plumber"], input: "Ring twice\nthen wait\n")
        let edited = try SyncCLITests.atTerminal(cli, ["edit", "Plumber", "--notes"], answers: [])
        #expect(edited.status == 0, "\(edited.transcript)")
        #expect(try cli.ok(["show", "Plumber"]).stdout.contains("then knock"))
        let path = try String(contentsOfFile: home + "/path", encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(path.hasPrefix("/dev/shm/coffer-edit.") && path.hasSuffix("/Plumber.txt"))
        #expect(try String(contentsOfFile: home + "/modes", encoding: .utf8) == "700\n600\n")
        #expect(!FileManager.default.fileExists(atPath: (path as NSString).deletingLastPathComponent))
        let failing = try CLI(extraEnvironment: ["EDITOR": "false"])
        try failing.ok(["init"])
        try failing.ok(["add", "note", "Memo"], input: "kept\n")
        let refused = try SyncCLITests.atTerminal(failing, ["edit", "Memo", "--notes"], answers: [])
        #expect(refused.status == 1 && refused.transcript.contains("the editor (false) exited with status 1; nothing was changed"))
        #expect(try failing.ok(["show", "Memo"]).stdout.contains("kept"))
    }

    @Test("list QUERY finds items by name, tag, issuer, notes and note fields, without case or accents; never by a secret")
    func search() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "note", "Plumber", "--tag", "house"], input: "Phone: 555-0100\nCall Zoë before 9\n")
        try cli.ok(["add", "otp"], input: "otpauth://totp/GitHub:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=GitHub\n")
        try cli.ok(["add", "credential", "OpenAI", "--username", "ada@example.org"], input: "sk-secret-value-42\n")
        func names(_ words: [String]) throws -> [String] {
            try cli.ok(["list"] + words).stdout.split(separator: "\n").map { String($0.dropFirst(23)).components(separatedBy: "  ")[0] }
        }
        #expect(try names(["plumber"]) == ["Plumber"])
        #expect(try names(["HOUSE"]) == ["Plumber"])
        #expect(try names(["zoe"]) == ["Plumber"])
        #expect(try names(["555"]) == ["Plumber"])
        #expect(try names(["github"]) == ["GitHub (alice)"])
        #expect(try names(["ada@example"]) == ["OpenAI"])
        #expect(try names(["call", "before"]) == ["Plumber"])
        #expect(try names(["call", "github"]).isEmpty)
        let secret = try cli.ok(["list", "sk-secret"])
        #expect(secret.stdout.isEmpty && secret.stderr == "No item has that word.\n")
        #expect(try cli.ok(["list", "GEZDGNBV"]).stdout.isEmpty)
        #expect(try cli.ok(["list", "--kind", "otp", "alice", "--json"]).stdout.contains("GitHub (alice)"))
    }

    @Test("completions offer item names from a vault that opens without asking, and nothing otherwise")
    func completions() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "note", "Plumber"], input: "text\n")
        try cli.ok(["add", "otp"], input: "otpauth://totp/GitHub:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=GitHub\n")
        func complete(_ command: [String], _ words: [String]) throws -> [String] {
            let line = ["coffer"] + command + words
            let result = try cli.ok(["---completion"] + command + ["--", "positional@0", String(line.count - 1), String(words.last?.count ?? 0)] + line)
            return result.stdout.split(separator: "\n").map(String.init)
        }
        #expect(try complete(["show"], ["p"]) == ["Plumber"])
        #expect(try complete(["show"], [""]) == ["Plumber", "GitHub (alice)"])
        // `code` offers tokens only.
        #expect(try complete(["code"], [""]) == ["GitHub (alice)"])
        // Another vault named on the line is the one read; one that does not exist offers nothing and asks nothing.
        #expect(try complete(["show"], ["--vault", cli.home + "/elsewhere", ""]).isEmpty)
        let other = try CLI()
        #expect(try complete(["show"], ["--vault", other.vaultDirectory, ""]).isEmpty)
    }

    @Test(
        "a misspelt subcommand anywhere along the command is named",
        arguments: [
            (["lsit"], "coffer list"), (["sync", "stauts"], "coffer sync status"), (["add", "crad", "Gym"], "coffer add card"),
            (["keystore", "migrat"], "coffer keystore migrate"),
        ])
    func typoHints(_ arguments: [String], _ meant: String) throws {
        let cli = try CLI()
        let result = try cli.run(arguments)
        #expect(result.status == 64 && result.stderr.contains("coffer: hint: did you mean `\(meant)`?"), "\(result.stderr)")
    }

    /// An otpauth URI without an issuer used to come back as "bob@example.org (bob@example.org)": the account was
    /// made up into an issuer, and every export then carried it.
    @Test("a token without an issuer keeps none: named by its account, shown, edited, exported and imported so")
    func tokenWithoutIssuer() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "otp"], input: "otpauth://totp/bob%40example.org?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ\n")
        #expect(try cli.ok(["list"]).stdout.hasSuffix("bob@example.org\n"))
        #expect(try cli.ok(["code", "bob@example.org"]).stdout.count == 7)
        let shown = try cli.ok(["show", "bob@example.org"]).stdout
        #expect(!shown.contains("Issuer") && shown.contains("Account:   bob@example.org"))
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(try cli.ok(["list", "--json"]).standardOutput)) as? [[String: Any]])
        #expect(listed.first?["issuer"] == nil && listed.first?["name"] as? String == "bob@example.org")
        let uris = try cli.ok(["export", "--to", "otpauth", "--plaintext"]).stdout
        #expect(uris.hasPrefix("otpauth://totp/bob%40example.org?") && !uris.contains("issuer="))
        let other = try CLI()
        try other.ok(["init"])
        let file = try TestSupport.temporaryDirectory("uris") + "/tokens.txt"
        try uris.write(toFile: file, atomically: true, encoding: .utf8)
        try other.ok(["import", "--from", "otpauth", file])
        #expect(try other.ok(["list"]).stdout.hasSuffix("  bob@example.org\n"))
        // An issuer can be given, and taken away again.
        try cli.ok(["edit", "bob@example.org", "--issuer", "Example"])
        #expect(try cli.ok(["list"]).stdout.contains("Example (bob@example.org)"))
        try cli.ok(["edit", "Example (bob@example.org)", "--issuer", "none"])
        #expect(try cli.ok(["list"]).stdout.hasSuffix("  bob@example.org\n"))
    }
}
