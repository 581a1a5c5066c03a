import CofferPlatform
import CofferTestSupport
import Foundation
import GRDB
import Testing

@Suite("coffer command line", .offCooperativePool)
struct CLITests {
    @Test("Names as people type them: an exact name wins, accents and case are forgiven, a unique part finds its item, several are listed with ids")
    func finding() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        let exact = try cli.ok(["add", "card", "costco", "--symbology", "code128"], input: "111\n")
        #expect(exact.stderr.isEmpty)
        try cli.ok(["add", "card", "Costco Gold", "--symbology", "code128"], input: "222\n")
        let twin = try cli.ok(["add", "card", "COSTCO", "--symbology", "code128"], input: "333\n")
        #expect(twin.stderr.contains("warning: another item already named \"COSTCO\" (\(exact.stdout.prefix(8)))"))
        try cli.ok(["add", "card", "Café Nero", "--symbology", "qr"], input: "444\n")
        try cli.ok(["add", "otp"], input: "otpauth://totp/GitHub:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=GitHub\n")
        try cli.ok(["add", "key", "Signing", "--stellar-seed"], input: "SB3MIS23KDF67IGB6YH2IZKE4W6UMICIEL7JYQCL5DZUM4ZM4VUBMUF3\n654321\n")

        #expect(try cli.ok(["show", "costco"]).stdout.contains("111"))
        #expect(try cli.ok(["show", "COSTCO"]).stdout.contains("333"))
        #expect(try cli.ok(["show", "cafe"]).stdout.contains("444"))
        #expect(try cli.ok(["show", "gold"]).stdout.contains("222"))
        #expect(try cli.ok(["code", "git"]).stdout.count >= 6)
        let several = try cli.run(["show", "Costco"])
        #expect(
            several.status != 0
                && several.stderr.contains("2 items match \"Costco\": \(exact.stdout.prefix(8)) (card costco), \(twin.stdout.prefix(8)) (card COSTCO)"))
        #expect(try cli.run(["show", "walmart"]).stderr.contains("no item matches \"walmart\""))
        #expect(try cli.ok(["list", "--kind", "key"]).stdout.contains("Signing"))
        #expect(!(try cli.ok(["list", "--kind", "keys"]).stdout.contains("Costco")))
    }

    @Test("Argument mistakes get one clean error and a hint; empty results say so; piped codes are bare")
    func kindErrors() throws {
        let cli = try CLI()
        let typo = try cli.run(["lst"])
        #expect(typo.status == 64 && typo.stderr.hasPrefix("coffer: error: Unexpected argument 'lst'") && !typo.stderr.contains("Error: "))
        #expect(typo.stderr.contains("coffer: hint: did you mean `coffer list`?"))
        #expect(try cli.run(["lsit"]).stderr.contains("did you mean `coffer list`?"))
        let help = try cli.run(["near2", "--help"])
        #expect(help.status == 64 && help.stdout.isEmpty && help.stderr.contains("unknown command 'near2'") && help.stderr.contains("`coffer near`"))
        #expect(try cli.run(["near", "--help"]).status == 0)
        let png = try cli.run(["show", "Costco", "--png", "card.png"])
        #expect(png.status == 64 && png.stderr.contains("coffer: hint: images are written by `coffer barcode NAME --png FILE`"))

        let created = try cli.ok(["init"])
        #expect(created.stdout.isEmpty && created.stderr.contains("Created vault ") && created.stderr.contains(" in \(cli.vaultDirectory)"))
        let empty = try cli.ok(["list"])
        #expect(empty.stdout.isEmpty && empty.stderr.contains("The vault is empty. Add an item with `coffer add card NAME`"))
        #expect(try cli.ok(["list", "--json"]).stdout == "[]\n")
        try cli.ok(["add", "otp"], input: "otpauth://totp/GitHub:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=GitHub\n")
        #expect(try cli.ok(["code", "GitHub"]).stdout.wholeMatch(of: /[0-9]{6}\n/) != nil)
        // Card payloads are not secrets: the check digit a typo broke is named, and show prints what the symbol carries.
        let wrongCheck = try cli.run(["add", "card", "Shop", "--symbology", "ean13"], input: "4006381333932\n")
        #expect(wrongCheck.status == 65 && wrongCheck.stderr.contains("the EAN-13 check digit should be 1, not 2"))
        try cli.ok(["add", "card", "Shop", "--symbology", "ean13"], input: "400638133393\n")
        #expect(try cli.ok(["show", "Shop", "--no-barcode"]).stdout.contains("Payload:   4006381333931\n"))
        let badSecret = try cli.run(["add", "otp", "--issuer", "X", "--account", "y"], input: "GEZDGNBVGY3T1OJQ\n")
        #expect(badSecret.status == 65 && badSecret.stderr.contains("character 13 is a digit base32 does not use"))
        #expect(!badSecret.stderr.contains("GEZD"))
        let rename = try cli.run(["edit", "GitHub", "--name", "Work GitHub"])
        #expect(rename.status == 64 && rename.stderr.contains("use --issuer and --account"))
        #expect(try cli.ok(["list", "--kind", "note", "--json"]).stdout == "[]\n")
        let file = cli.home + "/one.txt"
        try "otpauth://totp/Fastmail:me?secret=GEZDGNBVGY3TQOJQ&issuer=Fastmail\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try cli.ok(["import", "--from", "otpauth", file]).stderr.contains("Imported 1 item from otpauth."))
    }

    @Test("code, list and show close the vault before they exit: only the vault file is left, and what code wrote is read next")
    func everydayCommandsClose() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        // RFC 4226's key: counter 0 gives 755224, counter 1 gives 287082, each stored before its code is shown.
        try cli.ok(["add", "otp"], input: "otpauth://hotp/Bank:me?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Bank&counter=0\n")
        try cli.ok(["add", "card", "Costco", "--symbology", "code128"], input: "111\n")
        let files = { try FileManager.default.contentsOfDirectory(atPath: cli.vaultDirectory).sorted() }
        #expect(try cli.ok(["code", "Bank"]).stdout == "755224\n")
        #expect(try files() == ["vault.sqlite"])
        #expect(try cli.ok(["code", "Bank"]).stdout == "287082\n")
        #expect(try files() == ["vault.sqlite"])
        #expect(try cli.ok(["list"]).stdout.contains("Costco"))
        #expect(try files() == ["vault.sqlite"])
        #expect(try cli.ok(["show", "Costco", "--no-barcode"]).stdout.contains("111"))
        #expect(try files() == ["vault.sqlite"])
    }

    @Test("At a terminal, --purge asks first: no keeps the item, y deletes it; Ctrl-D at a prompt cancels")
    func purgeAtTerminal() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "note", "Scratch"], input: "some text\n")
        let declined = try SyncCLITests.atTerminal(cli, ["rm", "--purge", "Scratch"], answers: [("for good?", "n")])
        #expect(declined.status == 1 && declined.transcript.contains("Delete note \"Scratch\" for good? It cannot be undone. [y/N]"))
        #expect(declined.transcript.contains("cancelled; nothing changed"))
        #expect(try cli.run(["show", "Scratch"]).status == 0)
        // Ctrl-D at a secret prompt gives up, and says so.
        let endOfInput = try SyncCLITests.atTerminal(cli, ["add", "credential", "Token"], answers: [("Value:", "\u{04}")])
        #expect(endOfInput.status == 1 && endOfInput.transcript.contains("coffer: error: cancelled; nothing changed"), "\(endOfInput.transcript)")
        #expect(try cli.run(["show", "Token"]).status == 66)
        // A PIN of the wrong shape is refused at its first entry, before it is asked again.
        let shortPIN = try SyncCLITests.atTerminal(
            cli, ["add", "key", "Signer", "--stellar-seed"],
            answers: [("Stellar secret seed", "SB3MIS23KDF67IGB6YH2IZKE4W6UMICIEL7JYQCL5DZUM4ZM4VUBMUF3"), ("New PIN (6+ digits):", "123")])
        #expect(shortPIN.status != 0 && shortPIN.transcript.contains("a PIN is 6 to 64 digits"), "\(shortPIN.transcript)")
        #expect(!shortPIN.transcript.contains("Repeat"))
        let accepted = try SyncCLITests.atTerminal(cli, ["rm", "--purge", "Scratch"], answers: [("for good?", "y")])
        #expect(accepted.status == 0, "\(accepted.transcript)")
        #expect(try cli.run(["show", "Scratch"]).status == 66)
    }

    @Test("A barcode wider than the terminal exits 75 and names the image command; without colours, a hint for dark themes")
    func narrowTerminal() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "card", "Wide", "--symbology", "code128"], input: "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\n")
        func run(_ command: String, columns: Int) throws -> (status: Int32, transcript: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-qec", "stty cols \(columns) rows 60; \(CLI.binary) \(command) Wide", "/dev/null"]
            process.environment = cli.environment
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let transcript = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            try? input.fileHandleForWriting.close()
            return (process.terminationStatus, String(decoding: transcript, as: UTF8.self))
        }
        // `show` still shows the details, and says how to get the barcode; `barcode`, which only draws, fails.
        let shown = try run("show", columns: 40)
        #expect(shown.status == 0 && shown.transcript.contains("terminal columns but only 40 are available"), "\(shown.transcript)")
        #expect(shown.transcript.contains("coffer: hint: write an image to scan from another screen: coffer barcode Wide --png FILE"))
        let drawn = try run("barcode", columns: 40)
        #expect(drawn.status == 75, "\(drawn.transcript)")
        #expect(drawn.transcript.contains("coffer: hint: or write an image to scan from another screen: coffer barcode NAME --png FILE"))
        // NO_COLOR is set for every CLI test: the drawing takes the theme's colours, and says what to do on a dark one.
        let wide = try run("show", columns: 400)
        #expect(wide.status == 0 && wide.transcript.contains("add --invert so that the bars come out dark"), "\(wide.transcript)")
    }

    @Test("A whole session: init, add every kind, list, show, code, use, edit, archive, restore, purge")
    func session() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        let card = try cli.ok(
            ["add", "card", "Costco", "--symbology", "code128", "--network", "costco", "--tag", "grocery", "--valid-to", "2099-01-31"], input: "111222333\n")
        let cardID = card.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(UUID(uuidString: cardID) != nil)
        try cli.ok(["add", "card", "Amazon return", "--symbology", "qr", "--one-time"], input: "https://example.com/r/1\n")
        try cli.ok(["add", "otp"], input: "otpauth://totp/GitHub:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=GitHub&digits=8\n")
        try cli.ok(["add", "otp", "--issuer", "Duo", "--account", "bob", "--type", "hotp"], input: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ\n")
        try cli.ok(["add", "credential", "OpenAI", "--provider", "openai"], input: "sk-proj-0123456789abcdef\n")
        try cli.ok(["add", "note", "Contact Bob", "--template", "contact"], input: "Email: bob@example.com\nMet at the café\n")
        let key = try cli.ok(["add", "key", "Stellar main", "--stellar-seed"], input: "SB3MIS23KDF67IGB6YH2IZKE4W6UMICIEL7JYQCL5DZUM4ZM4VUBMUF3\n654321\n")
        #expect(key.stdout.contains(" G"))

        let list = try cli.ok(["list", "--json"])
        let items = try #require(try JSONSerialization.jsonObject(with: Data(list.standardOutput)) as? [[String: Any]])
        #expect(items.count == 7)
        #expect(!list.stdout.contains("111222333") && !list.stdout.contains("sk-proj-0123456789abcdef"))
        #expect(try cli.ok(["list", "--network", "costco"]).stdout.contains("Costco"))
        #expect(try cli.ok(["list", "--kind", "otp", "--json"]).stdout.contains("\"issuer\" : \"GitHub\""))

        let shown = try cli.ok(["show", "Costco"]).stdout
        #expect(shown.contains("111222333") && shown.contains("costco"))
        #expect(try cli.ok(["show", "OpenAI"]).stdout.contains("sk-proj-…"))
        #expect(!(try cli.ok(["show", "OpenAI"]).stdout.contains("sk-proj-0")))
        #expect(try cli.ok(["show", "OpenAI", "--reveal"]).stdout.contains("sk-proj-0123456789abcdef"))

        // HOTP: RFC 4226 counter 0 then 1, each stored before it is shown.
        #expect(try cli.ok(["code", "Duo"]).stdout == "755224\n")
        #expect(try cli.ok(["code", "Duo"]).stdout == "287082\n")
        let codes = try cli.ok(["code", "--json"]).stdout
        #expect(codes.contains("GitHub (alice)") && !codes.contains("Duo"))

        try cli.ok(["use", "Amazon return"])
        #expect(try cli.run(["use", "Amazon return"]).status == 65)
        #expect(try cli.ok(["list"]).stdout.contains("Used"))
        try cli.ok(["edit", "Costco", "--name", "Costco Wholesale", "--add-tag", "family"])
        #expect(try cli.ok(["show", "Costco Wholesale", "--json"]).stdout.contains("family"))
        try cli.ok(["rm", "Costco Wholesale"])
        #expect(!(try cli.ok(["list"]).stdout.contains("Costco")))
        #expect(try cli.ok(["list", "--archived"]).stdout.contains("Archived"))
        try cli.ok(["restore", "Costco Wholesale"])
        #expect(try cli.ok(["list"]).stdout.contains("Costco"))
        let removeToken = try cli.run(["rm", "GitHub (alice)"])
        #expect(removeToken.status == 64 && removeToken.stderr.contains("--purge"))
        let unconfirmed = try cli.run(["rm", "--purge", "Contact Bob"])
        #expect(unconfirmed.status == 64 && unconfirmed.stderr.contains("--purge deletes for good; pass --yes to confirm"))
        #expect(try cli.ok(["show", "Contact Bob"]).stdout.contains("Contact Bob"))
        try cli.ok(["rm", "--purge", "--yes", "Contact Bob"])
        #expect(try cli.run(["show", "Contact Bob"]).status == 66)

        let signature = try cli.ok(["sign", "Stellar main"], input: "654321\nhello").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(signature.count == 128)
        let wrongPIN = try cli.run(["sign", "Stellar main"], input: "111111\nhello")
        #expect(wrongPIN.status == 77 && wrongPIN.stderr.contains("9 attempts left"))
    }

    /// The slot's KDF encoding is read from the vault file and compared with the bytes FORMAT.md §2 gives, so that a
    /// weaker default (or tests' cheaper cost leaking into the binary) cannot pass unseen.
    @Test("the passphrase slot `init` writes is stretched as documented: PBKDF2-SHA256 600,000 iterations, or scrypt 2^15/8/1")
    func defaultKDF() throws {
        for (flags, encoding) in [([String](), "01000927C0"), (["--scrypt"], "020F0000000800000001")] {
            let cli = try CLI()
            try cli.ok(["init", "--passphrase"] + flags, input: "stretched copper meadow harbor\n")
            let database = try DatabaseQueue(path: cli.vaultFile)
            defer { try? database.close() }
            let stored = try database.read { db in try String.fetchAll(db, sql: "SELECT hex(kdf) FROM slot WHERE type = 2") }
            #expect(stored == [encoding], "\(flags)")
        }
    }

    /// `secure_delete` zeroes what SQLite frees; without it the replaced wrapped keys and boxes stay in free space.
    @Test("after a passphrase change and a key rotation, no old wrapped key or item box is left in the vault's files")
    func replacedKeysAreErased() throws {
        let cli = try CLI()
        try cli.ok(["init", "--passphrase"], input: "first copper meadow harbor\n")
        for index in 0..<40 { try cli.ok(["add", "credential", "API \(index)"], input: "value-\(index)-\(UUID())\n") }
        func stored() throws -> Set<Data> {
            let database = try DatabaseQueue(path: cli.vaultFile)
            defer { try? database.close() }
            return try database.read { db in
                Set(try Data.fetchAll(db, sql: "SELECT wrapped_key FROM slot UNION ALL SELECT box FROM item WHERE box IS NOT NULL"))
            }
        }
        let first = try stored()
        try cli.ok(["passphrase", "change"], input: "first copper meadow harbor\nsecond violet tundra pencil\n")
        let second = try stored()
        try cli.ok(["rotate-key"], input: "second violet tundra pencil\n")
        let current = try stored()
        let replaced = first.union(second).subtracting(current)
        #expect(replaced.count > 40, "the rotation replaced every box")
        var files = Data()
        for name in try FileManager.default.contentsOfDirectory(atPath: cli.vaultDirectory) {
            files += (try? Data(contentsOf: URL(fileURLWithPath: cli.vaultDirectory + "/" + name))) ?? Data()
        }
        // Compared as a count: the values are key material, which test output never shows.
        let left = replaced.filter { files.range(of: $0) != nil }.count
        #expect(left == 0, "\(left) of \(replaced.count) replaced values still in the files")
    }

    @Test("Passphrase, recovery code, backup and restore on a second device, key rotation")
    func slotsAndBackups() throws {
        let cli = try CLI()
        try cli.ok(["init", "--passphrase"], input: "first copper meadow harbor\n")
        try cli.ok(["add", "credential", "API"], input: "value-1\n")
        var code = try cli.ok(["recovery-code", "new"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(code.split(separator: "-").count == 8)
        let slots = try cli.ok(["slots", "--json"]).stdout
        #expect(slots.contains("device") && slots.contains("passphrase") && slots.contains("recovery"))
        // A second code voids the first: a script must say so.
        let unconfirmed = try cli.run(["recovery-code", "new"])
        #expect(unconfirmed.status == 64 && unconfirmed.stderr.contains("voids the one written down; pass --yes to confirm"))
        let replaced = try cli.ok(["recovery-code", "new", "--yes"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(replaced != code)
        try cli.ok(["slots", "remove", "recovery"], input: "first copper meadow harbor\n")
        // With no recovery code left, a new one voids nothing and needs no confirmation.
        code = try cli.ok(["recovery-code", "new"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(code.split(separator: "-").count == 8)
        #expect(try cli.run(["passphrase", "change"], input: "not it\nnew one\n").status == 77)
        try cli.ok(["passphrase", "change"], input: "first copper meadow harbor\nsecond violet tundra pencil\n")
        let backup = cli.home + "/backup.coffer"
        try cli.ok(["export", "--format", "backup", backup])

        let other = try CLI()
        try other.ok(["import", "--format", "backup", backup], input: "second violet tundra pencil\n")
        #expect(try other.ok(["show", "API", "--reveal"]).stdout.contains("value-1"))
        let third = try CLI()
        #expect(try third.run(["import", "--format", "backup", backup], input: "first copper meadow harbor\n").status == 77)
        try third.ok(["import", "--format", "backup", "--recovery-code", backup], input: code + "\n")
        #expect(try third.ok(["list"]).stdout.contains("API"))

        let rotated = try cli.ok(["rotate-key"], input: "second violet tundra pencil\n")
        let newCode = rotated.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(newCode != code && newCode.split(separator: "-").count == 8)
        #expect(try cli.ok(["show", "API", "--reveal"]).stdout.contains("value-1"))
        try cli.ok(["passphrase", "remove"])
        #expect(!(try cli.ok(["slots"]).stdout.contains("passphrase")))
    }

    @Test("Errors: one clear line, documented exit codes, nothing changed")
    func errors() throws {
        let cli = try CLI()
        let missing = try cli.run(["list"])
        #expect(missing.status == 66)
        #expect(missing.stderr.hasPrefix("coffer: error: no vault at "))
        #expect(missing.stderr.contains("coffer: hint: create one with `coffer init`"))
        try cli.ok(["init"])
        #expect(try cli.run(["init"]).status == 73)
        let secretURI = "otpauth://totp/X:y?secret=CANARYSECRETAAAA&digits=9"
        let badURI = try cli.run(["add", "otp"], input: secretURI + "\n")
        #expect(badURI.status == 65)
        #expect(CanaryScan.encodings(of: "CANARY", in: Data(badURI.standardError)).isEmpty && badURI.stderr.contains("digits"))
        #expect(badURI.stderr.split(separator: "\n").count == 1)
        #expect(try cli.run(["add", "card", "Empty"], input: "\n").status == 65)
        #expect(try cli.run(["add", "card", "None"]).status == 64)
        #expect(try cli.run(["add", "card", "Bad date", "--valid-to", "soon"], input: "1\n").status == 64)
        #expect(try cli.run(["export", "--format", "json"]).status == 64)
        #expect(try cli.run(["show", "nothing"]).status == 66)
        #expect(try cli.run(["add", "key", "K", "--stellar-seed"], input: "SB3MIS23KDF67IGB6YH2IZKE4W6UMICIEL7JYQCL5DZUM4ZM4VUBMUF4\n123456\n").status == 65)
        #expect(try cli.run(["add", "key", "K", "--stellar-seed"], input: "SB3MIS23KDF67IGB6YH2IZKE4W6UMICIEL7JYQCL5DZUM4ZM4VUBMUF3\n12345\n").status != 0)
        // A sign is not a hex digit: the seed's own reader took "+f" for 15 before it used Hex.decode.
        let signed = try cli.run(["add", "key", "K"], input: "+f" + String(repeating: "ab", count: 31) + "\n123456\n123456\n")
        #expect(signed.status == 64 && signed.stderr.contains("64 hex digits"), "\(signed.stderr)")
        #expect(try cli.run(["unlock"], input: "no passphrase slot\n").status == 66)
        #expect(try cli.ok(["list", "--json"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        let plaintext = try cli.run(["export", "--format", "json", "--plaintext"])
        #expect(plaintext.status == 0 && plaintext.stderr.contains("coffer: warning:"))
    }

    @Test("A vault written by a newer Coffer is refused with a clear error")
    func newerVault() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try DatabaseQueue(path: cli.vaultFile).write { db in try db.execute(sql: "UPDATE vault SET format_version = 7") }
        let result = try cli.run(["list"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("format version 7, newer than this Coffer supports (1)"))
    }

    @Test("Shell completions are generated")
    func completions() throws {
        let cli = try CLI()
        for shell in ["bash", "zsh", "fish"] {
            let script = try cli.ok(["--generate-completion-script", shell]).stdout
            #expect(script.contains("coffer"))
        }
    }

    @Test("scripts/install.sh puts both programs (and coffer-full in libexec), a man page per command and completions for three shells under a prefix")
    func install() throws {
        let built = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path
        guard FileManager.default.isExecutableFile(atPath: built + "/generate-manual") else {
            Issue.record("generate-manual is not built beside coffer: scripts/test.sh builds it (swift build --product generate-manual)")
            return
        }
        let prefix = try TestSupport.temporaryDirectory("install") + "/prefix"
        let script = TestSupport.repositoryRoot.appendingPathComponent("scripts/install.sh").path
        let result = try TestSupport.run("/bin/bash", [script, "--from", built, prefix], environment: ["PATH": "/usr/bin:/bin"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("installed coffer 0.1.0 and coffer-server in \(prefix)/bin"))
        #expect(result.stdout.contains("add \(prefix)/bin to PATH"))
        for tool in ["coffer", "coffer-server"] {
            #expect(FileManager.default.isExecutableFile(atPath: "\(prefix)/bin/\(tool)"))
            #expect(try String(contentsOfFile: "\(prefix)/share/man/man1/\(tool).1", encoding: .utf8).contains(".Nm \(tool)"))
            #expect(try String(contentsOfFile: "\(prefix)/share/bash-completion/completions/\(tool)", encoding: .utf8).contains("complete"))
            #expect(FileManager.default.fileExists(atPath: "\(prefix)/share/zsh/site-functions/_\(tool)"))
            #expect(FileManager.default.fileExists(atPath: "\(prefix)/share/fish/vendor_completions.d/\(tool).fish"))
        }
        #expect(try String(contentsOfFile: "\(prefix)/share/man/man1/coffer.code.1", encoding: .utf8).contains("one-time codes"))
        // The web vault beside it, when this checkout has built its WebAssembly (CI does, before the tests).
        let wasm = TestSupport.repositoryRoot.appendingPathComponent("Web/app/coffer-barcode.wasm").path
        if FileManager.default.fileExists(atPath: wasm) {
            for file in [
                "index.html", "app.css", "sw.js", "icon-192.png", "js/app.js", "js/scan-worker.js", "coffer-barcode.wasm",
                "coffer-scan.wasm",
            ] {
                #expect(FileManager.default.fileExists(atPath: "\(prefix)/share/coffer/web-vault/\(file)"), "\(file)")
            }
        }
        let version = try TestSupport.run("\(prefix)/bin/coffer", ["--version"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(version.stdout == CofferVersion.current + "\n")
        // The whole command tree is coffer-full's, out of PATH in libexec, and the installed coffer finds it.
        #expect(FileManager.default.isExecutableFile(atPath: "\(prefix)/libexec/coffer/coffer-full"))
        #expect(!FileManager.default.fileExists(atPath: "\(prefix)/bin/coffer-full"))
        let help = try TestSupport.run("\(prefix)/bin/coffer", ["--help"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(help.status == 0 && help.stdout.contains("sync") && help.stdout.contains("agent"), "\(help.stderr)")
    }

    @Test("scripts/install.sh --from takes the binaries a plain release build makes, without generate-manual beside them")
    func installFromPlainBuild() throws {
        let built = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().path
        let plain = try TestSupport.temporaryDirectory("plain-build")
        for tool in ["coffer", "coffer-full", "coffer-server"] {
            try FileManager.default.createSymbolicLink(atPath: "\(plain)/\(tool)", withDestinationPath: "\(built)/\(tool)")
        }
        let prefix = plain + "/prefix"
        let script = TestSupport.repositoryRoot.appendingPathComponent("scripts/install.sh").path
        // No swift on this PATH: the man pages are left out with a warning, and everything else is installed.
        let result = try TestSupport.run("/bin/bash", [script, "--from", plain, prefix], environment: ["PATH": "/bin"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("man pages are not installed"))
        #expect(result.stdout.contains("installed coffer 0.1.0 and coffer-server in \(prefix)/bin"))
        #expect(FileManager.default.isExecutableFile(atPath: "\(prefix)/libexec/coffer/coffer-full"))
        #expect(try String(contentsOfFile: "\(prefix)/share/bash-completion/completions/coffer", encoding: .utf8).contains("complete"))
        let missing = try TestSupport.run("/bin/bash", [script, "--from", plain + "/nothing", prefix], environment: ["PATH": "/bin"])
        #expect(missing.status == 1 && missing.stderr.contains("no coffer in \(plain)/nothing (build them with: swift build -c release)"))
    }

    @Test("`coffer run` hands the credential to the child's environment only")
    func runCommand() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        let canary = "sk-CANARY-RUN-\(UUID().uuidString)"
        try cli.ok(["add", "credential", "OpenAI"], input: canary + "\n")
        let result = try cli.ok([
            "run", "--env", "OPENAI_API_KEY=OpenAI", "--", "/bin/sh", "-c",
            "tr '\\0' ' ' < /proc/$$/cmdline > \"$HOME/argv\"; printf %s \"$OPENAI_API_KEY\" > \"$HOME/env\"",
        ])
        #expect(CanaryScan.encodings(of: canary, in: Data(result.standardOutput + result.standardError)).isEmpty)
        #expect(try String(contentsOfFile: cli.home + "/env", encoding: .utf8) == canary)
        #expect(CanaryScan.encodings(of: canary, in: try Data(contentsOf: URL(fileURLWithPath: cli.home + "/argv"))).isEmpty)
        let status = try cli.run(["run", "--env", "X=OpenAI", "--", "/bin/sh", "-c", "exit 7"])
        #expect(status.status == 7)
        // As shells do: 127 for no such program, 126 for one that cannot be run; neither prints the value.
        let missing = try cli.run(["run", "--env", "X=OpenAI", "--", "no-such-program-\(UUID().uuidString.prefix(6))"])
        #expect(missing.status == 127 && missing.stderr.contains("cannot run no-such-program") && !missing.stderr.contains(canary))
        #expect(try cli.run(["run", "--env", "X=OpenAI", "--", cli.home]).status == 126)
        // A name that is not a credential says what it is.
        try cli.ok(["add", "note", "Diary"], input: "text\n")
        let note = try cli.run(["run", "--env", "X=Diary", "--", "/bin/true"])
        #expect(note.status == 65 && note.stderr.contains("that item is a note, not a credential"))
    }
}
