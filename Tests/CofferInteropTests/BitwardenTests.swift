import CofferInterop
import CofferModel
import CofferOTP
import Foundation
import Testing

@Suite struct BitwardenTests {
    static let format = "bitwarden"

    /// Passwords, notes and cards in the fixtures are skipped without a problem: only the three unreadable TOTP
    /// fields count.
    @Test func importsJSONFixtureWithCodesFromPython() throws {
        let expected = try TokenFixtures.expectation(Self.format)
        let result = try BitwardenJSONImporter.read(TokenFixtures.bytes(Self.format, "export.json"), password: nil)
        try TokenFixtures.check(result, against: expected)
        #expect(result.problems.map(\.entry) == ["Short Secret (x)", "Not Base32 (y)", "MD5 Token (z)"])
    }

    @Test func importsCSVFixtureWithCodesFromPython() throws {
        let expected = try TokenFixtures.expectation(Self.format)
        let result = try BitwardenCSVImporter.read(TokenFixtures.bytes(Self.format, "export.csv"), password: nil)
        try TokenFixtures.check(result, against: expected)
        #expect(result.problems.map(\.entry) == ["Short Secret (x)", "Not Base32 (y)", "MD5 Token (z)"])
    }

    /// Password-protected exports, written by Python's `cryptography` (OpenSSL's PBKDF2, Argon2id, HKDF, AES-CBC) as
    /// Bitwarden's clients write them, hold the plain fixture: the same tokens and codes.
    @Test(arguments: ["encrypted_pbkdf2.json", "encrypted_argon2.json"])
    func importsPasswordProtectedExports(file: String) throws {
        let expected = try TokenFixtures.expectation(Self.format)
        let data = try TokenFixtures.bytes(Self.format, file)
        let result = try BitwardenJSONImporter.read(data, password: expected.password)
        try TokenFixtures.check(result, against: expected)
        #expect(result.problems.map(\.entry) == ["Short Secret (x)", "Not Base32 (y)", "MD5 Token (z)"])
        #expect(throws: InteropError.passwordRequired) { try BitwardenJSONImporter.read(data, password: nil) }
        #expect(throws: InteropError.wrongPassword) { try BitwardenJSONImporter.read(data, password: "bitwarden export pw") }
    }

    /// The KDF's parameters come from the file: out of bounds, they are refused before any work.
    @Test(arguments: [
        (0, ["kdfIterations": 0]), (0, ["kdfIterations": 10_000_001]), (1, ["kdfMemory": 2048]), (1, ["kdfMemory": 0]),
        (1, ["kdfIterations": 33]), (1, ["kdfParallelism": 0]), (1, ["kdfParallelism": 17]), (1, ["kdfIterations": 9, "kdfMemory": 1024]),
    ])
    func refusesKDFParametersOutOfBounds(kdfType: Int, change: [String: Int]) throws {
        let file = kdfType == 0 ? "encrypted_pbkdf2.json" : "encrypted_argon2.json"
        var document = try #require(try JSONSerialization.jsonObject(with: Data(try TokenFixtures.bytes(Self.format, file))) as? [String: Any])
        document.merge(change) { $1 }
        let data = Array(try JSONSerialization.data(withJSONObject: document))
        var failure: InteropError?
        do throws(InteropError) {
            _ = try BitwardenJSONImporter.read(data, password: "pw")
        } catch {
            failure = error
        }
        guard case .kdfParametersOutOfBounds? = failure else {
            Issue.record("expected kdfParametersOutOfBounds, got \(String(describing: failure))")
            return
        }
    }

    @Test func refusesOtherEncryptedExports() throws {
        let accountKey = #"{"encrypted": true, "encKeyValidation_DO_NOT_EDIT": "2.AAAA|AAAA|AAAA", "items": []}"#
        #expect(
            throws: InteropError.unsupportedVersion(
                "Bitwarden export encrypted with the account key (export with a password, or unencrypted)")
        ) {
            try BitwardenJSONImporter.read(Array(accountKey.utf8), password: "pw")
        }
        var document = try #require(
            try JSONSerialization.jsonObject(
                with: Data(try TokenFixtures.bytes(Self.format, "encrypted_pbkdf2.json"))) as? [String: Any])
        document["kdfType"] = 2
        #expect(throws: InteropError.unsupportedVersion("Bitwarden KDF type 2")) {
            try BitwardenJSONImporter.read(Array(try JSONSerialization.data(withJSONObject: document)), password: "pw")
        }
        document["kdfType"] = 0
        document["data"] = "2.AAAA"
        #expect(throws: InteropError.self) {
            try BitwardenJSONImporter.read(Array(try JSONSerialization.data(withJSONObject: document)), password: "pw")
        }
    }

    @Test(arguments: ["", "[]", "{}", #"{"items": {}}"#, #"{"items": "x"}"#, "not json"])
    func malformedJSONIsAnError(text: String) {
        #expect(throws: InteropError.self) { try BitwardenJSONImporter.read(Array(text.utf8), password: nil) }
    }

    @Test func wrongTypesInItemsAreProblemsOrSkipped() throws {
        let text = #"""
            {"items": [
              7,
              {"name": "Number TOTP", "login": {"totp": 123456}},
              {"name": "Login String", "login": "x"},
              {"name": "Null TOTP", "login": {"totp": null}},
              {"name": "Blank TOTP", "login": {"totp": "   "}},
              {"name": "Good", "folderId": 3, "login": {"username": "u", "totp": "GEZDGNBVGY3TQOJQ"}}
            ]}
            """#
        let result = try BitwardenJSONImporter.read(Array(text.utf8), password: nil)
        #expect(result.items.map(\.name) == ["Good (u)"])
        #expect(result.items.first?.tags == [])
        #expect(result.problems.map(\.entry) == ["entry 1", "Number TOTP"])
    }

    @Test func bareSecretUsesItemNameAndUsername() throws {
        let csv = "name,login_username,login_totp\r\nMy Bank,me@example.com,gezd gnbv gy3t qojq gezd gnbv gy3t qojq\r\n"
        let result = try BitwardenCSVImporter.read(Array(csv.utf8), password: nil)
        #expect(result.problems.isEmpty)
        guard case .otp(let token)? = result.items.first else {
            Issue.record("expected one token")
            return
        }
        #expect(token.issuer == "My Bank")
        #expect(token.account == "me@example.com")
        // RFC 6238 Appendix B, SHA1 seed: 94287082 at 59 s, shown with the default 6 digits.
        #expect(try token.parameters.code(atUnixTime: 59) == "287082")
    }

    @Test func readsRFC4180Quoting() throws {
        let csv =
            "\u{FEFF}name,notes,login_username,login_totp\n"
            + "\"Quoted, \"\"Name\"\"\",\"line one\r\nline two, still notes\",\"user\",\"GEZDGNBVGY3TQOJQ\"\n"
            + "\n"
            + "Plain,,user2,steam://GEZDGNBVGY3TQOJQ"
        let result = try BitwardenCSVImporter.read(Array(csv.utf8), password: nil)
        #expect(result.problems.isEmpty)
        let names = result.items.map(\.name)
        #expect(names == ["Quoted, \"Name\" (user)", "Plain (user2)"])
    }

    @Test func rowsWithTheWrongFieldCountAreProblems() throws {
        let csv = "name,login_username,login_totp\nOne,a,GEZDGNBVGY3TQOJQ,extra\nTwo,b\nThree,c,GEZDGNBVGY3TQOJQ\n"
        let result = try BitwardenCSVImporter.read(Array(csv.utf8), password: nil)
        #expect(result.items.count == 1)
        #expect(result.problems.map(\.entry) == ["One (a)", "Two (b)"])
    }

    @Test(arguments: [
        "",
        "name,login_username\nA,b\n",
        "login_totp\nGEZDGNBVGY3TQOJQ\n",
        "name,login_totp\n\"unterminated,GEZDGNBVGY3TQOJQ\n",
        "name,login_totp\n\"closed\"junk,GEZDGNBVGY3TQOJQ\n",
    ])
    func malformedCSVIsAnError(text: String) {
        #expect(throws: InteropError.self) { try BitwardenCSVImporter.read(Array(text.utf8), password: nil) }
    }

    @Test func csvThatIsNotUTF8IsAnError() {
        let data = Array("name,login_totp\n".utf8) + [0xFF, 0xFE, 0x2C, 0x41, 0x0A]
        #expect(throws: InteropError.self) { try BitwardenCSVImporter.read(data, password: nil) }
    }

    @Test(arguments: [0.2, 0.5, 0.8])
    func truncatedFilesNeverCrash(fraction: Double) throws {
        let json = try TokenFixtures.bytes(Self.format, "export.json")
        TokenFixtures.expectRejectedOrEmpty { () throws(InteropError) in
            try BitwardenJSONImporter.read(Array(json.prefix(Int(Double(json.count) * fraction))), password: nil)
        }
        // A CSV cut anywhere still reads its complete rows; nothing may crash, and problems never leak secrets.
        let csv = try TokenFixtures.bytes(Self.format, "export.csv")
        do {
            let result = try BitwardenCSVImporter.read(Array(csv.prefix(Int(Double(csv.count) * fraction))), password: nil)
            for problem in result.problems {
                TokenFixtures.expectNoSecret(problem.description, password: nil)
            }
        } catch {
            TokenFixtures.expectNoSecret(error.description, password: nil)
        }
    }

    @Test func refusesOversizedFiles() {
        let data = [UInt8](repeating: UInt8(ascii: ","), count: importSizeLimit + 1)
        #expect(throws: InteropError.tooLarge(limit: importSizeLimit)) { try BitwardenCSVImporter.read(data, password: nil) }
        #expect(throws: InteropError.tooLarge(limit: importSizeLimit)) { try BitwardenJSONImporter.read(data, password: nil) }
    }
}
