/// Capacity tables of ISO/IEC 18004 (Table 9), indexed `[level.ordinal][version]`; index 0 is unused.
package enum QRTables {
    /// Error-correction codewords in each block.
    package static let eccPerBlock: [[Int]] = [
        [
            0, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28, 28, 28, 30, 30, 26, 28, 30,
            30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
        [
            0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28, 28, 28, 28, 28,
            28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
        ],
        [
            0, 13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30, 28, 30, 30, 30, 30, 28, 30,
            30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
        [
            0, 17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28, 30, 24, 30, 30, 30, 30, 30,
            30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
        ],
    ]

    /// Number of error-correction blocks.
    package static let blockCount: [[Int]] = [
        [
            0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8, 8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18,
            19, 19, 20, 21, 22, 24, 25,
        ],
        [
            0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29,
            31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
        ],
        [
            0, 1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20, 23, 23, 25, 27, 29, 34, 34, 35, 38, 40,
            43, 45, 48, 51, 53, 56, 59, 62, 65, 68,
        ],
        [
            0, 1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25, 25, 34, 30, 32, 35, 37, 40, 42, 45, 48,
            51, 54, 57, 60, 63, 66, 70, 74, 77, 81,
        ],
    ]

    /// Modules available for codewords and remainder bits once function patterns are placed.
    package static func rawDataModules(version: Int) -> Int {
        var result = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            result -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { result -= 36 }
        }
        return result
    }

    /// Data codewords (excluding error correction) of a symbol.
    static func dataCodewords(version: Int, level: QRErrorCorrection) -> Int {
        rawDataModules(version: version) / 8
            - eccPerBlock[level.ordinal][version] * blockCount[level.ordinal][version]
    }

    /// Centre coordinates of alignment patterns along one axis (Annex E), in ascending order.
    package static func alignmentPositions(version: Int) -> [Int] {
        guard version >= 2 else { return [] }
        let count = version / 7 + 2
        let step = (version * 8 + count * 3 + 5) / (count * 4 - 4) * 2
        var positions = [6]
        var position = 17 + 4 * version - 7
        var tail: [Int] = []
        for _ in 0..<(count - 1) {
            tail.append(position)
            position -= step
        }
        positions.append(contentsOf: tail.reversed())
        return positions
    }

    /// Character-count indicator width for numeric, alphanumeric and byte mode.
    static func countBits(_ mode: QRMode, version: Int) -> Int {
        let range = version <= 9 ? 0 : (version <= 26 ? 1 : 2)
        switch mode {
        case .numeric: return [10, 12, 14][range]
        case .alphanumeric: return [9, 11, 13][range]
        case .byte: return [8, 16, 16][range]
        }
    }

    /// Value of each byte in alphanumeric mode, or -1 when the byte is not in the 45-character set.
    static let alphanumericValue: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (index, byte) in Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".utf8).enumerated() {
            table[Int(byte)] = Int8(index)
        }
        return table
    }()
}

/// Data-encoding modes used by the encoder (Kanji is not needed for byte payloads).
enum QRMode: Int, Sendable {
    case numeric = 0
    case alphanumeric = 1
    case byte = 2

    var indicator: UInt32 {
        switch self {
        case .numeric: 0b0001
        case .alphanumeric: 0b0010
        case .byte: 0b0100
        }
    }
}
