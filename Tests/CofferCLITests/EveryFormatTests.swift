@_spi(Sync) import CofferKit
import CofferKeystore
import CofferTestSupport
import CofferVault
import Foundation
import Testing

/// Every importer's fixtures go into one vault, then out through every export format: no item blocks an export,
/// and each export holds every item its format can carry and lists the others with the reason (issue 15, point 6).
@Suite("Every fixture in, every format out", .offCooperativePool)
struct EveryFormatTests {
    static let fixtures = TestSupport.repositoryRoot.appendingPathComponent("Tests/CofferInteropTests/Fixtures").path

    /// (format, file under Fixtures, password): every readable fixture; the hostile ones are the importers' own tests.
    /// KeePass databases are not committed (the tests' writers make them): KeePassCLITests imports them.
    static let imports: [(format: String, file: String, password: String?)] = [
        ("2fas", "2fas/plain.2fas", nil), ("2fas", "2fas/encrypted.2fas", "correct horse 2fas"), ("2fas", "2fas/v1.2fas", nil),
        ("aegis", "aegis/plain_v2.json", nil), ("aegis", "aegis/encrypted_v1.json", "coffer test passphrase"),
        ("aegis", "aegis/encrypted_v3.json", "coffer test passphrase"),
        ("andotp", "andotp/plain.json", nil), ("andotp", "andotp/encrypted.json.aes", "andOTP backup pw"),
        ("andotp", "andotp/old-format.json.aes", "andOTP backup pw"),
        ("bitwarden-json", "bitwarden/export.json", nil), ("bitwarden-csv", "bitwarden/export.csv", nil),
        ("bitwarden-json", "bitwarden/encrypted_pbkdf2.json", "bitwarden export pw ✓"),
        ("bitwarden-json", "bitwarden/encrypted_argon2.json", "bitwarden export pw ✓"),
        ("catima", "catima/catima_v2.zip", nil), ("catima", "catima/catima_v2_stored.zip", nil), ("catima", "catima/catima_v1.csv", nil),
        ("ente", "ente/export.txt", nil), ("freeotp-plus", "freeotp-plus/export.json", nil), ("google", "google/export.txt", nil),
        ("otpauth", "otpauth/list.txt", nil), ("proton", "proton/export.json", nil),
        ("proton", "proton/encrypted.json", "proton export pw ✓"),
        ("pkpass", "pkpass/store_card.pkpass", nil), ("pkpass", "pkpass/code128.pkpass", nil),
        ("pkpass", "pkpass/legacy_barcode.pkpass", nil), ("pkpass", "pkpass/no_barcode.pkpass", nil),
        ("pkpass", "pkpass/bundle.pkpasses", nil), ("ente", "ente/encrypted.json", "ente export pw ✓"),
        ("steam", "steam/maFiles_encrypted.zip", "steam desktop pw ✓"), ("duo", "duo/accounts.json", nil),
        ("fidme", "fidme/export.zip", nil), ("stratum", "stratum/backup.authpro", "stratum backup pw ✓"),
        ("stratum", "stratum/backup_legacy.authpro", "stratum backup pw ✓"),
        ("authy", "authy/encrypted.xml", "authy backup pw ✓"), ("authy", "authy/authy_tokens.xml", nil),
        ("authenticator-plus", "authenticator-plus/backup.zip", "plus backup pw 42"),
        ("battlenet", "battlenet/authenticator_preferences.xml", nil),
        ("freeotp", "freeotp/tokens.xml", nil), ("freeotp", "freeotp/externalBackup.xml", "freeotp backup pw ✓"),
        ("google", "google-db/databases", nil), ("microsoft", "microsoft/PhoneFactor", nil),
        ("totp-authenticator", "totp-authenticator/backup.encrypt", "totp authenticator pw ✓"),
        ("steam", "steam-app/Steamguard-multi", nil),
    ]

    /// How many items of each kind `cli`'s vault holds.
    static func counts(_ cli: CLI) throws -> [String: Int] {
        let items = try #require(try JSONSerialization.jsonObject(with: Data(try cli.ok(["list", "--json"]).standardOutput)) as? [[String: Any]])
        return items.reduce(into: [:]) { counts, item in counts[item["kind"] as? String ?? "?", default: 0] += 1 }
    }

    /// A fresh vault holding what `file` imports as `format`.
    static func reimported(_ format: String, _ file: String, password: String? = nil) throws -> CLI {
        let other = try CLI()
        try other.ok(["init"])
        try other.ok(["import", "--from", format, file], input: password.map { $0 + "\n" } ?? "")
        return other
    }

    /// The entries an export listed as left out: the count its warning gives, and the lines naming them.
    static func leftOut(_ stderr: String) -> (count: Int, lines: [String]) {
        let lines = stderr.split(separator: "\n").map(String.init)
        guard let warning = lines.firstIndex(where: { $0.hasPrefix("coffer: warning: left out ") && $0.contains("cannot hold") }) else {
            return (0, [])
        }
        let count = Int(lines[warning].dropFirst("coffer: warning: left out ".count).prefix { $0.isNumber }) ?? -1
        return (count, Array(lines[(warning + 1)...].prefix { $0.hasPrefix("  ") }))
    }

    @Test("Import every fixture, add a token an older Coffer stored with a colon in its account, then export every format")
    func everyFixtureThenEveryExport() throws {
        let cli = try CLI()
        try cli.ok(["init", "--passphrase"], input: "every format velvet lantern\n")
        for (format, file, password) in Self.imports {
            let result = try cli.run(["import", "--from", format, Self.fixtures + "/" + file], input: password.map { $0 + "\n" } ?? "")
            #expect(result.status == 0 && result.stderr.contains("Imported"), "\(format) \(file): \(result.stderr)")
        }
        // andOTP's whole label "Airbnb:Elijah" is split on import by the Key URI rules; "carol:admin" at "Big Corp"
        // is not a label of that issuer, and is kept whole.
        let tokens = try cli.ok(["list", "--kind", "otp"]).stdout
        #expect(tokens.contains("Airbnb (Elijah)") && tokens.contains("Airbnb (Frank)") && !tokens.contains("Airbnb:"))
        #expect(tokens.contains("Big Corp (carol:admin)"))

        // An older Coffer kept such a label whole as the account; its vault must still export.
        let location = CofferLocation(vaultDirectory: cli.vaultDirectory, keystore: FileKeystore(directory: cli.keystoreDirectory))
        var legacy = try OTPItem(
            issuer: "Legacy", account: "Elijah", parameters: try OTPParameters(secret: Array("legacy colon secret!".utf8)))
        legacy.account = "Legacy:Elijah"
        _ = try Coffer.open(at: location).vault.add(.otp(legacy))

        let counts = try Self.counts(cli)
        let all = counts.values.reduce(0, +)
        let cards = counts["card", default: 0]
        let otp = counts["otp", default: 0]
        #expect(cards >= 10 && otp >= 20, "\(counts)")
        // Neither account has an otpauth:// URI: URI formats list both and write everything else.
        let noURI: Set = [
            "  Legacy (Legacy:Elijah): token: the account name must not contain a colon",
            "  Big Corp (carol:admin): token: the account name must not contain a colon",
        ]

        // Plaintext JSON: every item but those two, which are listed; it reads back.
        let json = cli.home + "/export.json"
        let jsonRun = try cli.ok(["export", "--format", "json", "--plaintext", json])
        #expect(Self.leftOut(jsonRun.stderr).count == 2 && Set(Self.leftOut(jsonRun.stderr).lines) == noURI, "\(jsonRun.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
        let written = ["cards", "otp", "credentials", "notes", "signing_keys"].map { (document[$0] as? [Any])?.count ?? 0 }.reduce(0, +)
        #expect(written == all - 2)
        let fromJSON = try Self.counts(try Self.reimported("coffer-json", json))
        #expect(fromJSON.values.reduce(0, +) == all - 2 && fromJSON["card"] == cards)

        // Encrypted backup: everything.
        let backup = cli.home + "/vault.backup"
        try cli.ok(["export", "--format", "backup", backup])
        let restored = try CLI()
        try restored.ok(["import", "--format", "backup", backup], input: "every format velvet lantern\n")
        #expect(try Self.counts(restored) == counts)

        // Aegis keeps issuer and account apart, so it carries every token.
        let aegis = cli.home + "/export.aegis"
        let aegisRun = try cli.ok(["export", "--to", "aegis", aegis], input: "aegis export pw\n")
        #expect(Self.leftOut(aegisRun.stderr).count == 0)
        #expect(try Self.counts(try Self.reimported("aegis", aegis, password: "aegis export pw"))["otp"] == otp)

        // otpauth:// lines: every token but the two, which are listed.
        let list = cli.home + "/export.txt"
        let listRun = try cli.ok(["export", "--to", "otpauth", "--plaintext", list])
        #expect(Set(Self.leftOut(listRun.stderr).lines) == noURI, "\(listRun.stderr)")
        #expect(try Self.counts(try Self.reimported("otpauth", list))["otp"] == otp - 2)

        // Google Authenticator: what its format holds; the rest (Steam, 7 digits, other periods) listed by name.
        let google = cli.home + "/google.txt"
        let googleRun = try cli.ok(["export", "--to", "google", "--plaintext", google])
        let googleLeftOut = Self.leftOut(googleRun.stderr)
        #expect(googleLeftOut.count > 0 && googleLeftOut.lines.count == googleLeftOut.count)
        #expect(try Self.counts(try Self.reimported("google", google))["otp"] == otp - googleLeftOut.count)

        // Catima: every card, those without a barcode included.
        let catima = cli.home + "/cards.zip"
        try cli.ok(["export", "--to", "catima", "--plaintext", catima])
        #expect(try Self.counts(try Self.reimported("catima", catima))["card"] == cards)
    }
}
