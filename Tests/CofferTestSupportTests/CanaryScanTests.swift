import CofferTestSupport
import Foundation
import Testing

/// The canary scan must see a marker in every spelling it claims, wherever it sits, and nothing in clean data: every
/// leak test of the project relies on it.
@Suite("Canary scan")
struct CanaryScanTests {
    /// A marker with a `/` (escaped by JSON encoders) and a non-ASCII letter (two UTF-8 bytes, one UTF-16 unit).
    static let marker = "CANARY/é"

    /// `text` between unrelated bytes, so a match cannot rely on the data's start or end.
    static func embedded(_ text: String) -> Data {
        Data("header \u{0}\u{1}".utf8) + Data(text.utf8) + Data("\u{2} trailer".utf8)
    }

    // The spellings below are written by hand from the marker's bytes (43 41 4E 41 52 59 2F C3 A9), not by the scan.
    @Test(
        "Each spelling of the marker is found and named",
        arguments: [
            ("CANARY/é", "raw"),
            ("43414e4152592fc3a9", "hex"),
            ("\\x43414E4152592FC3A9", "hex"),
            (#"CANARY\/é"#, "JSON-escaped"),
            (#"\u0043\u0041\u004e\u0041\u0052\u0059\u002f\u00e9"#, "\\u-escaped"),
            (#"\x43\x41\x4e\x41\x52\x59\x2f\xc3\xa9"#, "\\x-escaped"),
            (#"\103\101\116\101\122\131\057\303\251"#, "octal-escaped"),
            ("%43%41%4E%41%52%59%2F%C3%A9", "percent-escaped"),
        ])
    func spellings(text: String, name: String) {
        #expect(CanaryScan.encodings(of: Self.marker, in: Self.embedded(text)) == [name])
    }

    @Test("UTF-16 in both byte orders is found")
    func utf16() throws {
        let little = try #require(Self.marker.data(using: .utf16LittleEndian))
        let big = try #require(Self.marker.data(using: .utf16BigEndian))
        #expect(CanaryScan.encodings(of: Self.marker, in: Data([7, 7]) + little + Data([7])) == ["UTF-16LE"])
        #expect(CanaryScan.encodings(of: Self.marker, in: Data([7]) + big + Data([7, 7])) == ["UTF-16BE"])
    }

    @Test("Base64 and base64url find the marker at every offset inside a larger encoded value")
    func base64() {
        var random = SplitMix64(seed: 0xCA_4A21)
        for offset in 0..<9 {
            let plain = Data(random.bytes(offset)) + Data(Self.marker.utf8) + Data(random.bytes(Int(random.next() % 7)))
            let standard = plain.base64EncodedString()
            let urlSafe = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            let alignment = offset % 3
            #expect(CanaryScan.encodings(of: Self.marker, in: Data(standard.utf8)).contains("base64 (alignment \(alignment))"))
            // When the marker's own characters hold no `+` or `/`, both alphabets spell it alike.
            let urlNames = CanaryScan.encodings(of: Self.marker, in: Data(urlSafe.utf8))
            #expect(urlNames.contains("base64url (alignment \(alignment))") || urlNames.contains("base64 (alignment \(alignment))"))
        }
    }

    @Test("PostgreSQL's bytea output (hex, and escape format) is searched")
    func bytea() {
        let box = Data([0x00, 0xFF, 0x10]) + Data(Self.marker.utf8) + Data([0x80])
        let hexOutput = "\\\\x" + box.map { String(format: "%02x", $0) }.joined()
        #expect(CanaryScan.encodings(of: Self.marker, in: Data(hexOutput.utf8)) == ["hex"])
        // Escape format: printable ASCII as itself, other bytes as \ooo (here with the backslash doubled by COPY).
        let escapeOutput = box.map { (0x20...0x7E).contains($0) && $0 != 0x5C ? String(UnicodeScalar($0)) : String(format: "\\\\%03o", $0) }
            .joined()
        #expect(CanaryScan.encodings(of: "CANARY/", in: Data(escapeOutput.utf8)) == ["raw"])
    }

    @Test("Clean data, and data holding a near miss, give no encoding")
    func clean() {
        var random = SplitMix64(seed: 0xC1EA4)
        let bytes = Data(random.bytes(1 << 20))
        let near = Self.embedded("CANARY/e") + Self.embedded("CANARZ/é") + Data("43414e4152592fc3".utf8)
        for data in [bytes, Data(bytes.base64EncodedString().utf8), Data(TestSupport.hex(bytes).utf8), near, Data()] {
            #expect(CanaryScan.encodings(of: Self.marker, in: data).isEmpty)
        }
    }
}
