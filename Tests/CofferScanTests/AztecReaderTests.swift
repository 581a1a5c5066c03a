import CofferBarcode
import CofferTestSupport
import Foundation
import Testing

@testable import CofferScan

/// Aztec symbols drawn by zint (and by Coffer): compact and full-range at every size range and error-correction
/// level, each character mode, Binary Shift with short and long lengths, ECI, GS1, reader initialisation, runes, turned to
/// any angle, mirrored, tilted, blurred, inverted, damaged; the payload must be exactly the bytes zxing-cpp reads from
/// the same pixels, and a symbol too damaged to correct must give nothing rather than a guess.
@Suite("Barcode reader: Aztec", .serialized, .offCooperativePool)
struct AztecReaderTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let request: [String: any Sendable]
        let payload: [UInt8]
        var testDescription: String { name }
    }

    static func zint(_ data: String, _ options: [String] = [], scale: Int = 3) -> [String: any Sendable] {
        ["zint": ["type": "AZTEC", "data": data, "scale": scale, "options": options] as [String: any Sendable]]
    }

    static let long = String(repeating: "COFFER keeps the small secrets people carry every day. ", count: 80)

    static let cases: [Case] = {
        var cases: [Case] = []
        // zint's sizes 1–4 are compact symbols of 1–4 layers, 5–36 full-range symbols of 1–32 layers: every
        // codeword size (6, 8, 10, 12 bits) and reference-grid layout.
        for (version, length) in [
            (1, 6), (2, 14), (3, 30), (4, 50), (5, 10), (8, 40), (12, 130), (19, 400), (27, 900),
            (36, 2000),
        ] {
            let data = String(long.prefix(length))
            cases.append(
                Case(
                    name: "zint size \(version)", request: zint(data, ["--vers=\(version)"], scale: version > 20 ? 2 : 3),
                    payload: Array(data.utf8)))
        }
        let boarding = "M1DOE/JANE            EABC123 LHRJFKBA 0117 123Y014C0042 100"
        for level in 1...4 {
            cases.append(Case(name: "zint level \(level)", request: zint(boarding, ["--secure=\(level)"]), payload: Array(boarding.utf8)))
        }
        let modes: [(String, String)] = [
            ("digits", "31415926535897932384626433832795028841971, 2.71828"),
            ("upper and lower", "Hello World abc XYZ def GHI"),
            ("mixed", "a@b\\c^d_e`f|g~h"),
            ("punct", "!\"#$%&'()*+,-./:;<=>?[]{}"),
            ("punct pairs", "One. Two, three: four.\r\nfive"),
            ("upper shift from lower", "abcDefGhiJkl"),
        ]
        for (name, data) in modes {
            let escaped = data.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\r", with: "\\r")
                .replacingOccurrences(of: "\n", with: "\\n")
            cases.append(Case(name: name, request: zint(escaped, ["--esc"]), payload: Array(data.utf8)))
        }
        let shortBinary: [UInt8] = [0x00, 0xFF, 0x80, 0x0A, 0x0D, 0x7F, 0xC3, 0x28, 0x41]
        let longBinary = (0..<300).map { UInt8(($0 * 37 + 11) % 256) }
        for (name, bytes) in [("binary shift, short", shortBinary), ("binary shift, long", longBinary)] {
            let escaped = bytes.map { String(format: "\\x%02x", $0) }.joined()
            cases.append(Case(name: name, request: zint(escaped, ["--esc", "--binary"]), payload: bytes))
        }
        cases.append(Case(name: "Latin-1", request: zint("Grüße"), payload: [0x47, 0x72, 0xFC, 0xDF, 0x65]))
        cases.append(Case(name: "UTF-8 with ECI 26", request: zint("grüße € 😀", ["--eci=26"]), payload: Array("grüße € 😀".utf8)))
        cases.append(
            Case(
                name: "GS1 (FNC1 first)", request: zint("[01]09501101530003[10]ABC[21]XYZ", ["--gs1"]),
                payload: Array("010950110153000310ABC\u{1D}21XYZ".utf8)))
        cases.append(Case(name: "reader initialisation", request: zint("INIT 42", ["--init"]), payload: Array("INIT 42".utf8)))
        // Runes: the value as three digits, as zxing-cpp gives it.
        for value in [0, 25, 255] {
            cases.append(
                Case(
                    name: "rune \(value)",
                    request: ["zint": ["type": "AZRUNE", "data": "\(value)", "scale": 4] as [String: any Sendable]],
                    payload: Array(String("00\(value)".suffix(3)).utf8)))
        }
        return cases
    }()

    /// Angle, tilt, blur and colours a symbol is read at.
    static let poses: [[String: any Sendable]] = [
        [:], ["angle": 33.0], ["angle": 90.0], ["angle": 147.0, "blur": 0.7], ["angle": 200.0, "tilt": 0.25],
        ["angle": 290.0, "tilt": 0.2, "blur": 0.6], ["invert": true], ["angle": 251.0, "invert": true],
    ]

    @Test("zint's symbols, turned, tilted and blurred, read exactly as zxing-cpp reads them", arguments: cases)
    func symbols(_ testCase: Case) throws {
        let requests = Self.poses.map { pose in testCase.request.merging(pose) { $1 } }
        for (pose, made) in zip(Self.poses, try OracleImage.make(requests.map { $0 as [String: Any] })) {
            let found = BarcodeReader.read(made.image)
            #expect(
                found.count == 1 && found.first?.symbology == .aztec && found.first?.payload == testCase.payload,
                "\(pose): \(found.map { ($0.symbology.rawValue, $0.payload) })")
            // The anchor reads the same bytes wherever it reads the symbol at all.
            for read in made.zxing where read.format == "Aztec" {
                #expect(read.bytes == testCase.payload, "zxing-cpp disagrees at \(pose)")
            }
        }
    }

    @Test("a mirrored symbol is read, and the corners frame the symbol")
    func mirroredAndCorners() throws {
        let data = "MIRROR mirror 12345"
        let matrix = try AztecEncoder.encode(Array(data.utf8), format: .compact)
        let scale = 4, margin = 10
        let side = matrix.width * scale + 2 * margin
        var pixels = [UInt8](repeating: 255, count: side * side)
        for y in margin..<side - margin {
            for x in margin..<side - margin where matrix[matrix.width - 1 - (x - margin) / scale, (y - margin) / scale] {
                pixels[y * side + x] = 0
            }
        }
        let found = BarcodeReader.read(try #require(GrayImage(width: side, height: side, pixels: pixels)))
        #expect(found.map(\.payload) == [Array(data.utf8)])
        // Mirrored, the symbol's own top-left corner is the image's top-right one.
        let corners = try #require(found.first?.corners)
        let expected = [(side - margin, margin), (margin, margin), (margin, side - margin), (side - margin, side - margin)]
        for (corner, (x, y)) in zip(corners, expected) {
            #expect(abs(corner.x - Double(x)) < 2 && abs(corner.y - Double(y)) < 2, "\(corners) ≠ (\(x), \(y))")
        }
    }

    @Test("damage within the error correction is corrected; beyond it, nothing is read")
    func damage() throws {
        let data = "https://coffer.example/card/8812-4471-0093"
        let made = try OracleImage.make([
            Self.zint(data, ["--secure=4", "--vers=4"]).merging(["blot": [0.0, 0.0, 0.3, 0.3]]) { $1 } as [String: Any],
            Self.zint(data, ["--secure=1", "--vers=4"]).merging(["blot": [0.0, 0.0, 1.0, 0.3]]) { $1 } as [String: Any],
        ])
        #expect(BarcodeReader.read(made[0].image).map(\.payload) == [Array(data.utf8)])
        #expect(made[1].zxing.isEmpty)
        #expect(BarcodeReader.read(made[1].image).isEmpty)
    }

    @Test("structured append is refused with its place in the sequence, not read as a whole")
    func structuredAppend() throws {
        let made = try OracleImage.make([
            Self.zint("PART ONE OF TWO", ["--structapp=1,2"]) as [String: Any],
            Self.zint("PART TWO OF THREE", ["--structapp=2,3,MYID"]) as [String: Any],
        ])
        let first = BarcodeReader.scan(made[0].image)
        #expect(first.found.isEmpty)
        #expect(first.refused == [.structuredAppend(.aztec, index: 1, total: 2)])
        let second = BarcodeReader.scan(made[1].image)
        #expect(second.found.isEmpty)
        #expect(second.refused == [.structuredAppend(.aztec, index: 2, total: 3)])
    }

    @Test("several symbols in one image are each read once")
    func several() throws {
        let made = try OracleImage.make([
            [
                "beside": [Self.zint("FIRST"), Self.zint(String(Self.long.prefix(300)), scale: 2), Self.zint("third 3")]
                    as [any Sendable]
            ]
        ])
        let found = BarcodeReader.read(made[0].image)
        #expect(Set(found.map(\.payload)) == [Array("FIRST".utf8), Array(Self.long.prefix(300).utf8), Array("third 3".utf8)])
        #expect(found.count == 3)
    }

    @Test("Coffer's own Aztec symbols read back byte for byte")
    func cofferSymbols() throws {
        let payloads: [[UInt8]] = [
            Array("otpauth://totp/GitHub:alice@example.com?secret=JBSWY3DPEHPK3PXP&issuer=GitHub".utf8),
            Array("héllo wörld".utf8), Array(Self.long.prefix(1200).utf8), [0x01, 0xFE, 0x00, 0x42], Array("A".utf8),
        ]
        let images = try OracleImage.make(try payloads.map { try OracleImage.coffer($0, as: .aztec, scale: 3) })
        for (payload, made) in zip(payloads, images) {
            #expect(BarcodeReader.read(made.image).map(\.payload) == [payload])
            #expect(made.zxing.map(\.bytes) == [payload], "zxing-cpp reads Coffer's symbol differently")
        }
    }

    @Test("FLG(n): FNC1 first is GS1 and dropped, after an application indicator dropped, elsewhere GS; ECI skipped")
    func flags() {
        // Upper-mode codes: P/S = 0, then FLG(n) = Punct 0 and n in 3 bits; ECI digits follow in Digit codes.
        func stream(_ fields: [(Int, Int)]) -> [Bool] {
            fields.flatMap { value, width in (0..<width).map { (value >> (width - 1 - $0)) & 1 == 1 } }
        }
        let flag: [(Int, Int)] = [(0, 5), (0, 5), (0, 3)]
        let (a, b, c) = ((2, 5), (3, 5), (4, 5))
        #expect(AztecDecoder.content(stream(flag + [a, b])) == .payload(Array("AB".utf8)))
        #expect(AztecDecoder.content(stream([a] + flag + [b, c])) == .payload(Array("ABC".utf8)))
        #expect(AztecDecoder.content(stream([a, b] + flag + [c])) == .payload([0x41, 0x42, 0x1D, 0x43]))
        // FLG(2) then the ECI number 26 as the digits 2 and 6 (codes 4 and 8), bytes unchanged.
        let eci: [(Int, Int)] = [(0, 5), (0, 5), (2, 3), (4, 4), (8, 4)]
        #expect(AztecDecoder.content(stream(eci + [a, b])) == .payload(Array("AB".utf8)))
        // An ECI cut short by the end of the data is not read.
        #expect(AztecDecoder.content(stream([a] + [(0, 5), (0, 5), (3, 3), (4, 4)])) == nil)
        // Binary Shift's 11-bit length that runs past the data is not read either.
        #expect(AztecDecoder.content(stream([(31, 5), (0, 5), (100, 11), (0x41, 8)])) == nil)
    }

    @Test("Reed–Solomon corrects up to half its check words over each Aztec field, and refuses more")
    func reedSolomon() {
        var generator = SplitMix64(seed: 11)
        let fields: [(GaloisField, Int)] = [
            (.aztecModeMessage, 0x13), (.aztec6, 0x43), (.aztec8, 0x12D), (.aztec10, 0x409),
            (.aztec12, 0x1069),
        ]
        for (field, primitive) in fields {
            for round in 0..<60 {
                let checkCount = field.size == 16 ? 5 + round % 2 : [6, 10, 17][round % 3]
                let dataCount = field.size == 16 ? 2 + 2 * (round % 2) : 3 + round % 40
                let data = (0..<dataCount).map { _ in Int(generator.next() % UInt64(field.size)) }
                let clean = data + AztecReedSolomonReference.check(data, count: checkCount, size: field.size, primitive: primitive)
                var damaged = clean
                let errors = Int(generator.next() % UInt64(checkCount / 2 + 1))
                var positions = Set<Int>()
                while positions.count < errors { positions.insert(Int(generator.next() % UInt64(clean.count))) }
                for position in positions { damaged[position] ^= Int(1 + generator.next() % UInt64(field.size - 1)) }
                #expect(ReedSolomonDecoder.correct(&damaged, checkCount: checkCount, field: field) == errors)
                #expect(damaged == clean)
            }
        }
        // One error more than the capacity: never "corrected" to the original.
        for _ in 0..<100 {
            let data = (0..<30).map { _ in Int(generator.next() % 256) }
            let clean = data + AztecReedSolomonReference.check(data, count: 10, size: 256, primitive: 0x12D)
            var damaged = clean
            var positions = Set<Int>()
            while positions.count < 6 { positions.insert(Int(generator.next() % UInt64(clean.count))) }
            for position in positions { damaged[position] ^= Int(1 + generator.next() % 255) }
            let result = ReedSolomonDecoder.correct(&damaged, checkCount: 10, field: .aztec8)
            #expect(result == nil || damaged != clean)
        }
    }

    @Test("noise, stripes and rings that are not a symbol give nothing; random layers never crash the decoder")
    func hostile() throws {
        var generator = SplitMix64(seed: 5)
        let width = 1280, height = 720
        var noise = [UInt8](repeating: 0, count: width * height)
        for index in noise.indices { noise[index] = UInt8(truncatingIfNeeded: generator.next()) }
        // Concentric squares with nothing around them: a bull's-eye without a mode message.
        var rings = [UInt8](repeating: 255, count: width * height)
        for y in 0..<height {
            for x in 0..<width where max(abs(x - 640), abs(y - 360)) / 4 % 2 == 0 && max(abs(x - 640), abs(y - 360)) < 200 {
                rings[y * width + x] = 0
            }
        }
        var stripes = [UInt8](repeating: 255, count: width * height)
        for y in 0..<height { for x in 0..<width where (x / 3 + y / 3) % 2 == 0 { stripes[y * width + x] = 0 } }
        for pixels in [noise, rings, stripes] {
            let image = try #require(GrayImage(width: width, height: height, pixels: pixels))
            let binary = BitImage(thresholding: image)
            #expect(AztecReader.read(binary).isEmpty && AztecReader.read(binary.inverted()).isEmpty)
        }
        // Images too small for a bull's-eye, and a symbol cut by the image's edge.
        for (w, h) in [(1, 1), (2, 300), (300, 2), (9, 9)] {
            let pixels = (0..<w * h).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let binary = BitImage(thresholding: try #require(GrayImage(width: w, height: h, pixels: pixels)))
            #expect(AztecReader.read(binary).isEmpty && AztecReader.read(binary.inverted()).isEmpty)
        }
        let matrix = try AztecEncoder.encode(Array(Self.long.prefix(200).utf8), format: .full)
        let cut = matrix.width * 3 / 4
        var pixels = [UInt8](repeating: 255, count: cut * matrix.height * 9)
        for y in 0..<matrix.height * 3 {
            for x in 0..<cut * 3 where matrix[x / 3, y / 3] { pixels[y * cut * 3 + x] = 0 }
        }
        let partial = BitImage(thresholding: try #require(GrayImage(width: cut * 3, height: matrix.height * 3, pixels: pixels)))
        #expect(AztecReader.read(partial).isEmpty)
        // Random data layers under every mode message decode to something or nothing, never a crash.
        for round in 0..<300 {
            let symbol = AztecSymbol(compact: round % 2 == 0, layers: 1 + round % (round % 2 == 0 ? 4 : 32))
            let bits = (0..<symbol.totalBits).map { _ in generator.next() & 1 == 1 }
            let words = Int(generator.next() % UInt64(symbol.totalWords)) + 1
            _ = AztecDecoder.decode(bits, mode: AztecDecoder.ModeMessage(symbol: symbol, dataWords: words))
            _ = AztecDecoder.content(bits)
        }
    }
}

/// Check words computed independently of both Coffer's encoder and its decoder: long division by the generator
/// ∏(x − αⁱ), i = 1…count, in plain integer arithmetic over GF(2^m) with the given primitive polynomial.
enum AztecReedSolomonReference {
    static func multiply(_ a: Int, _ b: Int, size: Int, primitive: Int) -> Int {
        var (a, b, product) = (a, b, 0)
        while b > 0 {
            if b & 1 == 1 { product ^= a }
            a <<= 1
            if a & size != 0 { a ^= primitive }
            b >>= 1
        }
        return product
    }

    static func check(_ data: [Int], count: Int, size: Int, primitive: Int) -> [Int] {
        var generatorPoly = [1]
        var root = 1
        for _ in 0..<count {
            root = multiply(root, 2, size: size, primitive: primitive)
            var next = [Int](repeating: 0, count: generatorPoly.count + 1)
            for (index, coefficient) in generatorPoly.enumerated() {
                next[index] ^= coefficient
                next[index + 1] ^= multiply(coefficient, root, size: size, primitive: primitive)
            }
            generatorPoly = next
        }
        var remainder = data + [Int](repeating: 0, count: count)
        for index in 0..<data.count where remainder[index] != 0 {
            let factor = remainder[index]
            for (offset, coefficient) in generatorPoly.enumerated() {
                remainder[index + offset] ^= multiply(coefficient, factor, size: size, primitive: primitive)
            }
        }
        return Array(remainder.suffix(count))
    }
}
