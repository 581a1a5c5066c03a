import CofferBarcode
import CofferModel
import CofferOTP
import Foundation
import Testing

/// Finding an item the way people name it.
@Suite("Item lookup")
struct ItemLookupTests {
    static func card(_ name: String) throws -> ItemLookup.Candidate {
        ItemLookup.Candidate(id: UUID(), content: .card(try Card(name: name, symbology: .code128, payload: Array("1".utf8))))
    }

    static func token(_ issuer: String, _ account: String) throws -> ItemLookup.Candidate {
        ItemLookup.Candidate(
            id: UUID(),
            content: .otp(try OTPItem(issuer: issuer, account: account, parameters: try OTPParameters(secret: Array("12345678901234567890".utf8)))))
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let query: String
        /// Index of the candidate found, or the indices listed as ambiguous, or none.
        let expected: [Int]?
        let ambiguous: Bool
        var testDescription: String { "\"\(query)\"" }

        static func found(_ query: String, _ index: Int) -> Case { Case(query: query, expected: [index], ambiguous: false) }
        static func several(_ query: String, _ indices: [Int]) -> Case { Case(query: query, expected: indices, ambiguous: true) }
        static func none(_ query: String) -> Case { Case(query: query, expected: nil, ambiguous: false) }
    }

    static let names = ["costco", "Costco Gold", "COSTCO", "Café Nero", "GitHub", "GitLab", "Bibliothèque"]

    @Test(
        "exact names win; then case and accents; then a unique prefix or substring; several are listed",
        arguments: [
            Case.found("costco", 0), Case.found("COSTCO", 2), Case.found("Costco Gold", 1),
            Case.several("Costco", [0, 2]), Case.found("costco g", 1),
            Case.found("Cafe", 3), Case.found("cafe nero", 3), Case.found("CAFÉ", 3), Case.found("nero", 3),
            Case.several("git", [4, 5]), Case.found("gith", 4), Case.found("hub", 4), Case.found("lab", 5),
            Case.found("bibliotheque", 6), Case.found("thèque", 6),
            Case.none("walmart"), Case.none(""),
        ])
    func rules(testCase: Case) throws {
        let candidates = try Self.names.map(Self.card)
        let outcome = ItemLookup.find(testCase.query, in: candidates)
        switch (testCase.expected, testCase.ambiguous) {
        case (nil, _): #expect(outcome == .none)
        case (let indices?, false): #expect(outcome == .found(candidates[indices[0]].id))
        case (let indices?, true): #expect(outcome == .ambiguous(indices.map { candidates[$0] }))
        }
    }

    @Test("a token is found by issuer, account, both, or its display name; ids by their whole or a 4+ digit prefix")
    func tokensAndIDs() throws {
        let candidates = [try Self.token("GitHub", "alice"), try Self.token("Google", "alice@example.org"), try Self.card("Tesco")]
        #expect(ItemLookup.find("GitHub:alice", in: candidates) == .found(candidates[0].id))
        #expect(ItemLookup.find("Google (alice@example.org)", in: candidates) == .found(candidates[1].id))
        #expect(ItemLookup.find("alice@example.org", in: candidates) == .found(candidates[1].id))
        #expect(ItemLookup.find("alice", in: candidates) == .found(candidates[0].id))
        #expect(ItemLookup.find("g", in: candidates) == .ambiguous(Array(candidates.prefix(2))))
        let id = candidates[2].id.uuidString
        #expect(ItemLookup.find(id, in: candidates) == .found(candidates[2].id))
        #expect(ItemLookup.find(id.lowercased(), in: candidates) == .found(candidates[2].id))
        let prefix = String(id.prefix(6)).lowercased()
        if !candidates[0...1].contains(where: { $0.id.uuidString.lowercased().hasPrefix(prefix) }) {
            #expect(ItemLookup.find(prefix, in: candidates) == .found(candidates[2].id))
        }
    }

    @Test("a second item of an existing name is noticed, whatever its case or accents")
    func sameName() throws {
        let candidates = try ["Café", "Tesco"].map(Self.card)
        #expect(ItemLookup.sameName("cafe", in: candidates) == [candidates[0]])
        #expect(ItemLookup.sameName("CAFÉ", in: candidates, excluding: candidates[0].id).isEmpty)
        #expect(ItemLookup.sameName("Caf", in: candidates).isEmpty)
    }

    @Test("ASCII names fold as Foundation folds them: every character, and mixed names around it")
    func asciiFolding() {
        let characters = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        var texts = characters + ["GitHub", "AWS-Prod_01", "user@Example.ORG", "Costco Wholesale", "", "Ünïcode", "ＧｉｔＨｕｂ", "e\u{301}"]
        texts.append(characters.joined())
        for text in texts {
            let foundation = text.precomposedStringWithCanonicalMapping.folding(
                options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
            #expect(ItemLookup.folded(text) == foundation, "\(Array(text.utf8))")
        }
    }
}
