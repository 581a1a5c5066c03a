import CofferCrypto
import Foundation
import Testing

/// `trimmingWhitespace()` against Foundation's `trimmingCharacters(in: .whitespacesAndNewlines)`, the oracle it
/// replaces on the import path.
@Suite("Trimming white space")
struct TextTrimmingTests {
    @Test("every Unicode scalar, around text and alone, is trimmed exactly when Foundation trims it")
    func everyScalar() {
        var differing: [UInt32] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let around = "\(scalar)x\(scalar)"
            let alone = String(scalar)
            if around.trimmingWhitespace() != around.trimmingCharacters(in: .whitespacesAndNewlines)
                || alone.trimmingWhitespace() != alone.trimmingCharacters(in: .whitespacesAndNewlines)
            {
                differing.append(value)
            }
        }
        #expect(differing.isEmpty, "differs from Foundation at \(differing.prefix(20).map { String($0, radix: 16) })")
    }

    @Test(
        "mixed text: inner space kept, combining marks and emoji at the ends, substrings",
        arguments: [
            "", " ", "\t\n\r\u{0B}\u{0C}\u{85}\u{A0}\u{2028}\u{3000}", "  Bank  ", "a b", " \u{301}e ", "\u{1F600} ", " x\u{200B} ",
            "\u{FEFF}name\u{FEFF}", "\u{2003}Ärzte\u{2029}", "e\u{301}\u{2009}", "\r\n line \r\n",
        ])
    func mixed(_ text: String) {
        #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines))
        let inner = text.dropFirst()
        #expect(inner.trimmingWhitespace() == inner.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
