import CofferInterop
import CofferModel
import CofferOTP
import Foundation
import Testing

/// One token as a fixture script describes it, with codes computed in Python by an RFC 4226/6238 implementation
/// that checks itself against the RFC 6238 Appendix B table before writing anything.
struct TokenFixtureEntry: Decodable {
    let issuer: String
    let account: String
    let algorithm: String
    let digits: Int
    let kind: String
    let period: Int?
    let counter: UInt64?
    let tags: [String]
    /// Unix time (decimal text) → the code at that time.
    let codes: [String: String]
}

/// A fixture directory's `expected.json`.
struct TokenFixtureExpectation: Decodable {
    let password: String?
    /// How many bad entries the fixture holds; each must become exactly one problem.
    let problems: Int
    let entries: [TokenFixtureEntry]
}

enum TokenFixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func bytes(_ format: String, _ name: String) throws -> [UInt8] {
        let url = root.appendingPathComponent(format).appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            Issue.record("fixture \(format)/\(name) is missing: run Fixtures/\(format)/make_\(format).py")
            throw CocoaError(.fileNoSuchFile)
        }
        return Array(data)
    }

    static func expectation(_ format: String) throws -> TokenFixtureExpectation {
        try JSONDecoder().decode(TokenFixtureExpectation.self, from: Data(bytes(format, "expected.json")))
    }

    /// Checks every expected token was imported with its parameters, tags and codes, and that the bad entries
    /// became problems whose descriptions leak nothing secret.
    static func check(_ result: ImportResult, against expected: TokenFixtureExpectation) throws {
        let tokens = result.items.compactMap { item -> OTPItem? in
            if case .otp(let token) = item { return token }
            return nil
        }
        #expect(tokens.count == result.items.count, "only OTP items are expected")
        #expect(tokens.count == expected.entries.count)
        #expect(result.problems.count == expected.problems)
        for problem in result.problems {
            expectNoSecret(problem.description, password: expected.password)
        }
        for entry in expected.entries {
            let matches = tokens.filter { $0.issuer == entry.issuer && $0.account == entry.account }
            guard let token = matches.first, matches.count == 1 else {
                Issue.record("no single imported token for \(entry.issuer) (\(entry.account))")
                continue
            }
            let parameters = token.parameters
            #expect(parameters.algorithm.name == entry.algorithm, "\(entry.issuer)")
            #expect(parameters.digits == entry.digits, "\(entry.issuer)")
            #expect(token.tags == entry.tags, "\(entry.issuer)")
            switch (entry.kind, parameters.kind) {
            case ("totp", .totp(let period)): #expect(period == entry.period, "\(entry.issuer)")
            case ("hotp", .hotp(let counter)): #expect(counter == entry.counter, "\(entry.issuer)")
            case ("steam", .steam): break
            default: Issue.record("\(entry.issuer): expected \(entry.kind), imported \(parameters.kind)")
            }
            for (time, code) in entry.codes {
                let unixTime = try #require(Int64(time))
                #expect(try parameters.code(atUnixTime: unixTime) == code, "\(entry.issuer) at \(time)")
            }
        }
    }

    /// Problem and error texts name rules; they must not carry a password, a URI or a base32 secret.
    static func expectNoSecret(_ text: String, password: String?) {
        if let password { #expect(!text.contains(password)) }
        #expect(!text.contains("otpauth"))
        #expect(!text.contains("steam://"))
        #expect(text.range(of: "[A-Z2-7]{16,}", options: .regularExpression) == nil, "looks like a secret: \(text.count) chars")
    }

    /// Runs an importer on hostile input: it may throw an `InteropError` or return problems, never crash; a
    /// token may only come out of input that holds one.
    static func expectRejectedOrEmpty(_ read: () throws(InteropError) -> ImportResult) {
        do {
            let result = try read()
            #expect(result.items.isEmpty)
        } catch {
            expectNoSecret(error.description, password: nil)
        }
    }
}
