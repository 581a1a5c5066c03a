@testable import CofferBarcode
import CofferTestSupport
import Foundation
import Testing

@testable import CofferScan

/// Data Matrix symbols drawn by zint and by Coffer: every square and rectangular size, each encodation (ASCII, C40,
/// Text, X12, EDIFACT, Base 256), GS1, ECI and macros, turned to any angle, tilted, blurred, inverted, damaged; the
/// payload must be exactly the bytes zxing-cpp reads from the same pixels, and a symbol too damaged to correct must
/// give nothing rather than a guess.
@Suite("Barcode reader: Data Matrix", .serialized, .offCooperativePool)
struct DataMatrixReaderTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let request: [String: any Sendable]
        let symbology: Symbology
        let payload: [UInt8]
        var testDescription: String { name }
    }

    static func zint(_ data: String, _ options: [String] = [], scale: Int = 3) -> [String: any Sendable] {
        ["zint": ["type": "DATAMATRIX", "data": data, "scale": scale, "options": options] as [String: any Sendable]]
    }

    static let long = String(repeating: "Coffer keeps the small secrets people carry every day. ", count: 40)

    static let cases: [Case] = {
        var cases: [Case] = []
        // Squares from 10×10 to 144×144 (one, four, sixteen and thirty-six data regions; one to ten blocks).
        for version in [1, 3, 6, 9, 10, 14, 15, 16, 19, 21, 22, 24] {
            let data = String(
                long.prefix(
                    [
                        1: 1, 3: 6, 6: 28, 9: 40, 10: 60, 14: 160, 15: 200, 16: 270, 19: 560,
                        21: 800, 22: 1040, 24: 1500,
                    ][version]!))
            cases.append(
                Case(
                    name: "zint version \(version)", request: zint(data, ["--vers=\(version)"], scale: version > 15 ? 2 : 3),
                    symbology: .dataMatrix, payload: Array(data.utf8)))
        }
        // The six rectangles.
        for (version, data) in [
            (25, "AB12"), (26, "ABCDEF1234"), (27, "RECT 12x26 OK"), (28, "Rectangle twelve"),
            (29, "RECTANGLE 16x36 12345678"), (30, "Rectangle 16x48: the largest of them"),
        ] {
            cases.append(
                Case(
                    name: "zint rectangle version \(version)", request: zint(data, ["--vers=\(version)"], scale: 4),
                    symbology: .dataMatrix, payload: Array(data.utf8)))
        }
        // Encodations zint picks for these payloads: digit pairs, C40 (upper case), Text (lower case), X12, EDIFACT,
        // Base 256 (binary), upper shift (bytes over 127).
        let encodations: [(String, String, [UInt8])] = [
            ("digit pairs", "12345678901234567890", Array("12345678901234567890".utf8)),
            ("C40", "COFFER LOYALTY MEMBER 0042 GOLD", Array("COFFER LOYALTY MEMBER 0042 GOLD".utf8)),
            ("Text", "coffer loyalty member gold tier", Array("coffer loyalty member gold tier".utf8)),
            ("X12", "ABC*123>DEF*456>GHI*789>JKL*0\r", Array("ABC*123>DEF*456>GHI*789>JKL*0\r".utf8)),
            ("EDIFACT", "UNB+UNOA:3+SENDER:ZZ+RECIPIENT:ZZ+991231:1200+1", Array("UNB+UNOA:3+SENDER:ZZ+RECIPIENT:ZZ+991231:1200+1".utf8)),
            (
                "Base 256", "\\x00\\xFF\\x80\\x0A\\x0D\\x7F\\xC3\\x28\\x41\\x01\\x02\\x03\\xFE\\xFD\\xFC\\x90\\x91\\x92",
                [0x00, 0xFF, 0x80, 0x0A, 0x0D, 0x7F, 0xC3, 0x28, 0x41, 0x01, 0x02, 0x03, 0xFE, 0xFD, 0xFC, 0x90, 0x91, 0x92]
            ),
            ("upper shift", "caf\\xE9 cr\\xE8me", [0x63, 0x61, 0x66, 0xE9, 0x20, 0x63, 0x72, 0xE8, 0x6D, 0x65]),
            ("mixed punctuation", "Order #42: 3 x \"beans\" @ $4.99; total=12.97!", Array("Order #42: 3 x \"beans\" @ $4.99; total=12.97!".utf8)),
        ]
        for (name, data, payload) in encodations {
            cases.append(Case(name: name, request: zint(data, ["--esc", "--binary", "--square"]), symbology: .dataMatrix, payload: payload))
        }
        cases.append(
            Case(
                name: "UTF-8 with ECI 26", request: zint("grüße € 😀", ["--eci=26"]), symbology: .dataMatrix,
                payload: Array("grüße € 😀".utf8)))
        cases.append(
            Case(
                name: "GS1 (FNC1 first)", request: zint("[01]09501101530003[10]ABC[21]XYZ", ["--gs1"]),
                symbology: .gs1DataMatrix, payload: Array("010950110153000310ABC\u{1D}21XYZ".utf8)))
        cases.append(
            Case(
                name: "macro 05", request: zint("[)>\\R05\\GABC123\\R\\E", ["--esc"]), symbology: .dataMatrix,
                payload: Array("[)>\u{1E}05\u{1D}ABC123\u{1E}\u{04}".utf8)))
        return cases
    }()

    /// Angle, tilt and blur a symbol is read at.
    static let poses: [[String: any Sendable]] = [
        [:], ["angle": 33.0], ["angle": 90.0], ["angle": 147.0, "blur": 0.7], ["angle": 200.0, "tilt": 0.25],
        ["angle": 290.0, "tilt": 0.2, "blur": 0.6], ["invert": true],
    ]

    @Test("zint's symbols, turned, tilted and blurred, read exactly as zxing-cpp reads them", arguments: cases)
    func symbols(_ testCase: Case) throws {
        let requests = Self.poses.map { pose in testCase.request.merging(pose) { $1 } }
        for (pose, made) in zip(Self.poses, try OracleImage.make(requests.map { $0 as [String: Any] })) {
            let found = BarcodeReader.read(made.image)
            #expect(
                found.count == 1 && found.first?.symbology == testCase.symbology && found.first?.payload == testCase.payload,
                "\(pose): \(found.map { ($0.symbology.rawValue, $0.payload) })")
            // The anchor reads the same bytes wherever it reads the symbol at all.
            for read in made.zxing where read.format == "Data Matrix" {
                #expect(read.bytes == testCase.payload, "zxing-cpp disagrees at \(pose)")
            }
        }
    }

    @Test("damage within the error correction is corrected; beyond it, nothing is read")
    func damage() throws {
        let data = "https://coffer.example/card/8812-4471-0093"
        let made = try OracleImage.make([
            Self.zint(data, ["--vers=8"]).merging(["blot": [0.35, 0.4, 0.2, 0.2]]) { $1 } as [String: Any],
            Self.zint(data, ["--vers=8"]).merging(["blot": [0.2, 0.2, 0.55, 0.55]]) { $1 } as [String: Any],
        ])
        #expect(BarcodeReader.read(made[0].image).map(\.payload) == [Array(data.utf8)])
        #expect(BarcodeReader.read(made[1].image).isEmpty)
    }

    @Test("structured append is refused with its place in the sequence, not read as a whole")
    func structuredAppend() throws {
        let made = try OracleImage.make([Self.zint("PART TWO OF THREE", ["--structapp=2,3"]) as [String: Any]])
        let result = BarcodeReader.scan(made[0].image)
        #expect(result.found.isEmpty)
        #expect(result.refused == [.structuredAppend(.dataMatrix, index: 2, total: 3)])
    }

    @Test("several symbols in one image are each read once, beside other symbologies")
    func several() throws {
        let made = try OracleImage.make([
            [
                "beside": [
                    Self.zint("FIRST"), Self.zint("second symbol"),
                    ["zint": ["type": "QRCODE", "data": "a QR", "scale": 3] as [String: any Sendable]],
                    Self.zint("[01]09501101530003", ["--gs1"]),
                ] as [any Sendable]
            ]
        ])
        let found = BarcodeReader.read(made[0].image)
        let reads = Set(found.map { "\($0.symbology.rawValue):\(String(decoding: $0.payload, as: UTF8.self))" })
        #expect(reads == ["datamatrix:FIRST", "datamatrix:second symbol", "qr:a QR", "gs1_datamatrix:0109501101530003"])
        #expect(found.count == 4)
    }

    @Test("Coffer's own Data Matrix symbols read back byte for byte")
    func cofferSymbols() throws {
        let payloads: [(Symbology, [UInt8])] = [
            (.dataMatrix, Array("héllo wörld".utf8)), (.dataMatrix, Array(Self.long.prefix(700).utf8)),
            (.dataMatrix, [0x01, 0xFE, 0x00, 0x42, 0x80]), (.dataMatrix, Array("COFFER C40 RUN 123456 AND text run".utf8)),
            (.gs1DataMatrix, Array("0109501101530003\u{1D}10ABC".utf8)),
            // 144×144, whose ten blocks do not share its data evenly.
            (.dataMatrix, Array(String(repeating: "0123456789", count: 300).utf8)),
        ]
        let images = try OracleImage.make(try payloads.map { try OracleImage.coffer($0.1, as: $0.0, scale: $0.1.count > 1000 ? 2 : 3) })
        for ((symbology, payload), made) in zip(payloads, images) {
            let found = BarcodeReader.read(made.image)
            #expect(found.map(\.payload) == [payload] && found.first?.symbology == symbology)
        }
    }

    @Test("Reed–Solomon over Data Matrix's field corrects up to half its check words, and refuses more")
    func reedSolomon() {
        var generator = SplitMix64(seed: 11)
        let field = BinaryFieldReedSolomon(size: 256, primitive: 0x12D)
        for round in 0..<200 {
            let checkCount = [5, 10, 28, 62][round % 4]
            let data = (0..<(3 + round % 60)).map { _ in Int(generator.next() % 256) }
            let clean = data + field.checkSymbols(for: data, count: checkCount)
            var damaged = clean
            let errors = Int(generator.next() % UInt64(checkCount / 2 + 1))
            var positions = Set<Int>()
            while positions.count < errors { positions.insert(Int(generator.next() % UInt64(clean.count))) }
            for position in positions { damaged[position] ^= Int(1 + generator.next() % 255) }
            #expect(ReedSolomonDecoder.correct(&damaged, checkCount: checkCount, field: .dataMatrix) == errors)
            #expect(damaged == clean)
        }
    }
}
