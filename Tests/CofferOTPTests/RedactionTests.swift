import CofferTestSupport
import Foundation
import Testing

import CofferOTP

/// Nothing that describes a token may reveal its secret (pitfall 13: secrets in logs and crash reports).
@Suite("Secret redaction")
struct RedactionTests {
    /// A recognisable secret: "CANARYSECRET" and a few bytes, in every spelling a leak could take.
    static let canary = asciiBytes("CANARYSECRET") + [0xDE, 0xAD, 0xBE, 0xEF]
    static let canaryBase32 = Base32.encode(canary)

    /// Markers looked for in every encoding the shared canary scan knows: the secret's text, its base32 form and
    /// parts of both, so a partial leak shows too.
    static let markers = ["CANARYSECRET", "CANARY", canaryBase32, canaryBase32.lowercased(), String(canaryBase32.prefix(8))]
    /// Spellings of the secret's bytes that are not encodings of a text: the whole secret in hex (its last bytes are
    /// not UTF-8), and the decimal and `0x` lists a dump of a byte array prints.
    static let forbidden: [String] = [hexString(canary), hexString(canary).uppercased(), "67, 65, 78", "0x43"]

    static func assertClean(_ text: String, _ what: String) {
        for marker in markers {
            #expect(CanaryScan.encodings(of: marker, in: Data(text.utf8)).isEmpty, "\(what) leaks the secret")
        }
        for needle in forbidden {
            #expect(!text.contains(needle), "\(what) leaks the secret")
        }
    }

    static func renderings(of value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), "\(value)", dumped]
    }

    @Test("Parameters, generators and tokens never show the secret")
    func descriptions() throws {
        let parameters = try OTPParameters(secret: Self.canary, algorithm: .sha256, digits: 8, kind: .hotp(counter: 7))
        let steam = try OTPParameters(secret: Self.canary, kind: .steam)
        let generator = try OTPGenerator(secret: Self.canary, algorithm: .sha512)
        let token = try OTPToken(uri: "otpauth://totp/Issuer:alice?secret=\(Self.canaryBase32)&issuer=Issuer")
        let values: [(Any, String)] = [
            (parameters, "OTPParameters"), (steam, "Steam OTPParameters"), (generator, "OTPGenerator"),
            (token, "OTPToken"), ([token], "array of OTPToken"), (Optional(parameters) as Any, "Optional"),
        ]
        for (value, name) in values {
            for text in Self.renderings(of: value) {
                Self.assertClean(text, name)
            }
        }
        #expect(String(describing: token).contains("Issuer"))
        #expect(!String(describing: token).contains("alice"))
        #expect(String(describing: parameters).contains("SHA256"))
        // The URI is the one place the secret must appear, so the canary itself is sound.
        #expect(token.uri.contains(Self.canaryBase32))
    }

    @Test("Errors from URIs carrying the secret do not echo it")
    func errors() {
        let uris = [
            "otpauth://totp/x?secret=\(Self.canaryBase32)1",
            "otpauth://totp/x?secret=\(Self.canaryBase32)&secret=\(Self.canaryBase32)",
            "otpauth://totp/x?secret=\(Self.canaryBase32)&digits=\(Self.canaryBase32)",
            "otpauth://\(Self.canaryBase32)/x?secret=\(Self.canaryBase32)",
            "\(Self.canaryBase32)://x",
            "otpauth://totp/x?secret=\(Self.canaryBase32)&issuer=%ZZ\(Self.canaryBase32)",
        ]
        for (index, uri) in uris.enumerated() {
            do {
                _ = try OTPToken(uri: uri)
                Issue.record("URI \(index) should have been rejected")
            } catch {
                for text in Self.renderings(of: error) {
                    Self.assertClean(text, "error for URI \(index)")
                }
            }
        }
    }
}
