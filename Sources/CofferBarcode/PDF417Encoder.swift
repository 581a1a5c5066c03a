/// PDF417 encoder (ISO/IEC 15438).
public enum PDF417Encoder {
    /// Height of one PDF417 row in the returned matrix, in modules. The standard asks for at least 3.
    public static let rowHeight = 3

    /// Aspect ratio (width / height, in modules) aimed for when the caller does not fix the column count.
    static let preferredAspectRatio = 3.0

    /// Encodes `bytes` as a PDF417 symbol.
    ///
    /// Text, Byte and Numeric Compaction are mixed to keep the symbol small; bytes are carried exactly (decoders
    /// read them as ISO-8859-1 unless told otherwise).
    /// - Parameters:
    ///   - bytes: the payload.
    ///   - ecLevel: error-correction level 0–8 (2^(level+1) check codewords). `nil` picks the level ISO/IEC 15438
    ///     recommends for the data size (2 up to 40 codewords, 3 to 160, 4 to 320, 5 above), lowered only when the
    ///     payload would not fit otherwise.
    ///   - columns: data columns 1–30. `nil` picks the count whose symbol is closest to 3:1 (width:height).
    /// - Returns: the symbol without quiet zone (two modules are the minimum when rendering); every row is repeated
    ///   `rowHeight` times so that square modules give a standard-conforming row height.
    /// - Throws: `BarcodeError` for an empty payload, an out-of-range level or column count, or a payload that does
    ///   not fit (928 codewords, 90 rows).
    public static func encode(_ bytes: [UInt8], ecLevel: Int? = nil, columns: Int? = nil) throws(BarcodeError) -> BitMatrix {
        guard !bytes.isEmpty else { throw BarcodeError(.pdf417, "payload is empty") }
        if let ecLevel, !(0...8).contains(ecLevel) {
            throw BarcodeError(.pdf417, "error-correction level must be 0 to 8")
        }
        if let columns, !(1...30).contains(columns) {
            throw BarcodeError(.pdf417, "column count must be 1 to 30")
        }
        // Numeric Compaction, the densest mode, fits at most 2710 digits; longer input cannot fit at all.
        guard bytes.count <= 2710 else {
            throw BarcodeError(.pdf417, "payload exceeds the capacity of a PDF417 symbol (928 codewords)")
        }
        let data = PDF417Compaction.codewords(for: bytes)
        let (level, rows, cols) = try dimensions(dataCount: data.count + 1, level: ecLevel, columns: columns)
        let checkCount = 2 << level

        var codewords = [Int]()
        codewords.reserveCapacity(rows * cols)
        let dataSlots = rows * cols - checkCount
        codewords.append(dataSlots)
        codewords += data
        while codewords.count < dataSlots { codewords.append(PDF417Compaction.latchText) }
        codewords += PDF417ErrorCorrection.checkCodewords(for: codewords, count: checkCount)
        return draw(codewords, rows: rows, columns: cols, level: level)
    }

    /// Level, rows and columns for `dataCount` data codewords (length descriptor included). Without a requested
    /// level, the recommended one is tried first and lowered only until a layout exists.
    private static func dimensions(dataCount: Int, level requested: Int?, columns: Int?) throws(BarcodeError) -> (level: Int, rows: Int, columns: Int) {
        if let requested {
            guard let (rows, cols) = layout(codewords: dataCount + (2 << requested), columns: columns) else {
                throw BarcodeError(
                    .pdf417,
                    columns == nil
                        ? "payload exceeds the capacity of a PDF417 symbol at this error-correction level"
                        : "payload does not fit in 90 rows and 928 codewords at this column count and level")
            }
            return (requested, rows, cols)
        }
        let recommended =
            switch dataCount {
            case ...40: 2
            case ...160: 3
            case ...320: 4
            default: 5
            }
        for level in stride(from: recommended, through: 0, by: -1) {
            if let (rows, cols) = layout(codewords: dataCount + (2 << level), columns: columns) {
                return (level, rows, cols)
            }
        }
        throw BarcodeError(
            .pdf417,
            columns == nil
                ? "payload exceeds the capacity of a PDF417 symbol (928 codewords)"
                : "payload does not fit in 90 rows and 928 codewords at this column count")
    }

    /// Rows and columns holding `codewords` (data, length descriptor and check codewords) within the limits of
    /// 3–90 rows and 928 codewords; with free columns, the shape closest to the preferred aspect ratio.
    private static func layout(codewords: Int, columns: Int?) -> (rows: Int, columns: Int)? {
        func rows(for cols: Int) -> Int? {
            let r = max(3, (codewords + cols - 1) / cols)
            return r <= 90 && r * cols <= 928 ? r : nil
        }
        if let columns { return rows(for: columns).map { ($0, columns) } }
        var best: (rows: Int, columns: Int, score: Double)?
        for cols in 1...30 {
            guard let r = rows(for: cols) else { continue }
            let score = abs(Double(17 * cols + 69) / Double(r * rowHeight) - preferredAspectRatio)
            if let current = best, current.score <= score { continue }
            best = (r, cols, score)
        }
        return best.map { ($0.rows, $0.columns) }
    }

    /// 17-module patterns per cluster, decoded once from the width table.
    package static let patterns: [[UInt32]] = PDF417CodewordTable.clusters.map { widths in
        var patterns: [UInt32] = []
        patterns.reserveCapacity(929)
        var pattern: UInt32 = 0
        var element = 0
        for digit in widths.utf8 {
            let width = Int(digit - 48)
            let bar: UInt32 = element % 2 == 0 ? 1 : 0
            for _ in 0..<width { pattern = pattern << 1 | bar }
            element += 1
            if element == 8 {
                patterns.append(pattern)
                pattern = 0
                element = 0
            }
        }
        return patterns
    }

    /// Start (81111113) and stop (711311121) patterns.
    private static let start: (bits: UInt32, width: Int) = (0b1111_1111_0101_0100_0, 17)
    private static let stop: (bits: UInt32, width: Int) = (0b1111_1110_1000_1010_01, 18)

    private static func draw(_ codewords: [Int], rows: Int, columns: Int, level: Int) -> BitMatrix {
        let width = 17 * columns + 69
        var matrix = BitMatrix(width: width, height: rows * rowHeight)
        let patterns = Self.patterns
        for row in 0..<rows {
            let cluster = row % 3
            let table = patterns[cluster]
            // Row indicators carry the row count, column count and level, rotated through the three clusters.
            let base = 30 * (row / 3)
            let rowsValue = (rows - 1) / 3
            let levelValue = 3 * level + (rows - 1) % 3
            let columnsValue = columns - 1
            let (left, right) =
                switch cluster {
                case 0: (base + rowsValue, base + columnsValue)
                case 1: (base + levelValue, base + rowsValue)
                default: (base + columnsValue, base + levelValue)
                }
            var x = 0
            func put(_ bits: UInt32, _ count: Int) {
                for k in 0..<count where (bits >> UInt32(count - 1 - k)) & 1 == 1 {
                    for dy in 0..<rowHeight { matrix[x + k, row * rowHeight + dy] = true }
                }
                x += count
            }
            put(start.bits, start.width)
            put(table[left], 17)
            for column in 0..<columns { put(table[codewords[row * columns + column]], 17) }
            put(table[right], 17)
            put(stop.bits, stop.width)
        }
        return matrix
    }
}

/// Reed–Solomon over the prime field GF(929) (ISO/IEC 15438 §5.9): generator roots 3¹…3ᵏ.
package enum PDF417ErrorCorrection {
    /// Generator coefficients for each level's k = 2^(level+1), highest degree first without the leading 1.
    private static let generators: [[Int]] = (0...8).map { level in
        var poly = [1]
        var root = 1
        for _ in 0..<(2 << level) {
            root = root * 3 % 929
            var next = [Int](repeating: 0, count: poly.count + 1)
            for (j, coefficient) in poly.enumerated() {
                next[j] = (next[j] + coefficient) % 929
                next[j + 1] = (next[j + 1] + 929 - coefficient * root % 929) % 929
            }
            poly = next
        }
        return Array(poly.dropFirst())
    }

    /// Check codewords c with data·xᵏ − remainder, so the full codeword polynomial is a multiple of the generator.
    package static func checkCodewords(for data: [Int], count: Int) -> [Int] {
        let level = count.trailingZeroBitCount - 1
        let generator = generators[level]
        var remainder = [Int](repeating: 0, count: count)
        for symbol in data {
            let factor = (symbol + remainder[0]) % 929
            for j in 0..<(count - 1) {
                remainder[j] = (remainder[j + 1] + 929 - factor * generator[j] % 929) % 929
            }
            remainder[count - 1] = (929 - factor * generator[count - 1] % 929) % 929
        }
        return remainder.map { (929 - $0) % 929 }
    }
}
