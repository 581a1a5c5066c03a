@testable import CofferBarcode
import Foundation
import CofferTestSupport
import Testing

/// A PDF417 vector: payload plus the options to encode it with.
struct PDF417Case: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let ecLevel: Int?
    let columns: Int?
    /// For default-level vectors: the level ISO/IEC 15438 recommends for this payload.
    var recommendedLevel: Int?

    var testDescription: String {
        "\(name) (\(bytes.count) bytes, level \(ecLevel.map(String.init) ?? "auto"), "
            + "columns \(columns.map(String.init) ?? "auto"))"
    }
}

enum PDF417Corpus {
    static let cases: [PDF417Case] = {
        var random = TwoDSeededBytes(seed: 0x417)
        let digits = Array("0123456789".utf8)
        let printable = Array(UInt8(32)...UInt8(126))
        var cases: [PDF417Case] = []
        func add(_ name: String, _ bytes: [UInt8], level: Int? = nil, columns: Int? = nil) {
            cases.append(PDF417Case(name: name, bytes: bytes, ecLevel: level, columns: columns))
        }
        add("card-text", Array("MEMBER:0042;NAME:Jane Doe".utf8))
        add("one-letter", Array("A".utf8))
        add("one-digit", Array("7".utf8))
        add("one-high-byte", [0xE9])
        add("one-nul", [0x00])
        add("lower", Array("the quick brown fox jumps over the lazy dog".utf8))
        add("mixed-submodes", Array("Aa1 &\r\t,:#-.$/+%*=^ ;<>@[\\]_`~!\n\"|()?{}' bB9".utf8))
        add("punctuation-run", Array("a;<>@[\\]_`~!?{}".utf8))
        add("byte-shift-in-text", Array("Käseschnitte und Brötchen".utf8))
        add(
            "latin1-byte-shifts",
            Array("Cafe au lait, deja vu".utf8) + [0xE9] + Array("Creme brulee".utf8) + [0xE8]
                + Array("ABCDEFG".utf8))
        add("byte-shift-after-punctuation", Array("Hello;<>@".utf8) + [0xE9] + Array("[]x yz".utf8))
        add("byte-shift-after-odd-mixed", Array("ab12345".utf8) + [0xFF] + Array("cdefg".utf8))
        add("utf8", Array("Žabica 5€ — ünïcödé ✓ 🎫".utf8))
        add("numeric-13", Array("1234567890123".utf8))
        add("numeric-12", Array("123456789012".utf8))
        add("numeric-44", random.bytes(44, from: digits))
        add("numeric-45", random.bytes(45, from: digits))
        add("numeric-leading-zeros", Array("0000000000000000000012".utf8))
        add("digits-in-text", Array("TICKET 1234567890123456 SEAT 42A GATE B17".utf8))
        add("bytes-mult-6", random.bytes(36))
        add("bytes-not-mult-6", random.bytes(35))
        add("bytes-5", [0x80, 0x81, 0x82, 0x83, 0x84])
        add("bytes-then-text", [0xFF, 0x00, 0x01, 0xFE, 0x80, 0x7F] + Array("HELLO WORLD".utf8))
        add("text-bytes-digits", Array("ABCDEF".utf8) + random.bytes(11) + random.bytes(20, from: digits) + Array("xyz".utf8))
        add("all-byte-values", (0...255).map { UInt8($0) })
        for length in [1, 2, 7, 100, 500, 1000] { add("random-\(length)", random.bytes(length)) }
        for length in [10, 300, 900] { add("printable-\(length)", random.bytes(length, from: printable)) }
        // Each level, on the same payload.
        let payload = random.bytes(60, from: printable)
        for level in 0...8 { add("level-\(level)", payload, level: level) }
        // Column counts from 1 to 30.
        for columns in [1, 2, 5, 13, 30] { add("columns-\(columns)", random.bytes(40), columns: columns) }
        // Maxima: 928 codewords in all at level 0 (2 check codewords).
        add("max-bytes", random.bytes(1108, from: Array(128...255)), level: 0)
        add("max-digits", random.bytes(2710, from: digits), level: 0)
        add("max-level-8", random.bytes(300), level: 8)
        return cases
    }()

    /// Upper-case text packs two letters per codeword, so these lengths land in each recommended-level band; the
    /// level expected is recorded with each.
    static let defaultLevelCases: [PDF417Case] = [(10, 2), (150, 3), (500, 4), (1000, 5)].map { length, level in
        var random = TwoDSeededBytes(seed: UInt64(length))
        let bytes = random.bytes(length, from: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8))
        return PDF417Case(
            name: "default-\(length)", bytes: bytes, ecLevel: nil, columns: nil, recommendedLevel: level)
    }

    static let damagedCases: [PDF417Case] = {
        var random = TwoDSeededBytes(seed: 0xDA417)
        return [
            PDF417Case(
                name: "damaged-text", bytes: Array("MEMBER:0042;NAME:Jane Doe;TIER:GOLD".utf8), ecLevel: 3,
                columns: 4),
            PDF417Case(name: "damaged-binary", bytes: random.bytes(120), ecLevel: 4, columns: 6),
        ]
    }()

    static let readings: Result<[String: [TwoDReading]], any Error> = Result {
        var symbols = (cases + defaultLevelCases).compactMap { c in
            (try? PDF417Encoder.encode(c.bytes, ecLevel: c.ecLevel, columns: c.columns))
                .map { TwoDSymbol(name: c.name, matrix: $0) }
        }
        // Invert part of the first data codeword of the first two rows (data columns start at module 34).
        for c in damagedCases {
            if let matrix = try? PDF417Encoder.encode(c.bytes, ecLevel: c.ecLevel, columns: c.columns) {
                symbols.append(TwoDSymbol(name: c.name, matrix: damaged(matrix, x: 36...46, y: 0...5)))
            }
        }
        return try TwoDOracle.decode(symbols, format: "PDF417", scale: 2)
    }
}

/// zxing-cpp reports the level as the share of check codewords among all codewords, rounded down.
private func reportedLevel(_ level: Int, _ matrix: BitMatrix) -> String {
    let rows = matrix.height / PDF417Encoder.rowHeight
    let columns = (matrix.width - 69) / 17
    return "\((2 << level) * 100 / (rows * columns))%"
}

@Suite("PDF417", .offCooperativePool)
struct PDF417EncoderTests {
    @Test("zxing-cpp reads back the exact bytes", arguments: PDF417Corpus.cases)
    func roundTrip(_ payload: PDF417Case) throws {
        let matrix = try PDF417Encoder.encode(payload.bytes, ecLevel: payload.ecLevel, columns: payload.columns)
        if let columns = payload.columns { #expect(matrix.width == 17 * columns + 69) }
        let found = try PDF417Corpus.readings.get()[payload.name] ?? []
        try #require(found.count == 1, "expected exactly one PDF417 symbol to decode")
        let sameBytes = found[0].bytes == payload.bytes
        #expect(sameBytes, "decoded bytes differ from the payload")
        if let level = payload.ecLevel { #expect(found[0].ecLevel == reportedLevel(level, matrix)) }
    }

    @Test("error correction repairs damaged codewords", arguments: PDF417Corpus.damagedCases)
    func damagedRoundTrip(_ payload: PDF417Case) throws {
        let found = try PDF417Corpus.readings.get()[payload.name] ?? []
        try #require(found.count == 1, "expected the damaged symbol to decode")
        let sameBytes = found[0].bytes == payload.bytes
        #expect(sameBytes, "decoded bytes differ from the payload")
    }

    @Test("the codeword table holds 929 distinct 17-module patterns per cluster with the right cluster number")
    func codewordTable() {
        #expect(PDF417CodewordTable.clusters.count == 3)
        for (cluster, widths) in PDF417CodewordTable.clusters.enumerated() {
            let digits = widths.utf8.map { Int($0) - 48 }
            #expect(digits.count == 929 * 8)
            var seen = Set<[Int]>()
            for start in stride(from: 0, to: digits.count, by: 8) {
                let w = Array(digits[start..<(start + 8)])
                #expect(w.allSatisfy { (1...6).contains($0) } && w.reduce(0, +) == 17)
                #expect((w[0] - w[2] + w[4] - w[6] + 9) % 9 == 3 * cluster)
                seen.insert(w)
            }
            #expect(seen.count == 929)
        }
    }

    @Test("compaction modes are chosen sensibly")
    func compaction() {
        // 13+ digits use Numeric Compaction: latch, then "1" + digits in base 900.
        #expect(PDF417Compaction.codewords(for: Array("1234567890123".utf8)).first == PDF417Compaction.latchNumeric)
        // Text packs two characters per codeword: "AB" = 0·30 + 1.
        #expect(PDF417Compaction.codewords(for: Array("AB".utf8)) == [1])
        // A lone byte inside text uses Byte Shift rather than leaving Text Compaction.
        let shifted = PDF417Compaction.codewords(for: Array("ABCDE".utf8) + [0xE9] + Array("FGHIJ".utf8))
        #expect(shifted.contains(PDF417Compaction.shiftByte) && !shifted.contains(PDF417Compaction.latchByte))
        // Six bytes: latch 924 and five codewords.
        #expect(PDF417Compaction.codewords(for: [0x80, 1, 2, 3, 4, 5]).count == 6)
        #expect(PDF417Compaction.codewords(for: [0x80, 1, 2, 3, 4, 5]).first == PDF417Compaction.latchByteMultipleOf6)
    }

    /// ISO/IEC 15438 recommended minimum levels by data codeword count (2 up to 40, 3 to 160, 4 to 320, 5 above).
    @Test("default level follows the recommended minimum", arguments: PDF417Corpus.defaultLevelCases)
    func defaultLevel(_ vector: PDF417Case) throws {
        let matrix = try PDF417Encoder.encode(vector.bytes)
        let found = try PDF417Corpus.readings.get()[vector.name] ?? []
        try #require(found.count == 1, "expected exactly one PDF417 symbol to decode")
        let level = try #require(vector.recommendedLevel)
        #expect(found[0].ecLevel == reportedLevel(level, matrix))
    }

    @Test("default shape is close to 3:1 and rows are three modules high")
    func defaultShape() throws {
        let matrix = try PDF417Encoder.encode(Array(repeating: UInt8(ascii: "A"), count: 200))
        #expect(matrix.height % PDF417Encoder.rowHeight == 0)
        let ratio = Double(matrix.width) / Double(matrix.height)
        #expect(ratio > 2 && ratio < 4.5)
    }

    @Test("bad input gives a clear error that never echoes the payload")
    func errors() {
        #expect(throws: BarcodeError(.pdf417, "payload is empty")) { try PDF417Encoder.encode([]) }
        #expect(throws: BarcodeError(.pdf417, "error-correction level must be 0 to 8")) {
            try PDF417Encoder.encode([1], ecLevel: 9)
        }
        #expect(throws: BarcodeError(.pdf417, "column count must be 1 to 30")) {
            try PDF417Encoder.encode([1], columns: 0)
        }
        var random = TwoDSeededBytes(seed: 5)
        #expect(throws: BarcodeError.self) { try PDF417Encoder.encode(random.bytes(1109, from: Array(128...255))) }
        #expect(throws: BarcodeError.self) {
            try PDF417Encoder.encode(random.bytes(2711, from: Array("0123456789".utf8)))
        }
        #expect(throws: BarcodeError.self) { try PDF417Encoder.encode(random.bytes(600), ecLevel: 8) }
        #expect(throws: BarcodeError.self) { try PDF417Encoder.encode(random.bytes(200), columns: 1) }
        let secret = Array(repeating: Array("SECRET".utf8), count: 500).flatMap { $0 }
        do {
            _ = try PDF417Encoder.encode(secret)
            Issue.record("an oversize payload was accepted")
        } catch {
            #expect(!error.description.contains("SECRET"))
        }
    }
}
