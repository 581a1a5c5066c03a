import CofferBarcode

/// The payload of corrected PDF417 data codewords (ISO/IEC 15438 §5.4): the Symbol Length Descriptor, then Text
/// Compaction (four submodes, latches and shifts, Byte Shift), Byte Compaction (901 and 924: six bytes in five
/// codewords), Numeric Compaction (up to 44 digits in 15 codewords) and ECI designators (dropped: the payload is the
/// bytes as carried, which is what zxing-cpp gives). A Macro PDF417 control block makes the symbol one segment of a
/// larger message, which Coffer refuses rather than reads.
enum PDF417Decoder {
    enum Outcome: Equatable {
        case payload([UInt8])
        case refused(ScanRefusal)
    }

    private static let textLatch = 900, byteLatch = 901, numericLatch = 902, byteShift = 913
    private static let byteLatchSix = 924, eciUserDefined = 925, eciGeneral = 926, eciCharacterSet = 927
    private static let macroBegin = 928, macroOptionalField = 923, macroTerminator = 922, readerInitialise = 921

    private enum Submode { case alpha, lower, mixed, punctuation }

    /// `data` is the data region (Symbol Length Descriptor first, padding included, check codewords excluded). Nil
    /// when the codewords are not a valid message.
    static func decode(_ data: [Int]) -> Outcome? {
        guard let first = data.first, data.allSatisfy({ $0 >= 0 && $0 < 929 }) else { return nil }
        // A zero descriptor means "all of it" (zxing-cpp reads it so too); more than there is, not PDF417.
        let length = first == 0 ? data.count : first
        guard length >= 1, length <= data.count else { return nil }
        let codewords = Array(data[0..<length])
        var out: [UInt8] = []
        var index = 1
        var submode = Submode.alpha
        while index < length {
            let code = codewords[index]
            switch code {
            case textLatch:
                submode = .alpha
                index += 1
            case byteLatch, byteLatchSix:
                guard let next = bytes(codewords, from: index + 1, multipleOfSix: code == byteLatchSix, into: &out)
                else { return nil }
                index = next
            case numericLatch:
                guard let next = numeric(codewords, from: index + 1, into: &out) else { return nil }
                index = next
            case byteShift:
                guard index + 1 < length, codewords[index + 1] < 256 else { return nil }
                out.append(UInt8(codewords[index + 1]))
                index += 2
            case eciCharacterSet, eciUserDefined:
                index += 2
            case eciGeneral:
                index += 3
            case readerInitialise:
                index += 1
            case macroBegin:
                return macro(codewords, from: index + 1)
            case 0..<900:
                index = text(codewords, from: index, submode: &submode, into: &out)
            default:
                return nil
            }
        }
        // An ECI designator whose parameters run past the end is damage, not a message.
        return index == length ? .payload(out) : nil
    }

    /// Text Compaction from `start` until a codeword of another mode; the submode carries over a Byte Shift and the
    /// end of the run (a latch back to text resets it to Alpha, which the caller does).
    private static func text(_ codewords: [Int], from start: Int, submode: inout Submode, into out: inout [UInt8]) -> Int {
        var index = start
        var shifted: Submode?
        while index < codewords.count {
            let code = codewords[index]
            if code == byteShift, index + 1 < codewords.count, codewords[index + 1] < 256 {
                // A shift pending before it was padding (ISO/IEC 15438 §5.4.2.4): the byte ends it.
                shifted = nil
                out.append(UInt8(codewords[index + 1]))
                index += 2
                continue
            }
            guard code < 900 else { break }
            for value in [code / 30, code % 30] {
                let mode = shifted ?? submode
                let isShift = shifted != nil
                shifted = nil
                switch mode {
                case .alpha, .lower:
                    if value < 26 {
                        out.append(UInt8((mode == .alpha ? 65 : 97) + value))
                    } else if value == 26 {
                        out.append(32)
                    } else if isShift {
                        // A shift's target holds only letters and space here; the rest mean nothing after a shift.
                        continue
                    } else if value == 27 {
                        if mode == .alpha { submode = .lower } else { shifted = .alpha }
                    } else if value == 28 {
                        submode = .mixed
                    } else {
                        shifted = .punctuation
                    }
                case .mixed:
                    if value < 25, let character = PDF417Compaction.mixedCharacters[value] {
                        out.append(character)
                    } else if value == 26 {
                        out.append(32)
                    } else if value == 25 {
                        submode = .punctuation
                    } else if value == 27 {
                        submode = .lower
                    } else if value == 28 {
                        submode = .alpha
                    } else {
                        shifted = .punctuation
                    }
                case .punctuation:
                    if value < 29, let character = PDF417Compaction.punctuationCharacters[value] {
                        out.append(character)
                    } else {
                        // Punctuation's 29 latches to Alpha, also when it follows a shift.
                        submode = .alpha
                    }
                }
            }
            index += 1
        }
        return index
    }

    /// Byte Compaction from `start`: groups of five codewords give six bytes; with 901 a last group shorter than
    /// five codewords, or one that ends the run, is one byte a codeword. Nil when a value is out of range.
    private static func bytes(_ codewords: [Int], from start: Int, multipleOfSix: Bool, into out: inout [UInt8]) -> Int? {
        var end = start
        while end < codewords.count, codewords[end] < 900 { end += 1 }
        let count = end - start
        // With 901 the run's last codeword is never inside a group (zxing-cpp's rule: a group is converted only when
        // another codeword of the run follows it), so a run of exactly five is five single bytes.
        let groups = multipleOfSix ? count / 5 : (count > 0 ? (count - 1) / 5 : 0)
        if multipleOfSix, count % 5 != 0 { return nil }
        var index = start
        for _ in 0..<groups {
            var value: UInt64 = 0
            for k in 0..<5 { value = value * 900 + UInt64(codewords[index + k]) }
            guard value < 1 << 48 else { return nil }
            for k in 0..<6 { out.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * (5 - k)))) }
            index += 5
        }
        while index < end {
            guard codewords[index] < 256 else { return nil }
            out.append(UInt8(codewords[index]))
            index += 1
        }
        return end
    }

    /// Numeric Compaction from `start`: groups of up to 15 codewords, each a base-900 number whose decimal digits
    /// after a leading 1 are the data. Nil when a group does not start with that 1.
    private static func numeric(_ codewords: [Int], from start: Int, into out: inout [UInt8]) -> Int? {
        var index = start
        while index < codewords.count, codewords[index] < 900 {
            let end = min(index + 15, codewords.count)
            var groupEnd = index
            while groupEnd < end, codewords[groupEnd] < 900 { groupEnd += 1 }
            guard let digits = decimalDigits(codewords[index..<groupEnd]), digits.first == 1 else { return nil }
            for digit in digits.dropFirst() { out.append(48 + digit) }
            index = groupEnd
        }
        return index
    }

    /// The decimal digits of a base-900 number (most significant first), through limbs of 10⁹.
    private static func decimalDigits(_ group: ArraySlice<Int>) -> [UInt8]? {
        var limbs: [UInt64] = [0]  // least significant first
        for codeword in group {
            var carry = UInt64(codeword)
            for index in 0..<limbs.count {
                let value = limbs[index] * 900 + carry
                limbs[index] = value % 1_000_000_000
                carry = value / 1_000_000_000
            }
            while carry > 0 {
                limbs.append(carry % 1_000_000_000)
                carry /= 1_000_000_000
            }
        }
        var digits: [UInt8] = []
        for (position, limb) in limbs.reversed().enumerated() {
            var chunk: [UInt8] = []
            var value = limb
            for _ in 0..<9 {
                chunk.append(UInt8(value % 10))
                value /= 10
            }
            chunk.reverse()
            if position == 0 {
                guard let firstNonZero = chunk.firstIndex(where: { $0 != 0 }) else { return nil }
                digits += chunk[firstNonZero...]
            } else {
                digits += chunk
            }
        }
        return digits
    }

    /// The Macro PDF417 control block after 928: the segment index (two codewords, a five-digit number after the
    /// leading 1), the file ID, then optional fields, of which the segment count (923, 1, numeric) is the one Coffer
    /// reports. Segments are numbered from 0 in the symbol and from 1 in the refusal; an unknown count is 0.
    private static func macro(_ codewords: [Int], from start: Int) -> Outcome? {
        guard start + 2 <= codewords.count, codewords[start] < 900, codewords[start + 1] < 900,
            let digits = decimalDigits(codewords[start..<start + 2]), digits.first == 1
        else { return nil }
        var segment = 0
        for digit in digits.dropFirst() { segment = segment * 10 + Int(digit) }
        var index = start + 2
        while index < codewords.count, codewords[index] < 900 { index += 1 }
        var total = 0
        while index < codewords.count {
            let code = codewords[index]
            if code == macroTerminator {
                index += 1
                continue
            }
            guard code == macroOptionalField, index + 1 < codewords.count else { return nil }
            let field = codewords[index + 1]
            var end = index + 2
            while end < codewords.count, codewords[end] < 900 { end += 1 }
            if field == 1 {
                var digits: [UInt8] = []
                guard numeric(codewords, from: index + 2, into: &digits) == end, !digits.isEmpty, digits.count <= 6
                else { return nil }
                total = digits.reduce(0) { $0 * 10 + Int($1) - 48 }
            }
            index = end
        }
        guard segment < 99_999, total == 0 || segment < total else { return nil }
        return .refused(.structuredAppend(.pdf417, index: segment + 1, total: total == 0 ? nil : total))
    }
}
