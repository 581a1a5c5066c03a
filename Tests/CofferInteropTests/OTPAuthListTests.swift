import CofferInterop
import CofferModel
import CofferOTP
import CofferTestSupport
import Foundation
import Testing

@Suite struct OTPAuthListTests {
    struct Expected: Decodable {
        let items: [ExpectedOTP]
        let problemLines: [Int]
    }

    @Test func importsFixtureWithCodesFromPython() throws {
        let expected = try OTPFixtures.expected("otpauth", as: Expected.self)
        let result = try OTPAuthListImporter.read(OTPFixtures.bytes("otpauth", "list.txt"), password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
        #expect(result.problems.map(\.entry) == expected.problemLines.map { "line \($0)" })
    }

    @Test func problemsNeverRepeatTheLine() throws {
        let data = try OTPFixtures.bytes("otpauth", "list.txt")
        let result = try OTPAuthListImporter.read(data, password: nil)
        let secrets = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).compactMap { line in
            line.range(of: "secret=").map { String(line[$0.upperBound...].prefix { $0 != "&" }) }
        }
        #expect(secrets.count >= 5)
        #expect(!OTPFixtures.problems(result.problems, leak: secrets))
        #expect(!result.problems.contains { $0.description.contains("example.com") })
    }

    @Test func roundTripsThroughExport() throws {
        let items = [
            try OTPFixtures.item("GitHub", "alice@example.com", secretSeed: 1),
            try OTPFixtures.item(
                "Big Corp", "bob smith", secretSeed: 2, length: 32, algorithm: .sha256, digits: 8,
                kind: .totp(period: 20)),
            try OTPFixtures.item(
                "Ünïcode & Co", "carol+tag@example.com", secretSeed: 3, length: 64,
                algorithm: .sha512, digits: 7, kind: .totp(period: 50)),
            try OTPFixtures.item("Counter", "dave", secretSeed: 4, kind: .hotp(counter: UInt64.max)),
            try OTPFixtures.item("Steam", "erin", secretSeed: 5, kind: .steam),
        ]
        let (text, leftOut) = OTPAuthListExporter.export(items)
        #expect(leftOut.isEmpty)
        let lines = text.split(separator: "\n")
        #expect(lines.count == items.count)
        #expect(lines.allSatisfy { $0.hasPrefix("otpauth://") })
        #expect(text.hasSuffix("\n"))
        let result = try OTPAuthListImporter.read(Array(text.utf8), password: nil)
        #expect(result.problems.isEmpty)
        #expect(OTPFixtures.otpItems(result) == items)
    }

    /// A token whose account holds a colon (kept by an older Coffer's andOTP import) has no URI: it is listed, and
    /// every other token is still written.
    @Test func exportListsAnAccountWithAColonAndWritesTheRest() throws {
        let item = try OTPFixtures.item("Issuer", "a:b", secretSeed: 6)
        let other = try OTPFixtures.item("Other", "carol", secretSeed: 7)
        let (text, leftOut) = OTPAuthListExporter.export([item, other])
        #expect(leftOut == [ExportProblem(entry: "Issuer (a:b)", reason: "token: the account name must not contain a colon")])
        #expect(try OTPAuthListImporter.read(Array(text.utf8), password: nil).items == [.otp(other)])
    }

    @Test(arguments: [
        "", "\n\n   \n# only a comment\n", "\u{FEFF}# BOM and a comment\n",
    ])
    func emptyFilesImportNothing(_ text: String) throws {
        let result = try OTPAuthListImporter.read(Array(text.utf8), password: nil)
        #expect(result.items.isEmpty)
        #expect(result.problems.isEmpty)
    }

    @Test func refusesOversizedFiles() {
        let data = [UInt8](repeating: UInt8(ascii: "#"), count: importSizeLimit + 1)
        #expect(throws: InteropError.tooLarge(limit: importSizeLimit)) {
            try OTPAuthListImporter.read(data, password: nil)
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func binaryGarbageGivesProblemsNotCrashes(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let data = random.bytes(4096)
        let result = try OTPAuthListImporter.read(data, password: nil)
        #expect(result.items.isEmpty)
        #expect(!result.problems.isEmpty)
    }
}
