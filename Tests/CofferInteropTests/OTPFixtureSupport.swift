import CofferTestSupport
import CofferInterop
import CofferModel
import CofferOTP
import Foundation
import Testing

/// One token as a fixture script's expected.json describes it; codes come from Fixtures/otp_reference.py.
struct ExpectedOTP: Decodable {
    let issuer: String
    let account: String
    let kind: String
    let algorithm: String
    let digits: Int
    let tags: [String]
    let secret: String
    let times: [Int64]
    let codes: [String]
    let period: Int?
    let counter: UInt64?
    let notes: String?
}

/// A problem an importer must report: the entry exactly, and a word or phrase its reason contains.
struct ExpectedProblem: Decodable {
    let entry: String
    let reason: String
}

enum OTPFixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func bytes(_ format: String, _ name: String) throws -> [UInt8] {
        let path = root.appendingPathComponent(format).appendingPathComponent(name).path
        guard let data = FileManager.default.contents(atPath: path) else {
            Issue.record("fixture \(format)/\(name) is missing: run its make_*.py script")
            throw CocoaError(.fileNoSuchFile)
        }
        return Array(data)
    }

    static func expected<T: Decodable>(_ format: String, as type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes(format, "expected.json")))
    }

    static func otpItems(_ result: ImportResult) -> [OTPItem] {
        result.items.compactMap { item in
            if case .otp(let token) = item { return token }
            return nil
        }
    }

    /// Checks each expected token was imported with its secret, parameters, tags, notes and codes.
    static func check(_ items: [OTPItem], against expected: [ExpectedOTP]) throws {
        #expect(items.count == expected.count)
        for entry in expected {
            let matches = items.filter { $0.issuer == entry.issuer && $0.account == entry.account }
            guard let item = matches.first, matches.count == 1 else {
                Issue.record("no single imported token for \(entry.issuer) (\(entry.account))")
                continue
            }
            let parameters = item.parameters
            #expect(Base32.encode(parameters.secret) == entry.secret, "\(entry.issuer): secret differs")
            #expect(parameters.algorithm.name == entry.algorithm, "\(entry.issuer)")
            #expect(parameters.digits == entry.digits, "\(entry.issuer)")
            #expect(item.tags == entry.tags, "\(entry.issuer)")
            #expect(item.notes == entry.notes, "\(entry.issuer)")
            switch (entry.kind, parameters.kind) {
            case ("totp", .totp(let period)): #expect(period == entry.period, "\(entry.issuer)")
            case ("hotp", .hotp(let counter)): #expect(counter == entry.counter, "\(entry.issuer)")
            case ("steam", .steam): break
            default: Issue.record("\(entry.issuer): expected \(entry.kind), imported \(parameters.kind)")
            }
            #expect(entry.times.count == entry.codes.count)
            for (time, code) in zip(entry.times, entry.codes) {
                #expect(try parameters.code(atUnixTime: time) == code, "\(entry.issuer) at \(time)")
            }
        }
    }

    /// Checks the problems, in order: same entries, and each reason contains the expected phrase.
    static func check(_ problems: [ImportProblem], against expected: [ExpectedProblem]) {
        #expect(problems.map(\.entry) == expected.map(\.entry))
        for (problem, wanted) in zip(problems, expected) {
            #expect(problem.reason.localizedCaseInsensitiveContains(wanted.reason), "\(problem.entry): \(problem.reason)")
        }
    }

    /// Whether any problem's text contains one of `secrets`: in any case, or (secrets long enough for it) in any
    /// encoding the shared canary scan knows.
    static func problems(_ problems: [ImportProblem], leak secrets: [String]) -> Bool {
        problems.contains { problem in
            secrets.contains { secret in
                guard !secret.isEmpty else { return false }
                return problem.description.localizedCaseInsensitiveContains(secret)
                    || secret.utf8.count >= CanaryScan.minimumMarkerLength
                        && !CanaryScan.encodings(of: secret, in: Data(problem.description.utf8)).isEmpty
            }
        }
    }

    /// A token with a reproducible secret of `length` bytes drawn from `secretSeed`.
    static func item(
        _ issuer: String, _ account: String, secretSeed: UInt64, length: Int = 20, algorithm: OTPAlgorithm = .sha1,
        digits: Int? = nil, kind: OTPParameters.Kind = .totp(period: 30), tags: [String] = [], notes: String? = nil
    ) throws -> OTPItem {
        var random = SplitMix64(seed: secretSeed)
        let parameters = try OTPParameters(secret: random.bytes(length), algorithm: algorithm, digits: digits, kind: kind)
        return try OTPItem(issuer: issuer, account: account, parameters: parameters, tags: tags, notes: notes)
    }
}
