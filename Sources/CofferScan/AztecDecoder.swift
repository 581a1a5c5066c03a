import CofferBarcode

extension GaloisField {
    /// The mode message's field: GF(16), polynomial x⁴ + x + 1.
    static let aztecModeMessage = GaloisField(primitive: 0x13, size: 16, generatorBase: 1)
    static let aztec6 = GaloisField(primitive: 0x43, size: 64, generatorBase: 1)
    static let aztec8 = GaloisField(primitive: 0x12D, size: 256, generatorBase: 1)
    static let aztec10 = GaloisField(primitive: 0x409, size: 1024, generatorBase: 1)
    static let aztec12 = GaloisField(primitive: 0x1069, size: 4096, generatorBase: 1)

    /// The field of an Aztec symbol's data codewords of `wordSize` bits (6, 8, 10 or 12).
    static func aztecData(wordSize: Int) -> GaloisField {
        switch wordSize {
        case 6: .aztec6
        case 8: .aztec8
        case 10: .aztec10
        default: .aztec12
        }
    }
}

/// The payload of an Aztec symbol's sampled bits (ISO/IEC 24778): the mode message (size and data codeword count,
/// Reed–Solomon over GF(16)), the data layers' codewords corrected by Reed–Solomon, bit stuffing removed, then the
/// character modes, Binary Shift, FLG(n) (FNC1 and ECI) and the structured-append header. Bytes come out as zxing-cpp
/// returns them: ECI designators dropped (the bytes are left as carried), an FNC1 in first place (GS1) dropped and
/// later ones as GS (0x1D), an FNC1 after an AIM application indicator ("A"–"Z" or two digits) dropped.
enum AztecDecoder {
    enum Outcome: Equatable {
        case payload([UInt8])
        case refused(ScanRefusal)
    }

    /// What the mode message says: the symbol's size and how many of its codewords carry data.
    struct ModeMessage {
        let symbol: AztecSymbol
        let dataWords: Int
    }

    /// Fewer check words than this cannot tell a misread symbol from a read one (every encoder adds at least three).
    static let minimumCheckWords = 3

    /// The mode message from its 28 (compact) or 40 (full) bits in drawing order; nil when it does not correct or
    /// names a symbol that cannot exist.
    static func modeMessage(_ bits: [Bool], compact: Bool) -> ModeMessage? {
        let wordCount = compact ? 7 : 10, dataCount = compact ? 2 : 4
        guard bits.count == wordCount * 4 else { return nil }
        var words = [Int](repeating: 0, count: wordCount)
        for (index, bit) in bits.enumerated() where bit { words[index / 4] |= 8 >> (index % 4) }
        guard ReedSolomonDecoder.correct(&words, checkCount: wordCount - dataCount, field: .aztecModeMessage) != nil
        else { return nil }
        var value = 0
        for word in words[0..<dataCount] { value = value << 4 | word }
        var layers: Int, dataWords: Int
        if compact {
            layers = (value >> 6) + 1
            // A reader-initialisation symbol sets the data count's top bit (only possible with one layer).
            if layers == 1 { value &= ~0x20 }
            dataWords = (value & 0x3F) + 1
        } else {
            layers = (value >> 11) + 1
            if layers <= 22 { value &= ~0x400 }
            dataWords = (value & 0x7FF) + 1
        }
        let symbol = AztecSymbol(compact: compact, layers: layers)
        guard dataWords + minimumCheckWords <= symbol.totalWords else { return nil }
        return ModeMessage(symbol: symbol, dataWords: dataWords)
    }

    /// The value of an Aztec rune (a compact core alone, its mode message carrying one byte, every word inverted in
    /// alternate bits) from the 28 mode-message bits; nil unless they are a rune's exactly: with no data layers and
    /// no data check words, a corrected rune could be a damaged ordinary symbol misread.
    static func rune(_ bits: [Bool]) -> Int? {
        guard bits.count == 28 else { return nil }
        var words = [Int](repeating: 0, count: 7)
        for (index, bit) in bits.enumerated() where bit { words[index / 4] |= 8 >> (index % 4) }
        words = words.map { $0 ^ 0b1010 }
        guard ReedSolomonDecoder.correct(&words, checkCount: 5, field: .aztecModeMessage) == 0 else { return nil }
        return words[0] << 4 | words[1]
    }

    /// A rune's payload as zxing-cpp gives it: its value in three decimal digits.
    static func runePayload(_ value: Int) -> [UInt8] {
        [UInt8(0x30 + value / 100), UInt8(0x30 + value / 10 % 10), UInt8(0x30 + value % 10)]
    }

    /// The payload of the data layers' bits (`symbol.totalBits` of them, in the order the encoder draws them).
    static func decode(_ bits: [Bool], mode: ModeMessage) -> Outcome? {
        let symbol = mode.symbol, wordSize = symbol.wordSize
        guard bits.count == symbol.totalBits else { return nil }
        let total = symbol.totalWords
        // Leftover bits (fewer than a codeword) come first.
        let offset = symbol.totalBits % wordSize
        var words = [Int](repeating: 0, count: total)
        for index in 0..<total * wordSize where bits[offset + index] {
            words[index / wordSize] |= 1 << (wordSize - 1 - index % wordSize)
        }
        guard
            ReedSolomonDecoder.correct(
                &words, checkCount: total - mode.dataWords,
                field: .aztecData(wordSize: wordSize)) != nil
        else { return nil }
        // Bit stuffing: words of all zeros or all ones are reserved; 1 and 2^n − 2 stand for n − 1 equal bits.
        let allOnes = (1 << wordSize) - 1
        var stream: [Bool] = []
        stream.reserveCapacity(mode.dataWords * wordSize)
        for word in words[0..<mode.dataWords] {
            if word == 0 || word == allOnes { return nil }
            if word == 1 || word == allOnes - 1 {
                stream += [Bool](repeating: word != 1, count: wordSize - 1)
            } else {
                for shift in stride(from: wordSize - 1, through: 0, by: -1) { stream.append((word >> shift) & 1 == 1) }
            }
        }
        return content(stream)
    }

    /// Character codes in each mode (Upper, Lower, Mixed, Punct, Digit: 32 codes each), the byte or −1, from the
    /// encoder's table.
    private static let characters: [Int] = {
        var table = [Int](repeating: -1, count: 5 * 32)
        for mode in 0..<5 {
            for byte in 0..<256 where AztecHighLevel.codes[mode][byte] >= 0 {
                table[mode * 32 + AztecHighLevel.codes[mode][byte]] = byte
            }
        }
        return table
    }()

    private static let upper = AztecHighLevel.Mode.upper.rawValue, lower = AztecHighLevel.Mode.lower.rawValue
    private static let mixed = AztecHighLevel.Mode.mixed.rawValue, punct = AztecHighLevel.Mode.punct.rawValue
    private static let digit = AztecHighLevel.Mode.digit.rawValue
    /// Binary Shift's pseudo-mode, after the five character modes.
    private static let binary = 5

    /// The mode a control code switches to in `mode`, and whether it latches (else it shifts for one character).
    private static func control(_ mode: Int, _ code: Int) -> (mode: Int, latch: Bool)? {
        switch (mode, code) {
        case (upper, 0), (lower, 0), (mixed, 0), (digit, 0): (punct, false)
        case (upper, 28), (mixed, 28): (lower, true)
        case (upper, 29), (lower, 29): (mixed, true)
        case (upper, 30), (lower, 30): (digit, true)
        case (upper, 31), (lower, 31), (mixed, 31): (binary, false)
        case (lower, 28), (digit, 15): (upper, false)
        case (mixed, 29), (punct, 31), (digit, 14): (upper, true)
        case (mixed, 30): (punct, true)
        default: nil
        }
    }

    /// Reads fixed-width fields off a bit stream.
    private struct BitReader {
        let bits: [Bool]
        var position = 0

        var remaining: Int { bits.count - position }

        /// The next `width` bits as a number; nil when fewer remain.
        mutating func read(_ width: Int) -> Int? {
            guard remaining >= width else { return nil }
            var value = 0
            for _ in 0..<width {
                value = value << 1 | (bits[position] ? 1 : 0)
                position += 1
            }
            return value
        }
    }

    /// The bytes of the high-level bit stream (zxing-cpp's reading of it, shift and latch rules included: a shift
    /// returns to the mode it was made from, even when that mode was itself entered by a shift).
    static func content(_ stream: [Bool]) -> Outcome? {
        var reader = BitReader(bits: stream)
        var bytes: [UInt8] = []
        var latched = upper, current = upper
        while reader.remaining >= (current == digit ? 4 : 5) {
            if current == binary {
                // Fewer bits than a length and a byte are padding.
                if reader.remaining <= 6 { break }
                guard var length = reader.read(5) else { return nil }
                if length == 0 {
                    guard let long = reader.read(11) else { return nil }
                    length = long + 31
                }
                for _ in 0..<length {
                    guard let byte = reader.read(8) else { return nil }
                    bytes.append(UInt8(byte))
                }
                current = latched
                continue
            }
            guard let code = reader.read(current == digit ? 4 : 5) else { return nil }
            if let target = control(current, code) {
                latched = target.latch ? target.mode : current
                current = target.mode
            } else if current == punct, code == 0 {
                // FLG(n): n = 0 is FNC1, 1–6 an ECI of n digits, 7 reserved.
                guard let flag = reader.read(3) else { return nil }
                if flag == 0 {
                    bytes.append(0x1D)
                } else if flag <= 6 {
                    for _ in 0..<flag { guard reader.read(4) != nil else { return nil } }
                }
                current = latched
            } else if current == punct, (2...5).contains(code) {
                let pair = AztecHighLevel.punctPairs[code - 2]
                bytes += [pair.0, pair.1]
                current = latched
            } else {
                let byte = characters[current * 32 + code]
                guard byte >= 0 else { return nil }
                bytes.append(UInt8(byte))
                current = latched
            }
        }
        guard !bytes.isEmpty else { return nil }
        // Structured append: the stream opens with M/L U/L, then an optional space-delimited ID, then the symbol's
        // position and the count as letters ("A" first).
        if stream.count > 20, let header = structuredAppend(bytes, stream) { return .refused(header) }
        if bytes.count > 1, bytes[0] == 0x1D {
            bytes.removeFirst()
        } else if bytes.count > 2, isUpper(bytes[0]), bytes[1] == 0x1D {
            bytes.remove(at: 1)
        } else if bytes.count > 3, isDigit(bytes[0]), isDigit(bytes[1]), bytes[2] == 0x1D {
            bytes.remove(at: 2)
        }
        return .payload(bytes)
    }

    private static func structuredAppend(_ bytes: [UInt8], _ stream: [Bool]) -> ScanRefusal? {
        var reader = BitReader(bits: stream)
        guard reader.read(5) == 29, reader.read(5) == 29 else { return nil }
        var start = 0
        if bytes[0] == 0x20 {
            guard let space = bytes[1...].firstIndex(of: 0x20) else { return nil }
            start = space + 1
        }
        guard start + 1 < bytes.count, isUpper(bytes[start]), isUpper(bytes[start + 1]) else { return nil }
        let index = Int(bytes[start] - 0x41), count = Int(bytes[start + 1] - 0x41) + 1
        // A count that cannot hold the index is unknown (zero).
        return .structuredAppend(.aztec, index: index + 1, total: count == 1 || count <= index ? nil : count)
    }

    private static func isUpper(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
}
