import CofferBarcode
import CofferTestSupport
import Foundation
import Testing

@testable import CofferScan

/// An image from Tests/oracles/scan_oracle.py, and what zxing-cpp read from the same pixels.
struct OracleImage {
    let image: GrayImage
    let zxing: [(format: String, bytes: [UInt8])]

    /// Images for `requests` (see the script's doc), in one Python process.
    static func make(_ requests: [[String: Any]]) throws -> [OracleImage] {
        try TestSupport.pythonOracle("scan_oracle.py", input: requests).map { answer in
            let fields = try #require(answer as? [String: Any])
            let text = try #require(fields["pixels"] as? String)
            let pixels = try #require(Data(base64Encoded: text))
            let width = try #require(fields["width"] as? Int)
            let height = try #require(fields["height"] as? Int)
            let image = try #require(GrayImage(width: width, height: height, pixels: Array(pixels)))
            let zxing = (fields["zxing"] as? [[String: String]] ?? []).map { found in
                (found["format"] ?? "", hexBytes(found["hex"] ?? ""))
            }
            return OracleImage(image: image, zxing: zxing)
        }
    }

    /// A Coffer rendering as a request: the encoder's module grid (quiet zone included) at `scale` pixels a module.
    static func coffer(_ payload: [UInt8], as symbology: Symbology, scale: Int = 3) throws -> [String: Any] {
        let grid = try encode(payload, as: symbology).moduleGrid()
        var pixels = [UInt8]()
        pixels.reserveCapacity(grid.width * grid.height * scale * scale)
        for y in 0..<grid.height * scale {
            for x in 0..<grid.width * scale { pixels.append(grid[x / scale, y / scale] ? 0 : 255) }
        }
        return ["gray": ["width": grid.width * scale, "height": grid.height * scale, "pixels": Data(pixels).base64EncodedString()]]
    }
}

func hexBytes(_ hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
        bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
        index = next
    }
    return bytes
}

/// Linear symbols drawn by zint and by Coffer's encoder, level and turned as a hand holds a card (up to 30°, and
/// upside down): the reader must give exactly the symbology and payload bytes, and nothing else.
@Suite("Barcode reader: linear symbols", .serialized, .offCooperativePool)
struct LinearReaderTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let zintType: String
        let zintData: String
        let symbology: Symbology
        let payload: String
        var testDescription: String { "\(symbology.rawValue) \(payload)" }
    }

    /// zint's input and what the symbol carries (check digits included; GS1 fixed-length AIs need no separator).
    static let zint: [Case] = [
        Case(zintType: "EANX", zintData: "400638133393", symbology: .ean13, payload: "4006381333931"),
        Case(zintType: "EANX", zintData: "590123412345", symbology: .ean13, payload: "5901234123457"),
        Case(zintType: "EANX", zintData: "9638507", symbology: .ean8, payload: "96385074"),
        Case(zintType: "UPCA", zintData: "03600029145", symbology: .upcA, payload: "036000291452"),
        Case(zintType: "UPCA", zintData: "72527273070", symbology: .upcA, payload: "725272730706"),
        Case(zintType: "UPCE", zintData: "0425261", symbology: .upcE, payload: "04252614"),
        Case(zintType: "UPCE", zintData: "1234567", symbology: .upcE, payload: "12345670"),
        Case(zintType: "CODE128", zintData: "111222333444", symbology: .code128, payload: "111222333444"),
        Case(
            zintType: "CODE128", zintData: "COFFER-LOYALTY-MEMBER-ab-0042x", symbology: .code128,
            payload: "COFFER-LOYALTY-MEMBER-ab-0042x"),
        Case(zintType: "CODE128", zintData: "A1", symbology: .code128, payload: "A1"),
        Case(
            zintType: "GS1_128", zintData: "[01]09501101530003[10]ABC", symbology: .gs1_128,
            payload: "010950110153000310ABC"),
        Case(zintType: "GS1_128", zintData: "[10]ABC123[21]XYZ", symbology: .gs1_128, payload: "10ABC123\u{1D}21XYZ"),
        Case(zintType: "CODE39", zintData: "COFFER-42", symbology: .code39, payload: "COFFER-42"),
        Case(zintType: "CODE39", zintData: "A $/+%.Z", symbology: .code39, payload: "A $/+%.Z"),
        Case(zintType: "CODE93", zintData: "COFFER-93", symbology: .code93, payload: "COFFER-93"),
        Case(zintType: "CODE93", zintData: "Voucher #42: a@b.c", symbology: .code93, payload: "Voucher #42: a@b.c"),
        Case(zintType: "CODABAR", zintData: "A40156B", symbology: .codabar, payload: "A40156B"),
        Case(zintType: "CODABAR", zintData: "C1-2$3:4/5.6+7D", symbology: .codabar, payload: "C1-2$3:4/5.6+7D"),
        Case(zintType: "C25INTER", zintData: "12345670", symbology: .itf, payload: "12345670"),
        Case(zintType: "C25INTER", zintData: "0049000012345678", symbology: .itf, payload: "0049000012345678"),
        Case(zintType: "ITF14", zintData: "1540014128876", symbology: .itf14, payload: "15400141288763"),
    ]

    static let angles: [Double] = [0, -17, 28, 180]

    @Test("zint's symbols, level and turned, read exactly", arguments: zint)
    func zintSymbols(_ testCase: Case) throws {
        let requests: [[String: Any]] = Self.angles.map {
            ["zint": ["type": testCase.zintType, "data": testCase.zintData, "scale": 2], "angle": $0]
        }
        for (angle, made) in zip(Self.angles, try OracleImage.make(requests)) {
            let found = BarcodeReader.read(made.image)
            #expect(found.map(\.symbology) == [testCase.symbology], "\(angle)°: \(found.map { $0.symbology.rawValue })")
            #expect(found.first?.payload == Array(testCase.payload.utf8), "\(angle)°")
        }
    }

    @Test("Coffer's own symbols read back byte for byte, at 2 and 3 pixels a module")
    func cofferSymbols() throws {
        let payloads: [(Symbology, String)] = [
            (.ean13, "4006381333931"), (.ean8, "73513537"), (.upcA, "036000291452"), (.upcE, "06543217"),
            (.code128, "98765432-ABC"), (.code128, "héllo wörld"), (.code128, "a\tb"), (.code128, "12345678901234567890"),
            (.gs1_128, "0109501101530003\u{1D}10ABC"),
            (.code39, "ABC-123 $"), (.code93, "GIFT-2024 $5"), (.code93, "Mixed case {x}\t!"), (.codabar, "B98765.43D"), (.itf, "135792"),
            (.itf14, "00012345600012"),
        ]
        var requests: [[String: Any]] = []
        for (symbology, payload) in payloads {
            let bytes = symbology == .code128 ? Array(payload.unicodeScalars.map { UInt8($0.value) }) : Array(payload.utf8)
            for scale in [2, 3] { requests.append(try OracleImage.coffer(bytes, as: symbology, scale: scale)) }
        }
        let images = try OracleImage.make(requests)
        for (index, (symbology, payload)) in payloads.enumerated() {
            let bytes = symbology == .code128 ? Array(payload.unicodeScalars.map { UInt8($0.value) }) : Array(payload.utf8)
            for made in images[index * 2..<index * 2 + 2] {
                let found = BarcodeReader.read(made.image)
                #expect(
                    found.count == 1 && found.first?.symbology == symbology && found.first?.payload == bytes,
                    "\(symbology.rawValue) \(payload): \(found.map { ($0.symbology.rawValue, $0.payload) })")
            }
        }
    }

    @Test("Code 39 whose narrow bars motion blur wore down to a pixel still reads, and a wrong split does not")
    func code39WornBars() {
        // A character from a blurred photo ('3': wide bar, space, bar, space wide): its narrow bars are 1–2 pixels,
        // its narrow spaces 3, so the raw widths fail the 2.5× test until bars and spaces are moved back.
        let photo = [4, 3, 4, 5, 2, 3, 1, 3, 2]
        #expect(photo.withUnsafeBufferPointer { wideBits($0[0..<9], wideCounts: 3...3, inSymbol: true) } == Code39.patterns[3])
        // A whole line so drawn after a clean start: narrow bars 2 pixels, every third one 1, narrow spaces 3, wide
        // bars 5, wide spaces 6 (a start character is split on its raw widths only).
        let payload = Array("CARD.1340663".utf8)
        var runs = [40]
        var narrowBars = 0
        for (position, bits) in ([Code39.star] + payload.map { Code39.patterns[Code39.alphabet.firstIndex(of: $0)!] } + [Code39.star]).enumerated() {
            if position > 0 { runs.append(3) }
            for element in 0..<9 {
                let wide = bits & (1 << (8 - element)) != 0
                if element % 2 == 0 {
                    if !wide { narrowBars += 1 }
                    runs.append(wide ? 5 : (position > 0 && narrowBars % 3 == 0 ? 1 : 2))
                } else {
                    runs.append(wide ? 6 : 3)
                }
            }
        }
        runs.append(40)
        #expect(BarcodeReader.readLine(runs).map(\.payload) == [payload])
        // Wide elements hardly wider than the narrow ones stay unread.
        #expect([3, 3, 4, 3, 3, 3, 3, 3, 4].withUnsafeBufferPointer { wideBits($0[0..<9], wideCounts: 3...3, inSymbol: true) } == nil)
    }

    @Test("light on dark is read too, and the corners frame the symbol")
    func invertedAndCorners() throws {
        let made = try OracleImage.make([
            ["zint": ["type": "EANX", "data": "400638133393", "scale": 2], "invert": true],
            ["zint": ["type": "CODE128", "data": "111222333444", "scale": 2], "margin": 100],
        ])
        let inverted = BarcodeReader.read(made[0].image)
        #expect(inverted.map(\.payload) == [Array("4006381333931".utf8)])
        let found = try #require(BarcodeReader.read(made[1].image).first)
        for corner in found.corners {
            #expect(corner.x >= 90 && corner.x <= Double(made[1].image.width - 90), "\(corner)")
            #expect(corner.y >= 90 && corner.y <= Double(made[1].image.height - 90), "\(corner)")
        }
    }

    @Test("noise, gradients and stripes give no read")
    func nothingFromNothing() {
        var generator = SplitMix64(seed: 42)
        // Every reader runs on these (BarcodeReader.read), the 2D ones included.
        for kind in 0..<7 {
            let width = 640, height = 480
            var pixels = [UInt8](repeating: 255, count: width * height)
            for y in 0..<height {
                for x in 0..<width {
                    switch kind {
                    case 0: pixels[y * width + x] = UInt8(truncatingIfNeeded: generator.next())
                    case 1: pixels[y * width + x] = UInt8(x * 255 / width)
                    case 2: pixels[y * width + x] = (x / 3) % 2 == 0 ? 0 : 255
                    case 3: pixels[y * width + x] = generator.next() % 7 == 0 ? 0 : 255
                    case 4: pixels[y * width + x] = ((x / (1 + Int(generator.next() % 4))) % 2 == 0) ? 20 : 230
                    case 5: pixels[y * width + x] = ((x / (1 + Int(generator.next() % 8))) % 2 == 0) ? 20 : 230
                    default: pixels[y * width + x] = UInt8((x * 7 + y * 13) % 256)
                    }
                }
            }
            let image = GrayImage(width: width, height: height, pixels: pixels)!
            #expect(BarcodeReader.read(image).isEmpty, "kind \(kind)")
        }
    }
}
