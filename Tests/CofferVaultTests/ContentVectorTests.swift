import CofferBarcode
import CofferTestSupport
import Foundation
import Testing

@testable import CofferModel
@testable import CofferOTP

/// Item content vectors (docs/FORMAT.md §5) written byte by byte from the spec, not produced by Coffer's encoder:
/// each line is one field, `tag length value`. Creation time 1_795_000_000_000 ms is 00 00 01 A1 EE 56 5E 00.
enum ContentVectors {
    static let created = Date(timeIntervalSince1970: 1_795_000_000)
    static let createdField = "01 08 00 00 01 A1 EE 56 5E 00"
    static let rfcSecret = "31 32 33 34 35 36 37 38 39 30 31 32 33 34 35 36 37 38 39 30"  // "12345678901234567890"

    static func all() throws -> [(name: String, content: ItemContent, bytes: [UInt8])] {
        let vectors: [(String, ItemContent, String)] = [
            (
                "credential", .credential(try Credential(name: "OpenAI", provider: "openai", value: "sk-1", tags: ["ai", "work"], notes: "rotate")),
                """
                01 \(createdField)
                10 06 4F 70 65 6E 41 49
                11 06 6F 70 65 6E 61 69
                12 04 73 6B 2D 31
                13 02 61 69
                13 04 77 6F 72 6B
                14 06 72 6F 74 61 74 65
                """
            ),
            (
                "credential with a user name and a URL (since 1.2): tags 21 and 22",
                .credential(
                    try Credential(
                        name: "Mail", value: "pw", username: "al", url: "u")),
                """
                01 \(createdField)
                10 04 4D 61 69 6C
                12 02 70 77
                15 02 61 6C
                16 01 75
                """
            ),
            (
                "one-time card with binary payload, dates, flag and metadata",
                .card(
                    try Card(
                        name: "Return", symbology: .qr, payload: [0x00, 0xC3, 0xA9, 0xFF], payloadCharset: .binary, tags: ["t"],
                        networkIDs: ["costco"], validTo: Date(timeIntervalSince1970: 1_830_000_000), oneTime: true,
                        usedAt: Date(timeIntervalSince1970: 1_795_000_100), metadata: ["k": "v"])),
                """
                01 \(createdField)
                10 06 52 65 74 75 72 6E
                11 02 71 72
                12 04 00 C3 A9 FF
                13 06 62 69 6E 61 72 79
                15 01 74
                16 06 63 6F 73 74 63 6F
                18 08 00 00 01 AA 14 7F FC 00
                19 01 01
                1A 08 00 00 01 A1 EE 57 E4 A0
                1D 06 01 01 6B 02 01 76
                """
            ),
            (
                "card without a barcode: no symbology field (tag 17 left out), shown by its number",
                .card(
                    try Card(
                        name: "Library", symbology: nil, payload: Array("L-998877".utf8))),
                """
                01 \(createdField)
                10 07 4C 69 62 72 61 72 79
                12 08 4C 2D 39 39 38 38 37 37
                13 05 75 74 66 2D 38
                """
            ),
            (
                "Code 93 card with a colour (since 1.9)",
                .card(
                    try Card(
                        name: "Gift", symbology: .code93, payload: Array("G-93".utf8), metadata: ["color": "#59A2BE"])),
                """
                01 \(createdField)
                10 04 47 69 66 74
                11 06 63 6F 64 65 39 33
                12 04 47 2D 39 33
                13 05 75 74 66 2D 38
                1D 10 01 05 63 6F 6C 6F 72 02 07 23 35 39 41 32 42 45
                """
            ),
            (
                "HOTP token",
                .otp(
                    try OTPItem(
                        issuer: "Duo", account: "al",
                        parameters: try OTPParameters(secret: Array("12345678901234567890".utf8), algorithm: .sha256, digits: 8, kind: .hotp(counter: 5)),
                        tags: ["2fa"])),
                """
                01 \(createdField)
                10 03 44 75 6F
                11 02 61 6C
                12 04 68 6F 74 70
                13 14 \(rfcSecret)
                14 06 53 48 41 32 35 36
                15 08 00 00 00 00 00 00 00 08
                17 08 00 00 00 00 00 00 00 05
                18 03 32 66 61
                """
            ),
            (
                "TOTP token",
                .otp(
                    try OTPItem(
                        issuer: "GitHub", account: "alice", parameters: try OTPParameters(secret: Array("12345678901234567890".utf8)),
                        notes: "n")),
                """
                01 \(createdField)
                10 06 47 69 74 48 75 62
                11 05 61 6C 69 63 65
                12 04 74 6F 74 70
                13 14 \(rfcSecret)
                14 04 53 48 41 31
                15 08 00 00 00 00 00 00 00 06
                16 08 00 00 00 00 00 00 00 1E
                19 01 6E
                """
            ),
            (
                "TOTP token without an issuer (since 1.11): tag 16 left out",
                .otp(
                    try OTPItem(
                        issuer: "", account: "bob@example.org", parameters: try OTPParameters(secret: Array("12345678901234567890".utf8)))),
                """
                01 \(createdField)
                11 0F 62 6F 62 40 65 78 61 6D 70 6C 65 2E 6F 72 67
                12 04 74 6F 74 70
                13 14 \(rfcSecret)
                14 04 53 48 41 31
                15 08 00 00 00 00 00 00 00 06
                16 08 00 00 00 00 00 00 00 1E
                """
            ),
            (
                "contact note with a field group and non-ASCII text",
                .note(
                    try Note(
                        name: "Bob", template: .contact, fields: [.init(label: "Email", value: "b@x.io")], text: "café")),
                """
                01 \(createdField)
                10 03 42 6F 62
                11 07 63 6F 6E 74 61 63 74
                12 0F 01 05 45 6D 61 69 6C 02 06 62 40 78 2E 69 6F
                13 05 63 61 66 C3 A9
                """
            ),
            (
                "a 200-byte value: two-byte length C8 01", .credential(try Credential(name: "Long", value: String(repeating: "v", count: 200))),
                """
                01 \(createdField)
                10 04 4C 6F 6E 67
                12 C8 01 \(String(repeating: "76 ", count: 200))
                """
            ),
            (
                "signing key",
                .signingKey(
                    try SigningKey(
                        name: "K", flavor: .ed25519, publicKey: TestSupport.hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"),
                        pinSalt: Array(repeating: 0x11, count: 16), pinBox: Array(repeating: 0x22, count: 60),
                        boundVaultID: Array(repeating: 0x33, count: 16), deviceSecretID: Array(repeating: 0x44, count: 16), failedAttempts: 2)),
                """
                01 \(createdField)
                10 01 4B
                11 07 65 64 32 35 35 31 39
                12 20 D7 5A 98 01 82 B1 0A B7 D5 4B FE D3 C9 64 07 3A 0E E1 72 F3 DA A6 23 25 AF 02 1A 68 F7 07 51 1A
                13 10 \(String(repeating: "11 ", count: 16))
                14 3C \(String(repeating: "22 ", count: 60))
                15 10 \(String(repeating: "33 ", count: 16))
                16 10 \(String(repeating: "44 ", count: 16))
                17 08 00 00 00 00 00 00 00 02
                """
            ),
        ]
        return vectors.map { ($0.0, $0.1, TestSupport.hex($0.2)) }
    }

    /// The top-level fields of content as (tag, value) pairs in tag order (stable): the spec fixes no order between
    /// different tags, only that repeated fields keep theirs.
    static func fieldsInTagOrder(_ bytes: [UInt8]) -> [[UInt8]] {
        var fields: [(tag: UInt8, field: [UInt8])] = []
        var index = 1
        while index < bytes.count {
            let start = index
            index += 1
            var length = 0
            var shift = 0
            while true {
                let byte = bytes[index]
                index += 1
                length |= Int(byte & 0x7F) << shift
                shift += 7
                if byte < 0x80 { break }
            }
            index += length
            fields.append((bytes[start], Array(bytes[start..<min(index, bytes.count)])))
        }
        return fields.enumerated().sorted { ($0.element.tag, $0.offset) < ($1.element.tag, $1.offset) }.map(\.element.field)
    }
}

@Suite("Item content vectors, FORMAT.md §5")
struct ContentVectorTests {
    @Test("Coffer decodes each hand-written vector to its content, and encodes the content to the same fields")
    func decodeAndEncode() throws {
        for vector in try ContentVectors.all() {
            let decoded = try ItemContentCoding.decode(Data(vector.bytes), kind: vector.content.kind)
            let sameContent = decoded.content == vector.content
            #expect(sameContent, "\(vector.name)")
            #expect(decoded.createdAt == ContentVectors.created, "\(vector.name)")
            let encoded = Array(try ItemContentCoding.encode(vector.content, createdAt: ContentVectors.created))
            #expect(encoded.first == 1 && encoded.count == vector.bytes.count, "\(vector.name)")
            // Compared as one Bool: the values include test secrets, which test output never shows.
            let sameFields = ContentVectors.fieldsInTagOrder(encoded) == ContentVectors.fieldsInTagOrder(vector.bytes)
            #expect(sameFields, "\(vector.name): encoded fields differ from the vector")
        }
    }

    @Test("The independent Python reader decodes each vector to the expected fields")
    func pythonReader() throws {
        let vectors = try ContentVectors.all()
        let answers = try TestSupport.openSSLOracle(
            vectors.map {
                ["op": "read_content", "kind": $0.content.kind.rawValue, "content": TestSupport.hex($0.bytes)]
            })
        try #require(answers.count == vectors.count)
        for (vector, answer) in zip(vectors, answers) {
            let fields = try #require(answer as? [String: Any])
            let expected = ReaderFields.of(vector.content, created: ContentVectors.created)
            #expect(Set(fields.keys) == Set(expected.keys), "\(vector.name)")
            for (key, value) in expected {
                let same = try ReaderFields.canonical(fields[key]) == ReaderFields.canonical(value)
                #expect(same, "\(vector.name): field \(key) differs")
            }
        }
    }

    @Test("Unknown tags are skipped; a field running past the end and a newer version are refused")
    func structure() throws {
        let credential = try #require(try ContentVectors.all().first)
        // Tag 99 (0x63), two bytes, inserted after the creation time.
        let withUnknown = Array(credential.bytes[0..<11]) + [0x63, 0x02, 0xFF, 0xFF] + Array(credential.bytes[11...])
        #expect(try ItemContentCoding.decode(Data(withUnknown), kind: .credential).content == credential.content)
        #expect(throws: ModelError.self) {
            _ = try ItemContentCoding.decode(Data(credential.bytes.dropLast()), kind: .credential)
        }
        #expect(throws: ModelError.unsupportedContentVersion(2)) {
            _ = try ItemContentCoding.decode(Data([2] + credential.bytes.dropFirst()), kind: .credential)
        }
    }
}
