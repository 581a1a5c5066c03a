@testable import CofferBarcode
import CofferTestSupport
import Testing

/// Square symbol sizes with their data capacities, as listed in ISO/IEC 16022 Table 7.
private let dataMatrixCapacities: [(size: Int, dataCodewords: Int)] = [
    (10, 3), (12, 5), (14, 8), (16, 12), (18, 18), (20, 22), (22, 30), (24, 36), (26, 44), (32, 62), (36, 86),
    (40, 114), (44, 144), (48, 174), (52, 204), (64, 280), (72, 368), (80, 456), (88, 576), (96, 696), (104, 816),
    (120, 1050), (132, 1304), (144, 1558),
]

private func digits(_ count: Int, seed: UInt64) -> [UInt8] {
    var random = TwoDSeededBytes(seed: seed)
    return random.bytes(count, from: Array("0123456789".utf8))
}

enum DataMatrixCorpus {
    static let cases: [TwoDPayloadCase] = {
        var random = TwoDSeededBytes(seed: 0xD47A)
        var cases: [TwoDPayloadCase] = [
            TwoDPayloadCase(name: "iso-example", bytes: Array("123456".utf8)),
            TwoDPayloadCase(name: "one-digit", bytes: Array("7".utf8)),
            TwoDPayloadCase(name: "one-letter", bytes: Array("A".utf8)),
            TwoDPayloadCase(name: "one-high-byte", bytes: [0xFF]),
            TwoDPayloadCase(name: "one-nul", bytes: [0x00]),
            TwoDPayloadCase(name: "upper-text-c40", bytes: Array("MEMBER CARD NUMBER 0042 ABC DEF GHI".utf8)),
            TwoDPayloadCase(name: "lower-text", bytes: Array("the quick brown fox jumps over the lazy dog".utf8)),
            TwoDPayloadCase(name: "mixed", bytes: Array("Loyalty#42: Jane Doe <jane@example.com> 2026-11-22!".utf8)),
            TwoDPayloadCase(name: "utf8-non-ascii", bytes: Array("Käseschnitte Žabica 5€ ünïcödé".utf8)),
            TwoDPayloadCase(name: "latin1-high", bytes: (128...255).map { UInt8($0) }),
            TwoDPayloadCase(name: "all-byte-values", bytes: (0...255).map { UInt8($0) }),
            TwoDPayloadCase(name: "control-chars", bytes: [9, 10, 13, 0x1D, 0x1E, 0x04, 27, 127]),
            TwoDPayloadCase(name: "c40-with-high", bytes: Array("ABCDEFGH".utf8) + [0xC4] + Array("IJKLMNOP".utf8)),
            TwoDPayloadCase(name: "c40-exact-fit", bytes: Array("ABCDEF".utf8)),
            TwoDPayloadCase(name: "c40-pad-shift", bytes: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZAB".utf8)),
            TwoDPayloadCase(name: "text-shifts", bytes: Array("abcdefGHIjkl{|}~`mnopq".utf8)),
            TwoDPayloadCase(name: "digits-max", bytes: digits(3116, seed: 1)),
            TwoDPayloadCase(name: "bytes-max", bytes: random.bytes(1555)),
            TwoDPayloadCase(name: "base256-250", bytes: random.bytes(250)),
            TwoDPayloadCase(name: "base256-249", bytes: random.bytes(249)),
            TwoDPayloadCase(name: "upper-max", bytes: random.bytes(2300, from: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123 ".utf8))),
        ]
        for length in [1, 2, 3, 5, 17, 64, 100, 300, 800] {
            cases.append(TwoDPayloadCase(name: "random-\(length)", bytes: random.bytes(length)))
        }
        for length in [20, 200, 1000] {
            let printable = Array(UInt8(32)...UInt8(126))
            cases.append(TwoDPayloadCase(name: "printable-\(length)", bytes: random.bytes(length, from: printable)))
            let lower = Array("abcdefghijklmnopqrstuvwxyz ".utf8)
            cases.append(TwoDPayloadCase(name: "lower-\(length)", bytes: random.bytes(length, from: lower)))
        }
        // Capacity boundaries: 2n digits fill n codewords exactly; one more digit needs the next size.
        for (size, capacity) in dataMatrixCapacities {
            cases.append(TwoDPayloadCase(name: "fill-\(size)", bytes: digits(2 * capacity, seed: UInt64(size))))
            if size < 144 {
                cases.append(TwoDPayloadCase(name: "overflow-\(size)", bytes: digits(2 * capacity + 1, seed: UInt64(size))))
            }
        }
        return cases
    }()

    static let gs1Cases: [TwoDPayloadCase] = [
        TwoDPayloadCase(name: "gs1-gtin", bytes: Array("0109501101020917".utf8)),
        TwoDPayloadCase(
            name: "gs1-gtin-expiry-batch-serial",
            bytes: Array("01095011010209171719050810ABCD1234".utf8) + [0x1D] + Array("2110".utf8)),
        TwoDPayloadCase(
            name: "gs1-two-separators",
            bytes: Array("10LOT42".utf8) + [0x1D] + Array("21SER99".utf8) + [0x1D] + Array("3103000123".utf8)),
    ]

    /// Encoded and decoded once for all the round-trip tests; a case that fails to encode is simply absent.
    static let readings: Result<[String: [TwoDReading]], any Error> = Result {
        var symbols: [TwoDSymbol] = []
        for c in cases {
            if let matrix = try? DataMatrixEncoder.encode(c.bytes) { symbols.append(TwoDSymbol(name: c.name, matrix: matrix)) }
        }
        for c in gs1Cases {
            if let matrix = try? DataMatrixEncoder.encode(c.bytes, gs1: true) {
                symbols.append(TwoDSymbol(name: c.name, matrix: matrix))
            }
        }
        for c in damagedCases {
            if let matrix = try? DataMatrixEncoder.encode(c.bytes) {
                symbols.append(TwoDSymbol(name: c.name, matrix: damaged(matrix, x: 3...6, y: 3...6)))
            }
        }
        return try TwoDOracle.decode(symbols, format: "DataMatrix")
    }

    /// Symbols with a 4×4 patch of inverted modules inside the data region (a few codewords' worth).
    static let damagedCases: [TwoDPayloadCase] = {
        var random = TwoDSeededBytes(seed: 0xDA3A)
        return [
            TwoDPayloadCase(name: "damaged-text", bytes: Array("Loyalty card 0042 for Jane Doe, gold tier".utf8)),
            TwoDPayloadCase(name: "damaged-binary", bytes: random.bytes(200)),
        ]
    }()
}

@Suite("Data Matrix", .offCooperativePool)
struct DataMatrixEncoderTests {
    @Test("zxing-cpp reads back the exact bytes", arguments: DataMatrixCorpus.cases)
    func roundTrip(_ payload: TwoDPayloadCase) throws {
        _ = try DataMatrixEncoder.encode(payload.bytes)
        let found = try DataMatrixCorpus.readings.get()[payload.name] ?? []
        try #require(found.count == 1, "expected exactly one Data Matrix symbol to decode")
        let sameBytes = found[0].bytes == payload.bytes
        #expect(sameBytes, "decoded bytes differ from the payload")
        #expect(found[0].symbologyIdentifier == "]d1")
    }

    @Test("GS1 Data Matrix decodes as ]d2 with GS separators", arguments: DataMatrixCorpus.gs1Cases)
    func gs1RoundTrip(_ payload: TwoDPayloadCase) throws {
        _ = try DataMatrixEncoder.encode(payload.bytes, gs1: true)
        let found = try DataMatrixCorpus.readings.get()[payload.name] ?? []
        try #require(found.count == 1, "expected exactly one Data Matrix symbol to decode")
        let sameBytes = found[0].bytes == payload.bytes
        #expect(sameBytes, "decoded bytes differ from the payload")
        #expect(found[0].symbologyIdentifier == "]d2")
    }

    @Test("error correction repairs a damaged patch", arguments: DataMatrixCorpus.damagedCases)
    func damagedRoundTrip(_ payload: TwoDPayloadCase) throws {
        let found = try DataMatrixCorpus.readings.get()[payload.name] ?? []
        try #require(found.count == 1, "expected the damaged symbol to decode")
        let sameBytes = found[0].bytes == payload.bytes
        #expect(sameBytes, "decoded bytes differ from the payload")
    }

    @Test("the smallest square that fits is chosen", arguments: dataMatrixCapacities.indices)
    func smallestSquare(_ index: Int) throws {
        let (size, capacity) = dataMatrixCapacities[index]
        let filled = try DataMatrixEncoder.encode(digits(2 * capacity, seed: UInt64(size)))
        #expect(filled.width == size && filled.height == size)
        if index + 1 < dataMatrixCapacities.count {
            let over = try DataMatrixEncoder.encode(digits(2 * capacity + 1, seed: UInt64(size)))
            #expect(over.width == dataMatrixCapacities[index + 1].size)
        }
    }

    /// ISO/IEC 16022's worked example "123456": ASCII digit pairs 142 164 186, check codewords 114 25 5 88 102.
    @Test("ISO/IEC 16022 worked example codewords")
    func workedExampleCodewords() {
        let encodation = DataMatrixEncodation(Array("123456".utf8), gs1: false)
        #expect(encodation.codewords == [142, 164, 186])
        #expect(DataMatrixSymbol.all[0].withErrorCorrection([142, 164, 186]) == [142, 164, 186, 114, 25, 5, 88, 102])
    }

    /// The same 10×10 matrix is produced by two independent encoders (libdmtx's dmtxwrite and zint).
    @Test("ISO/IEC 16022 worked example matrix")
    func workedExampleMatrix() throws {
        let expected = [
            "1010101010", "1100101101", "1100000100", "1100011101", "1100001000",
            "1000001111", "1110110000", "1111011001", "1001110100", "1111111111",
        ]
        let matrix = try DataMatrixEncoder.encode(Array("123456".utf8))
        let rows = (0..<matrix.height).map { y in String((0..<matrix.width).map { matrix[$0, y] ? "1" : "0" }) }
        #expect(rows == expected)
    }

    @Test("encodation modes are chosen for compactness")
    func modeChoice() {
        // 24 upper-case letters: C40 packs 3 per 2 codewords (16) plus latch and unlatch, versus 24 in ASCII.
        let upper = DataMatrixEncodation(Array("ABCDEFGHIJKLMNOPQRSTUVWX".utf8), gs1: false).codewords
        #expect(upper.first == DataMatrixEncodation.latchC40 && upper.count == 18)
        let lower = DataMatrixEncodation(Array("abcdefghijklmnopqrstuvwx".utf8), gs1: false).codewords
        #expect(lower.first == DataMatrixEncodation.latchText && lower.count == 18)
        let binary = DataMatrixEncodation([0x80, 0x81, 0x82, 0x83, 0x84, 0x85], gs1: false).codewords
        #expect(binary.first == DataMatrixEncodation.latchBase256 && binary.count == 8)
        // Six letters fill a 12×12 symbol exactly as C40 (latch + two triplets) when the unlatch is left out.
        #expect((try? DataMatrixEncoder.encode(Array("ABCDEF".utf8)))?.width == 12)
        let gs1 = DataMatrixEncodation(Array("10AB".utf8) + [0x1D] + Array("21".utf8), gs1: true).codewords
        #expect(gs1 == [232, 140, 66, 67, 232, 151])
    }

    /// Matrices produced by libdmtx's dmtxwrite (an independent encoder): pads (253-state randomised), Base 256
    /// (255-state randomised) and a 16×16 symbol.
    static let libdmtxGoldens: [(name: String, bytes: [UInt8], rows: [String])] = [
        (
            "A-with-pads", Array("A".utf8),
            [
                "1010101010", "1101100011", "1000110100", "1001101011", "1001010000",
                "1001001011", "1101001100", "1100111101", "1100001000", "1111111111",
            ]
        ),
        (
            "22-digits", Array("1234567890123456789012".utf8),
            [
                "1010101010101010", "1100100101111011", "1100110000000000", "1100011100110111",
                "1110100000000010", "1000110001100101", "1011000111101000", "1001111000110111",
                "1000110110001010", "1111000011100011", "1010011010010110", "1000001101101101",
                "1100011001110100", "1000110011111101", "1110111111101010", "1111111111111111",
            ]
        ),
        (
            "base256-3", [0xAB, 0xCD, 0xEF],
            [
                "101010101010", "100100100111", "110111100100", "111101111111", "101001100000", "111001001101",
                "101000001100", "100000011111", "100001110000", "101100111101", "110100001010", "111111111111",
            ]
        ),
    ]

    @Test("matrices equal libdmtx's for the same codewords", arguments: Self.libdmtxGoldens.indices)
    func libdmtxGolden(_ index: Int) throws {
        let golden = Self.libdmtxGoldens[index]
        let matrix = try DataMatrixEncoder.encode(golden.bytes)
        let rows = (0..<matrix.height).map { y in String((0..<matrix.width).map { matrix[$0, y] ? "1" : "0" }) }
        #expect(rows == golden.rows, "\(golden.name)")
    }

    @Test("bad input gives a clear error that never echoes the payload")
    func errors() {
        let secret = Array("SECRET".utf8)
        #expect(throws: BarcodeError(.dataMatrix, "payload is empty")) { try DataMatrixEncoder.encode([]) }
        let tooLong = Array(repeating: secret, count: 600).flatMap { $0 }
        do {
            _ = try DataMatrixEncoder.encode(tooLong)
            Issue.record("an oversize payload was accepted")
        } catch {
            #expect(error.symbology == .dataMatrix)
            #expect(error.reason.contains("capacity"))
            #expect(!error.description.contains("SECRET"))
        }
        var random = TwoDSeededBytes(seed: 9)
        #expect(throws: BarcodeError.self) { try DataMatrixEncoder.encode(random.bytes(1556)) }
        #expect(throws: BarcodeError.self) { try DataMatrixEncoder.encode(digits(3117, seed: 3)) }
        #expect(throws: BarcodeError.self) { try DataMatrixEncoder.encode([0x1D] + secret, gs1: true) }
        #expect(throws: BarcodeError.self) { try DataMatrixEncoder.encode(Array("01 234".utf8), gs1: true) }
        #expect(throws: BarcodeError.self) { try DataMatrixEncoder.encode([0x30, 0xC4], gs1: true) }
    }
}
