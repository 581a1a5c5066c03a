import CofferTestSupport
import Testing

@testable import CofferBarcode

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
private let digits = bytes("0123456789")

private func modules(_ symbol: EncodedBarcode) -> String {
    guard case .linear(let modules, _) = symbol.symbol else { return "" }
    return String(modules.map { $0 ? "1" : "0" })
}

/// Bits of a `zint --dump` line (hex nibbles), cut to the symbol width.
private func zintDump(_ hex: String, width: Int) -> String {
    let bits = hex.filter { $0 != " " }.map { nibble -> String in
        let value = Int(String(nibble), radix: 16) ?? 0
        return (0..<4).map { (value >> (3 - $0)) & 1 == 1 ? "1" : "0" }.joined()
    }.joined()
    return String(bits.prefix(width))
}

struct LinearGoldenTests {
    /// Module patterns from zint 2.11 (`zint -b EANX --dump -d 590123412345` etc.), an independent encoder.
    @Test(arguments: [
        (Symbology.ean13, "590123412345", "A2 D3 B3 26 F4 EA B3 6C 85 72 74 4A", 95),
        (.ean8, "9638507", "A2 D7 BD 6E A9 DC A2 5C A", 67),
        (.upcA, "03600029145", "A3 5E AF 1A 34 6A B6 74 CD 72 76 CA", 95),
        (.upcE, "0123456", "AC C9 BD 3A E5 7A A", 51),
        (.code128, "98765432-ABC", "D3 9E 8B 28 75 8C 6D 7B A6 E5 18 8B 11 1A 7A 63 AC", 134),
    ])
    func matchesZint(symbology: Symbology, payload: String, dump: String, width: Int) throws {
        let symbol = try encode(bytes(payload), as: symbology)
        #expect(symbol.width == width)
        #expect(modules(symbol) == zintDump(dump, width: width))
    }

    @Test func code128PatternsAreElevenModules() {
        for (value, pattern) in Code128.patterns.enumerated() {
            #expect(pattern.reduce(0) { $0 + Int($1) } == (value == 106 ? 13 : 11))
        }
    }

    /// Digit runs switch to code set C only when that saves symbols.
    @Test(arguments: [("12", 3), ("1234", 4), ("A1234", 6), ("A12345678", 8), ("AB12", 6)])
    func code128SymbolCount(payload: String, symbols: Int) throws {
        // start + data + check = symbols; plus the 13-module stop.
        #expect(try encode(bytes(payload), as: .code128).width == symbols * 11 + 13)
    }
}

struct CheckDigitTests {
    @Test(arguments: [
        (Symbology.ean13, "400638133393", "4006381333931"),
        (.ean8, "7351353", "73513537"),
        (.upcA, "03600029145", "036000291452"),
        (.itf14, "1540014128876", "15400141288763"),
        (.upcE, "0654321", "06543217"),
    ])
    func computedWhenOmitted(symbology: Symbology, short: String, full: String) throws {
        #expect(try encode(bytes(short), as: symbology) == encode(bytes(full), as: symbology))
    }

    /// Wrong check digits, with the right ones from the standards' published examples (GS1's 4006381333931,
    /// 73513537, 036000291452, 15400141288763; UPC-E 06543217).
    @Test(arguments: [
        (Symbology.ean13, "4006381333932", 1), (.ean8, "73513530", 7), (.upcA, "036000291453", 2),
        (.itf14, "15400141288760", 3), (.upcE, "06543210", 7), (.ean13, "1234567890123", 8),
    ])
    func rejectedWhenWrong(symbology: Symbology, payload: String, expected: Int) {
        #expect(throws: BarcodeError.self) { try encode(bytes(payload), as: symbology) }
        do {
            _ = try encode(bytes(payload), as: symbology)
        } catch {
            #expect(error.reason.hasSuffix("check digit should be \(expected), not \(payload.last!)"), "\(error.reason)")
            #expect(!error.description.contains(payload))
        }
    }
}

struct CheckDigitDisplayTests {
    /// The digits a symbol carries, from the standards' published examples: a payload without its check digit gets
    /// it, one with it stays; other symbologies and refused payloads give nil.
    @Test(arguments: [
        (Symbology.ean13, "400638133393", "4006381333931"), (.ean13, "4006381333931", "4006381333931"),
        (.ean8, "7351353", "73513537"), (.upcA, "03600029145", "036000291452"), (.upcE, "654321", "06543217"),
    ])
    func digits(symbology: Symbology, payload: String, shown: String) {
        #expect(symbology.digitsWithCheckDigit(Array(payload.utf8)) == shown)
    }

    @Test func others() {
        #expect(Symbology.qr.digitsWithCheckDigit(Array("400638133393".utf8)) == nil)
        #expect(Symbology.ean13.digitsWithCheckDigit(Array("4006381333932".utf8)) == nil)
    }
}

struct LinearErrorTests {
    @Test(arguments: [
        (Symbology.ean13, "40063813339A", "only the digits"),
        (.ean13, "12345", "takes 12 digits"),
        (.ean8, "123456789", "takes 7 digits"),
        (.upcE, "2123456", "number system must be 0 or 1"),
        (.itf, "12345", "length must be even"),
        (.itf, "12A4", "only the digits"),
        (.code39, "abc", "upper-case"),
        (.code39, "A*B", "no '*'"),
        (.code93, "caf\u{E9}", "ASCII only"),
        (.codabar, "1234", "start and end"),
        (.codabar, "A12B34B", "only at the ends"),
        (.gs1_128, "AB123", "numeric application identifier"),
        (.gs1_128, "0112345678901231\u{1D}", "must not end"),
        (.gs1_128, "01é", "character set 82"),
    ])
    func rejects(symbology: Symbology, payload: String, rule: String) {
        do {
            _ = try encode(bytes(payload), as: symbology)
            Issue.record("\(symbology) accepted an invalid payload")
        } catch {
            #expect(error.symbology == symbology)
            #expect(error.reason.contains(rule), "\(error.reason)")
        }
    }

    @Test func code128RejectsNonASCIIWhenUTF8() {
        #expect(throws: BarcodeError.self) {
            try encode(bytes("Käse"), as: .code128, options: BarcodeOptions(charset: .utf8))
        }
        #expect(throws: Never.self) { try encode(bytes("Kase"), as: .code128, options: BarcodeOptions(charset: .utf8)) }
    }

    @Test(arguments: Symbology.allCases)
    func emptyPayloadIsAnError(symbology: Symbology) {
        #expect(throws: BarcodeError(symbology, "the payload is empty")) { try encode([], as: symbology) }
    }
}

/// Every 1D symbology decoded by zxing-cpp and zbar over a corpus; raw bytes compared.
struct LinearDecodeTests {
    struct Case {
        var symbology: Symbology
        var payload: [UInt8]
        /// What decoders transmit (zxing, zbar) when it differs from the payload by rule (UPC expansions).
        var zxingExpected: [UInt8]
        var zbarExpected: [UInt8]?
        var zxingFormat: String
        var zbarArgs: [String]?
        var sid: String?
    }

    static func corpus() -> [Case] {
        var random = SeededRandom(seed: 128)
        var cases: [Case] = []
        func digitsString(_ n: Int) -> [UInt8] { random.bytes(n, from: digits) }
        for _ in 0..<6 {
            let ean13 = digitsString(12)
            let full13 = ean13 + [UInt8(0x30 + EANUPC.checkDigit(ean13.map { Int($0 - 0x30) }))]
            cases.append(
                Case(
                    symbology: .ean13, payload: ean13, zxingExpected: full13, zbarExpected: full13,
                    zxingFormat: "EAN13", zbarArgs: ["-Sdisable", "-Sean13.enable"]))
            let ean8 = digitsString(7)
            let full8 = ean8 + [UInt8(0x30 + EANUPC.checkDigit(ean8.map { Int($0 - 0x30) }))]
            cases.append(
                Case(
                    symbology: .ean8, payload: full8, zxingExpected: full8, zbarExpected: full8,
                    zxingFormat: "EAN8", zbarArgs: ["-Sdisable", "-Sean8.enable"]))
            let upca = digitsString(11)
            let fullA = upca + [UInt8(0x30 + EANUPC.checkDigit(upca.map { Int($0 - 0x30) }))]
            cases.append(
                Case(
                    symbology: .upcA, payload: upca, zxingExpected: [0x30] + fullA, zbarExpected: fullA,
                    zxingFormat: "UPCA", zbarArgs: ["-Sdisable", "-Sean13.enable", "-Supca.enable"]))
            let upce = [UInt8(0x30 + random.next() % 2)] + digitsString(6)
            let upceDigits = (try? EANUPC.upcEDigits(upce)) ?? []
            let expanded = EANUPC.expandUPCE(Array(upceDigits[0...6])) + [upceDigits[7]]
            cases.append(
                Case(
                    symbology: .upcE, payload: upce,
                    zxingExpected: [0x30] + expanded.map { UInt8(0x30 + $0) },
                    zbarExpected: upceDigits.map { UInt8(0x30 + $0) },
                    zxingFormat: "UPCE",
                    // zbar 0.23 reads only number system 0 UPC-E (zint's NS 1 symbols fail there too).
                    zbarArgs: upce[0] == 0x30 ? ["-Sdisable", "-Sean13.enable", "-Supce.enable"] : nil))
            let itfLength = [6, 8, 10, 14, 20, 30][Int(random.next() % 6)]
            let itf = digitsString(itfLength)
            cases.append(
                Case(
                    symbology: .itf, payload: itf, zxingExpected: itf, zbarExpected: itf,
                    zxingFormat: "ITF", zbarArgs: ["-Sdisable", "-Si25.enable"]))
            let itf14 = digitsString(13)
            let full14 = itf14 + [UInt8(0x30 + EANUPC.checkDigit(itf14.map { Int($0 - 0x30) }))]
            cases.append(
                Case(
                    symbology: .itf14, payload: itf14, zxingExpected: full14, zbarExpected: full14,
                    zxingFormat: "ITF", zbarArgs: ["-Sdisable", "-Si25.enable"]))
            let code39 = random.bytes(Int(random.next() % 20) + 1, from: Code39.alphabet)
            cases.append(
                Case(
                    symbology: .code39, payload: code39, zxingExpected: code39, zbarExpected: code39,
                    zxingFormat: "Code39Std", zbarArgs: ["-Sdisable", "-Scode39.enable"]))
            // zxing and zbar ignore Codabar symbols with fewer than about four data characters.
            let codabarBody = random.bytes(Int(random.next() % 16) + 4, from: Array(Codabar.alphabet.prefix(16)))
            let codabar = [random.bytes(1, from: bytes("ABCD"))[0]] + codabarBody + [random.bytes(1, from: bytes("ABCD"))[0]]
            cases.append(
                Case(
                    symbology: .codabar, payload: codabar, zxingExpected: codabar, zbarExpected: codabar,
                    zxingFormat: "Codabar", zbarArgs: ["-Sdisable", "-Scodabar.enable"]))
        }
        // Code 93: its own 43 characters (zbar too), and every ASCII byte through the shift pairs (full ASCII).
        for payload in [
            bytes("CODE-93 $/+%.X"), random.bytes(12, from: Code93.alphabet), Array((0...127).map { UInt8($0) }),
            bytes("Mixed case: a@b.c [1]"),
        ] {
            let plain = payload.allSatisfy { Code93.alphabet.contains($0) }
            cases.append(
                Case(
                    symbology: .code93, payload: payload, zxingExpected: payload, zbarExpected: payload,
                    zxingFormat: "Code93", zbarArgs: plain ? ["-Sdisable", "-Scode93.enable"] : nil))
        }
        // Code 128: printable ASCII, digit runs (set C), odd digit runs, controls (set A), Latin-1 via FNC4.
        let printable = (32...126).map { UInt8($0) }
        let code128Payloads: [[UInt8]] = [
            random.bytes(30, from: printable), random.bytes(1, from: printable),
            bytes("1"), bytes("12"), bytes("123456789"), bytes("ABC1234567890DEF12345"), bytes("a1234b56789c"),
            bytes("LINE1\tTAB\r\nEND"), bytes("x\u{01}y\u{1F}z"), bytes("98765432-ABC"),
            Array((0...127).map { UInt8($0) }), random.bytes(40, from: printable + digits + digits + digits),
        ]
        for payload in code128Payloads {
            cases.append(
                Case(
                    symbology: .code128, payload: payload, zxingExpected: payload, zbarExpected: payload,
                    zxingFormat: "Code128", zbarArgs: ["-Sdisable", "-Scode128.enable"]))
        }
        for payload in [[0xE9, 0x41, 0xFF, 0x80], Array((128...255).map { UInt8($0) })] as [[UInt8]] {
            cases.append(
                Case(
                    symbology: .code128, payload: payload, zxingExpected: payload, zbarExpected: nil,
                    zxingFormat: "Code128", zbarArgs: nil))
        }
        // GS1-128: fixed-length AIs, a variable-length AI followed by a separator, alphanumeric data.
        for payload in [
            "0109501101020917", "01095011010209171719050810ABC123\u{1D}21XYZ%&", "00123456789012345675",
            "10abc\u{1D}11123456\u{1D}3103000189",
        ] {
            cases.append(
                Case(
                    symbology: .gs1_128, payload: bytes(payload), zxingExpected: bytes(payload),
                    zbarExpected: nil, zxingFormat: "Code128", zbarArgs: nil, sid: "]C1"))
        }
        return cases
    }

    @Test func decodersReadBackEveryByte() throws {
        let cases = Self.corpus()
        var jobs: [DecodeJob] = []
        for item in cases {
            let symbol = try encode(item.payload, as: item.symbology)
            let image = try PGMWriter.data(for: symbol, options: RasterOptions(scale: 3, barHeight: 20))
            jobs.append(DecodeJob(image: image, zxingFormats: item.zxingFormat, zbarArgs: item.zbarArgs))
        }
        let results = try Oracle.decode(jobs)
        for (index, result) in results.enumerated() {
            let item = cases[index]
            let label = "\(item.symbology.rawValue) case \(index)"
            #expect(result.zxing.first?.bytes == item.zxingExpected, "\(label): zxing bytes differ")
            if let sid = item.sid { #expect(result.zxing.first?.sid == sid, "\(label): symbology identifier") }
            if let zbar = result.zbar { #expect(zbar.first?.bytes == item.zbarExpected, "\(label): zbar bytes differ") }
        }
    }
}
