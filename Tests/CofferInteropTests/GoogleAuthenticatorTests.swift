import CofferInterop
import CofferModel
import CofferOTP
import CofferTestSupport
import Foundation
import Testing

@Suite struct GoogleAuthenticatorTests {
    struct Expected: Decodable {
        struct Export: Decodable {
            let items: [ExpectedOTP]
            let problems: [ExpectedProblem]
        }

        struct Missing: Decodable {
            let itemCount: Int
            let problems: [ExpectedProblem]
        }

        let export: Export
        let missing: Missing
    }

    static let prefix = "otpauth-migration://offline?data="

    @Test func importsFixtureWithCodesFromPython() throws {
        let expected = try OTPFixtures.expected("google", as: Expected.self)
        let data = try OTPFixtures.bytes("google", "export.txt")
        // The second QR code's data carries a raw '+', which must stay a base64 digit.
        #expect(String(decoding: data, as: UTF8.self).split(separator: "\n").last?.contains("+") == true)
        let result = try GoogleAuthenticatorImporter.read(data, password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.export.items)
        OTPFixtures.check(result.problems, against: expected.export.problems)
    }

    @Test func reportsMissingBatches() throws {
        let expected = try OTPFixtures.expected("google", as: Expected.self)
        let result = try GoogleAuthenticatorImporter.read(OTPFixtures.bytes("google", "missing.txt"), password: nil)
        #expect(result.items.count == expected.missing.itemCount)
        OTPFixtures.check(result.problems, against: expected.missing.problems)
    }

    static func sampleItems() throws -> [OTPItem] {
        [
            try OTPFixtures.item("GitHub", "alice@example.com", secretSeed: 11),
            try OTPFixtures.item("Example", "bob", secretSeed: 12, length: 32, algorithm: .sha256, digits: 8),
            try OTPFixtures.item("Big Corp", "carol", secretSeed: 13, length: 64, algorithm: .sha512),
            try OTPFixtures.item("Counter", "dave", secretSeed: 14, kind: .hotp(counter: 1 << 40)),
            try OTPFixtures.item("Ünïcode", "erin", secretSeed: 15, digits: 8, kind: .hotp(counter: 0)),
        ]
    }

    @Test(arguments: [1, 2, 10])
    func roundTripsRepresentableItems(batchSize: Int) throws {
        let representable = try Self.sampleItems()
        let unrepresentable = [
            try OTPFixtures.item("Steam", "frank", secretSeed: 16, kind: .steam),
            try OTPFixtures.item("Fast", "grace", secretSeed: 17, kind: .totp(period: 20)),
            try OTPFixtures.item("Seven", "heidi", secretSeed: 18, digits: 7),
        ]
        let (uris, leftOut) = GoogleAuthenticatorExporter.export(
            [unrepresentable[0]] + representable + unrepresentable[1...], batchSize: batchSize)
        #expect(uris.count == (representable.count + batchSize - 1) / batchSize)
        #expect(uris.allSatisfy { $0.hasPrefix(Self.prefix) })
        #expect(leftOut.map(\.entry) == unrepresentable.map(\.displayName))
        let result = try GoogleAuthenticatorImporter.read(Array(uris.joined(separator: "\n").utf8), password: nil)
        #expect(result.problems.isEmpty)
        #expect(OTPFixtures.otpItems(result) == representable)
    }

    @Test func reportsEveryMissingBatchOfAnExport() throws {
        let (uris, _) = GoogleAuthenticatorExporter.export(try Self.sampleItems(), batchSize: 1)
        let partial = [uris[0], uris[2], uris[4]].joined(separator: "\n")
        let result = try GoogleAuthenticatorImporter.read(Array(partial.utf8), password: nil)
        #expect(result.items.count == 3)
        #expect(result.problems.map(\.reason) == ["batch 2 of 5 missing", "batch 4 of 5 missing"])
    }

    @Test func aQRCodeScannedTwiceCountsOnce() throws {
        let (uris, _) = GoogleAuthenticatorExporter.export(try Self.sampleItems(), batchSize: 3)
        let text = [uris[0], uris[0], uris[1]].joined(separator: "\n")
        let result = try GoogleAuthenticatorImporter.read(Array(text.utf8), password: nil)
        #expect(OTPFixtures.otpItems(result) == (try Self.sampleItems()))
        #expect(result.problems.isEmpty)
    }

    @Test func aSpaceInDataIsAFormDecodedPlus() throws {
        let (uris, _) = GoogleAuthenticatorExporter.export(try Self.sampleItems(), batchSize: 10)
        let form = uris[0].replacingOccurrences(of: "%2B", with: " ")
        let raw = uris[0].replacingOccurrences(of: "%2B", with: "+")
        #expect(form != uris[0], "the sample payload should contain a '+'")
        for text in [form, raw] {
            let result = try GoogleAuthenticatorImporter.read(Array(text.utf8), password: nil)
            #expect(OTPFixtures.otpItems(result) == (try Self.sampleItems()))
        }
    }

    /// The payload bytes of a URI the exporter wrote.
    static func payload(_ uri: String) throws -> [UInt8] {
        let base64 = try #require(uri.dropFirst(prefix.count).removingPercentEncoding)
        return Array(try #require(Data(base64Encoded: base64)))
    }

    static func uri(_ payload: [UInt8]) -> String {
        prefix + (Data(payload).base64EncodedString().addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
    }

    @Test func everyTruncationIsAProblemNotACrash() throws {
        let (uris, _) = GoogleAuthenticatorExporter.export(try Self.sampleItems(), batchSize: 10)
        let payload = try Self.payload(uris[0])
        let secrets = try Self.sampleItems().map { Base32.encode($0.parameters.secret) }
        for length in 0..<payload.count {
            let result = try GoogleAuthenticatorImporter.read(Array(Self.uri(Array(payload[..<length])).utf8), password: nil)
            #expect(result.items.count <= 5)
            #expect(!OTPFixtures.problems(result.problems, leak: secrets))
        }
        // A cut inside the last entry loses that entry and says so.
        let cut = try GoogleAuthenticatorImporter.read(
            Array(Self.uri(Array(payload[..<(payload.count - 30)])).utf8), password: nil)
        #expect(cut.items.count == 4)
        #expect(cut.problems.map(\.entry) == ["line 1"])
    }

    @Test func keepsEntriesReadBeforeDamage() throws {
        let (uris, _) = GoogleAuthenticatorExporter.export(try Self.sampleItems(), batchSize: 10)
        let payload = try Self.payload(uris[0])
        // A length-delimited field claiming more bytes than remain, after the five good entries.
        let damaged = payload + [0x0A, 0x7F, 0x01]
        let result = try GoogleAuthenticatorImporter.read(Array(Self.uri(damaged).utf8), password: nil)
        #expect(result.items.count == 5)
        #expect(result.problems.count == 1)
        #expect(result.problems.first?.entry == "line 1")
        #expect(result.problems.first?.reason.contains("damaged after 5 entries") == true)
    }

    @Test(arguments: [
        // An 11-byte varint, a group wire type, field number 0, a fixed64 cut short.
        [UInt8](repeating: 0xFF, count: 11), [0x0B], [0x00, 0x01], [0x09, 0x01, 0x02],
    ])
    func malformedProtobufIsAProblem(_ payload: [UInt8]) throws {
        let result = try GoogleAuthenticatorImporter.read(Array(Self.uri(payload).utf8), password: nil)
        #expect(result.items.isEmpty)
        #expect(result.problems.count == 1)
    }

    @Test func hostileBatchSizeIsCheap() throws {
        // batch_size = Int32.max, batch_index = 5, no entries.
        var payload: [UInt8] = [0x18, 0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0x20, 0x05]
        payload += [0x28, 0x01]
        let result = try GoogleAuthenticatorImporter.read(Array(Self.uri(payload).utf8), password: nil)
        #expect(result.problems.count == 11)
        #expect(result.problems.first?.reason == "batch 1 of 2147483647 missing")
        #expect(result.problems.last?.reason.contains("more batches") == true)
    }

    @Test func badLinesAreNamedByNumber() throws {
        let (uris, _) = GoogleAuthenticatorExporter.export(try Self.sampleItems(), batchSize: 10)
        let text = [
            "otpauth-migration://offline?data=!!!not*base64!!!",
            "otpauth://totp/Single?secret=JBSWY3DPEHPK3PXPJBSWY3DP",
            "otpauth-migration://offline",
            "",
            uris[0],
            "otpauth-migration://offline?data=%ZZ",
        ].joined(separator: "\n")
        let result = try GoogleAuthenticatorImporter.read(Array(text.utf8), password: nil)
        #expect(result.items.count == 5)
        #expect(result.problems.map(\.entry) == ["line 1", "line 2", "line 3", "line 6"])
        #expect(!result.problems.contains { $0.description.contains("JBSWY3DP") })
    }

    @Test func emptyOrOversizedFilesAreErrors() {
        #expect(throws: InteropError.self) { try GoogleAuthenticatorImporter.read(Array("\n# x\n".utf8), password: nil) }
        let data = [UInt8](repeating: 0x41, count: importSizeLimit + 1)
        #expect(throws: InteropError.tooLarge(limit: importSizeLimit)) {
            try GoogleAuthenticatorImporter.read(data, password: nil)
        }
    }
}
