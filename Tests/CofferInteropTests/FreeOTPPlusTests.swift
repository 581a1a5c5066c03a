import CofferInterop
import CofferModel
import CofferOTP
import CofferTestSupport
import Foundation
import Testing

@Suite struct FreeOTPPlusTests {
    static let format = "freeotp-plus"

    struct Expected: Decodable {
        let items: [ExpectedOTP]
        let problems: [ExpectedProblem]
    }

    @Test func importsFixtureWithCodesFromPython() throws {
        let expected = try OTPFixtures.expected(Self.format, as: Expected.self)
        let result = try FreeOTPPlusImporter.read(OTPFixtures.bytes(Self.format, "export.json"), password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
        OTPFixtures.check(result.problems, against: expected.problems)
        for problem in result.problems { TokenFixtures.expectNoSecret(problem.description, password: nil) }
    }

    @Test func signedBytesMapToTheirUnsignedKey() throws {
        // -128...127 covers every byte value; the key below is 0x80 0xFF 0x00 0x7F repeated to 20 bytes.
        let signed = Array(repeating: [-128, -1, 0, 127], count: 5).joined().map(String.init).joined(separator: ",")
        let json = #"{"tokens":[{"issuerExt":"I","label":"a","type":"TOTP","algo":"SHA1","digits":6,"period":30,"secret":[\#(signed)]}]}"#
        let items = OTPFixtures.otpItems(try FreeOTPPlusImporter.read(Array(json.utf8), password: nil))
        #expect(items.first?.parameters.secret == Array(Array(repeating: [0x80, 0xFF, 0x00, 0x7F], count: 5).joined()))
    }

    @Test(arguments: [
        "", "[]", "null", "{}", #"{"tokens":{}}"#, #"{"tokens":"x"}"#, "{\"tokens\":[", "\u{FF}\u{FE}",
    ])
    func refusesFilesThatAreNotExports(_ text: String) {
        #expect(throws: InteropError.self) { try FreeOTPPlusImporter.read(Array(text.utf8), password: nil) }
    }

    @Test(arguments: [
        #"{"secret":[1,2,3,4,5],"type":"TOTP","label":"a"}"#,
        #"{"secret":[1.5],"label":"a"}"#, #"{"secret":[true],"label":"a"}"#, #"{"secret":[-129],"label":"a"}"#,
        #"{"secret":null,"label":"a"}"#, #"{"secret":[],"label":"a"}"#,
        #"{"secret":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],"type":"YAOTP","label":"a"}"#,
        #"{"secret":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],"digits":"6","label":"a"}"#,
        #"{"secret":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],"period":0,"label":"a"}"#,
        #"{"secret":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],"digits":99,"label":"a"}"#,
        #"{"secret":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}"#,
        #"{"secret":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],"label":7}"#,
        #"["a"]"#,
    ])
    func badEntriesBecomeProblems(_ token: String) throws {
        let result = try FreeOTPPlusImporter.read(Array(#"{"tokens":[\#(token)]}"#.utf8), password: nil)
        #expect(result.items.isEmpty)
        #expect(result.problems.count == 1)
        for problem in result.problems { TokenFixtures.expectNoSecret(problem.description, password: nil) }
    }

    @Test func truncatedExportIsRefused() throws {
        let data = try OTPFixtures.bytes(Self.format, "export.json")
        for length in stride(from: 1, to: data.count - 2, by: 97) {
            TokenFixtures.expectRejectedOrEmpty { () throws(InteropError) in
                try FreeOTPPlusImporter.read(Array(data.prefix(length)), password: nil)
            }
        }
    }

    @Test func refusesOversizedFiles() {
        let data = [UInt8](repeating: UInt8(ascii: " "), count: importSizeLimit + 1)
        #expect(throws: InteropError.tooLarge(limit: importSizeLimit)) {
            try FreeOTPPlusImporter.read(data, password: nil)
        }
    }

    @Test func formatName() {
        #expect(FreeOTPPlusImporter.formatName == "freeotp-plus")
    }
}
