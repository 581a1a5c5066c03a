import CofferTestSupport
import Foundation
import Testing

/// `coffer import --from keepass` on databases KeePassXC and pykeepass write during the test, as a user leaving
/// KeePassXC would run it: the password on standard input, every entry in one transaction, a wrong password or a
/// damaged file refused with one line and nothing added.
@Suite("coffer import --from keepass", .offCooperativePool)
struct KeePassCLITests {
    static let password = "keepass fixture pw ✓"

    /// The writers' databases in a fresh directory (Tests/CofferInteropTests/Fixtures/keepass/make_keepass.py).
    static func databases() throws -> String {
        let directory = try TestSupport.temporaryDirectory("keepass")
        let script = TestSupport.repositoryRoot.appendingPathComponent("Tests/CofferInteropTests/Fixtures/keepass/make_keepass.py").path
        let made = try TestSupport.run("/usr/bin/python3", [script, directory])
        try #require(made.status == 0, "make_keepass.py (python3-pykeepass, keepassxc-cli): \(made.stderr.suffix(400))")
        return directory
    }

    static func kinds(_ cli: CLI) throws -> [String: Int] {
        let items = try #require(try JSONSerialization.jsonObject(with: Data(try cli.ok(["list", "--json"]).standardOutput)) as? [[String: Any]])
        return items.reduce(into: [:]) { $0[$1["kind"] as? String ?? "?", default: 0] += 1 }
    }

    @Test("KeePassXC's KDBX 4 and pykeepass's ChaCha20/Argon2id databases import; the password stays hidden")
    func importsDatabases() throws {
        let directory = try Self.databases()
        let cli = try CLI()
        try cli.ok(["init"])

        let keepassxc = try cli.ok(["import", "--from", "keepass", directory + "/keepassxc_kdbx4.kdbx"], input: Self.password + "\n")
        #expect(keepassxc.stderr.contains("Imported 4 items from keepass."), "\(keepassxc.stderr)")
        #expect(keepassxc.stderr.contains("Gym card: the attached file \"readme.txt\" is not a PNG or JPEG picture"), "\(keepassxc.stderr)")
        #expect(try Self.kinds(cli) == ["credential": 2, "otp": 1, "card": 1])
        // The pictures KeePassXC attached, as the card's photos: a file on disk byte for byte.
        #expect(try cli.ok(["show", "Gym card"]).stdout.contains("99887766"))
        let shown = try cli.ok(["show", "Mail"]).stdout
        #expect(shown.contains("Provider: mail.example.org") && shown.contains("Username: frank"), "\(shown)")
        #expect(shown.contains("URL:      https://mail.example.org/") && shown.contains("Notes:    webmail"), "\(shown)")
        #expect(!shown.contains("mail pass"), "a credential is shown masked")
        #expect(try cli.ok(["show", "Mail", "--reveal"]).stdout.contains("mail pass ✓"))

        let pykeepass = try cli.ok(["import", "--from", "keepass", directory + "/pykeepass_chacha20_argon2id.kdbx"], input: Self.password + "\n")
        #expect(pykeepass.stderr.contains("Imported 7 items from keepass."), "\(pykeepass.stderr)")
        #expect(pykeepass.stderr.contains("coffer: warning: 2 entries could not be imported:"))
        #expect(pykeepass.stderr.contains("GitHub: the protected field \"PIN\" is not kept"))
        #expect(!pykeepass.stderr.contains("4321") && !pykeepass.stderr.contains(Self.password))
        #expect(try Self.kinds(cli) == ["credential": 4, "otp": 5, "note": 1, "card": 1])
        #expect(try cli.ok(["code", "Legacy Bank", "--json"]).stdout.contains("\"code\""))
    }

    @Test("--key-file opens a database with its key file, with or without a password; a missing part is named")
    func keyFile() throws {
        let directory = try Self.databases()
        let cli = try CLI()
        try cli.ok(["init"])
        let only = try cli.ok(
            [
                "import", "--from", "keepass", directory + "/keepassxc_keyfile_only.kdbx", "--key-file",
                directory + "/keepassxc_only.keyx",
            ], input: "\n")
        #expect(only.stderr.contains("Imported 1 item from keepass."), "\(only.stderr)")
        let both = directory + "/keepassxc_keyfile.kdbx"
        let withoutKey = try cli.run(["import", "--from", "keepass", both], input: Self.password + "\n")
        #expect(
            withoutKey.status == 77
                && withoutKey.stderr.hasPrefix(
                    "coffer: error: the password does not open this database (if it also needs a key file, give it with --key-file)"),
            "\(withoutKey.stderr)")
        let imported = try cli.ok(["import", "--from", "keepass", both, "--key-file", directory + "/keepassxc.keyx"], input: Self.password + "\n")
        #expect(imported.stderr.contains("Imported 1 item from keepass."), "\(imported.stderr)")
        let attachments = try cli.ok(
            [
                "import", "--from", "keepass", directory + "/pykeepass_keyfile_1.kdbx", "--key-file",
                directory + "/hex.key",
            ], input: Self.password + "\n")
        #expect(attachments.stderr.contains("Scans: the attached file \"notes.txt\" is not a PNG or JPEG picture"), "\(attachments.stderr)")
        #expect(attachments.stderr.contains("Imported 2 items from keepass."), "\(attachments.stderr)")
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(try cli.ok(["list", "--json"]).stdout.utf8)) as? [[String: Any]])
        let card = try #require(listed.first { $0["kind"] as? String == "card" && $0["name"] as? String == "Scans" }?["id"] as? String)
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(try cli.ok(["show", card, "--json"]).stdout.utf8)) as? [String: Any])
        #expect((shown["photos"] as? [Any])?.count == 2, "\(shown)")
        let elsewhere = try cli.run(["import", "--from", "aegis", both, "--key-file", directory + "/hex.key"])
        #expect(elsewhere.status == 64 && elsewhere.stderr.contains("--key-file is for KeePass databases"))
    }

    @Test("A wrong password, a truncated file and absurd costs: one line, a non-zero exit, nothing added")
    func refusals() throws {
        let directory = try Self.databases()
        let cli = try CLI()
        try cli.ok(["init"])
        let file = directory + "/pykeepass_aes_argon2d.kdbx"
        let wrong = try cli.run(["import", "--from", "keepass", file], input: "not it\n")
        #expect(wrong.status == 77 && wrong.stderr.hasPrefix("coffer: error:"), "\(wrong.stderr)")

        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        let truncated = directory + "/truncated.kdbx"
        try data.dropLast(40).write(to: URL(fileURLWithPath: truncated))
        let cut = try cli.run(["import", "--from", "keepass", truncated], input: Self.password + "\n")
        #expect(cut.status != 0 && cut.stderr == "coffer: error: the file is not readable: a payload block is cut short (truncated file)\n", "\(cut.stderr)")

        // Argon2 asking for 1 TiB, the header's hash made right again (by Python's hashlib): refused before any work.
        let costly = directory + "/costly.kdbx"
        let edit = """
            import hashlib, struct, sys
            data = bytearray(open(sys.argv[1], "rb").read())
            marker = bytes([5, 1, 0, 0, 0]) + b"M" + bytes([8, 0, 0, 0])
            at = data.index(marker) + len(marker)
            data[at:at + 8] = struct.pack("<Q", 1 << 40)
            offset = 12
            while True:
                field, length = data[offset], struct.unpack_from("<I", data, offset + 1)[0]
                offset += 5 + length
                if field == 0:
                    break
            data[offset:offset + 32] = hashlib.sha256(data[:offset]).digest()
            open(sys.argv[2], "wb").write(data)
            """
        try #require(try TestSupport.run("/usr/bin/python3", ["-c", edit, file, costly]).status == 0)
        let absurd = try cli.run(["import", "--from", "keepass", costly], input: Self.password + "\n")
        #expect(absurd.status != 0 && absurd.stderr.hasPrefix("coffer: error: key-derivation parameters out of bounds"), "\(absurd.stderr)")
        #expect(absurd.stderr.split(separator: "\n").count == 1)

        #expect(try cli.ok(["list"]).stdout.isEmpty)
    }
}
