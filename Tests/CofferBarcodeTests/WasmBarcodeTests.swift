import CofferTestSupport
import Foundation
import Testing

@testable import CofferBarcode

/// The web vault draws barcodes with this module compiled to WebAssembly (scripts/build-wasm.sh, Embedded Swift):
/// for every symbology its grid must be the native encoder's, module for module, and zxing-cpp must read the payload
/// back from it. The WebAssembly runs in Node through the web app's own loader (Web/app/js/barcode.js).
@Suite("CofferBarcode as WebAssembly", .serialized, .offCooperativePool)
struct WasmBarcodeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let symbology: Symbology
        let payload: [UInt8]
        let charset: String
        /// zxing-cpp's format filter for the symbology.
        let formats: String
        var testDescription: String { symbology.rawValue }
    }

    static let cases: [Case] = [
        Case(symbology: .qr, payload: Array("https://example.com/r/1?ü".utf8), charset: "utf-8", formats: "QRCode"),
        Case(symbology: .qr, payload: [0x00, 0xC3, 0xA9, 0xFF], charset: "binary", formats: "QRCode"),
        Case(symbology: .code128, payload: Array("111222333444".utf8), charset: "utf-8", formats: "Code128"),
        Case(symbology: .gs1_128, payload: Array("0109501101530003\u{1D}10ABC".utf8), charset: "utf-8", formats: "Code128"),
        Case(symbology: .ean13, payload: Array("4006381333931".utf8), charset: "utf-8", formats: "EAN13"),
        Case(symbology: .ean8, payload: Array("9638507".utf8), charset: "utf-8", formats: "EAN8"),
        Case(symbology: .upcA, payload: Array("03600029145".utf8), charset: "utf-8", formats: "UPCA"),
        Case(symbology: .upcE, payload: Array("0425261".utf8), charset: "utf-8", formats: "UPCE"),
        Case(symbology: .code39, payload: Array("COFFER-42".utf8), charset: "utf-8", formats: "Code39"),
        Case(symbology: .code93, payload: Array("Gift card 93".utf8), charset: "utf-8", formats: "Code93"),
        Case(symbology: .itf, payload: Array("12345678".utf8), charset: "utf-8", formats: "ITF"),
        Case(symbology: .itf14, payload: Array("1540014128876".utf8), charset: "utf-8", formats: "ITF"),
        Case(symbology: .codabar, payload: Array("A40156B".utf8), charset: "utf-8", formats: "Codabar"),
        Case(symbology: .pdf417, payload: Array("M\u{FC}ller 42".utf8), charset: "iso-8859-1", formats: "PDF417"),
        Case(symbology: .aztec, payload: Array("Aztec boarding pass 0123456789".utf8), charset: "utf-8", formats: "Aztec"),
        Case(symbology: .dataMatrix, payload: Array("DM-0042".utf8), charset: "utf-8", formats: "DataMatrix"),
        Case(symbology: .gs1DataMatrix, payload: Array("0109501101530003".utf8), charset: "utf-8", formats: "DataMatrix"),
    ]

    struct Grid: Decodable {
        let width: Int?
        let height: Int?
        let modules: String?
        let error: String?
        let ms: Double?
        let digits: String?
    }

    /// The WebAssembly module: the one scripts/build-wasm.sh wrote into the app (CI builds it first), else built now.
    static func wasm() throws -> String {
        let built = TestSupport.repositoryRoot.appendingPathComponent("Web/app/coffer-barcode.wasm").path
        if FileManager.default.fileExists(atPath: built) { return built }
        let output = try TestSupport.temporaryDirectory("wasm") + "/coffer-barcode.wasm"
        let build = try TestSupport.run(TestSupport.repositoryRoot.appendingPathComponent("scripts/build-wasm.sh").path, [output])
        try #require(build.status == 0, "scripts/build-wasm.sh failed: \(build.stderr)")
        return output
    }

    static func wasmGrids(_ requests: [(Symbology, [UInt8], String)]) throws -> [Grid] {
        let body = requests.map { ["symbology": $0.0.rawValue, "payload": $0.1.map { String(format: "%02x", $0) }.joined(), "charset": $0.2] }
        let script = TestSupport.repositoryRoot.appendingPathComponent("Web/tests/wasm_encode.mjs").path
        let output = try Oracle.run(["node", script, try wasm()], input: try JSONSerialization.data(withJSONObject: body))
        return try JSONDecoder().decode([Grid].self, from: output)
    }

    static func nativeGrid(_ testCase: Case) throws -> BitMatrix {
        var options = BarcodeOptions()
        options.charset = testCase.charset == "utf-8" ? .utf8 : .iso8859_1
        return try encode(testCase.payload, as: testCase.symbology, options: options).moduleGrid()
    }

    @Test("every symbology: the WebAssembly grid equals the native one and zxing-cpp reads the payload from it")
    func matchesNative() throws {
        #expect(Set(Self.cases.map(\.symbology)) == Set(Symbology.allCases))
        let grids = try Self.wasmGrids(Self.cases.map { ($0.symbology, $0.payload, $0.charset) })
        var jobs: [DecodeJob] = []
        for (testCase, grid) in zip(Self.cases, grids) {
            let native = try Self.nativeGrid(testCase)
            let modules = Hex.decode(try #require(grid.modules, "\(testCase.symbology): \(grid.error ?? "")"))
            #expect(grid.width == native.width && grid.height == native.height, "\(testCase.symbology)")
            var expected: [UInt8] = []
            for y in 0..<native.height {
                for x in 0..<native.width { expected.append(native[x, y] ? 1 : 0) }
            }
            let differing = zip(modules, expected).filter { $0 != $1 }.count
            #expect(
                modules.count == expected.count && differing == 0,
                "\(testCase.symbology): \(differing) modules of the WebAssembly grid differ from the native one")
            // The number the page prints under the bars is the native one, check digit included.
            #expect(grid.digits == testCase.symbology.digitsWithCheckDigit(testCase.payload), "\(testCase.symbology)")
            jobs.append(DecodeJob(image: Self.pgm(modules, width: native.width, height: native.height), zxingFormats: testCase.formats, pure: true))
        }
        let decoded = try Oracle.decode(jobs)
        for (testCase, result) in zip(Self.cases, decoded) {
            var expected = testCase.payload
            // Decoders report the check digit a payload left out; zxing-cpp reports UPC-A and UPC-E as the EAN-13
            // number they stand for (UPC-E expanded: 0425261 → 042100005264).
            if testCase.symbology == .ean8 { expected = Array("96385074".utf8) }
            if testCase.symbology == .upcA { expected = Array("0036000291452".utf8) }
            if testCase.symbology == .upcE { expected = Array("0042100005264".utf8) }
            if testCase.symbology == .itf14 { expected = Array("15400141288763".utf8) }
            #expect(result.zxing.first?.bytes == expected, "\(testCase.symbology): zxing-cpp read \(result.zxing.first?.hex ?? "nothing")")
        }
    }

    @Test("the digits under an EAN or UPC symbol gain the check digit a payload left out, as natively")
    func digitsUnderTheBars() throws {
        let requests: [(Symbology, [UInt8], String)] = [
            (.ean13, Array("400638133393".utf8), "utf-8"), (.ean8, Array("9638507".utf8), "utf-8"),
            (.upcA, Array("03600029145".utf8), "utf-8"), (.upcE, Array("0425261".utf8), "utf-8"),
        ]
        let grids = try Self.wasmGrids(requests)
        #expect(grids.map(\.digits) == ["4006381333931", "96385074", "036000291452", "04252614"])
        #expect(grids.map(\.digits) == requests.map { $0.0.digitsWithCheckDigit($0.1) })
    }

    @Test("a payload the symbology refuses is refused with the native reason, and a barcode takes ≤ 50 ms")
    func refusalsAndSpeed() throws {
        let large = (Symbology.qr, Array(repeating: UInt8(0x41), count: 1500), "utf-8")
        let grids = try Self.wasmGrids([(.ean13, Array("12345678901X".utf8), "utf-8"), (.pdf417, [], "utf-8")] + Array(repeating: large, count: 5))
        #expect(grids[0].error == "the barcode cannot be drawn: ean13: EAN-13 payloads may contain only the digits 0-9")
        #expect(grids[1].error == "the barcode cannot be drawn: pdf417: the payload is empty")
        // The median of five: the first calls run before the engine has compiled the module fully.
        let times = grids.dropFirst(2).compactMap(\.ms).sorted()
        #expect(times.count == 5 && times[2] <= 50, "a 1,500-byte QR code took \(times) ms")
    }

    /// One pixel per module is too small for a decoder's finder patterns; four is what the app's canvas draws at least.
    static func pgm(_ modules: [UInt8], width: Int, height: Int, scale: Int = 4) -> [UInt8] {
        var image = Array("P5\n\(width * scale) \(height * scale)\n255\n".utf8)
        for y in 0..<height * scale {
            for x in 0..<width * scale { image.append(modules[(y / scale) * width + x / scale] == 1 ? 0 : 255) }
        }
        return image
    }
}
