import CofferBarcode
import CofferTestSupport
import Foundation
import Testing

@testable import CofferScan

/// QR symbols drawn by zint and qrencode (and by Coffer): every version range, level and mask, each segment mode,
/// turned to any angle, tilted, blurred, inverted, damaged; the payload must be exactly the bytes zxing-cpp reads
/// from the same pixels, and a symbol too damaged to correct must give nothing rather than a guess.
@Suite("Barcode reader: QR", .serialized, .offCooperativePool)
struct QRReaderTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let request: [String: any Sendable]
        let payload: [UInt8]
        var testDescription: String { name }
    }

    static func zint(_ data: String, _ options: [String] = [], scale: Int = 3) -> [String: any Sendable] {
        ["zint": ["type": "QRCODE", "data": data, "scale": scale, "options": options] as [String: any Sendable]]
    }

    static func qrencode(_ bytes: [UInt8], _ options: [String] = [], scale: Int = 3) -> [String: any Sendable] {
        [
            "qrencode": ["data_hex": bytes.map { String(format: "%02x", $0) }.joined(), "scale": scale, "options": options]
                as [String: any Sendable]
        ]
    }

    static let otpauth = "otpauth://totp/GitHub:alice@example.com?secret=JBSWY3DPEHPK3PXP&issuer=GitHub&digits=6"
    static let long = String(repeating: "COFFER keeps the small secrets people carry every day. ", count: 40)

    static let cases: [Case] = {
        var cases: [Case] = []
        // Versions from 1 to 40 (zint draws at least the version asked), so every alignment and version-info layout.
        for version in [1, 2, 6, 7, 10, 14, 21, 27, 33, 40] {
            let data = String(long.prefix(max(10, version * version)))
            cases.append(
                Case(
                    name: "zint version \(version)", request: zint(data, ["--vers=\(version)"], scale: version > 20 ? 2 : 3),
                    payload: Array(data.utf8)))
        }
        for level in 1...4 {
            cases.append(Case(name: "zint level \(level)", request: zint(otpauth, ["--secure=\(level)"]), payload: Array(otpauth.utf8)))
        }
        for mask in 0..<8 {
            cases.append(
                Case(
                    name: "zint mask \(mask)", request: zint("MASK TEST \(mask) 0123456789", ["--mask=\(mask)"]),
                    payload: Array("MASK TEST \(mask) 0123456789".utf8)))
        }
        cases.append(
            Case(
                name: "numeric", request: zint("31415926535897932384626433832795028841971"),
                payload: Array("31415926535897932384626433832795028841971".utf8)))
        cases.append(Case(name: "alphanumeric", request: zint("HELLO WORLD $%*+-./: 42"), payload: Array("HELLO WORLD $%*+-./: 42".utf8)))
        cases.append(Case(name: "UTF-8 with ECI 26", request: zint("grüße € 😀", ["--eci=26"]), payload: Array("grüße € 😀".utf8)))
        cases.append(
            Case(
                name: "GS1 (FNC1 first)", request: zint("[01]09501101530003[10]ABC[21]XYZ", ["--gs1"]),
                payload: Array("010950110153000310ABC\u{1D}21XYZ".utf8)))
        let binary: [UInt8] = [0x00, 0xFF, 0x80, 0x0A, 0x0D, 0x7F, 0xC3, 0x28, 0x41]
        cases.append(Case(name: "qrencode 8-bit binary, level H", request: qrencode(binary, ["-8", "-l", "H"]), payload: binary))
        let kanji: [UInt8] = [0x93, 0xFA, 0x96, 0x7B, 0x8C, 0xEA]  // 日本語 in Shift JIS
        cases.append(Case(name: "qrencode Kanji mode", request: qrencode(kanji, ["-k"]), payload: kanji))
        cases.append(
            Case(
                name: "qrencode level L, 4 px", request: qrencode(Array(otpauth.utf8), ["-l", "L"], scale: 4),
                payload: Array(otpauth.utf8)))
        return cases
    }()

    /// Angle, tilt and blur a symbol is read at.
    static let poses: [[String: any Sendable]] = [
        [:], ["angle": 33.0], ["angle": 90.0], ["angle": 147.0, "blur": 0.7], ["angle": 200.0, "tilt": 0.25],
        ["angle": 290.0, "tilt": 0.2, "blur": 0.6], ["invert": true],
    ]

    @Test("zint's and qrencode's symbols, turned, tilted and blurred, read exactly as zxing-cpp reads them", arguments: cases)
    func symbols(_ testCase: Case) throws {
        let requests = Self.poses.map { pose in testCase.request.merging(pose) { $1 } }
        for (pose, made) in zip(Self.poses, try OracleImage.make(requests.map { $0 as [String: Any] })) {
            let found = BarcodeReader.read(made.image)
            #expect(
                found.count == 1 && found.first?.symbology == .qr && found.first?.payload == testCase.payload,
                "\(pose): \(found.map { ($0.symbology.rawValue, String(decoding: $0.payload, as: UTF8.self)) })")
            // The anchor reads the same bytes wherever it reads the symbol at all.
            for read in made.zxing where read.format == "QR Code" {
                #expect(read.bytes == testCase.payload, "zxing-cpp disagrees at \(pose)")
            }
        }
    }

    @Test("damage within the error correction is corrected; beyond it, nothing is read")
    func damage() throws {
        let data = "https://coffer.example/card/8812-4471-0093"
        let made = try OracleImage.make([
            Self.zint(data, ["--secure=4", "--vers=5"]).merging(["blot": [0.45, 0.62, 0.18, 0.14]]) { $1 } as [String: Any],
            Self.zint(data, ["--secure=1", "--vers=5"]).merging(["blot": [0.3, 0.3, 0.45, 0.45]]) { $1 } as [String: Any],
        ])
        #expect(BarcodeReader.read(made[0].image).map(\.payload) == [Array(data.utf8)])
        #expect(BarcodeReader.read(made[1].image).isEmpty)
    }

    @Test("structured append is refused with its place in the sequence, not read as a whole")
    func structuredAppend() throws {
        let made = try OracleImage.make([Self.zint("PART ONE OF TWO", ["--structapp=1,2"]) as [String: Any]])
        let result = BarcodeReader.scan(made[0].image)
        #expect(result.found.isEmpty)
        #expect(result.refused == [.structuredAppend(.qr, index: 1, total: 2)])
    }

    @Test("several symbols in one image are each read once")
    func several() throws {
        let made = try OracleImage.make([
            [
                "beside": [
                    Self.zint("FIRST"), Self.qrencode(Array("second".utf8)),
                    ["zint": ["type": "EANX", "data": "400638133393", "scale": 2] as [String: any Sendable]],
                    Self.zint(Self.otpauth, ["--secure=3"]),
                ] as [any Sendable]
            ]
        ])
        let found = BarcodeReader.read(made[0].image)
        let reads = Set(found.map { "\($0.symbology.rawValue):\(String(decoding: $0.payload, as: UTF8.self))" })
        #expect(reads == ["qr:FIRST", "qr:second", "ean13:4006381333931", "qr:\(Self.otpauth)"])
        #expect(found.count == 4)
    }

    @Test("Coffer's own QR symbols read back byte for byte")
    func cofferSymbols() throws {
        let payloads: [[UInt8]] = [
            Array(Self.otpauth.utf8), Array("héllo wörld".utf8), Array(Self.long.prefix(900).utf8), [0x01, 0xFE, 0x00, 0x42],
        ]
        let images = try OracleImage.make(try payloads.map { try OracleImage.coffer($0, as: .qr, scale: 3) })
        for (payload, made) in zip(payloads, images) {
            #expect(BarcodeReader.read(made.image).map(\.payload) == [payload])
        }
    }

    /// A horizontal or diagonal smear of `length` pixels (a camera moving while the shutter is open).
    static func motionBlurred(_ image: GrayImage, length: Int, dx: Int, dy: Int) -> GrayImage {
        var pixels = [UInt8](repeating: 255, count: image.width * image.height)
        for y in 0..<image.height {
            for x in 0..<image.width {
                var sum = 0, count = 0
                for step in 0..<length {
                    let (u, v) = (x + (step - length / 2) * dx, y + (step - length / 2) * dy)
                    guard u >= 0, v >= 0, u < image.width, v < image.height else { continue }
                    sum += Int(image.pixels[v * image.width + u])
                    count += 1
                }
                pixels[y * image.width + x] = UInt8(sum / count)
            }
        }
        return GrayImage(width: image.width, height: image.height, pixels: pixels)!
    }

    @Test("motion blur that wears a finder's ring thin or runs it into the data still reads")
    func motionBlur() throws {
        let payload = Array("otpauth://totp/GitHub:alice@example.com?secret=JBSWY3DPEHPK3PXP&issuer=GitHub".utf8)
        // Smears the finders' plain 1:1:3:1:1 test failed on (each still reads through Reed–Solomon).
        let cases: [(pose: [String: Any], length: Int, dx: Int, dy: Int)] = [
            ([:], 5, 1, 1), (["angle": 120.0, "tilt": 0.2], 7, 1, 0),
        ]
        let images = try OracleImage.make(try cases.map { try OracleImage.coffer(payload, as: .qr, scale: 4).merging($0.pose) { $1 } })
        for (made, smear) in zip(images, cases) {
            let found = BarcodeReader.read(Self.motionBlurred(made.image, length: smear.length, dx: smear.dx, dy: smear.dy))
            #expect(found.map(\.payload) == [payload], "\(smear.pose) smeared \(smear.length) px")
        }
    }

    @Test("a finder's runs pass edge to edge when blur has moved every edge alike, and only then")
    func finderEdgeRatio() {
        // A column through a motion-blurred finder in a photo: the top ring worn to 2 of 6 pixels.
        #expect(!QRDetector.isFinderRatio([2, 7, 19, 6, 6]) && QRDetector.isFinderEdgeRatio([2, 7, 19, 6, 6]))
        // Every dark run 2 pixels wider, every light one 2 narrower, at 6 pixels a module.
        #expect(QRDetector.isFinderEdgeRatio([8, 4, 20, 4, 8]))
        #expect(!QRDetector.isFinderEdgeRatio([6, 6, 6, 6, 6]) && !QRDetector.isFinderEdgeRatio([6, 14, 18, 4, 6]))
        // Under 2 pixels a module, only the plain ratio counts.
        #expect(!QRDetector.isFinderEdgeRatio([1, 2, 4, 1, 2]))
    }

    @Test("Reed–Solomon corrects up to half its check words, at any positions, and refuses more")
    func reedSolomon() {
        var generator = SplitMix64(seed: 7)
        for round in 0..<200 {
            let checkCount = [10, 16, 22, 30][round % 4]
            let data = (0..<(20 + round % 50)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let check = QRReedSolomonReference.check(data, count: checkCount)
            let clean = (data + check).map(Int.init)
            var damaged = clean
            let errors = Int(generator.next() % UInt64(checkCount / 2 + 1))
            var positions = Set<Int>()
            while positions.count < errors { positions.insert(Int(generator.next() % UInt64(clean.count))) }
            for position in positions { damaged[position] ^= Int(1 + generator.next() % 255) }
            #expect(ReedSolomonDecoder.correct(&damaged, checkCount: checkCount, field: .qr) == errors)
            #expect(damaged == clean)
        }
        // One error more than the capacity in every position set tried: never "corrected" to the original.
        for _ in 0..<100 {
            let data = (0..<30).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let clean = (data + QRReedSolomonReference.check(data, count: 10)).map(Int.init)
            var damaged = clean
            var positions = Set<Int>()
            while positions.count < 6 { positions.insert(Int(generator.next() % UInt64(clean.count))) }
            for position in positions { damaged[position] ^= Int(1 + generator.next() % 255) }
            let result = ReedSolomonDecoder.correct(&damaged, checkCount: 10, field: .qr)
            #expect(result == nil || damaged != clean)
        }
    }
}

/// Check words computed independently of both Coffer's encoder and its decoder: long division by the generator
/// ∏(x − αⁱ) in plain integer arithmetic over GF(256) with polynomial 0x11D.
enum QRReedSolomonReference {
    static func multiply(_ a: Int, _ b: Int) -> Int {
        var (a, b, product) = (a, b, 0)
        while b > 0 {
            if b & 1 == 1 { product ^= a }
            a <<= 1
            if a & 0x100 != 0 { a ^= 0x11D }
            b >>= 1
        }
        return product
    }

    static func check(_ data: [UInt8], count: Int) -> [UInt8] {
        var generatorPoly = [1]
        var root = 1
        for _ in 0..<count {
            var next = [Int](repeating: 0, count: generatorPoly.count + 1)
            for (index, coefficient) in generatorPoly.enumerated() {
                next[index] ^= coefficient
                next[index + 1] ^= multiply(coefficient, root)
            }
            generatorPoly = next
            root = multiply(root, 2)
        }
        var remainder = data.map(Int.init) + [Int](repeating: 0, count: count)
        for index in 0..<data.count where remainder[index] != 0 {
            let factor = remainder[index]
            for (offset, coefficient) in generatorPoly.enumerated() { remainder[index + offset] ^= multiply(coefficient, factor) }
        }
        return remainder.suffix(count).map { UInt8($0) }
    }
}
