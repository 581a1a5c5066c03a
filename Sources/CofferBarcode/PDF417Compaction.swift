/// PDF417 high-level encoding (ISO/IEC 15438 §5.4): turns payload bytes into data codewords using Text, Byte and
/// Numeric Compaction. The mode is chosen run by run as the standard's Annex N suggests: 13 or more digits go to
/// Numeric, 5 or more text characters to Text, anything else to Byte; a single byte inside text uses Byte Shift.
/// The work is linear in the payload length.
package enum PDF417Compaction {
    static let latchText = 900
    static let latchByte = 901
    static let latchNumeric = 902
    static let shiftByte = 913
    static let latchByteMultipleOf6 = 924

    private enum Mode { case text, byte, numeric }

    enum TextSubmode { case alpha, lower, mixed, punctuation }

    /// The data codewords for `bytes` (without Symbol Length Descriptor, padding or error correction).
    static func codewords(for bytes: [UInt8]) -> [Int] {
        var out: [Int] = []
        out.reserveCapacity(bytes.count)
        var mode = Mode.text
        var submode = TextSubmode.alpha
        var position = 0
        while position < bytes.count {
            let digits = digitRun(bytes, from: position)
            if digits >= 13 {
                out.append(latchNumeric)
                appendNumeric(bytes[position..<(position + digits)], to: &out)
                mode = .numeric
                position += digits
                continue
            }
            let text = textRun(bytes, from: position)
            if text >= 5 || (text > 0 && position + text == bytes.count) {
                if mode != .text {
                    out.append(latchText)
                    submode = .alpha
                    mode = .text
                }
                submode = appendText(bytes[position..<(position + text)], submode: submode, to: &out)
                position += text
                continue
            }
            let count = max(1, byteRun(bytes, from: position))
            if count == 1 && mode == .text {
                out.append(shiftByte)
                out.append(Int(bytes[position]))
            } else {
                out.append(count % 6 == 0 ? latchByteMultipleOf6 : latchByte)
                appendBytes(bytes[position..<(position + count)], to: &out)
                mode = .byte
            }
            position += count
        }
        return out
    }

    // MARK: - Run detection

    private static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }

    /// Characters Text Compaction can represent: printable ASCII plus HT, LF and CR.
    private static func isText(_ c: UInt8) -> Bool { (c >= 32 && c <= 126) || c == 9 || c == 10 || c == 13 }

    private static func digitRun(_ bytes: [UInt8], from start: Int) -> Int {
        var end = start
        while end < bytes.count && isDigit(bytes[end]) { end += 1 }
        return end - start
    }

    /// Text characters from `start`, stopping before a digit run long enough for Numeric Compaction.
    private static func textRun(_ bytes: [UInt8], from start: Int) -> Int {
        var end = start
        while end < bytes.count {
            let digits = digitRun(bytes, from: end)
            if digits >= 13 { break }
            if digits > 0 {
                end += digits
                continue
            }
            guard isText(bytes[end]) else { break }
            end += 1
        }
        return end - start
    }

    /// Bytes from `start` until a run that Numeric (13+ digits) or Text (5+ characters) would encode better.
    private static func byteRun(_ bytes: [UInt8], from start: Int) -> Int {
        var end = start
        while end < bytes.count {
            if digitRun(bytes, from: end) >= 13 { break }
            if isText(bytes[end]) {
                // Only a short look-ahead is needed: five text characters end the run.
                var look = end
                while look < bytes.count && look - end < 5 && isText(bytes[look]) { look += 1 }
                if look - end >= 5 { break }
            }
            end += 1
        }
        return end - start
    }

    // MARK: - Text Compaction

    /// Value of `c` in each submode's table, or nil when the submode cannot represent it (ISO/IEC 15438 Table 2).
    private static let alphaValues = table { c in
        switch c {
        case 65...90: Int(c) - 65
        case 32: 26
        default: nil
        }
    }

    private static let lowerValues = table { c in
        switch c {
        case 97...122: Int(c) - 97
        case 32: 26
        default: nil
        }
    }

    /// The Mixed submode's characters by value (nil where the value is a latch); the reader decodes with it.
    package static let mixedCharacters: [UInt8?] = [
        48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 38, 13, 9, 44, 58, 35, 45, 46, 36, 47, 43, 37, 42, 61, 94, nil, 32,
    ]

    /// The Punctuation submode's characters by value; the reader decodes with it.
    package static let punctuationCharacters: [UInt8?] = [
        59, 60, 62, 64, 91, 92, 93, 95, 96, 126, 33, 13, 9, 44, 58, 10, 45, 46, 36, 47, 34, 124, 42, 40, 41, 63, 123,
        125, 39,
    ]

    private static let mixedValues = table(from: mixedCharacters)

    private static let punctuationValues = table(from: punctuationCharacters)

    private static func table(_ value: (UInt8) -> Int?) -> [Int?] {
        (0...255).map { value(UInt8($0)) }
    }

    /// Inverts a submode's character list (index = value) into a byte → value lookup.
    private static func table(from characters: [UInt8?]) -> [Int?] {
        var lookup = [Int?](repeating: nil, count: 256)
        for (value, character) in characters.enumerated() {
            if let character { lookup[Int(character)] = value }
        }
        return lookup
    }

    // Submode switch values (latches ll/ml/al/pl, shifts ps/as).
    private static let ll = 27, ml = 28, ps = 29, alphaShift = 27, al = 28, pl = 25, punctuationAL = 29

    /// Appends Text Compaction codewords for `text` and returns the submode the decoder is left in.
    private static func appendText(_ text: ArraySlice<UInt8>, submode start: TextSubmode, to out: inout [Int]) -> TextSubmode {
        var values: [Int] = []
        values.reserveCapacity(text.count * 2)
        var submode = start
        var index = text.startIndex
        while index < text.endIndex {
            let c = Int(text[index])
            switch submode {
            case .alpha:
                if let v = alphaValues[c] {
                    values.append(v)
                    index += 1
                } else if lowerValues[c] != nil {
                    values.append(ll)
                    submode = .lower
                } else if mixedValues[c] != nil {
                    values.append(ml)
                    submode = .mixed
                } else {
                    values.append(ps)
                    values.append(punctuationValues[c] ?? 0)
                    index += 1
                }
            case .lower:
                if let v = lowerValues[c] {
                    values.append(v)
                    index += 1
                } else if let v = alphaValues[c] {
                    values.append(alphaShift)
                    values.append(v)
                    index += 1
                } else if mixedValues[c] != nil {
                    values.append(ml)
                    submode = .mixed
                } else {
                    values.append(ps)
                    values.append(punctuationValues[c] ?? 0)
                    index += 1
                }
            case .mixed:
                if let v = mixedValues[c] {
                    values.append(v)
                    index += 1
                } else if alphaValues[c] != nil {
                    values.append(al)
                    submode = .alpha
                } else if lowerValues[c] != nil {
                    values.append(ll)
                    submode = .lower
                } else if index + 1 < text.endIndex, mixedValues[Int(text[index + 1])] == nil, punctuationValues[Int(text[index + 1])] != nil {
                    values.append(pl)
                    submode = .punctuation
                } else {
                    values.append(ps)
                    values.append(punctuationValues[c] ?? 0)
                    index += 1
                }
            case .punctuation:
                if let v = punctuationValues[c] {
                    values.append(v)
                    index += 1
                } else {
                    values.append(punctuationAL)
                    submode = .alpha
                }
            }
        }
        if values.count % 2 == 1 {
            // The filler is ps in the letter/mixed submodes (a shift with nothing after it is ignored) and al in
            // punctuation, which really switches the decoder to alpha.
            values.append(ps)
            if submode == .punctuation { submode = .alpha }
        }
        var k = 0
        while k < values.count {
            out.append(30 * values[k] + values[k + 1])
            k += 2
        }
        return submode
    }

    // MARK: - Byte Compaction

    /// Six bytes become five base-900 codewords; a tail shorter than six is written one byte per codeword.
    private static func appendBytes(_ bytes: ArraySlice<UInt8>, to out: inout [Int]) {
        var index = bytes.startIndex
        while bytes.endIndex - index >= 6 {
            var value: UInt64 = 0
            for k in 0..<6 { value = value << 8 | UInt64(bytes[index + k]) }
            var group = [Int](repeating: 0, count: 5)
            for k in stride(from: 4, through: 0, by: -1) {
                group[k] = Int(value % 900)
                value /= 900
            }
            out += group
            index += 6
        }
        while index < bytes.endIndex {
            out.append(Int(bytes[index]))
            index += 1
        }
    }

    // MARK: - Numeric Compaction

    /// Groups of up to 44 digits, each prefixed with a 1 and converted to base 900 (most significant first).
    private static func appendNumeric(_ digits: ArraySlice<UInt8>, to out: inout [Int]) {
        var index = digits.startIndex
        while index < digits.endIndex {
            let end = min(index + 44, digits.endIndex)
            // Decimal digits of "1" followed by the group; long division by 900 peels off base-900 digits.
            var decimal = [1] + digits[index..<end].map { Int($0) - 48 }
            var group: [Int] = []
            while !(decimal.count == 1 && decimal[0] == 0) {
                var remainder = 0
                var quotient: [Int] = []
                quotient.reserveCapacity(decimal.count)
                for d in decimal {
                    let current = remainder * 10 + d
                    let q = current / 900
                    remainder = current % 900
                    if !quotient.isEmpty || q != 0 { quotient.append(q) }
                }
                group.append(remainder)
                decimal = quotient.isEmpty ? [0] : quotient
            }
            out += group.reversed()
            index = end
        }
    }
}
