import CofferTestSupport
import Testing

@testable import CofferBarcode

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

private func rows(_ matrix: BitMatrix) -> [String] {
    (0..<matrix.height).map { y in String((0..<matrix.width).map { matrix[$0, y] ? "1" : "0" }) }
}

struct QRGoldenTests {
    /// ISO/IEC 18004 worked example: "01234567" at 1-M, mask 2. The matrix is the one qrencode 4.1.1, zint 2.11 and
    /// segno all produce (`qrencode -t ASCII -l M -v 1 -m 0 01234567`).
    static let isoExample = [
        "111111100101101111111", "100000100111101000001", "101110101000001011101", "101110101100001011101",
        "101110101011101011101", "100000101000101000001", "111111101010101111111", "000000001001100000000",
        "101111100100101111100", "000101011010100101100", "001000110101010011111", "000010000100000111100",
        "000111111001010010000", "000000001011111001100", "111111100110101100000", "100000101011111000101",
        "101110101000100101100", "101110101100100100000", "101110101011010010100", "100000100000000110110",
        "111111101111010010100",
    ]

    /// "HELLO WORLD" at 1-Q (`qrencode -t ASCII -l Q -v 1 -m 0 "HELLO WORLD"`, identical in zint).
    static let helloWorld = [
        "111111101100001111111", "100000101001001000001", "101110101001101011101", "101110101000001011101",
        "101110101010001011101", "100000100010001000001", "111111101010101111111", "000000001000000000000",
        "011010110000101011111", "010000001111000010001", "001101110110001011000", "011011010011010101110",
        "100010101011101110101", "000000001101001000101", "111111101010000101100", "100000100101101101000",
        "101110101010001111111", "101110100101010100010", "101110101001011101001", "100000101011110001011",
        "111111100001011100001",
    ]

    @Test func isoWorkedExample() throws {
        let result = try encode(bytes("01234567"), as: .qr, options: BarcodeOptions(qrErrorCorrection: .M))
        #expect(result.qr == QRSymbolInfo(version: 1, errorCorrection: .M, mask: 2, utf8ECI: false))
        guard case .matrix(let matrix) = result.symbol else { throw BarcodeError(.qr, "not a matrix") }
        #expect(rows(matrix) == Self.isoExample)
    }

    @Test func helloWorldQ() throws {
        let result = try encode(bytes("HELLO WORLD"), as: .qr, options: BarcodeOptions(qrErrorCorrection: .Q))
        guard case .matrix(let matrix) = result.symbol else { throw BarcodeError(.qr, "not a matrix") }
        #expect(rows(matrix) == Self.helloWorld)
    }

    @Test func formatAndVersionWords() {
        // Annex C and D examples: level M mask 5 format word, version 7 word.
        #expect(QRMatrixBuilder.formatBits(level: .M, mask: 5) == 0b100_0000_1100_1110)
        #expect(QRMatrixBuilder.versionBits(7) == 0b00_0111_1100_1001_0100)
    }

    @Test func alignmentPositionsMatchAnnexE() {
        #expect(QRTables.alignmentPositions(version: 1) == [])
        #expect(QRTables.alignmentPositions(version: 2) == [6, 18])
        #expect(QRTables.alignmentPositions(version: 7) == [6, 22, 38])
        #expect(QRTables.alignmentPositions(version: 32) == [6, 34, 60, 86, 112, 138])
        #expect(QRTables.alignmentPositions(version: 36) == [6, 24, 50, 76, 102, 128, 154])
        #expect(QRTables.alignmentPositions(version: 40) == [6, 30, 58, 86, 114, 142, 170])
    }

    @Test func capacityTableTotals() {
        // Data codewords of 40-L/M/Q/H and 1-L/H (ISO/IEC 18004 Table 7).
        #expect(QRTables.dataCodewords(version: 40, level: .L) == 2956)
        #expect(QRTables.dataCodewords(version: 40, level: .M) == 2334)
        #expect(QRTables.dataCodewords(version: 40, level: .Q) == 1666)
        #expect(QRTables.dataCodewords(version: 40, level: .H) == 1276)
        #expect(QRTables.dataCodewords(version: 1, level: .L) == 19)
        #expect(QRTables.dataCodewords(version: 1, level: .H) == 9)
    }
}

struct QRSegmentationTests {
    @Test(arguments: [
        ("0123456789", [QRMode.numeric]),
        ("HELLO WORLD", [.alphanumeric]),
        ("hello", [.byte]),
        ("ABC12345678901234567890XYZ", [.alphanumeric, .numeric, .alphanumeric]),
        ("a1", [.byte]),
    ])
    func modes(text: String, expected: [QRMode]) {
        let segments = QRSegmenter.segments(bytes(text), version: 1, gs1: false)
        #expect(segments.map(\.mode) == expected)
        #expect(segments.first?.range.lowerBound == 0 && segments.last?.range.upperBound == text.utf8.count)
    }

    /// The DP must never lose to any single-mode encoding.
    @Test func neverWorseThanSingleMode() {
        var random = SeededRandom(seed: 7)
        let alphabet = bytes("0123456789ABCDEF abc%")
        for _ in 0..<200 {
            let payload = random.bytes(Int(random.next() % 60) + 1, from: alphabet)
            for version in [1, 10, 27] {
                let best = QRSegmenter.bitLength(QRSegmenter.segments(payload, version: version, gs1: false), version: version)
                let single = QRSegmenter.bitLength([QRSegment(mode: .byte, range: 0..<payload.count)], version: version)
                #expect(best <= single)
            }
        }
    }
}

struct QRErrorTests {
    @Test func overCapacityAt40H() throws {
        let fits = [UInt8](repeating: 0xA5, count: 1273)
        let options = BarcodeOptions(qrErrorCorrection: .H, charset: .iso8859_1)
        #expect(try encode(fits, as: .qr, options: options).qr?.version == 40)
        #expect(throws: BarcodeError(.qr, "the payload exceeds the capacity of QR version 40 at level H")) {
            try encode(fits + [0], as: .qr, options: options)
        }
    }

    @Test func emptyPayload() {
        #expect(throws: BarcodeError(.qr, "the payload is empty")) { try encode([], as: .qr) }
    }

    @Test func invalidUTF8WithUTF8Charset() {
        #expect(throws: BarcodeError.self) {
            try encode([0xC3, 0x28], as: .qr, options: BarcodeOptions(charset: .utf8))
        }
    }

    @Test func badOptions() {
        #expect(throws: BarcodeError.self) { try encode([1], as: .qr, options: BarcodeOptions(qrMinimumVersion: 41)) }
        #expect(throws: BarcodeError.self) { try encode([1], as: .qr, options: BarcodeOptions(qrMask: 8)) }
    }
}
