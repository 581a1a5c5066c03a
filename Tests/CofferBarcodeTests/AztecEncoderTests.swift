@testable import CofferBarcode
import CofferTestSupport
import Testing

/// An Aztec vector: payload plus the options to encode it with.
struct AztecCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let format: AztecEncoder.Format
    let percent: Int
    /// Expected side length, when the vector pins a symbol size.
    let size: Int?

    var testDescription: String { "\(name) (\(bytes.count) bytes, \(format), \(percent)%)" }
}

/// The largest random-byte payload that fits a full 32-layer symbol at the default level (found by the encoder, and
/// then checked by the decoder and by the next length failing).
private let maximumRandomBytes: Int = {
    var random = TwoDSeededBytes(seed: 0xA27E)
    let bytes = random.bytes(2000)
    var low = 1
    var high = 2000
    while low < high {
        let mid = (low + high + 1) / 2
        if (try? AztecEncoder.encode(Array(bytes[0..<mid]))) != nil { low = mid } else { high = mid - 1 }
    }
    return low
}()

enum AztecCorpus {
    static let cases: [AztecCase] = {
        var random = TwoDSeededBytes(seed: 0xA27E)
        let maximum = random.bytes(2000)
        var cases: [AztecCase] = []
        func add(
            _ name: String, _ bytes: [UInt8], _ format: AztecEncoder.Format = .automatic, percent: Int = 23,
            size: Int? = nil
        ) {
            cases.append(AztecCase(name: name, bytes: bytes, format: format, percent: percent, size: size))
        }
        add("ticket", Array("TICKET-XYZ".utf8), size: 15)
        add("one-letter", Array("A".utf8), size: 15)
        add("one-high-byte", [0xE9], size: 15)
        add("one-nul", [0x00], size: 15)
        add("upper-lower-mixed", Array("Hello World\u{1}\u{7}@\\^_`|~\u{7F} ok".utf8))
        add("punct-pairs", Array("Hi. Yes, it is: done\r\nNext.".utf8))
        add("punct-run", Array("!\"#$%&'()*+,-./:;<=>?[]{}".utf8))
        add("digits", Array("0123456789 3.14, 2.71".utf8))
        add("digits-then-upper", Array("12345678ABCDEFGH12345678abcdefgh".utf8))
        add("utf8", Array("Käseschnitte Žabica 5€ — ünïcödé ✓ 🎫".utf8))
        add("all-byte-values", (0...255).map { UInt8($0) })
        add("binary-31", random.bytes(31, from: Array(128...255)))
        add("binary-32", random.bytes(32, from: Array(128...255)))
        add("binary-62", random.bytes(62, from: Array(128...255)))
        add("binary-63", random.bytes(63, from: Array(128...255)))
        for length in [2, 10, 40, 100, 400, 1000] { add("random-\(length)", random.bytes(length)) }
        add("printable-500", random.bytes(500, from: Array(32...126)))
        add("digits-3000", random.bytes(3000, from: Array("0123456789".utf8)))
        add("upper-2000", random.bytes(2000, from: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ ".utf8)))
        add("max-random-bytes", Array(maximum[0..<maximumRandomBytes]), size: 151)
        // Every compact size and a spread of full sizes.
        add("compact-1-text", Array("ABCDEFGHIJKL".utf8), .compact, size: 15)
        add("compact-2", random.bytes(12), .compact, size: 19)
        add("compact-3", random.bytes(25), .compact, size: 23)
        add("compact-4", random.bytes(45), .compact, size: 27)
        add("full-1", Array("HELLO".utf8), .full, size: 19)
        add("full-2", random.bytes(12), .full, size: 23)
        add("full-forced-large", random.bytes(150), .full)
        // Error-correction levels.
        for percent in [5, 50, 95] { add("percent-\(percent)", random.bytes(30), percent: percent) }
        return cases
    }()

    static let damagedCases: [AztecCase] = {
        var random = TwoDSeededBytes(seed: 0xDA27)
        return [
            AztecCase(
                name: "damaged-compact", bytes: Array("TICKET 0042 ZONE A-C VALID 2026".utf8), format: .compact,
                percent: 23, size: nil),
            AztecCase(name: "damaged-full", bytes: random.bytes(300), format: .full, percent: 23, size: nil),
        ]
    }()

    static let readings: Result<[String: [TwoDReading]], any Error> = Result {
        var symbols = cases.compactMap { c in
            (try? AztecEncoder.encode(c.bytes, minimumErrorCorrectionPercent: c.percent, format: c.format))
                .map { TwoDSymbol(name: c.name, matrix: $0) }
        }
        // Invert a patch in the outermost data layer, near the top-left corner.
        for c in damagedCases {
            if let matrix = try? AztecEncoder.encode(c.bytes, format: c.format) {
                symbols.append(TwoDSymbol(name: c.name, matrix: damaged(matrix, x: 0...3, y: 2...4)))
            }
        }
        return try TwoDOracle.decode(symbols, format: "Aztec")
    }
}

/// Whether the bullseye has the full-range symbol's extra ring (the whole ring at distance 6 from the centre is
/// dark; in a compact symbol that ring holds data).
private func isFullRange(_ matrix: BitMatrix) -> Bool {
    let center = matrix.width / 2
    return (-6...6).allSatisfy { k in
        matrix[center + k, center - 6] && matrix[center + k, center + 6] && matrix[center - 6, center + k]
            && matrix[center + 6, center + k]
    }
}

@Suite("Aztec", .offCooperativePool)
struct AztecEncoderTests {
    @Test("zxing-cpp reads back the exact bytes", arguments: AztecCorpus.cases)
    func roundTrip(_ payload: AztecCase) throws {
        let matrix = try AztecEncoder.encode(
            payload.bytes, minimumErrorCorrectionPercent: payload.percent, format: payload.format)
        if let size = payload.size { #expect(matrix.width == size && matrix.height == size) }
        switch payload.format {
        case .compact: #expect(!isFullRange(matrix))
        case .full: #expect(isFullRange(matrix))
        case .automatic: #expect(isFullRange(matrix) == (matrix.width > 27))
        }
        let found = try AztecCorpus.readings.get()[payload.name] ?? []
        try #require(found.count == 1, "expected exactly one Aztec symbol to decode")
        let sameBytes = found[0].bytes == payload.bytes
        #expect(sameBytes, "decoded bytes differ from the payload")
        // zxing-cpp reports the share of check codewords, rounded down; ours is at least the requested share.
        let reported = Int(found[0].ecLevel.dropLast()) ?? 0
        #expect(reported >= payload.percent)
    }

    @Test("error correction repairs a damaged patch", arguments: AztecCorpus.damagedCases)
    func damagedRoundTrip(_ payload: AztecCase) throws {
        let found = try AztecCorpus.readings.get()[payload.name] ?? []
        try #require(found.count == 1, "expected the damaged symbol to decode")
        let sameBytes = found[0].bytes == payload.bytes
        #expect(sameBytes, "decoded bytes differ from the payload")
    }

    @Test("matrices equal zint's for the same payloads", arguments: AztecZintFixtures.symbols.indices)
    func zintGolden(_ index: Int) throws {
        let fixture = AztecZintFixtures.symbols[index]
        let matrix = try AztecEncoder.encode(Array(fixture.payload.utf8), format: fixture.format)
        let rows = (0..<matrix.height).map { y in String((0..<matrix.width).map { matrix[$0, y] ? "1" : "0" }) }
        let expected = fixture.rows.map { hex in
            String(
                hex.flatMap { nibble -> [Character] in
                    let value = Int(String(nibble), radix: 16) ?? 0
                    return (0..<4).map { value >> (3 - $0) & 1 == 1 ? "1" : "0" }
                }.prefix(matrix.width))
        }
        #expect(rows == expected, "\(fixture.name)")
    }

    @Test("character modes, shifts and binary shift produce the standard's codes")
    func highLevel() {
        func codes(_ values: [(Int, Int)]) -> [Bool] {
            var writer = AztecBitWriter()
            for (value, width) in values { writer.append(value, width) }
            return writer.bits
        }
        #expect(AztecHighLevel.encode(Array("ABC".utf8)) == codes([(2, 5), (3, 5), (4, 5)]))
        // L/L then letters.
        #expect(AztecHighLevel.encode(Array("abc".utf8)) == codes([(28, 5), (2, 5), (3, 5), (4, 5)]))
        // D/L then 4-bit digits.
        #expect(AztecHighLevel.encode(Array("1234".utf8)) == codes([(30, 5), (3, 4), (4, 4), (5, 4), (6, 4)]))
        // P/S with the two-character code ". ".
        #expect(AztecHighLevel.encode(Array("A. B".utf8)) == codes([(2, 5), (0, 5), (3, 5), (3, 5)]))
        // B/S with a 5-bit length.
        #expect(AztecHighLevel.encode([0xFF, 0x80]) == codes([(31, 5), (2, 5), (0xFF, 8), (0x80, 8)]))
    }

    @Test("bit stuffing avoids all-zero and all-one codewords")
    func stuffing() {
        // Six-bit words: five zeros get a 1 appended, five ones a 0 (each consuming only five input bits); the tail
        // is padded with ones.
        let bits = [false, false, false, false, false, true, true, true, true, true, true, false]
        #expect(AztecSymbol.stuff(bits, wordSize: 6) == [0b000001, 0b111110, 0b101111])
    }

    @Test("the largest payload fits and one more byte does not")
    func capacity() throws {
        var random = TwoDSeededBytes(seed: 0xA27E)
        let bytes = random.bytes(maximumRandomBytes + 1)
        #expect(maximumRandomBytes > 1800)
        #expect(throws: BarcodeError.self) { try AztecEncoder.encode(bytes) }
        var compact = TwoDSeededBytes(seed: 1)
        #expect(throws: BarcodeError.self) { try AztecEncoder.encode(compact.bytes(100), format: .compact) }
    }

    @Test("bad input gives a clear error that never echoes the payload")
    func errors() {
        #expect(throws: BarcodeError(.aztec, "payload is empty")) { try AztecEncoder.encode([]) }
        #expect(throws: BarcodeError(.aztec, "error-correction percentage must be 5 to 95")) {
            try AztecEncoder.encode([1], minimumErrorCorrectionPercent: 99)
        }
        let secret = Array(repeating: Array("SECRET".utf8), count: 2000).flatMap { $0 }
        do {
            _ = try AztecEncoder.encode(secret)
            Issue.record("an oversize payload was accepted")
        } catch {
            #expect(error.symbology == .aztec)
            #expect(!error.description.contains("SECRET"))
        }
    }
}
