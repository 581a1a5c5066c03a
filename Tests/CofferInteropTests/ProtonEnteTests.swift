import CofferInterop
import CofferModel
import CofferOTP
import CofferTestSupport
import Foundation
import Testing

@Suite struct ProtonEnteTests {
    struct ProtonExpected: Decodable {
        let password: String
        let items: [ExpectedOTP]
        let problems: [ExpectedProblem]
    }

    struct EnteExpected: Decodable {
        let items: [ExpectedOTP]
        let problemLines: [Int]
    }

    /// Every `secret=` value and `steam://` key in a fixture, to check problems never repeat one. (The shared
    /// `expectNoSecret` also refuses the word "otpauth", which the URI parser's scheme rule rightly names.)
    static func secrets(in data: [UInt8]) -> [String] {
        let text = String(decoding: data, as: UTF8.self)
        let pattern = #"(secret=|steam://)([A-Za-z0-9]+)"#
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        let matches = regex.matches(in: text, range: NSRange(text.startIndex..., in: text))
        return matches.compactMap { Range($0.range(at: 2), in: text).map { String(text[$0]) } }
    }

    @Test func fixturesHoldSecretsToLookFor() throws {
        #expect(Self.secrets(in: try OTPFixtures.bytes("proton", "export.json")).count >= 6)
        #expect(Self.secrets(in: try OTPFixtures.bytes("ente", "export.txt")).count >= 6)
    }

    // MARK: Proton Authenticator

    @Test func importsProtonFixtureWithCodesFromPython() throws {
        let expected = try OTPFixtures.expected("proton", as: ProtonExpected.self)
        let result = try ProtonAuthenticatorImporter.read(OTPFixtures.bytes("proton", "export.json"), password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
        OTPFixtures.check(result.problems, against: expected.problems)
        #expect(!OTPFixtures.problems(result.problems, leak: Self.secrets(in: try OTPFixtures.bytes("proton", "export.json"))))
    }

    /// The password-protected export, written by Python's `cryptography` (OpenSSL's Argon2id and AES-GCM) as
    /// Proton's own code does, holds the plain fixture: the same items, problems and codes.
    @Test func importsEncryptedProtonFixture() throws {
        let expected = try OTPFixtures.expected("proton", as: ProtonExpected.self)
        let data = try OTPFixtures.bytes("proton", "encrypted.json")
        let result = try ProtonAuthenticatorImporter.read(data, password: expected.password)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
        OTPFixtures.check(result.problems, against: expected.problems)
        #expect(throws: InteropError.passwordRequired) { try ProtonAuthenticatorImporter.read(data, password: nil) }
        #expect(throws: InteropError.wrongPassword) { try ProtonAuthenticatorImporter.read(data, password: "proton export pw") }
    }

    @Test func refusesDamagedEncryptedExports() throws {
        let expected = try OTPFixtures.expected("proton", as: ProtonExpected.self)
        let data = try OTPFixtures.bytes("proton", "encrypted.json")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(data)) as? [String: Any])
        func read(_ change: (inout [String: Any]) -> Void) throws -> ImportResult {
            var changed = document
            change(&changed)
            return try ProtonAuthenticatorImporter.read(
                Array(try JSONSerialization.data(withJSONObject: changed)), password: expected.password)
        }
        #expect(throws: InteropError.unsupportedVersion("2")) { try read { $0["version"] = 2 } }
        #expect(throws: InteropError.malformedFile("salt is not base64 of 16 bytes")) { try read { $0["salt"] = "AAAA" } }
        #expect(throws: InteropError.malformedFile("content is not base64 of a nonce, ciphertext and tag")) {
            try read { $0["content"] = "AAAA" }
        }
        // One flipped bit of the ciphertext, or another salt: the tag does not verify.
        let contentText = try #require(document["content"] as? String)
        let content = try #require(Data(base64Encoded: contentText))
        var flipped = content
        flipped[20] ^= 0x01
        #expect(throws: InteropError.wrongPassword) { try read { $0["content"] = flipped.base64EncodedString() } }
        #expect(throws: InteropError.wrongPassword) {
            try read { $0["salt"] = Data(repeating: 7, count: 16).base64EncodedString() }
        }
    }

    @Test(arguments: [
        "", "[]", "null", "{}", #"{"version":1}"#, #"{"version":1,"entries":{}}"#, #"{"entries":"#, "\u{0}",
    ])
    func refusesFilesThatAreNotProtonExports(_ text: String) {
        #expect(throws: InteropError.self) { try ProtonAuthenticatorImporter.read(Array(text.utf8), password: nil) }
    }

    @Test(arguments: [
        #"{"content":{"uri":7}}"#, #"{"content":{"uri":"otpauth://totp/a?secret=AAAA"}}"#, #"{"content":[]}"#,
        #"{"content":{"uri":"otpauth://totp/a?secret=JBSWY3DPEHPK3PXP","name":5}}"#,
        #"{"content":{"uri":"otpauth://totp/a?secret=JBSWY3DPEHPK3PXP"},"note":[]}"#, "1", #""x""#,
    ])
    func badProtonEntriesBecomeProblems(_ entry: String) throws {
        let json = #"{"version":1,"entries":[\#(entry)]}"#
        let result = try ProtonAuthenticatorImporter.read(Array(json.utf8), password: nil)
        #expect(result.items.isEmpty)
        #expect(result.problems.count == 1)
        for problem in result.problems { TokenFixtures.expectNoSecret(problem.description, password: nil) }
    }

    @Test func truncatedProtonExportIsRefused() throws {
        let data = try OTPFixtures.bytes("proton", "export.json")
        for length in stride(from: 1, to: data.count - 2, by: 89) {
            TokenFixtures.expectRejectedOrEmpty { () throws(InteropError) in
                try ProtonAuthenticatorImporter.read(Array(data.prefix(length)), password: nil)
            }
        }
    }

    // MARK: Ente Auth

    @Test func importsEnteFixtureIgnoringCodeDisplay() throws {
        let expected = try OTPFixtures.expected("ente", as: EnteExpected.self)
        let data = try OTPFixtures.bytes("ente", "export.txt")
        #expect(String(decoding: data, as: UTF8.self).contains("codeDisplay="), "the fixture must carry Ente's extras")
        let result = try EnteAuthImporter.read(data, password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
        #expect(result.problems.map(\.entry) == expected.problemLines.map { "line \($0)" })
        #expect(!OTPFixtures.problems(result.problems, leak: Self.secrets(in: data) + ["not a uri"]))
    }

    @Test(arguments: [UInt64(7), 8])
    func enteGarbageGivesProblemsNotCrashes(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let result = try EnteAuthImporter.read(random.bytes(4096), password: nil)
        #expect(result.items.isEmpty)
    }

    // MARK: Both

    @Test func refusesOversizedFiles() {
        let data = [UInt8](repeating: UInt8(ascii: " "), count: importSizeLimit + 1)
        #expect(throws: InteropError.tooLarge(limit: importSizeLimit)) {
            try ProtonAuthenticatorImporter.read(data, password: nil)
        }
        #expect(throws: InteropError.tooLarge(limit: importSizeLimit)) { try EnteAuthImporter.read(data, password: nil) }
    }

    @Test func formatNames() {
        #expect(ProtonAuthenticatorImporter.formatName == "proton")
        #expect(EnteAuthImporter.formatName == "ente")
    }
}
