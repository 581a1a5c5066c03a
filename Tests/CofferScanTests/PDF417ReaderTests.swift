import CofferBarcode
import CofferTestSupport
import Foundation
import Testing

@testable import CofferScan

/// PDF417 symbols drawn by zint (and by Coffer): every compaction mode and submode, ECI, sizes and error-correction
/// levels, turned to any angle, tilted, blurred, inverted, damaged; the payload must be exactly the bytes zxing-cpp
/// reads from the same pixels, and a symbol too damaged to correct must give nothing rather than a guess.
@Suite("Barcode reader: PDF417", .serialized, .offCooperativePool)
struct PDF417ReaderTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let request: [String: any Sendable]
        let payload: [UInt8]
        var testDescription: String { name }
    }

    static func zint(_ data: String, _ options: [String] = [], scale: Int = 2) -> [String: any Sendable] {
        ["zint": ["type": "PDF417", "data": data, "scale": scale, "options": options] as [String: any Sendable]]
    }

    static let licence = "DAQ D1234567 DCS SMITH DAC JOHN DBB 01021990 DAG 123 MAIN ST DAI ANYTOWN DAJ CA DAK 90210"

    static let cases: [Case] = {
        var cases: [Case] = []
        let text = "Hello, World! PDF417 text: UPPER lower 0123 #$%&*+-./:;<=>?@[\\]^_`{|}~ 'quoted' (x)"
        cases.append(Case(name: "text, all four submodes and shifts", request: zint(text), payload: Array(text.utf8)))
        cases.append(Case(name: "licence (text, level 5)", request: zint(licence, ["--secure=5"]), payload: Array(licence.utf8)))
        let digits = "12345678901234567890123456789012345678901234567890123456789012345678901234567890"
        cases.append(Case(name: "numeric compaction (80 digits)", request: zint(digits), payload: Array(digits.utf8)))
        cases.append(Case(name: "numeric then text", request: zint("0012345678901234 ITEM qty=3"), payload: Array("0012345678901234 ITEM qty=3".utf8)))
        // Bytes through zint's escapes: a multiple of six (924), not (901), and one byte in text (913).
        cases.append(
            Case(
                name: "byte compaction 924", request: zint("\\x00\\x01\\x02\\xFF\\xFE\\x80\\x10\\x20\\x30\\x40\\x50\\x60", ["--esc", "--binary"]),
                payload: [0, 1, 2, 0xFF, 0xFE, 0x80, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60]))
        cases.append(
            Case(
                name: "byte compaction 901", request: zint("\\x00\\x01\\x02\\xFF\\xFE\\x80\\x10\\x20\\x30", ["--esc", "--binary"]),
                payload: [0, 1, 2, 0xFF, 0xFE, 0x80, 0x10, 0x20, 0x30]))
        cases.append(
            Case(
                name: "byte shift in text", request: zint("ABCDEFGH\\x80IJKLMNOP", ["--esc", "--binary"]),
                payload: Array("ABCDEFGH".utf8) + [0x80] + Array("IJKLMNOP".utf8)))
        cases.append(
            Case(name: "Latin-1 bytes", request: zint("grüße aus Köln"), payload: Array("gr\u{FC}\u{DF}e aus K\u{F6}ln".unicodeScalars.map { UInt8($0.value) }))
        )
        cases.append(Case(name: "UTF-8 with ECI 26", request: zint("grüße € 😀", ["--eci=26"]), payload: Array("grüße € 😀".utf8)))
        for level in [0, 1, 3, 8] {
            cases.append(
                Case(
                    name: "level \(level)", request: zint("EC LEVEL \(level) 0123456789", ["--secure=\(level)"]),
                    payload: Array("EC LEVEL \(level) 0123456789".utf8)))
        }
        for columns in [1, 3] {
            let data = String(repeating: "COFFER 417 ", count: 6)
            cases.append(Case(name: "\(columns) columns", request: zint(data, ["--cols=\(columns)"]), payload: Array(data.utf8)))
        }
        let long = String(repeating: "Coffer keeps the small secrets people carry. ", count: 20)
        cases.append(Case(name: "long text, 900 characters", request: zint(long, [], scale: 2), payload: Array(long.utf8)))
        return cases
    }()

    /// Angle, tilt and blur a symbol is read at.
    static let poses: [[String: any Sendable]] = [
        [:], ["angle": 12.0], ["angle": -30.0, "blur": 0.6], ["angle": 90.0], ["angle": 180.0], ["angle": 147.0, "blur": 0.7],
        ["angle": 235.0, "tilt": 0.2], ["angle": 300.0, "tilt": 0.15, "blur": 0.5], ["invert": true],
    ]

    /// Wide symbols (many columns) are read level, turned and upside down; the flattest (three rows of 30 columns,
    /// 9 modules high and 579 wide) only near its own axes, where scan lines still cross its start pattern inside it.
    static let widePoses: [[String: any Sendable]] = [[:], ["angle": 90.0], ["angle": 182.0], ["invert": true], ["angle": 12.0], ["angle": -20.0]]

    @Test("zint's symbols, turned, tilted and blurred, read exactly as zxing-cpp reads them", arguments: cases)
    func symbols(_ testCase: Case) throws {
        let requests = Self.poses.map { pose in testCase.request.merging(pose) { $1 } }
        for (pose, made) in zip(Self.poses, try OracleImage.make(requests.map { $0 as [String: Any] })) {
            let found = PDF417Reader.read(made.image).compactMap { if case .found(let found) = $0 { found } else { nil } }
            #expect(
                found.count == 1 && found.first?.symbology == .pdf417 && found.first?.payload == testCase.payload,
                "\(pose): \(found.map { String(decoding: $0.payload, as: UTF8.self) })")
            for read in made.zxing where read.format == "PDF417" {
                #expect(read.bytes == testCase.payload, "zxing-cpp disagrees at \(pose)")
            }
        }
    }

    @Test("wide symbols (12 and 30 columns) read level, turned and upside down", arguments: [12, 30])
    func wide(_ columns: Int) throws {
        let data = String(repeating: "COFFER 417 ", count: 12)
        let poses = columns == 30 ? Array(Self.widePoses.prefix(4)) : Self.widePoses
        let requests = poses.map { pose in Self.zint(data, ["--cols=\(columns)"]).merging(pose) { $1 } }
        for (pose, made) in zip(poses, try OracleImage.make(requests.map { $0 as [String: Any] })) {
            #expect(Self.found(made.image).map(\.payload) == [Array(data.utf8)], "\(pose)")
        }
    }

    static func found(_ image: GrayImage) -> [FoundBarcode] {
        PDF417Reader.read(image).compactMap { if case .found(let found) = $0 { found } else { nil } }
    }

    @Test("damage within the error correction is corrected; beyond it, nothing is read")
    func damage() throws {
        let made = try OracleImage.make([
            Self.zint(Self.licence, ["--secure=5"]).merging(["blot": [0.4, 0.3, 0.12, 0.4]]) { $1 } as [String: Any],
            Self.zint(Self.licence, ["--secure=1"]).merging(["blot": [0.3, 0.2, 0.35, 0.6]]) { $1 } as [String: Any],
        ])
        #expect(Self.found(made[0].image).map(\.payload) == [Array(Self.licence.utf8)])
        #expect(Self.found(made[1].image).isEmpty)
    }

    @Test("a Macro PDF417 segment is refused with its place in the sequence, not read as a whole")
    func macro() throws {
        let made = try OracleImage.make([
            Self.zint("PART ONE OF THREE", ["--structapp=1,3"]) as [String: Any],
            Self.zint("PART THREE OF THREE", ["--structapp=3,3"]) as [String: Any],
        ])
        for (made, index) in zip(made, [1, 3]) {
            let outcomes = PDF417Reader.read(made.image)
            #expect(outcomes.count == 1)
            guard case .refused(let refusal) = outcomes.first else {
                Issue.record("not refused")
                continue
            }
            #expect(refusal == .structuredAppend(.pdf417, index: index, total: 3))
        }
    }

    @Test("Coffer's own PDF417 symbols read back byte for byte")
    func cofferSymbols() throws {
        let payloads: [[UInt8]] = [
            Array(Self.licence.utf8), Array("héllo wörld".utf8), [0x01, 0xFE, 0x00, 0x42, 0x80, 0xFF, 0x7F],
            Array("1234567890123456789012345678901234567890".utf8), Array(String(repeating: "Coffer 417 ", count: 40).utf8),
        ]
        let images = try OracleImage.make(try payloads.map { try OracleImage.coffer($0, as: .pdf417, scale: 2) })
        for (payload, made) in zip(payloads, images) {
            #expect(Self.found(made.image).map(\.payload) == [payload])
            for read in made.zxing where read.format == "PDF417" { #expect(read.bytes == payload) }
        }
    }

    @Test("Reed–Solomon over GF(929) corrects errors and erasures within its check codewords, and refuses more")
    func reedSolomon() {
        var generator = SplitMix64(seed: 417)
        for round in 0..<300 {
            let checkCount = 2 << (round % 6)
            let data = (0..<(10 + round % 60)).map { _ in Int(generator.next() % 929) }
            let clean = data + PDF417ErrorCorrection.checkCodewords(for: data, count: checkCount)
            var damaged = clean
            let erasureCount = Int(generator.next() % UInt64(checkCount / 2 + 1))
            let errorCount = Int(generator.next() % UInt64((checkCount - erasureCount) / 2 + 1))
            var positions: [Int] = []
            while positions.count < erasureCount + errorCount {
                let position = Int(generator.next() % UInt64(clean.count))
                if !positions.contains(position) { positions.append(position) }
            }
            for position in positions { damaged[position] = (damaged[position] + 1 + Int(generator.next() % 928)) % 929 }
            #expect(PDF417ReedSolomon.correct(&damaged, checkCount: checkCount, erasures: Array(positions.prefix(erasureCount))) != nil)
            #expect(damaged == clean)
        }
        // One error more than the capacity: never "corrected" to the original.
        for _ in 0..<100 {
            let data = (0..<40).map { _ in Int(generator.next() % 929) }
            let clean = data + PDF417ErrorCorrection.checkCodewords(for: data, count: 8)
            var damaged = clean
            var positions = Set<Int>()
            while positions.count < 5 { positions.insert(Int(generator.next() % UInt64(clean.count))) }
            for position in positions { damaged[position] = (damaged[position] + 1 + Int(generator.next() % 928)) % 929 }
            _ = PDF417ReedSolomon.correct(&damaged, checkCount: 8)
            #expect(damaged != clean)
        }
    }
}
