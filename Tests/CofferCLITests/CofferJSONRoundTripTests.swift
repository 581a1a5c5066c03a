@_spi(Sync) import CofferKit
import CofferKeystore
import CofferTestSupport
import Foundation
import Testing

@Suite("coffer export --format json and import --from coffer-json", .offCooperativePool)
struct CofferJSONRoundTripTests {
    /// Fields `coffer add` cannot set (card metadata and notes, token and credential notes), brought in by a
    /// hand-written export so the vault holds every field the format has.
    static let seedExport = """
        {"format": "coffer-export", "version": 1,
         "user": {"id": "0b6f0e6e-0000-4000-8000-000000000000", "email": null, "created_at": "2026-01-01T00:00:00Z"},
         "cards": [{"id": "5e0b7c1a-1111-4a5b-8c9d-000000000001", "name": "Library", "barcode_type": "codabar",
                    "payload": "A40156B", "payload_encoding": "utf-8", "card_number": "40156", "tags": ["books"],
                    "network_ids": ["city-library"], "valid_to": "2028-06-30T23:59:59Z", "one_time": false,
                    "metadata": {"balance": "3.20", "balance_currency": "EUR", "lastUsedAt_city-library": "2026-01-02"},
                    "notes": "Renew at the front desk\\nBring ID", "created_at": "2026-01-02T09:00:00Z",
                    "updated_at": "2026-01-02T09:00:00Z"}],
         "otp": [{"id": "5e0b7c1a-2222-4a5b-8c9d-000000000001", "issuer": "Example", "account": "carol@example.com",
                  "uri": "otpauth://totp/Example:carol%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Example&algorithm=SHA512&digits=7&period=45",
                  "tags": ["personal"], "notes": "recovery codes in the safe", "created_at": "2026-01-02T09:00:00Z"}],
         "credentials": [{"id": "5e0b7c1a-3333-4a5b-8c9d-000000000001", "name": "Stripe", "value": "rk_live_0123456789abcdefghij",
                          "tags": [], "notes": "read-only key", "created_at": "2026-01-02T09:00:00Z"}],
         "signing_keys": [],
         "notes": [{"id": "5e0b7c1a-5555-4a5b-8c9d-000000000001", "name": "Wi-Fi", "template": "free",
                    "fields": [{"label": "SSID", "value": "home"}, {"label": "Password", "value": "correct horse"}],
                    "tags": ["house"], "created_at": "2026-01-02T09:00:00Z"}]}
        """

    /// A vault holding every kind and every field variety the export has.
    static func filledVault() throws -> CLI {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(
            [
                "add", "card", "Costco", "--symbology", "code128", "--network", "costco", "--tag", "grocery", "--tag", "family",
                "--valid-from", "2025-06-01", "--valid-to", "2099-01-31", "--card-number",
            ], input: "111222333\n1112 2233 3\n")
        try cli.ok(["add", "card", "Café", "--symbology", "qr", "--charset", "iso-8859-1"], input: "CAFÉ-1 ÿ\n")
        let binary = try TestSupport.run(
            CLI.binary, ["add", "card", "Transit", "--symbology", "aztec", "--charset", "binary"],
            input: [0x00, 0x01, 0x02, 0xFE, 0xFF, 0x80, 0x0A, 0x41], environment: cli.environment)
        #expect(binary.status == 0, "binary card: \(binary.stderr)")
        try cli.ok(["add", "card", "Amazon return", "--symbology", "qr", "--one-time"], input: "https://example.com/r/1\n")
        try cli.ok(["use", "Amazon return"])
        try cli.ok(["add", "card", "Concert", "--symbology", "pdf417", "--one-time", "--valid-to", "2099-05-01"], input: "TICKET-42\n")
        try cli.ok(["add", "card", "Old gym", "--symbology", "ean13"], input: "4006381333931\n")
        try cli.ok(["rm", "Old gym"])
        try cli.ok(
            ["add", "otp", "--tag", "work"],
            input: "otpauth://totp/GitHub:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=GitHub&algorithm=SHA256&digits=8&period=60\n")
        try cli.ok(["add", "otp", "--issuer", "Duo", "--account", "bob", "--type", "hotp", "--counter", "7"], input: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ\n")
        try cli.ok(["add", "otp", "--issuer", "Steam", "--account", "gamer", "--type", "steam"], input: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ\n")
        try cli.ok(["add", "credential", "OpenAI", "--provider", "openai", "--tag", "ai"], input: "sk-proj-0123456789abcdef\n")
        try cli.ok(
            ["add", "note", "KYC", "--template", "kyc", "--tag", "id"], input: "First name: Ada\nLast name: Lovelace\nSeen on 2026-01-02\nsecond line\n")
        try cli.ok(["add", "note", "Diary"], input: "Only free text, with ünïcode.\n")
        try cli.ok(["add", "key", "Stellar main", "--stellar-seed"], input: "SB3MIS23KDF67IGB6YH2IZKE4W6UMICIEL7JYQCL5DZUM4ZM4VUBMUF3\n654321\n")
        let seed = cli.home + "/seed.json"
        try Data(seedExport.utf8).write(to: URL(fileURLWithPath: seed))
        try cli.ok(["import", "--from", "coffer-json", seed])
        return cli
    }

    static func export(_ cli: CLI, to name: String) throws -> (path: String, json: [String: Any]) {
        let path = cli.home + "/" + name
        try cli.ok(["export", "--format", "json", "--plaintext", path])
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return (path, try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any]))
    }

    /// Each section's entries without what a new vault gives afresh (ids and times of creation and change), as
    /// sorted canonical JSON, so two exports compare as multisets: items added together sort by their new ids.
    static func comparable(_ export: [String: Any]) throws -> [String: [String]] {
        var sections: [String: [String]] = [:]
        for section in ["cards", "otp", "credentials", "signing_keys", "notes"] {
            let entries = try #require(export[section] as? [[String: Any]], "\(section)")
            sections[section] = try entries.map { entry in
                var entry = entry
                for key in ["id", "created_at", "updated_at"] { entry.removeValue(forKey: key) }
                return String(decoding: try JSONSerialization.data(withJSONObject: entry, options: [.sortedKeys]), as: UTF8.self)
            }.sorted()
        }
        return sections
    }

    @Test("Export, import into a fresh vault and export again: the same items, field for field")
    func roundTrip() throws {
        let source = try Self.filledVault()
        let (firstPath, first) = try Self.export(source, to: "first.json")
        let before = try Self.comparable(first)
        #expect(before["cards"]?.count == 7 && before["otp"]?.count == 4 && before["credentials"]?.count == 2)
        #expect(before["signing_keys"]?.count == 1 && before["notes"]?.count == 3)
        // The export really holds the varieties the test means to carry.
        let cardText = before["cards"]?.joined() ?? ""
        for fragment in [
            #""payload_encoding":"iso-8859-1""#, #""payload_encoding":"base64""#, #""used_at":"#, #""archived_at":"#,
            #""card_number":"1112 2233 3""#, #""valid_from":"#, #""metadata":{"balance""#, #""one_time":true"#, #""notes":"Renew"#,
        ] {
            #expect(cardText.contains(fragment), "the source export lacks \(fragment)")
        }

        let target = try CLI()
        try target.ok(["init"])
        let imported = try target.ok(["import", "--from", "coffer-json", firstPath])
        #expect(imported.stderr.contains("Imported 16 items from coffer-json."), "\(imported.stderr)")
        #expect(imported.stderr.contains("1 entry could not be imported"))
        #expect(imported.stderr.contains("Stellar main: not imported: a signing key's seed never leaves its PIN box"))

        let (_, second) = try Self.export(target, to: "second.json")
        var after = try Self.comparable(second)
        #expect(after["signing_keys"] == [])
        after["signing_keys"] = before["signing_keys"]
        for section in before.keys.sorted() {
            #expect(after[section] == before[section], "\(section) changed in the round trip")
        }
        // Archived cards stay archived and used passes stay used: they work as before in the new vault.
        #expect(try target.ok(["list", "--archived"]).stdout.contains("Old gym"))
        #expect(try target.run(["use", "Amazon return"]).status == 65)
        #expect(try target.ok(["code", "Duo"]).stdout.hasPrefix(try source.ok(["code", "Duo"]).stdout.prefix(6)))

        // A second import finds everything already there.
        let again = try target.ok(["import", "--from", "coffer-json", firstPath])
        #expect(again.stderr.contains("Imported 0 items") && again.stderr.contains("Skipped 16 already in the vault"))
    }

    @Test("A newer export version, or a file that is not an export, is refused with exit 65 and nothing added")
    func refusals() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        let newer = cli.home + "/newer.json"
        try Data(Self.seedExport.replacingOccurrences(of: #""version": 1"#, with: #""version": 2"#).utf8).write(to: URL(fileURLWithPath: newer))
        let refused = try cli.run(["import", "--from", "coffer-json", newer])
        #expect(refused.status == 65 && refused.stderr.contains("unsupported file version 2"), "\(refused.stderr)")
        let truncated = cli.home + "/truncated.json"
        try Data(Self.seedExport.utf8.dropLast(30)).write(to: URL(fileURLWithPath: truncated))
        let broken = try cli.run(["import", "--from", "coffer-json", truncated])
        #expect(broken.status == 65 && broken.stderr.contains("not valid JSON"), "\(broken.stderr)")
        #expect(!broken.stderr.contains("rk_live") && !refused.stderr.contains("rk_live"))
        #expect(try cli.ok(["list"]).stdout.isEmpty)
    }
}

@Suite("Import progress", .offCooperativePool)
struct ImportProgressTests {
    @Test("addImported reports progress while checking and writing, ending at (n, n) once stored", arguments: [0, 1, 300, 1_000])
    func progressReachesTotal(count: Int) throws {
        let root = try TestSupport.temporaryDirectory("progress")
        let location = CofferLocation(vaultDirectory: root + "/vault", keystore: FileKeystore(directory: root + "/keystore"))
        let coffer = try Coffer.initialize(at: location)
        let contents: [ItemContent] = try (0..<count).map { index in
            .credential(try Credential(name: "API \(index)", value: "value-\(index)"))
        }
        // A duplicate within the import is handled (done) as soon as it is found.
        let withDuplicate = contents + contents.prefix(1)
        var calls: [(done: Int, total: Int)] = []
        let summary = try coffer.addImported(withDuplicate) { done, total in
            calls.append((done, total))
        }
        #expect(summary.added == count && summary.duplicates.count == min(count, 1))
        let total = withDuplicate.count
        #expect(calls.last.map { $0 == (total, total) } == true, "\(calls.suffix(3))")
        #expect(calls.allSatisfy { $0.total == total && $0.done <= total })
        #expect(zip(calls, calls.dropFirst()).allSatisfy { $0.done <= $1.done }, "progress never goes back")
        #expect(try coffer.items().count == count, "the final report comes after the items are stored")
        // Reports along the way on large imports, while checking and while writing, not only at the end.
        #expect(calls.count == (total / 256 + 1) + count / 256 + 1)
    }
}
