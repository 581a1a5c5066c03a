import CofferTestSupport
import Foundation
import Testing

@testable import CofferVault

/// The strength estimate behind the warning and the floor for new passphrases, checked against our own judgement of
/// typical passphrases and against Dropbox's zxcvbn (Python port) as an outside estimator.
@Suite("Passphrase strength", .offCooperativePool)
struct PassphraseStrengthTests {
    struct Vector: CustomTestStringConvertible, Sendable {
        let passphrase: String
        let rating: PassphraseStrength.Rating
        let weakness: PassphraseStrength.Weakness?
        var testDescription: String { "\(rating.rawValue): \(passphrase.count) characters" }
    }

    static let vectors: [Vector] = [
        Vector(passphrase: "a", rating: .tooWeak, weakness: .short),
        Vector(passphrase: "password", rating: .tooWeak, weakness: .commonPassword),
        Vector(passphrase: "Password123!", rating: .tooWeak, weakness: .commonPassword),
        Vector(passphrase: "p4ssw0rd", rating: .tooWeak, weakness: .commonPassword),
        Vector(passphrase: "12345678", rating: .tooWeak, weakness: .commonPassword),
        Vector(passphrase: "aaaaaaaaaaaaaaaaaaaa", rating: .tooWeak, weakness: .repeated),
        Vector(passphrase: "abcabcabcabcabc", rating: .tooWeak, weakness: .repeated),
        Vector(passphrase: "abcdefghijklmnop", rating: .tooWeak, weakness: .sequence),
        Vector(passphrase: "Tr0ub4dor&3", rating: .tooWeak, weakness: .short),
        Vector(passphrase: "xkqwpzvmtrbn", rating: .weak, weakness: nil),
        Vector(passphrase: "correct horse battery staple", rating: .fair, weakness: nil),
        Vector(passphrase: "lantern quiet orbit velvet 42", rating: .fair, weakness: nil),
        Vector(passphrase: "kX9#mQ2$vL7!pR4&", rating: .strong, weakness: nil),
        Vector(passphrase: "Zürich Bahnhof 1848 Löwe spät", rating: .strong, weakness: nil),
    ]

    @Test("typical passphrases get the rating and the reason expected", arguments: vectors)
    func rated(_ vector: Vector) {
        let strength = PassphraseStrength(estimating: vector.passphrase)
        #expect(strength.rating == vector.rating, "estimated \(strength.bits) bits")
        #expect(strength.weakness == vector.weakness)
    }

    @Test("a longer passphrase of the same kind never rates lower; a description never holds the passphrase")
    func monotonic() {
        var words = "orbit"
        var previous = PassphraseStrength(estimating: words).bits
        for word in ["velvet", "lantern", "quiet", "marble", "thistle"] {
            words += " " + word
            let strength = PassphraseStrength(estimating: words)
            #expect(strength.bits >= previous)
            #expect(!strength.description.contains(word))
            previous = strength.bits
        }
    }

    /// Passphrases of every kind people choose: common passwords with decorations, words, random strings.
    static func corpus() -> [String] {
        var random = SplitMix64(seed: 0x5eed_0017)
        let common = ["password", "qwerty", "iloveyou", "dragon", "monkey", "letmein", "sunshine", "football"]
        let words = ["orbit", "velvet", "lantern", "quiet", "marble", "thistle", "copper", "meadow", "harbor", "pencil", "violet", "tundra"]
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&*".utf8)
        var corpus: [String] = vectors.map(\.passphrase)
        for _ in 0..<40 {
            let base = common[Int(random.next() % UInt64(common.count))]
            let digits = String(random.next() % 1000)
            corpus.append(random.next() % 2 == 0 ? base.capitalized + digits : base + digits + "!")
        }
        for count in 2...6 {
            for _ in 0..<8 {
                corpus.append((0..<count).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(separator: " "))
            }
        }
        for length in [6, 8, 10, 12, 16, 20] {
            for _ in 0..<6 { corpus.append(String(decoding: random.bytes(length, from: alphabet), as: UTF8.self)) }
        }
        return corpus
    }

    @Test("agrees with zxcvbn where it matters: what zxcvbn finds in under 2^25 guesses is refused; what it puts at 2^60 or more is not")
    func zxcvbnAgrees() throws {
        let corpus = Self.corpus()
        let answers = try TestSupport.pythonOracle("zxcvbn_oracle.py", input: corpus)
        #expect(answers.count == corpus.count)
        var refusedByBoth = 0
        var acceptedByBoth = 0
        for (passphrase, answer) in zip(corpus, answers) {
            guard let answer = answer as? [String: Any], let bits = answer["bits"] as? Double else {
                Issue.record("malformed oracle answer")
                continue
            }
            let ours = PassphraseStrength(estimating: passphrase)
            if bits < 25 {
                #expect(ours.rating == .tooWeak, "zxcvbn \(Int(bits)) bits, ours \(ours.bits), length \(passphrase.count)")
                refusedByBoth += ours.rating == .tooWeak ? 1 : 0
            }
            if bits >= 60 {
                #expect(ours.rating != .tooWeak, "zxcvbn \(Int(bits)) bits, ours \(ours.bits), length \(passphrase.count)")
                acceptedByBoth += ours.rating != .tooWeak ? 1 : 0
            }
        }
        // Both ends of the corpus are populated, so the comparison cannot pass by having nothing to compare.
        #expect(refusedByBoth >= 30 && acceptedByBoth >= 20, "refused \(refusedByBoth), accepted \(acceptedByBoth)")
    }
}
