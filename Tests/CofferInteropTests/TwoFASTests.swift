import CofferInterop
import CofferModel
import CofferOTP
import Foundation
import Testing

@Suite struct TwoFASTests {
    static let format = "2fas"

    @Test(arguments: ["plain.2fas", "encrypted.2fas"])
    func importsFixtureWithCodesFromPython(file: String) throws {
        let expected = try TokenFixtures.expectation(Self.format)
        let result = try TwoFASImporter.read(TokenFixtures.bytes(Self.format, file), password: expected.password)
        try TokenFixtures.check(result, against: expected)
    }

    @Test func readsSchemaVersionOne() throws {
        let result = try TwoFASImporter.read(TokenFixtures.bytes(Self.format, "v1.2fas"), password: nil)
        #expect(result.problems.isEmpty)
        guard case .otp(let token)? = result.items.first, result.items.count == 1 else {
            Issue.record("expected one token")
            return
        }
        #expect(token.issuer == "Legacy")
        #expect(token.account == "old@example.com")
        // RFC 6238 Appendix B, SHA1 seed, last six of 94287082 and 07081804.
        #expect(try token.parameters.code(atUnixTime: 59) == "287082")
        #expect(try token.parameters.code(atUnixTime: 1_111_111_109) == "081804")
    }

    @Test func refusesTheWrongPassword() throws {
        let data = try TokenFixtures.bytes(Self.format, "encrypted.2fas")
        #expect(throws: InteropError.wrongPassword) { try TwoFASImporter.read(data, password: "not the password") }
        #expect(throws: InteropError.wrongPassword) { try TwoFASImporter.read(data, password: "") }
    }

    @Test func asksForAPassword() throws {
        let data = try TokenFixtures.bytes(Self.format, "encrypted.2fas")
        #expect(throws: InteropError.passwordRequired) { try TwoFASImporter.read(data, password: nil) }
    }

    @Test func tamperedCiphertextIsRefused() throws {
        let expected = try TokenFixtures.expectation(Self.format)
        var document = try #require(
            try JSONSerialization.jsonObject(with: Data(TokenFixtures.bytes(Self.format, "encrypted.2fas")))
                as? [String: Any])
        let parts = try #require((document["servicesEncrypted"] as? String)?.split(separator: ":").map(String.init))
        var sealed = try #require(Data(base64Encoded: parts[0]))
        sealed[5] ^= 0x01
        document["servicesEncrypted"] = [sealed.base64EncodedString(), parts[1], parts[2]].joined(separator: ":")
        let data = Array(try JSONSerialization.data(withJSONObject: document))
        #expect(throws: InteropError.wrongPassword) { try TwoFASImporter.read(data, password: expected.password) }
    }

    @Test func refusesNewerSchemas() {
        let data = Array(#"{"schemaVersion": 5, "services": []}"#.utf8)
        #expect(throws: InteropError.unsupportedVersion("2FAS schema 5")) { try TwoFASImporter.read(data, password: nil) }
    }

    @Test(arguments: [
        "", "[]", "{}", "null", #"{"schemaVersion": "4", "services": []}"#, #"{"schemaVersion": 4}"#,
        #"{"schemaVersion": 4, "services": {}}"#, #"{"schemaVersion": 4.5, "services": []}"#,
        #"{"schemaVersion": true, "services": []}"#, #"{"schemaVersion": 4, "servicesEncrypted": 7}"#,
        #"{"schemaVersion": 4, "servicesEncrypted": "abc"}"#,
        #"{"schemaVersion": 4, "servicesEncrypted": "!!!:AAAA:AAAAAAAAAAAAAAAA"}"#,
        // A 16-byte sealed part, a salt and an 8-byte IV: the IV length is wrong.
        #"{"schemaVersion": 4, "servicesEncrypted": "AAAAAAAAAAAAAAAAAAAAAA==:AAAA:AAAAAAAAAAA="}"#,
        // A sealed part shorter than the GCM tag.
        #"{"schemaVersion": 4, "servicesEncrypted": "AAAA:AAAA:AAAAAAAAAAAAAAAA"}"#,
        // An empty salt.
        #"{"schemaVersion": 4, "servicesEncrypted": "AAAAAAAAAAAAAAAAAAAAAA==::AAAAAAAAAAAAAAAA"}"#,
    ])
    func malformedFilesAreErrors(text: String) {
        #expect(throws: InteropError.self) { try TwoFASImporter.read(Array(text.utf8), password: "pw") }
    }

    @Test(arguments: [
        #"{"schemaVersion": 4, "services": [1, "x", null, [], {"name": "NoSecret"}]}"#,
        #"{"schemaVersion": 4, "services": [{"name": "A", "secret": 12, "otp": {}}]}"#,
        #"{"schemaVersion": 4, "services": [{"name": "A", "secret": "GEZDGNBVGY3TQOJQ", "otp": "totp"}]}"#,
        #"{"schemaVersion": 4, "services": [{"name": "A", "secret": "GEZDGNBVGY3TQOJQ", "otp": {"period": 0}}]}"#,
        #"{"schemaVersion": 4, "services": [{"name": "A", "secret": "GEZDGNBVGY3TQOJQ", "otp": {"period": -30}}]}"#,
        #"{"schemaVersion": 4, "services": [{"name": "A", "secret": "GEZDGNBVGY3TQOJQ", "otp": {"digits": 99}}]}"#,
        #"{"schemaVersion": 4, "services": [{"name": "A", "secret": "GEZDGNBVGY3TQOJQ", "otp": {"tokenType": "HOTP", "counter": -1}}]}"#,
        #"{"schemaVersion": 4, "services": [{"name": "A", "secret": "GEZDGNBVGY3TQOJQ", "otp": {"tokenType": "YANDEX"}}]}"#,
        #"{"schemaVersion": 4, "services": [{"secret": "GEZDGNBVGY3TQOJQ", "otp": {}}]}"#,
    ])
    func badEntriesAreProblems(text: String) throws {
        let result = try TwoFASImporter.read(Array(text.utf8), password: nil)
        #expect(result.items.isEmpty)
        #expect(!result.problems.isEmpty)
        for problem in result.problems {
            TokenFixtures.expectNoSecret(problem.description, password: nil)
            #expect(!problem.description.contains("GEZDGNBVGY3TQOJQ"))
        }
    }

    @Test(arguments: [0.1, 0.5, 0.9])
    func truncatedFilesNeverCrash(fraction: Double) throws {
        for file in ["plain.2fas", "encrypted.2fas"] {
            let data = try TokenFixtures.bytes(Self.format, file)
            let cut = Array(data.prefix(Int(Double(data.count) * fraction)))
            TokenFixtures.expectRejectedOrEmpty { () throws(InteropError) in
                try TwoFASImporter.read(cut, password: "correct horse 2fas")
            }
        }
    }

    @Test func deeplyNestedJSONIsAnError() {
        let data = [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
        #expect(throws: InteropError.self) { try TwoFASImporter.read(data, password: nil) }
    }

    @Test func refusesOversizedFiles() {
        let data = [UInt8](repeating: UInt8(ascii: " "), count: importSizeLimit + 1)
        #expect(throws: InteropError.tooLarge(limit: importSizeLimit)) { try TwoFASImporter.read(data, password: nil) }
    }
}
