import CofferInterop
import CofferModel
import Foundation
import Testing

@Suite struct AndOTPTests {
    static let format = "andotp"

    @Test(arguments: ["plain.json", "encrypted.json.aes", "old-format.json.aes"])
    func importsFixtureWithCodesFromPython(file: String) throws {
        let expected = try TokenFixtures.expectation(Self.format)
        let result = try AndOTPImporter.read(TokenFixtures.bytes(Self.format, file), password: expected.password)
        try TokenFixtures.check(result, against: expected)
    }

    @Test(arguments: ["encrypted.json.aes", "old-format.json.aes"])
    func refusesTheWrongPassword(file: String) throws {
        let data = try TokenFixtures.bytes(Self.format, file)
        #expect(throws: InteropError.wrongPassword) { try AndOTPImporter.read(data, password: "wrong password") }
    }

    @Test func asksForAPassword() throws {
        let data = try TokenFixtures.bytes(Self.format, "encrypted.json.aes")
        #expect(throws: InteropError.passwordRequired) { try AndOTPImporter.read(data, password: nil) }
    }

    /// The iteration count is read from the file: an out-of-range value is never derived with (a hostile 2^31
    /// would hang the import for minutes). Such a header may also be an old-format IV, so the answer is the
    /// wrong-password error once neither reading opens.
    @Test(arguments: [UInt32(0), 10_000_001, 1 << 31, UInt32.max])
    func neverDerivesWithIterationCountsOutOfBounds(iterations: UInt32) throws {
        let expected = try TokenFixtures.expectation(Self.format)
        var data = try TokenFixtures.bytes(Self.format, "encrypted.json.aes")
        data.replaceSubrange(0..<4, with: (0..<4).map { UInt8(truncatingIfNeeded: iterations >> (24 - 8 * $0)) })
        #expect(throws: InteropError.wrongPassword) { try AndOTPImporter.read(data, password: expected.password) }
    }

    @Test func aChangedIterationCountInBoundsIsAWrongPassword() throws {
        let expected = try TokenFixtures.expectation(Self.format)
        var data = try TokenFixtures.bytes(Self.format, "encrypted.json.aes")
        data.replaceSubrange(0..<4, with: [0, 0, 0x03, 0xE8])
        #expect(throws: InteropError.wrongPassword) { try AndOTPImporter.read(data, password: expected.password) }
    }

    @Test(arguments: [0, 3, 16, 27, 40, 100])
    func truncatedEncryptedFilesAreErrors(length: Int) throws {
        let expected = try TokenFixtures.expectation(Self.format)
        let data = Array(try TokenFixtures.bytes(Self.format, "encrypted.json.aes").prefix(length))
        #expect(throws: InteropError.self) { try AndOTPImporter.read(data, password: expected.password) }
    }

    @Test(arguments: [0.1, 0.5, 0.99])
    func truncatedFilesNeverCrash(fraction: Double) throws {
        for file in ["plain.json", "encrypted.json.aes", "old-format.json.aes"] {
            let data = try TokenFixtures.bytes(Self.format, file)
            let cut = Array(data.prefix(Int(Double(data.count) * fraction)))
            TokenFixtures.expectRejectedOrEmpty { () throws(InteropError) in
                try AndOTPImporter.read(cut, password: "andOTP backup pw")
            }
        }
    }

    @Test(arguments: [#"{"secret": "GEZDGNBVGY3TQOJQ"}"#, "42", #""text""#, "null"])
    func jsonThatIsNotAnArrayIsAnError(text: String) {
        #expect(throws: InteropError.self) { try AndOTPImporter.read(Array(text.utf8), password: nil) }
    }

    @Test(arguments: [
        #"[{"secret": "GEZDGNBVGY3TQOJQ", "issuer": "A", "label": "a", "type": "HOTP"}]"#,
        #"[{"secret": "GEZDGNBVGY3TQOJQ", "issuer": "A", "label": "a", "digits": "6"}]"#,
        #"[{"secret": "GEZDGNBVGY3TQOJQ", "issuer": "A", "label": "a", "algorithm": "MD5"}]"#,
        #"[{"secret": "GEZDGNBVGY3TQOJQ", "issuer": "A", "label": "a", "period": 1e9}]"#,
        #"[{"secret": "GEZDGNBVGY3TQOJQ", "issuer": "A", "label": "a", "tags": "work"}]"#,
        #"[{"secret": ["GEZDGNBVGY3TQOJQ"], "issuer": "A", "label": "a"}]"#,
        #"[{"secret": "GEZDGNBVGY3TQOJQ", "issuer": 5, "label": "a"}]"#,
        #"[{"secret": "GEZD", "issuer": "A", "label": "a"}]"#,
        #"[{"issuer": "A", "label": "a"}]"#,
    ])
    func badEntriesAreProblems(text: String) throws {
        let result = try AndOTPImporter.read(Array(text.utf8), password: nil)
        #expect(result.items.isEmpty)
        #expect(result.problems.count == 1)
        for problem in result.problems {
            #expect(!problem.description.contains("GEZD"))
        }
    }

    @Test func unusableTagsAreDroppedNotFatal() throws {
        let long = String(repeating: "t", count: 65)
        let text = #"[{"secret": "GEZDGNBVGY3TQOJQ", "issuer": "A", "label": "a", "tags": ["ok", "", "\#(long)", 3]}]"#
        let result = try AndOTPImporter.read(Array(text.utf8), password: nil)
        #expect(result.problems.isEmpty)
        #expect(result.items.first?.tags == ["ok"])
    }

    @Test func refusesOversizedFiles() {
        let data = [UInt8](repeating: 0, count: importSizeLimit + 1)
        #expect(throws: InteropError.tooLarge(limit: importSizeLimit)) { try AndOTPImporter.read(data, password: "x") }
    }
}
