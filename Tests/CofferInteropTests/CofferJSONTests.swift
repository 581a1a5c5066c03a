import CofferBarcode
import CofferCrypto
import CofferModel
import CofferOTP
import Foundation
import Testing

@testable import CofferInterop

/// Coffer's plaintext export (docs/FORMAT.md §7) written out by hand, one fragment per entry, so each test changes
/// exactly one thing. The round trip through the real exporter is tested in CofferCLITests.
enum CofferExportText {
    static let rfcSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    static let fullCard = """
        {"id": "5e0b7c1a-1111-4a5b-8c9d-000000000001", "name": "Costco", "barcode_type": "code128",
         "payload": "111222333", "payload_encoding": "utf-8", "card_number": "1112 2233 3", "tags": ["grocery", "family"],
         "network_ids": ["costco"], "valid_from": "2025-06-01T00:00:00Z", "valid_to": "2027-12-31T23:59:59Z",
         "one_time": false, "metadata": {"balance": "12.50", "balance_currency": "EUR"}, "notes": "Line one\\nLine two",
         "created_at": "2026-01-31T12:00:00Z", "updated_at": "2026-02-01T08:30:00Z"}
        """
    static let latin1Card = """
        {"id": "5e0b7c1a-1111-4a5b-8c9d-000000000002", "name": "Café", "barcode_type": "qr", "payload": "CAFÉ-1",
         "payload_encoding": "iso-8859-1", "tags": [], "network_ids": [], "one_time": false, "metadata": {},
         "created_at": "2026-01-31T12:00:00Z", "updated_at": "2026-01-31T12:00:00Z"}
        """
    static let binaryCard = """
        {"id": "5e0b7c1a-1111-4a5b-8c9d-000000000003", "name": "Transit", "barcode_type": "aztec",
         "payload": "AAEC/v+AQQ==", "payload_encoding": "base64", "tags": [], "network_ids": [], "one_time": false,
         "metadata": {}, "created_at": "2026-01-31T12:00:00Z", "updated_at": "2026-01-31T12:00:00Z"}
        """
    static let usedArchivedPass = """
        {"id": "5e0b7c1a-1111-4a5b-8c9d-000000000004", "name": "Return", "barcode_type": "qr",
         "payload": "https://example.com/r/1", "payload_encoding": "utf-8", "tags": [], "network_ids": [],
         "one_time": true, "used_at": "2026-02-01T08:30:00Z", "archived_at": "2026-03-01T10:00:00Z", "metadata": {},
         "created_at": "2026-01-31T12:00:00Z", "updated_at": "2026-03-01T10:00:00Z"}
        """
    static let totp = """
        {"id": "5e0b7c1a-2222-4a5b-8c9d-000000000001", "issuer": "GitHub", "account": "alice",
         "uri": "otpauth://totp/GitHub:alice?secret=\(rfcSecret)&issuer=GitHub&algorithm=SHA256&digits=8&period=60",
         "tags": ["work"], "notes": "backup codes in the safe", "created_at": "2026-01-31T12:00:00Z"}
        """
    static let hotp = """
        {"id": "5e0b7c1a-2222-4a5b-8c9d-000000000002", "issuer": "Duo", "account": "bob",
         "uri": "otpauth://hotp/Duo:bob?secret=\(rfcSecret)&issuer=Duo&algorithm=SHA1&digits=6&counter=5",
         "tags": [], "created_at": "2026-01-31T12:00:00Z"}
        """
    static let steam = """
        {"id": "5e0b7c1a-2222-4a5b-8c9d-000000000003", "issuer": "Steam", "account": "gamer",
         "uri": "otpauth://steam/Steam:gamer?secret=\(rfcSecret)&issuer=Steam", "tags": [],
         "created_at": "2026-01-31T12:00:00Z"}
        """
    static let credential = """
        {"id": "5e0b7c1a-3333-4a5b-8c9d-000000000001", "name": "OpenAI", "provider": "openai",
         "value": "sk-proj-0123456789abcdef", "tags": ["ai"], "notes": "rotate yearly", "username": "ops@example.com",
         "url": "https://platform.openai.com/", "created_at": "2026-01-31T12:00:00Z"}
        """
    static let signingKey = """
        {"id": "5e0b7c1a-4444-4a5b-8c9d-000000000001", "name": "Stellar main", "algorithm": "ed25519",
         "flavor": "stellar", "public_key": "GBVOZ3E4SX7SL2WNBUZ5YAUGBO2RS3VY7MSFXXH4SIEVRGDQNGGDDLNK"}
        """
    static let note = """
        {"id": "5e0b7c1a-5555-4a5b-8c9d-000000000001", "name": "Contact Bob", "template": "contact",
         "fields": [{"label": "Email", "value": "bob@example.com"}, {"label": "Phone", "value": "+1 555 0100"}],
         "text": "Met at the café", "tags": ["people"], "created_at": "2026-01-31T12:00:00Z"}
        """

    static let user = #"{"id": "0b6f0e6e-0000-4000-8000-000000000000", "email": null, "created_at": "2026-01-01T00:00:00Z"}"#

    /// A whole export; `extra` is spliced in before the closing brace.
    static func export(
        version: String = "1", cards: [String] = [], otp: [String] = [], credentials: [String] = [],
        signingKeys: [String] = [], notes: [String] = [], extra: String = ""
    ) -> [UInt8] {
        Array(
            """
            {"format": "coffer-export", "version": \(version), "user": \(user),
             "cards": [\(cards.joined(separator: ","))], "otp": [\(otp.joined(separator: ","))],
             "credentials": [\(credentials.joined(separator: ","))],
             "signing_keys": [\(signingKeys.joined(separator: ","))], "notes": [\(notes.joined(separator: ","))]\(extra)}
            """.utf8)
    }

    static let everything = export(
        cards: [fullCard, latin1Card, binaryCard, usedArchivedPass], otp: [totp, hotp, steam], credentials: [credential],
        signingKeys: [signingKey], notes: [note])

    /// `fragment` with the text `old` replaced (exactly once) by `new`.
    static func replacing(_ fragment: String, _ old: String, _ new: String) -> String {
        precondition(fragment.components(separatedBy: old).count == 2, "the test's replacement must match once")
        return fragment.replacingOccurrences(of: old, with: new)
    }
}

@Suite("Coffer JSON export import")
struct CofferJSONTests {
    typealias Text = CofferExportText

    static func date(_ seconds: TimeInterval) -> Date { Date(timeIntervalSince1970: seconds) }

    @Test("Every kind and field the exporter writes is read back")
    func readsEverything() throws {
        let result = try CofferJSONImporter.read(Text.everything, password: nil)
        #expect(result.problems == [ImportProblem(entry: "Stellar main", reason: CofferJSONImporter.signingKeyReason)])
        #expect(CofferJSONImporter.signingKeyReason == "not imported: a signing key's seed never leaves its PIN box")
        let expected: [ItemContent] = [
            .card(
                try Card(
                    name: "Costco", symbology: .code128, payload: Array("111222333".utf8), payloadCharset: .utf8,
                    cardNumber: "1112 2233 3", tags: ["grocery", "family"], networkIDs: ["costco"],
                    validFrom: Self.date(1_748_736_000), validTo: Self.date(1_830_297_599), notes: "Line one\nLine two",
                    metadata: ["balance": "12.50", "balance_currency": "EUR"])),
            .card(try Card(name: "Café", symbology: .qr, payload: Array("CAF".utf8) + [0xC9] + Array("-1".utf8), payloadCharset: .latin1)),
            .card(try Card(name: "Transit", symbology: .aztec, payload: [0, 1, 2, 0xFE, 0xFF, 0x80, 0x41], payloadCharset: .binary)),
            .card(
                try Card(
                    name: "Return", symbology: .qr, payload: Array("https://example.com/r/1".utf8), oneTime: true,
                    usedAt: Self.date(1_769_934_600), archivedAt: Self.date(1_772_359_200))),
            .otp(
                try OTPItem(
                    issuer: "GitHub", account: "alice",
                    parameters: try OTPParameters(
                        secret: Array("12345678901234567890".utf8), algorithm: .sha256, digits: 8, kind: .totp(period: 60)),
                    tags: ["work"], notes: "backup codes in the safe")),
            .otp(
                try OTPItem(
                    issuer: "Duo", account: "bob",
                    parameters: try OTPParameters(secret: Array("12345678901234567890".utf8), kind: .hotp(counter: 5)))),
            .otp(
                try OTPItem(
                    issuer: "Steam", account: "gamer",
                    parameters: try OTPParameters(secret: Array("12345678901234567890".utf8), kind: .steam))),
            .credential(
                try Credential(
                    name: "OpenAI", provider: "openai", value: "sk-proj-0123456789abcdef", tags: ["ai"], notes: "rotate yearly",
                    username: "ops@example.com", url: "https://platform.openai.com/")),
            .note(
                try Note(
                    name: "Contact Bob", template: .contact,
                    fields: [Note.Field(label: "Email", value: "bob@example.com"), Note.Field(label: "Phone", value: "+1 555 0100")],
                    text: "Met at the café", tags: ["people"])),
        ]
        #expect(result.items.count == expected.count)
        for (read, wanted) in zip(result.items, expected) { #expect(read == wanted) }
    }

    @Test("An empty export reads as nothing, and fractional seconds and null optionals are accepted")
    func emptyAndLenientOptionals() throws {
        #expect(try CofferJSONImporter.read(Text.export(), password: nil) == ImportResult())
        let card = Text.replacing(
            Text.replacing(Text.latin1Card, #""tags": []"#, #""card_number": null, "notes": null, "tags": []"#),
            #""created_at": "2026-01-31T12:00:00Z""#, #""created_at": "2026-01-31T12:00:00.250Z""#)
        let result = try CofferJSONImporter.read(Text.export(cards: [card]), password: nil)
        #expect(result.problems.isEmpty && result.items.count == 1)
    }

    @Test("The importer is registered under --from coffer-json")
    func registered() {
        #expect(ImportFormats.importer(named: "coffer-json") == CofferJSONImporter.self)
        #expect(ImportFormats.names.contains("coffer-json"))
    }

    /// Files that stop the import, each with the error it must give.
    static let brokenFiles: [(String, [UInt8], InteropError)] = [
        ("truncated", Array(Text.everything.dropLast(40)), .malformedFile("not valid JSON (truncated or damaged)")),
        ("cut after one byte", Array(Text.everything.prefix(1)), .malformedFile("not valid JSON (truncated or damaged)")),
        ("empty", [], .malformedFile("not valid JSON (truncated or damaged)")),
        ("binary junk", [0xFF, 0xFE, 0x00, 0x7B], .malformedFile("not valid JSON (truncated or damaged)")),
        ("a list", Array("[]".utf8), .malformedFile("the export is not a JSON object")),
        ("another format", Array(#"{"format": "aegis", "version": 1}"#.utf8), .malformedFile(#""format" is not "coffer-export""#)),
        ("no format", Array(#"{"version": 1}"#.utf8), .malformedFile(#""format" is not "coffer-export""#)),
        ("unknown version", Text.export(version: "2"), .unsupportedVersion("2")),
        ("version 0", Text.export(version: "0"), .unsupportedVersion("0")),
        ("version as text", Text.export(version: #""1""#), .malformedFile(#""version" is not a number"#)),
        ("fractional version", Text.export(version: "1.5"), .malformedFile(#""version" is not a whole number"#)),
        ("whole fractional version", Text.export(version: "2.0"), .unsupportedVersion("2")),
        ("version beyond 64 bits", Text.export(version: "18446744073709551615"), .unsupportedVersion("beyond \(Int.max)")),
        ("no version", Array(#"{"format": "coffer-export"}"#.utf8), .malformedFile(#""version" is missing"#)),
        ("unknown top-level key", Text.export(extra: #", "passwords": []"#), .malformedFile(#"the export has an unknown key "passwords""#)),
        ("odd unknown key", Text.export(extra: #", "a b\u0000": []"#), .malformedFile("the export has an unknown key (a key that is not a plain name)")),
        (
            "section not a list", Array(Text.export().map { $0 }).replacing(Array(#""cards": []"#.utf8), with: Array(#""cards": {}"#.utf8)),
            .malformedFile(#""cards" is not a list"#)
        ),
        ("section missing", Array(Text.export()).replacing(Array(#", "notes": []"#.utf8), with: []), .malformedFile(#""notes" is missing"#)),
        (
            "user missing", Array(Text.export()).replacing(Array(Text.user.utf8), with: Array("null".utf8)),
            .malformedFile(#""user" is missing or not an object"#)
        ),
        (
            "user time wrong", Array(Text.export()).replacing(Array(#""2026-01-01T00:00:00Z""#.utf8), with: Array("12".utf8)),
            .malformedFile("user: created_at is not a string")
        ),
        ("oversize", Array(repeating: 0x20, count: importSizeLimit + 1), .tooLarge(limit: importSizeLimit)),
        ("nested deeper than any export", Array(String(repeating: "[", count: 100_000).utf8), .malformedFile("not valid JSON (truncated or damaged)")),
    ]

    @Test("Broken files give one clear, typed error", arguments: brokenFiles.indices)
    func brokenFile(index: Int) {
        let (name, bytes, expected) = Self.brokenFiles[index]
        #expect(throws: expected, "\(name)") { try CofferJSONImporter.read(bytes, password: nil) }
    }

    /// Entries that are reported (by name) while the rest of the file imports, with the reason they must give.
    static let brokenEntries: [(String, (cards: [String], otp: [String], credentials: [String], notes: [String]), ImportProblem)] = [
        (
            "one_time as a number", ([Text.replacing(Text.latin1Card, #""one_time": false"#, #""one_time": 0"#)], [], [], []),
            ImportProblem(entry: "Café", reason: "one_time is not true or false")
        ),
        (
            "one_time missing", ([Text.replacing(Text.latin1Card, #""one_time": false, "#, "")], [], [], []),
            ImportProblem(entry: "Café", reason: "one_time is missing")
        ),
        (
            "name as a number", ([Text.replacing(Text.latin1Card, #""name": "Café""#, #""name": 7"#)], [], [], []),
            ImportProblem(entry: "card 1", reason: "name is not a string")
        ),
        (
            "tags holding a number", ([Text.replacing(Text.latin1Card, #""tags": []"#, #""tags": [1]"#)], [], [], []),
            ImportProblem(entry: "Café", reason: "tags holds something other than strings")
        ),
        (
            "metadata as a list", ([Text.replacing(Text.latin1Card, #""metadata": {}"#, #""metadata": []"#)], [], [], []),
            ImportProblem(entry: "Café", reason: "metadata is missing or not an object")
        ),
        (
            "unknown payload encoding", ([Text.replacing(Text.latin1Card, "iso-8859-1", "utf-16")], [], [], []),
            ImportProblem(entry: "Café", reason: "payload_encoding is not utf-8, iso-8859-1 or base64")
        ),
        (
            "latin-1 payload outside latin-1", ([Text.replacing(Text.latin1Card, "CAFÉ-1", "CAFĚ-1")], [], [], []),
            ImportProblem(entry: "Café", reason: "an iso-8859-1 payload has characters outside ISO 8859-1")
        ),
        (
            "bad base64", ([Text.replacing(Text.binaryCard, "AAEC/v+AQQ==", "not*base64")], [], [], []),
            ImportProblem(entry: "Transit", reason: "a base64 payload is not base64 of at most 4096 bytes")
        ),
        (
            "oversize base64", ([Text.replacing(Text.binaryCard, "AAEC/v+AQQ==", String(repeating: "AAAA", count: 1400))], [], [], []),
            ImportProblem(entry: "Transit", reason: "a base64 payload is not base64 of at most 4096 bytes")
        ),
        (
            "unknown symbology", ([Text.replacing(Text.latin1Card, #""qr""#, #""telepen""#)], [], [], []),
            ImportProblem(entry: "Café", reason: "barcode_type is not a known symbology")
        ),
        (
            "payload the symbology cannot draw", ([Text.replacing(Text.fullCard, #""code128""#, #""ean13""#)], [], [], []),
            ImportProblem(
                entry: "Costco", reason: "payload: cannot be drawn as ean13: EAN-13 takes 12 digits (check digit computed) or 13 digits with check digit")
        ),
        (
            "used but not one-time", ([Text.replacing(Text.usedArchivedPass, #""one_time": true"#, #""one_time": false"#)], [], [], []),
            ImportProblem(entry: "Return", reason: "this card is not a one-time pass")
        ),
        (
            "time not ISO 8601", ([Text.replacing(Text.fullCard, "2025-06-01T00:00:00Z", "June 2025")], [], [], []),
            ImportProblem(entry: "Costco", reason: "valid_from is not an ISO 8601 time")
        ),
        (
            "id not a UUID", ([Text.replacing(Text.latin1Card, "5e0b7c1a-1111-4a5b-8c9d-000000000002", "42")], [], [], []),
            ImportProblem(entry: "Café", reason: "id is not a UUID")
        ),
        (
            "unknown entry field", ([Text.replacing(Text.latin1Card, #""tags": []"#, #""colour": "red", "tags": []"#)], [], [], []),
            ImportProblem(entry: "Café", reason: #"unknown field "colour""#)
        ),
        ("entry not an object", (["[]"], [], [], []), ImportProblem(entry: "card 1", reason: "not a JSON object")),
        (
            "token uri broken", ([], [Text.replacing(Text.hotp, "otpauth://hotp/", "otpauth://hotq/")], [], []),
            ImportProblem(entry: "Duo (bob)", reason: "uri: \(OTPError.unsupportedType.description)")
        ),
        (
            "token secret broken", ([], [Text.replacing(Text.hotp, "secret=\(Text.rfcSecret)", "secret=1")], [], []),
            ImportProblem(entry: "Duo (bob)", reason: "uri: \(OTPError.invalidSecret.description)")
        ),
        (
            "token without uri",
            ([], [Text.replacing(Text.steam, #""uri": "otpauth://steam/Steam:gamer?secret=\#(Text.rfcSecret)&issuer=Steam", "#, "")], [], []),
            ImportProblem(entry: "Steam (gamer)", reason: "uri is missing")
        ),
        (
            "credential with empty value", ([], [], [Text.replacing(Text.credential, "sk-proj-0123456789abcdef", "")], []),
            ImportProblem(entry: "OpenAI", reason: "value must not be empty")
        ),
        (
            "note with an unknown template", ([], [], [], [Text.replacing(Text.note, #""contact""#, #""diary""#)]),
            ImportProblem(entry: "Contact Bob", reason: "template is not free, contact or kyc")
        ),
        (
            "note field without value", ([], [], [], [Text.replacing(Text.note, #", "value": "+1 555 0100""#, "")]),
            ImportProblem(entry: "Contact Bob", reason: "a field: value is missing")
        ),
        (
            "note fields not a list",
            ([], [], [], [Text.replacing(Text.note, #"[{"label": "Email", "value": "bob@example.com"}, {"label": "Phone", "value": "+1 555 0100"}]"#, "{}")]),
            ImportProblem(entry: "Contact Bob", reason: "fields is missing or not a list")
        ),
    ]

    @Test("A broken entry is reported by name and the others still import", arguments: brokenEntries.indices)
    func brokenEntry(index: Int) throws {
        let (name, entries, expected) = Self.brokenEntries[index]
        // One good card rides along to show the import goes on.
        let file = Text.export(
            cards: entries.cards + [Text.fullCard], otp: entries.otp, credentials: entries.credentials, notes: entries.notes)
        let result = try CofferJSONImporter.read(file, password: nil)
        #expect(result.problems == [expected], "\(name)")
        #expect(result.items.count == 1, "\(name)")
        // Reasons name fields and rules, never values from the file.
        for secret in ["111222333", "CAF", "sk-proj", Text.rfcSecret, "bob@example", "AAEC"] {
            #expect(!expected.description.contains(secret), "\(name)")
        }
    }

    @Test("A malformed signing key entry is still listed as not imported, with the rule it breaks")
    func malformedSigningKey() throws {
        let key = Text.replacing(Text.signingKey, #""ed25519""#, #""rsa""#)
        let result = try CofferJSONImporter.read(Text.export(signingKeys: [key, Text.signingKey]), password: nil)
        #expect(result.items.isEmpty)
        #expect(
            result.problems == [
                ImportProblem(entry: "Stellar main", reason: "algorithm is not ed25519"),
                ImportProblem(entry: "Stellar main", reason: CofferJSONImporter.signingKeyReason),
            ])
    }

    @Test("JSON true and 1 stay apart")
    func booleansAreNotNumbers() throws {
        let decoded = JSONValue.parse(Array(#"[true, 1, 0, false, null, "1", 1.5, 18446744073709551615, -1]"#.utf8))
        #expect(
            decoded
                == .array([
                    .bool(true), .integer(1), .integer(0), .bool(false), .null, .string("1"), .fraction(1.5),
                    .unsignedInteger(.max), .integer(-1),
                ]))
        #expect(decoded?.arrayValue?.map(\.intValue) == [nil, 1, 0, nil, nil, nil, nil, nil, -1])
        #expect(decoded?.arrayValue?.map(\.doubleValue) == [nil, 1, 0, nil, nil, nil, 1.5, Double(UInt64.max), -1])
    }
}

extension Array where Element == UInt8 {
    /// The bytes with the first occurrence of `old` replaced by `new` (the test's pattern must be present).
    func replacing(_ old: [UInt8], with new: [UInt8]) -> [UInt8] {
        guard let start = indices.first(where: { self[$0...].starts(with: old) }) else {
            preconditionFailure("the test's pattern is missing")
        }
        return Array(self[..<start]) + new + Array(self[(start + old.count)...])
    }
}
