import CofferTestSupport
import Testing

import CofferOTP

@Suite("otpauth:// printing and round trips")
struct KeyURIPrintTests {
    @Test("Canonical TOTP URI")
    func canonicalTOTP() throws {
        let parsed = try OTPToken(
            uri: "otpauth://totp/ACME%20Co:john.doe@email.com?secret=hxdmvjecjjwsrb3hwizr4ifugftmxboz%3D%3D"
                + "&issuer=ACME+Co")
        #expect(
            parsed.uri
                == "otpauth://totp/ACME%20Co:john.doe%40email.com?secret=HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ"
                + "&issuer=ACME%20Co&algorithm=SHA1&digits=6&period=30")
    }

    @Test("Canonical HOTP, Steam and issuer-less URIs")
    func canonicalOthers() throws {
        let secret = try Base32.decode("JBSWY3DPEHPK3PXP")
        let hotp = try OTPToken(
            issuer: "Bank", account: "me",
            parameters: OTPParameters(secret: secret, algorithm: .sha512, digits: 8, kind: .hotp(counter: .max)))
        #expect(
            hotp.uri
                == "otpauth://hotp/Bank:me?secret=JBSWY3DPEHPK3PXP&issuer=Bank&algorithm=SHA512&digits=8"
                + "&counter=18446744073709551615")
        let steam = try OTPToken(issuer: "Steam", account: "gamer", parameters: OTPParameters(secret: secret, kind: .steam))
        #expect(steam.uri == "otpauth://steam/Steam:gamer?secret=JBSWY3DPEHPK3PXP&issuer=Steam")
        let bare = try OTPToken(issuer: nil, account: "alice", parameters: OTPParameters(secret: secret))
        #expect(bare.uri == "otpauth://totp/alice?secret=JBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30")
    }

    @Test("RFC 3986 encoding: space as %20, plus as %2B, reserved and non-ASCII characters escaped")
    func encoding() throws {
        let token = try OTPToken(
            issuer: "A+B C:D", account: "x@y!#%&=?/橡",
            parameters: OTPParameters(secret: RFCSeeds.sha1))
        #expect(
            token.uri
                == "otpauth://totp/A%2BB%20C%3AD:x%40y%21%23%25%26%3D%3F%2F%E6%A9%A1?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
                + "&issuer=A%2BB%20C%3AD&algorithm=SHA1&digits=6&period=30")
        #expect(try OTPToken(uri: token.uri) == token)
    }

    @Test("Token init trims labels, drops an empty issuer and rejects a colon in the account")
    func tokenInit() throws {
        let parameters = try OTPParameters(secret: RFCSeeds.sha1)
        let token = try OTPToken(issuer: "  GitHub \n", account: " alice ", parameters: parameters)
        #expect(token.issuer == "GitHub" && token.account == "alice")
        #expect(try OTPToken(issuer: "   ", account: "a", parameters: parameters).issuer == nil)
        #expect(try OTPToken(issuer: "", account: "a", parameters: parameters).issuer == nil)
        #expect(throws: OTPError.invalidAccountName) {
            try OTPToken(issuer: "x", account: "a:b", parameters: parameters)
        }
        #expect(throws: OTPError.invalidAccountName) {
            try OTPToken(issuer: "x", account: "a:\u{301}b", parameters: parameters)
        }
    }

    /// Characters that stress the label grammar and both encodings.
    static let pieces = [
        "a", "Z", "0", " ", "@", "!", "#", "%", "+", "&", "=", "?", "/", ".", "-", "_", "~", "'", "\"", "橡皮鸭", "é",
        "e\u{301}", "🔑", "%20", "%3A", "\u{301}", "\t",
    ]

    static func randomLabel(_ random: inout SplitMix64, allowColon: Bool) -> String {
        let pool = allowColon ? pieces + [":", ": "] : pieces
        return (0..<Int.random(in: 0...12, using: &random)).map { _ in pool.randomElement(using: &random)! }.joined()
    }

    static func randomToken(_ random: inout SplitMix64) throws -> OTPToken {
        let secret = (0..<Int.random(in: 10...80, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let kind: OTPParameters.Kind =
            switch Int.random(in: 0..<3, using: &random) {
            case 0: .totp(period: [1, 30, 60, 86_400, Int.random(in: 1...86_400, using: &random)].randomElement(using: &random)!)
            case 1: .hotp(counter: [0, .max, UInt64.random(in: 0...UInt64.max, using: &random)].randomElement(using: &random)!)
            default: .steam
            }
        let parameters: OTPParameters
        if kind == .steam {
            parameters = try OTPParameters(secret: secret, kind: .steam)
        } else {
            parameters = try OTPParameters(
                secret: secret, algorithm: OTPAlgorithm.allCases.randomElement(using: &random)!,
                digits: Int.random(in: 6...8, using: &random), kind: kind)
        }
        let issuer = Bool.random(using: &random) ? nil : randomLabel(&random, allowColon: true)
        return try OTPToken(issuer: issuer, account: randomLabel(&random, allowColon: false), parameters: parameters)
    }

    @Test("parse(print(token)) == token over random tokens")
    func roundTrip() throws {
        var random = SplitMix64(seed: 0x07_A0_7B)
        for index in 0..<1000 {
            let token = try Self.randomToken(&random)
            let uri = token.uri
            #expect(!uri.contains("+") && !uri.contains(" "), "token \(index)")
            let parsed = try OTPToken(uri: uri)
            #expect(parsed == token, "token \(index)")
            #expect(parsed.uri == uri, "token \(index)")
        }
    }
}
