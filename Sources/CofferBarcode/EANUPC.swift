/// EAN-13, EAN-8, UPC-A and UPC-E (ISO/IEC 15420). Check digits are computed when omitted and verified when given.
/// The code tables, the check digit and UPC-E's expansion are the reader's too (CofferScan).
package enum EANUPC {
    /// Odd-parity left-hand codes ("L", set A) of digits 0–9; right-hand codes are their complements and even-parity
    /// ("G", set B) codes are the right-hand codes reversed.
    package static let lCodes: [UInt8] = [
        0b0001101, 0b0011001, 0b0010011, 0b0111101, 0b0100011, 0b0110001, 0b0101111, 0b0111011, 0b0110111, 0b0001011,
    ]
    /// For EAN-13, which of digits 2–7 use G codes, by the leading digit (bit 5 = digit 2).
    package static let ean13Parity: [UInt8] = [
        0b000000, 0b001011, 0b001101, 0b001110, 0b010011, 0b011001, 0b011100, 0b010101, 0b010110, 0b011010,
    ]
    /// For UPC-E with number system 0, which of the six digits use G codes, by check digit (bit 5 = first digit).
    package static let upcEParity: [UInt8] = [
        0b111000, 0b110100, 0b110010, 0b110001, 0b101100, 0b100110, 0b100011, 0b101010, 0b101001, 0b100101,
    ]

    private enum Code { case l, g, r }

    private static func appendDigit(_ digit: Int, _ code: Code, to writer: inout ModuleWriter) {
        let l = lCodes[digit]
        for bit in 0..<7 {
            switch code {
            case .l: writer.appendBits((l >> UInt8(6 - bit)) & 1 == 1 ? "1" : "0")
            case .r: writer.appendBits((l >> UInt8(6 - bit)) & 1 == 1 ? "0" : "1")
            case .g: writer.appendBits((l >> UInt8(bit)) & 1 == 1 ? "0" : "1")
            }
        }
    }

    /// The GS1 mod-10 check digit: weights 3, 1, 3, … from the rightmost data digit.
    package static func checkDigit(_ digits: [Int]) -> Int {
        var sum = 0
        for (offset, digit) in digits.reversed().enumerated() { sum += digit * (offset % 2 == 0 ? 3 : 1) }
        return (10 - sum % 10) % 10
    }

    static func name(_ symbology: Symbology) -> String {
        switch symbology {
        case .ean13: "EAN-13"
        case .ean8: "EAN-8"
        case .upcA: "UPC-A"
        default: "UPC-E"
        }
    }

    /// Digits of `payload` with the check digit appended or verified. `dataLength` excludes the check digit.
    static func digitsWithCheck(
        _ payload: [UInt8], dataLength: Int, symbology: Symbology, label: String
    ) throws(BarcodeError) -> [Int] {
        guard payload.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw BarcodeError(symbology, "\(label) payloads may contain only the digits 0-9")
        }
        guard payload.count == dataLength || payload.count == dataLength + 1 else {
            throw BarcodeError(
                symbology,
                "\(label) takes \(dataLength) digits (check digit computed) or \(dataLength + 1) digits with check digit")
        }
        var digits = payload.map { Int($0 - 0x30) }
        if digits.count == dataLength {
            digits.append(checkDigit(digits))
        } else if let given = digits.last, checkDigit(Array(digits.dropLast())) != given {
            // One digit, never the payload: naming it lets a typo be fixed without a second guess.
            throw BarcodeError(symbology, "the \(label) check digit should be \(checkDigit(Array(digits.dropLast()))), not \(given)")
        }
        return digits
    }

    static func encode(_ payload: [UInt8], as symbology: Symbology) throws(BarcodeError) -> EncodedBarcode {
        var writer = ModuleWriter(reserve: 95)
        let label = name(symbology)
        switch symbology {
        case .ean13, .upcA:
            var digits = try digitsWithCheck(
                payload, dataLength: symbology == .ean13 ? 12 : 11, symbology: symbology, label: label)
            if symbology == .upcA { digits.insert(0, at: 0) }
            writer.appendBits("101")
            let parity = ean13Parity[digits[0]]
            for i in 1...6 { appendDigit(digits[i], (parity >> UInt8(6 - i)) & 1 == 1 ? .g : .l, to: &writer) }
            writer.appendBits("01010")
            for i in 7...12 { appendDigit(digits[i], .r, to: &writer) }
            writer.appendBits("101")
            return EncodedBarcode(symbology: symbology, symbol: .linear(modules: writer.modules, heightHint: 69))
        case .ean8:
            let digits = try digitsWithCheck(payload, dataLength: 7, symbology: symbology, label: label)
            writer.appendBits("101")
            for i in 0..<4 { appendDigit(digits[i], .l, to: &writer) }
            writer.appendBits("01010")
            for i in 4..<8 { appendDigit(digits[i], .r, to: &writer) }
            writer.appendBits("101")
            return EncodedBarcode(symbology: symbology, symbol: .linear(modules: writer.modules, heightHint: 55))
        default:
            let digits = try upcEDigits(payload)
            let numberSystem = digits[0]
            let check = digits[7]
            let parity = numberSystem == 0 ? upcEParity[check] : ~upcEParity[check] & 0b111111
            writer.appendBits("101")
            for i in 1...6 { appendDigit(digits[i], (parity >> UInt8(6 - i)) & 1 == 1 ? .g : .l, to: &writer) }
            writer.appendBits("010101")
            return EncodedBarcode(symbology: symbology, symbol: .linear(modules: writer.modules, heightHint: 69))
        }
    }

    /// Number system, six digits and check digit of a UPC-E payload.
    ///
    /// Accepted forms: 6 digits (number system 0 implied, check computed), 7 digits (number system first, check
    /// computed), 8 digits (number system, six digits, check digit, which is verified).
    static func upcEDigits(_ payload: [UInt8]) throws(BarcodeError) -> [Int] {
        guard payload.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw BarcodeError(.upcE, "UPC-E payloads may contain only the digits 0-9")
        }
        guard (6...8).contains(payload.count) else {
            throw BarcodeError(
                .upcE, "UPC-E takes 6 digits, 7 digits (number system first) or 8 digits (with check digit)")
        }
        var digits = payload.map { Int($0 - 0x30) }
        if digits.count == 6 { digits.insert(0, at: 0) }
        guard digits[0] <= 1 else { throw BarcodeError(.upcE, "the UPC-E number system must be 0 or 1") }
        let check = checkDigit(Array(expandUPCE(Array(digits[0...6]))))
        if digits.count == 7 {
            digits.append(check)
        } else if digits[7] != check {
            throw BarcodeError(.upcE, "the UPC-E check digit should be \(check), not \(digits[7])")
        }
        return digits
    }

    /// The 11 data digits of the UPC-A number a UPC-E symbol stands for (zero-suppression rules).
    package static func expandUPCE(_ digits: [Int]) -> [Int] {
        let ns = digits[0]
        let d = Array(digits[1...6])
        switch d[5] {
        case 0, 1, 2: return [ns, d[0], d[1], d[5], 0, 0, 0, 0, d[2], d[3], d[4]]
        case 3: return [ns, d[0], d[1], d[2], 0, 0, 0, 0, 0, d[3], d[4]]
        case 4: return [ns, d[0], d[1], d[2], d[3], 0, 0, 0, 0, 0, d[4]]
        default: return [ns, d[0], d[1], d[2], d[3], d[4], 0, 0, 0, 0, d[5]]
        }
    }
}

extension Symbology {
    /// The digits an EAN-13, EAN-8, UPC-A or UPC-E symbol carries for `payload`: the payload with its check digit
    /// appended when it was left out (as encoding does; UPC-E also gets its number system). Nil for other
    /// symbologies, or a payload the symbology refuses.
    public func digitsWithCheckDigit(_ payload: [UInt8]) -> String? {
        let digits: [Int]?
        switch self {
        case .ean13: digits = try? EANUPC.digitsWithCheck(payload, dataLength: 12, symbology: self, label: EANUPC.name(self))
        case .ean8: digits = try? EANUPC.digitsWithCheck(payload, dataLength: 7, symbology: self, label: EANUPC.name(self))
        case .upcA: digits = try? EANUPC.digitsWithCheck(payload, dataLength: 11, symbology: self, label: EANUPC.name(self))
        case .upcE: digits = try? EANUPC.upcEDigits(payload)
        default: digits = nil
        }
        return digits.map { $0.map(String.init).joined() }
    }
}

extension Symbology {
    /// The symbology a card's payload says it is, when none is given: 13 digits with a valid check digit are EAN-13,
    /// 12 a UPC-A, 8 an EAN-8 (as retail cards print them); a link (`://`) is QR, as passes and returns show them;
    /// other printable ASCII up to 48 characters is Code 128 (a loyalty number); anything longer or beyond ASCII is QR.
    public static func suggested(for payload: [UInt8]) -> Symbology {
        if payload.allSatisfy({ (0x30...0x39).contains($0) }) {
            switch payload.count {
            case 13 where Symbology.ean13.digitsWithCheckDigit(payload) != nil: return .ean13
            case 12 where Symbology.upcA.digitsWithCheckDigit(payload) != nil: return .upcA
            case 8 where Symbology.ean8.digitsWithCheckDigit(payload) != nil: return .ean8
            default: break
            }
        }
        let link = payload.indices.dropLast(2).contains { Array(payload[$0..<$0 + 3]) == Array("://".utf8) }
        if !link, !payload.isEmpty, payload.count <= 48, payload.allSatisfy({ (0x20...0x7E).contains($0) }) { return .code128 }
        return .qr
    }
}
