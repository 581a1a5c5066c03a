import CofferTestSupport
import Testing

@testable import CofferBarcode

/// QR output decoded by zxing-cpp (and zbar for a sample): raw bytes, version, EC level, mask and ECI must match.
struct QRDecodeTests {
    struct Case {
        var payload: [UInt8]
        var options: BarcodeOptions
        var expectedVersion: Int?
        var label: String
    }

    static func byteCapacity(version: Int, level: QRErrorCorrection) -> Int {
        (QRTables.dataCodewords(version: version, level: level) * 8 - 4 - QRTables.countBits(.byte, version: version)) / 8
    }

    /// Largest count of `mode` characters that fits one segment in the symbol.
    static func modeCapacity(_ mode: QRMode, version: Int, level: QRErrorCorrection) -> Int {
        let bits = QRTables.dataCodewords(version: version, level: level) * 8
        var count = 0
        while QRSegmenter.bitLength([QRSegment(mode: mode, range: 0..<(count + 1))], version: version) <= bits {
            count += 1
        }
        return count
    }

    static func check(_ cases: [Case], zbarSample: Bool) throws {
        var jobs: [DecodeJob] = []
        var encoded: [EncodedBarcode] = []
        for (index, item) in cases.enumerated() {
            let symbol = try encode(item.payload, as: .qr, options: item.options)
            if let version = item.expectedVersion {
                #expect(symbol.qr?.version == version, "\(item.label): version")
            }
            encoded.append(symbol)
            let useZbar = zbarSample && index % 3 == 0
            jobs.append(
                DecodeJob(
                    image: try symbol.pgm(scale: 2), zxingFormats: "QRCode", zbarArgs: useZbar ? ["-Sbinary", "-Sdisable", "-Sqrcode.enable"] : nil,
                    pure: true, eci: true))
        }
        let results = try Oracle.decode(jobs)
        for (index, result) in results.enumerated() {
            let item = cases[index]
            let info = try #require(encoded[index].qr)
            guard let read = result.zxing.first else {
                Issue.record("\(item.label): zxing found no QR code")
                continue
            }
            #expect(read.bytes == item.payload, "\(item.label): zxing bytes differ")
            #expect(read.extra["Version"] == String(info.version), "\(item.label): version")
            #expect(read.extra["ECLevel"] == info.errorCorrection.rawValue, "\(item.label): EC level")
            #expect(read.extra["DataMask"] == String(info.mask), "\(item.label): mask")
            let expectedSID = item.options.gs1 ? "]Q3" : (info.utf8ECI ? "]Q2" : "]Q1")
            #expect(read.sid == expectedSID, "\(item.label): symbology identifier")
            #expect(read.extra["ECI"] == (info.utf8ECI ? "000026" : nil), "\(item.label): ECI")
            if let zbar = result.zbar {
                #expect(zbar.first?.bytes == item.payload, "\(item.label): zbar bytes differ")
            }
        }
    }

    /// Every version at every level, filled to its byte-mode capacity (one byte more must not fit).
    @Test(arguments: QRErrorCorrection.allCases)
    func maximumByteCapacity(level: QRErrorCorrection) throws {
        var random = SeededRandom(seed: UInt64(level.ordinal + 1))
        var cases: [Case] = []
        for version in 1...40 {
            let count = Self.byteCapacity(version: version, level: level)
            let payload = random.bytes(count)
            let options = BarcodeOptions(qrErrorCorrection: level, qrMinimumVersion: version, charset: .iso8859_1)
            cases.append(Case(payload: payload, options: options, expectedVersion: version, label: "\(version)-\(level) bytes"))
            if version < 40 {
                var forcedMask = options
                forcedMask.qrMask = 0  // Only the version matters here; skip the mask search.
                let bigger = try encode(payload + [0x41], as: .qr, options: forcedMask)
                #expect(bigger.qr?.version == version + 1, "\(version)-\(level): capacity + 1 needs the next version")
            } else {
                #expect(throws: BarcodeError.self) { try encode(payload + [0x41], as: .qr, options: options) }
            }
        }
        try Self.check(cases, zbarSample: level == .M)
    }

    /// Numeric and alphanumeric capacity at the count-indicator boundaries.
    @Test func maximumNumericAndAlphanumeric() throws {
        var random = SeededRandom(seed: 99)
        var cases: [Case] = []
        for level in QRErrorCorrection.allCases {
            for version in [1, 9, 10, 26, 27, 40] {
                let options = BarcodeOptions(qrErrorCorrection: level, qrMinimumVersion: version)
                let digits = random.bytes(Self.modeCapacity(.numeric, version: version, level: level), from: Array("0123456789".utf8))
                cases.append(Case(payload: digits, options: options, expectedVersion: version, label: "\(version)-\(level) numeric"))
                let alnum = random.bytes(
                    Self.modeCapacity(.alphanumeric, version: version, level: level),
                    from: Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".utf8))
                cases.append(Case(payload: alnum, options: options, expectedVersion: version, label: "\(version)-\(level) alnum"))
            }
        }
        try Self.check(cases, zbarSample: false)
    }

    /// Random and edge-case payloads: mixed modes, UTF-8 (ECI 26), binary, Latin-1, GS1, single bytes.
    @Test func randomCorpus() throws {
        var random = SeededRandom(seed: 2024)
        var cases: [Case] = []
        let mixed = Array("0123456789ABCDEFXYZ abc-./:%$*+é".utf8)
        for index in 0..<60 {
            let level = QRErrorCorrection.allCases[index % 4]
            let length = [1, 2, 3, 7, 17, 40, 100, 300, 800][index % 9]
            let payload: [UInt8]
            var charset = BarcodeCharset.automatic
            switch index % 5 {
            case 0: payload = random.bytes(length)
            case 1: payload = random.bytes(length, from: mixed)
            case 2: payload = Array(String(repeating: "Käse Žabica 5€ 日本 ", count: length / 20 + 1).utf8)
            case 3:
                payload = random.bytes(length).map { $0 | 0x80 }
                charset = .iso8859_1
            default: payload = random.bytes(length, from: Array("0123456789".utf8)) + random.bytes(length, from: mixed)
            }
            cases.append(
                Case(
                    payload: payload, options: BarcodeOptions(qrErrorCorrection: level, charset: charset),
                    expectedVersion: nil, label: "random #\(index)"))
        }
        cases.append(Case(payload: [0], options: BarcodeOptions(), expectedVersion: 1, label: "NUL byte"))
        cases.append(Case(payload: [0xFF], options: BarcodeOptions(), expectedVersion: 1, label: "0xFF byte"))
        cases.append(Case(payload: Array("Käse".utf8), options: BarcodeOptions(charset: .utf8), expectedVersion: 1, label: "UTF-8 forced"))
        cases.append(Case(payload: Array("Käse".utf8), options: BarcodeOptions(charset: .iso8859_1), expectedVersion: 1, label: "UTF-8 as Latin-1"))
        cases.append(
            Case(
                payload: Array("0104012345012345\u{1D}10ABC%12\u{1D}21XYZ".utf8),
                options: BarcodeOptions(gs1: true), expectedVersion: nil, label: "GS1"))
        try Self.check(cases, zbarSample: true)
    }

    @Test func eciOnlyForNonASCIIUTF8() throws {
        #expect(try encode(Array("Käse".utf8), as: .qr).qr?.utf8ECI == true)
        #expect(try encode(Array("Kase".utf8), as: .qr, options: BarcodeOptions(charset: .utf8)).qr?.utf8ECI == false)
        #expect(try encode([0xE4, 0x41], as: .qr).qr?.utf8ECI == false)
    }
}
