import Foundation
import Testing

import CofferOTP

@Suite("Parameters, algorithm names, time and display")
struct ParametersTests {
    static let secret = RFCSeeds.sha1

    @Test("Algorithm names parse case-insensitively", arguments: ["SHA1", "sha1", "Sha1"])
    func sha1Names(name: String) {
        #expect(OTPAlgorithm(name: name) == .sha1)
    }

    @Test("Algorithm canonical names")
    func canonicalNames() {
        #expect(OTPAlgorithm.allCases.map(\.name) == ["SHA1", "SHA256", "SHA512"])
        #expect(OTPAlgorithm(name: "sha256") == .sha256 && OTPAlgorithm(name: "SHA512") == .sha512)
    }

    @Test("Other algorithm spellings are rejected", arguments: ["SHA-1", "sha-256", "MD5", "SHA384", "", " SHA1", "SHA1 "])
    func rejectedNames(name: String) {
        #expect(OTPAlgorithm(name: name) == nil)
    }

    @Test("Defaults: SHA1, 6 digits, 30 s TOTP")
    func defaults() throws {
        let parameters = try OTPParameters(secret: Self.secret)
        #expect(parameters.algorithm == .sha1 && parameters.digits == 6 && parameters.kind == .totp(period: 30))
        #expect(parameters.period == 30)
    }

    @Test("Digits 6 to 8 are accepted", arguments: [6, 7, 8])
    func digitsAccepted(digits: Int) throws {
        let parameters = try OTPParameters(secret: Self.secret, digits: digits, kind: .hotp(counter: 0))
        #expect(try parameters.code(atUnixTime: 0).count == digits)
    }

    @Test("Other digit counts are rejected", arguments: [-1, 0, 1, 5, 9, 10, Int.max])
    func digitsRejected(digits: Int) {
        #expect(throws: OTPError.invalidDigits) { try OTPParameters(secret: Self.secret, digits: digits) }
        #expect(throws: OTPError.invalidDigits) {
            try OTPGenerator(secret: Self.secret, algorithm: .sha1).code(counter: 0, digits: digits)
        }
    }

    @Test("Seven digits match RFC 4226 arithmetic (truncated value mod 10^7)")
    func sevenDigits() throws {
        // 0x4c93cf18 = 1284755224 from RFC 4226 Appendix D, counter 0.
        let parameters = try OTPParameters(secret: Self.secret, digits: 7, kind: .hotp(counter: 0))
        #expect(try parameters.code(atUnixTime: 0) == "4755224")
    }

    @Test("Periods in 1...86400 are accepted", arguments: [1, 30, 60, 86_400])
    func periodsAccepted(period: Int) throws {
        #expect(try OTPParameters(secret: Self.secret, kind: .totp(period: period)).period == period)
    }

    @Test("Periods outside 1...86400 are rejected", arguments: [Int.min, -30, 0, 86_401, 90_000])
    func periodsRejected(period: Int) {
        #expect(throws: OTPError.invalidPeriod) { try OTPParameters(secret: Self.secret, kind: .totp(period: period)) }
    }

    @Test("Secrets must be 10 to 1024 bytes (16+ base32 characters)")
    func secretLength() throws {
        #expect(throws: OTPError.secretTooShort) { try OTPParameters(secret: []) }
        #expect(throws: OTPError.secretTooShort) { try OTPParameters(secret: Array(repeating: 1, count: 9)) }
        #expect(throws: OTPError.secretTooShort) { try OTPParameters(secret: Base32.decode("JBSWY3DPEHPK3PX")) }
        _ = try OTPParameters(secret: Base32.decode("JBSWY3DPEHPK3PXP"))
        _ = try OTPParameters(secret: Array(repeating: 1, count: 1024))
        #expect(throws: OTPError.secretTooLong) { try OTPParameters(secret: Array(repeating: 1, count: 1025)) }
        #expect(throws: OTPError.missingSecret) { try OTPGenerator(secret: [], algorithm: .sha1) }
    }

    @Test("Steam is fixed at SHA1 and 5 characters")
    func steamRules() throws {
        let steam = try OTPParameters(secret: Self.secret, kind: .steam)
        #expect(steam.digits == 5 && steam.period == 30)
        _ = try OTPParameters(secret: Self.secret, digits: 5, kind: .steam)
        #expect(throws: OTPError.invalidDigits) { try OTPParameters(secret: Self.secret, digits: 6, kind: .steam) }
        #expect(throws: OTPError.unsupportedAlgorithm) {
            try OTPParameters(secret: Self.secret, algorithm: .sha256, kind: .steam)
        }
        let code = try steam.code(atUnixTime: 1_700_000_000)
        #expect(code.count == 5 && code.allSatisfy { "23456789BCDFGHJKMNPQRTVWXY".contains($0) })
    }

    @Test("Negative and non-finite times are rejected")
    func invalidTimes() throws {
        let totp = try OTPParameters(secret: Self.secret)
        let hotp = try OTPParameters(secret: Self.secret, kind: .hotp(counter: 0))
        for parameters in [totp, hotp] {
            #expect(throws: OTPError.invalidTime) { try parameters.code(atUnixTime: -1) }
            #expect(throws: OTPError.invalidTime) { try parameters.code(atUnixTime: .min) }
            #expect(throws: OTPError.invalidTime) { try parameters.secondsRemaining(atUnixTime: -1) }
            #expect(throws: OTPError.invalidTime) { try parameters.code(at: Date(timeIntervalSince1970: -0.5)) }
            #expect(throws: OTPError.invalidTime) { try parameters.code(at: Date(timeIntervalSince1970: .nan)) }
            #expect(throws: OTPError.invalidTime) { try parameters.code(at: Date(timeIntervalSince1970: .infinity)) }
            #expect(throws: OTPError.invalidTime) { try parameters.code(at: Date(timeIntervalSince1970: 1e30)) }
        }
        #expect(try totp.code(atUnixTime: .max).count == 6)
    }

    @Test("Date input rounds fractions down and matches Unix-time input")
    func dates() throws {
        let parameters = try OTPParameters(secret: RFCSeeds.sha1, digits: 8)
        #expect(try parameters.code(at: Date(timeIntervalSince1970: 59.999)) == "94287082")
        #expect(try parameters.code(at: Date(timeIntervalSince1970: 60)) == (try parameters.code(atUnixTime: 60)))
        #expect(try parameters.code(at: Date(timeIntervalSince1970: 20_000_000_000)) == "65353130")
        #expect(try parameters.secondsRemaining(at: Date(timeIntervalSince1970: 59.5)) == 1)
    }

    @Test(
        "Seconds remaining counts down from the period to 1",
        arguments: [(0, 30), (1, 29), (29, 1), (30, 30), (59, 1), (1_234_567_890, 30 - 1_234_567_890 % 30)] as [(Int64, Int)])
    func secondsRemaining(time: Int64, expected: Int) throws {
        #expect(try OTPParameters(secret: Self.secret).secondsRemaining(atUnixTime: time) == expected)
        #expect(try OTPParameters(secret: Self.secret, kind: .steam).secondsRemaining(atUnixTime: time) == expected)
    }

    @Test("Seconds remaining with other periods, and none for HOTP")
    func secondsRemainingOther() throws {
        #expect(try OTPParameters(secret: Self.secret, kind: .totp(period: 60)).secondsRemaining(atUnixTime: 61) == 59)
        #expect(try OTPParameters(secret: Self.secret, kind: .totp(period: 1)).secondsRemaining(atUnixTime: 5) == 1)
        #expect(try OTPParameters(secret: Self.secret, kind: .hotp(counter: 3)).secondsRemaining(atUnixTime: 5) == nil)
    }

    @Test("HOTP ignores time and uses the stored counter")
    func hotpIgnoresTime() throws {
        let parameters = try OTPParameters(secret: RFCSeeds.sha1, kind: .hotp(counter: 1))
        #expect(try parameters.code(atUnixTime: 0) == "287082")
        #expect(try parameters.code(atUnixTime: 1_000_000) == "287082")
        #expect(try parameters.counter(atUnixTime: 99) == 1)
    }

    @Test(
        "Display grouping",
        arguments: [
            ("123456", "123 456"), ("1234567", "123 4567"), ("12345678", "1234 5678"), ("FR8RV", "FR8RV"),
            ("", ""), ("123456789", "123456789"),
        ])
    func grouping(code: String, shown: String) {
        #expect(OTPCodeFormat.grouped(code) == shown)
    }

    @Test("Equality and hashing cover every field")
    func equality() throws {
        let base = try OTPParameters(secret: Self.secret)
        #expect(base == (try OTPParameters(secret: Self.secret)))
        #expect(Set([base, try OTPParameters(secret: Self.secret)]).count == 1)
        let variants = [
            try OTPParameters(secret: RFCSeeds.sha256),
            try OTPParameters(secret: Self.secret, algorithm: .sha256),
            try OTPParameters(secret: Self.secret, digits: 8),
            try OTPParameters(secret: Self.secret, kind: .totp(period: 60)),
            try OTPParameters(secret: Self.secret, kind: .hotp(counter: 30)),
            try OTPParameters(secret: Self.secret, kind: .steam),
        ]
        for variant in variants { #expect(variant != base) }
    }

    @Test("Error descriptions are non-empty and distinct")
    func errorDescriptions() {
        let errors: [OTPError] = [
            .invalidSecret, .missingSecret, .secretTooShort, .secretTooLong, .unsupportedAlgorithm, .invalidDigits,
            .invalidPeriod, .invalidCounter, .missingCounter, .invalidTime, .invalidAccountName, .uriTooLong,
            .unsupportedScheme, .unsupportedType, .malformedURI, .duplicateParameter("secret"),
        ]
        #expect(Set(errors.map(\.description)).count == errors.count)
        #expect(errors.allSatisfy { !$0.description.isEmpty })
    }
}
