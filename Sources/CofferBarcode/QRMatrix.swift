/// Builds the module grid of one QR symbol: function patterns, codeword placement, masking and format bits.
package struct QRMatrixBuilder {
    let version: Int
    let size: Int
    /// 1 = dark. Row-major.
    private(set) var modules: [UInt8]
    private var isFunction: [Bool]

    package init(version: Int) {
        self.version = version
        self.size = 17 + 4 * version
        self.modules = [UInt8](repeating: 0, count: size * size)
        self.isFunction = [Bool](repeating: false, count: size * size)
    }

    private mutating func setFunction(_ x: Int, _ y: Int, _ dark: Bool) {
        modules[y * size + x] = dark ? 1 : 0
        isFunction[y * size + x] = true
    }

    package mutating func drawFunctionPatterns() {
        for i in 0..<size {
            setFunction(6, i, i % 2 == 0)
            setFunction(i, 6, i % 2 == 0)
        }
        drawFinder(centreX: 3, centreY: 3)
        drawFinder(centreX: size - 4, centreY: 3)
        drawFinder(centreX: 3, centreY: size - 4)

        let positions = QRTables.alignmentPositions(version: version)
        let last = positions.count - 1
        for (i, y) in positions.enumerated() {
            for (j, x) in positions.enumerated() {
                // The three corners that hold finder patterns get no alignment pattern.
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                for dy in -2...2 {
                    for dx in -2...2 { setFunction(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
                }
            }
        }
        // Reserve the format areas now (the real bits are drawn after masking) and draw the version blocks.
        drawFormatBits(level: .M, mask: 0)
        drawVersionBits()
    }

    private mutating func drawFinder(centreX: Int, centreY: Int) {
        for dy in -4...4 {
            for dx in -4...4 {
                let x = centreX + dx
                let y = centreY + dy
                guard x >= 0, x < size, y >= 0, y < size else { continue }
                let distance = max(abs(dx), abs(dy))
                setFunction(x, y, distance != 2 && distance != 4)
            }
        }
    }

    /// The 15-bit BCH(15,5) format word, masked with 0x5412.
    package static func formatBits(level: QRErrorCorrection, mask: Int) -> Int {
        let levelBits: Int
        switch level {
        case .L: levelBits = 1
        case .M: levelBits = 0
        case .Q: levelBits = 3
        case .H: levelBits = 2
        }
        let data = levelBits << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        return (data << 10 | remainder) ^ 0x5412
    }

    /// Where each of the 15 format bits goes, twice: (x, y, bit index).
    package var formatPositions: [(x: Int, y: Int, bit: Int)] {
        var positions: [(x: Int, y: Int, bit: Int)] = []
        positions.reserveCapacity(30)
        // Copy next to the top-left finder.
        for i in 0...5 { positions.append((8, i, i)) }
        positions += [(8, 7, 6), (8, 8, 7), (7, 8, 8)]
        for i in 9..<15 { positions.append((14 - i, 8, i)) }
        // Copy split between the top-right and bottom-left finders.
        for i in 0..<8 { positions.append((size - 1 - i, 8, i)) }
        for i in 8..<15 { positions.append((8, size - 15 + i, i)) }
        return positions
    }

    mutating func drawFormatBits(level: QRErrorCorrection, mask: Int) {
        let bits = Self.formatBits(level: level, mask: mask)
        for (x, y, bit) in formatPositions { setFunction(x, y, (bits >> bit) & 1 == 1) }
        setFunction(8, size - 8, true)
    }

    /// The 18-bit BCH(18,6) version word (versions 7 and up).
    package static func versionBits(_ version: Int) -> Int {
        var remainder = version
        for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
        return version << 12 | remainder
    }

    private mutating func drawVersionBits() {
        guard version >= 7 else { return }
        let bits = Self.versionBits(version)
        for i in 0..<18 {
            let dark = (bits >> i) & 1 == 1
            let a = size - 11 + i % 3
            let b = i / 3
            setFunction(a, b, dark)
            setFunction(b, a, dark)
        }
    }

    /// The modules that carry codeword bits (row-major indexes), in the order the bits are placed: the two-column
    /// zigzag from the bottom-right corner, skipping function patterns and the vertical timing column. Call after
    /// ``drawFunctionPatterns()``; the reader takes its bits back in this order.
    package func codewordModules() -> [Int] {
        var order: [Int] = []
        order.reserveCapacity(QRTables.rawDataModules(version: version))
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            let upward = (right + 1) & 2 == 0
            for vertical in 0..<size {
                let y = upward ? size - 1 - vertical : vertical
                for x in stride(from: right, through: right - 1, by: -1) where !isFunction[y * size + x] { order.append(y * size + x) }
            }
            right -= 2
        }
        return order
    }

    /// Places codewords in the two-column zigzag from the bottom-right corner (``codewordModules()``); modules left
    /// over stay light (the remainder bits).
    mutating func place(_ codewords: [UInt8]) {
        let totalBits = codewords.count * 8
        for (bitIndex, index) in codewordModules().enumerated() where bitIndex < totalBits {
            modules[index] = (codewords[bitIndex >> 3] >> UInt8(7 - (bitIndex & 7))) & 1
        }
    }

    /// Whether mask pattern `mask` inverts the module at column x, row y (ISO/IEC 18004 Table 10).
    package static func maskBit(_ mask: Int, x: Int, y: Int) -> Bool {
        switch mask {
        case 0: (x + y) % 2 == 0
        case 1: y % 2 == 0
        case 2: x % 3 == 0
        case 3: (x + y) % 3 == 0
        case 4: (x / 3 + y / 2) % 2 == 0
        case 5: x * y % 2 + x * y % 3 == 0
        case 6: (x * y % 2 + x * y % 3) % 2 == 0
        default: ((x + y) % 2 + x * y % 3) % 2 == 0
        }
    }

    /// Every mask repeats every 12 rows and 12 columns, so 12 row patterns and 12 column patterns per mask cover
    /// all symbol sizes: `rowPatterns[mask][y % 12]` has bit x set where the mask inverts (x, y).
    private static let rowPatterns: [[QRLine]] = (0..<8).map { mask in
        (0..<12).map { y in QRLine.repeating12 { x in maskBit(mask, x: x, y: y) } }
    }
    private static let columnPatterns: [[QRLine]] = (0..<8).map { mask in
        (0..<12).map { x in QRLine.repeating12 { y in maskBit(mask, x: x, y: y) } }
    }

    /// XORs the mask into the non-function modules.
    mutating func applyMask(_ mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !isFunction[y * size + x] && Self.maskBit(mask, x: x, y: y) {
                modules[y * size + x] ^= 1
            }
        }
    }

    /// The mask with the lowest penalty score (ties go to the lower mask number).
    ///
    /// Rows and columns are held as bit sets; each candidate is the unmasked grid XOR the mask pattern on data
    /// modules, with that mask's format bits written in, so no module grid is rebuilt per mask.
    func bestMask(level: QRErrorCorrection) -> Int {
        var baseRows = [QRLine](repeating: QRLine(), count: size)
        var baseColumns = baseRows
        var dataRows = baseRows
        var dataColumns = baseRows
        for y in 0..<size {
            for x in 0..<size {
                let index = y * size + x
                baseRows[y].set(x, modules[index])
                baseColumns[x].set(y, modules[index])
                let isData: UInt8 = isFunction[index] ? 0 : 1
                dataRows[y].set(x, isData)
                dataColumns[x].set(y, isData)
            }
        }
        let positions = formatPositions
        var best = 0
        var bestScore = Int.max
        var rows = baseRows
        var columns = baseColumns
        for mask in 0..<8 {
            let patterns = Self.rowPatterns[mask]
            let columnPatterns = Self.columnPatterns[mask]
            for i in 0..<size {
                rows[i] = baseRows[i] ^ (patterns[i % 12] & dataRows[i])
                columns[i] = baseColumns[i] ^ (columnPatterns[i % 12] & dataColumns[i])
            }
            let bits = Self.formatBits(level: level, mask: mask)
            for (x, y, bit) in positions {
                let dark = (bits >> bit) & 1 == 1
                rows[y].assign(x, dark)
                columns[x].assign(y, dark)
            }
            let score = QRPenalty.score(rows: rows, columns: columns, size: size)
            if score < bestScore {
                bestScore = score
                best = mask
            }
        }
        return best
    }

    func bitMatrix() -> BitMatrix {
        var matrix = BitMatrix(width: size, height: size)
        for y in 0..<size {
            for x in 0..<size where modules[y * size + x] == 1 { matrix[x, y] = true }
        }
        return matrix
    }
}

/// One row or column of a QR symbol as a bit set (bit i = module i, 1 = dark); up to 192 modules.
struct QRLine: Equatable {
    var a: UInt64 = 0
    var b: UInt64 = 0
    var c: UInt64 = 0

    static func & (l: QRLine, r: QRLine) -> QRLine { QRLine(a: l.a & r.a, b: l.b & r.b, c: l.c & r.c) }
    static func | (l: QRLine, r: QRLine) -> QRLine { QRLine(a: l.a | r.a, b: l.b | r.b, c: l.c | r.c) }
    static func ^ (l: QRLine, r: QRLine) -> QRLine { QRLine(a: l.a ^ r.a, b: l.b ^ r.b, c: l.c ^ r.c) }
    static prefix func ~ (l: QRLine) -> QRLine { QRLine(a: ~l.a, b: ~l.b, c: ~l.c) }

    /// Bit i takes bit i + k (1 ≤ k < 64); bits past the end become 0.
    func down(_ k: UInt64) -> QRLine {
        QRLine(a: a >> k | b << (64 - k), b: b >> k | c << (64 - k), c: c >> k)
    }

    /// Bit i takes bit i − k (1 ≤ k < 64); bits before the start become 0.
    func up(_ k: UInt64) -> QRLine {
        QRLine(a: a << k, b: b << k | a >> (64 - k), c: c << k | b >> (64 - k))
    }

    static let capacity = 192

    var popCount: Int { a.nonzeroBitCount &+ b.nonzeroBitCount &+ c.nonzeroBitCount }

    /// Sets or clears bit i.
    mutating func assign(_ i: Int, _ dark: Bool) {
        let bit = UInt64(1) << UInt64(i & 63)
        switch i >> 6 {
        case 0: a = dark ? a | bit : a & ~bit
        case 1: b = dark ? b | bit : b & ~bit
        default: c = dark ? c | bit : c & ~bit
        }
    }

    mutating func set(_ i: Int, _ bit: UInt8) {
        let value = UInt64(bit) << UInt64(i & 63)
        switch i >> 6 {
        case 0: a |= value
        case 1: b |= value
        default: c |= value
        }
    }

    /// The line whose bit i is `isSet(i % 12)`: one 12-bit period evaluated, then copied word by word.
    static func repeating12(_ isSet: (Int) -> Bool) -> QRLine {
        var period: UInt64 = 0
        for i in 0..<12 where isSet(i) { period |= 1 << UInt64(i) }
        // A 64-bit word starting at phase s of the period: the period rotated by s, laid end to end.
        func word(phase s: UInt64) -> UInt64 {
            let rotated = (period >> s | period << (12 - s)) & 0xFFF
            var word: UInt64 = 0
            for shift in stride(from: UInt64(0), to: 64, by: 12) { word |= rotated << shift }
            return word
        }
        // Words start at modules 0, 64 and 128, which are phases 0, 4 and 8 of the period.
        return QRLine(a: word(phase: 0), b: word(phase: 4), c: word(phase: 8))
    }

    /// Bits 0..<count set.
    static func first(_ count: Int) -> QRLine {
        var line = QRLine()
        for i in 0..<count { line.set(i, 1) }
        return line
    }
}

/// The four penalty rules of ISO/IEC 18004 §7.8.3, evaluated on bit sets 64 modules at a time.
enum QRPenalty {
    /// Score of a module grid (1 = dark, row-major).
    static func score(_ modules: [UInt8], size: Int) -> Int {
        var rows = [QRLine](repeating: QRLine(), count: size)
        var columns = rows
        for y in 0..<size {
            for x in 0..<size {
                rows[y].set(x, modules[y * size + x])
                columns[x].set(y, modules[y * size + x])
            }
        }
        return score(rows: rows, columns: columns, size: size)
    }

    /// Score of a symbol given as its rows and, transposed, its columns.
    static func score(rows: [QRLine], columns: [QRLine], size: Int) -> Int {
        let valid = QRLine.first(size)
        var total = 0
        var dark = 0
        for i in 0..<size {
            total &+= lineScore(rows[i], valid: valid)
            total &+= lineScore(columns[i], valid: valid)
            dark &+= rows[i].popCount
        }
        // Rule 2: 3 points per 2 × 2 block of one colour (overlapping blocks each count).
        let pairs = valid & valid.down(1)
        for y in 0..<(size - 1) {
            let same = ~(rows[y] ^ rows[y + 1])
            let flat = ~(rows[y] ^ rows[y].down(1))
            total &+= (same & same.down(1) & flat & pairs).popCount &* 3
        }
        // Rule 4: 10 points per full 5 % step of the dark proportion away from 50 %.
        let cells = size * size
        return total &+ abs(dark &* 2 &- cells) &* 10 / cells &* 10
    }

    /// Rules 1 and 3 for one line.
    ///
    /// Rule 1 (a run of n ≥ 5 same-coloured modules scores n − 2) counts the five-module windows of one colour
    /// (n − 4 per run) plus 2 for the first window of each run. Rule 3 scores 40 for each 1:1:3:1:1 dark-light
    /// core with four light modules before or after it; outside the symbol is light, as the quiet zone is.
    static func lineScore(_ dark: QRLine, valid: QRLine) -> Int {
        let light = ~dark & valid
        let darkRun = dark & dark.down(1) & dark.down(2) & dark.down(3) & dark.down(4)
        let lightRun = light & light.down(1) & light.down(2) & light.down(3) & light.down(4)
        let windows = darkRun | lightRun
        let firstWindows = windows & ~windows.up(1)
        let core = dark & light.down(1) & dark.down(2) & dark.down(3) & dark.down(4) & light.down(5) & dark.down(6)
        let lightBefore = ~(dark.up(1) | dark.up(2) | dark.up(3) | dark.up(4))
        let lightAfter = ~(dark.down(7) | dark.down(8) | dark.down(9) | dark.down(10))
        return windows.popCount &+ firstWindows.popCount &* 2 &+ (core & (lightBefore | lightAfter)).popCount &* 40
    }
}
