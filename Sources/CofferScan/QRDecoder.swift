import CofferBarcode

/// Why a symbol that was found and decoded is not returned as a read.
public enum ScanRefusal: Sendable, Equatable {
    /// One symbol of a message spread over several (QR and Data Matrix structured append, Macro PDF417, Aztec
    /// structured append): part `index` (from 1) of `total`, when the symbol says how many there are. Coffer keeps
    /// one code an item and does not join parts.
    case structuredAppend(Symbology, index: Int, total: Int?)
}

/// The payload of a sampled QR module grid (ISO/IEC 18004): format and version information by nearest BCH word,
/// unmasking, codewords in placement order, blocks de-interleaved and corrected by Reed–Solomon, then the segments.
enum QRDecoder {
    enum Outcome: Equatable {
        case payload([UInt8])
        case refused(ScanRefusal)
        /// The version information names another size: sample again at this dimension.
        case otherDimension(Int)
        /// Both copies of the format information read as the same word (so this is very likely a QR symbol at
        /// this size) but the codewords do not correct: the grid may be placed a little off.
        case uncorrectable
    }

    /// All 32 format words, for the nearest-word search: (word, level, mask).
    private static let formatWords: [(word: Int, level: QRErrorCorrection, mask: Int)] = QRErrorCorrection.allCases.flatMap { level in
        (0..<8).map { mask in (QRMatrixBuilder.formatBits(level: level, mask: mask), level, mask) }
    }

    /// `dark[y * dimension + x]` for each module; nil when the grid is not a readable QR symbol.
    static func decode(_ dark: [Bool], dimension: Int) -> Outcome? {
        guard dimension >= 21, dimension <= 177, (dimension - 17) % 4 == 0, dark.count == dimension * dimension else { return nil }
        var version = (dimension - 17) / 4
        if version >= 7 {
            guard let read = readVersion(dark, dimension: dimension) else { return nil }
            if read != version { return .otherDimension(17 + 4 * read) }
            version = read
        }
        guard let (level, mask, copiesAgree) = readFormat(dark, dimension: dimension) else { return nil }

        var builder = QRMatrixBuilder(version: version)
        builder.drawFunctionPatterns()
        let order = builder.codewordModules()
        let total = QRTables.rawDataModules(version: version) / 8
        var codewords = [Int](repeating: 0, count: total)
        for bit in 0..<total * 8 {
            let module = order[bit]
            let x = module % dimension, y = module / dimension
            if dark[module] != QRMatrixBuilder.maskBit(mask, x: x, y: y) { codewords[bit >> 3] |= 0x80 >> (bit & 7) }
        }
        // One copy alone lands within 3 bits of some format word for over half of all noise, so only two copies
        // that agree are worth the caller's search for a better-placed grid.
        guard let data = correctBlocks(codewords, version: version, level: level) else { return copiesAgree ? .uncorrectable : nil }
        return segments(data, version: version)
    }

    /// The version from either copy of its 18-bit BCH word (the nearest valid word within 3 bits).
    private static func readVersion(_ dark: [Bool], dimension: Int) -> Int? {
        var first = 0, second = 0
        for index in 0..<18 {
            let a = dimension - 11 + index % 3, b = index / 3
            if dark[b * dimension + a] { first |= 1 << index }
            if dark[a * dimension + b] { second |= 1 << index }
        }
        var best: (distance: Int, version: Int)?
        for version in 7...40 {
            let word = QRMatrixBuilder.versionBits(version)
            let distance = min((word ^ first).nonzeroBitCount, (word ^ second).nonzeroBitCount)
            if best == nil || distance < best!.distance { best = (distance, version) }
        }
        guard let best, best.distance <= 3 else { return nil }
        return best.version
    }

    /// The error-correction level and mask from either copy of the 15-bit format word (nearest within 3 bits), and
    /// whether the other copy is within 3 bits of the same word.
    private static func readFormat(_ dark: [Bool], dimension: Int) -> (QRErrorCorrection, Int, Bool)? {
        let positions = QRMatrixBuilder(version: (dimension - 17) / 4).formatPositions
        var copies = [0, 0]
        for (index, position) in positions.enumerated() where dark[position.y * dimension + position.x] {
            copies[index / 15] |= 1 << position.bit
        }
        var best: (distance: Int, level: QRErrorCorrection, mask: Int)?
        for candidate in formatWords {
            let distance = min((candidate.word ^ copies[0]).nonzeroBitCount, (candidate.word ^ copies[1]).nonzeroBitCount)
            if best == nil || distance < best!.distance { best = (distance, candidate.level, candidate.mask) }
        }
        guard let best, best.distance <= 3 else { return nil }
        let word = QRMatrixBuilder.formatBits(level: best.level, mask: best.mask)
        let copiesAgree = (word ^ copies[0]).nonzeroBitCount <= 3 && (word ^ copies[1]).nonzeroBitCount <= 3
        return (best.level, best.mask, copiesAgree)
    }

    /// The data codewords, blocks de-interleaved (data round-robin, short blocks first, then check words) and each
    /// corrected; nil when any block cannot be.
    private static func correctBlocks(_ codewords: [Int], version: Int, level: QRErrorCorrection) -> [UInt8]? {
        let blocks = QRTables.blockCount[level.ordinal][version]
        let checkCount = QRTables.eccPerBlock[level.ordinal][version]
        let total = codewords.count
        let shortBlocks = blocks - total % blocks
        let shortData = total / blocks - checkCount
        var split = (0..<blocks).map { block in [Int](repeating: 0, count: shortData + (block < shortBlocks ? 0 : 1) + checkCount) }
        var index = 0
        for position in 0...shortData {
            for block in 0..<blocks where position < shortData || block >= shortBlocks {
                split[block][position] = codewords[index]
                index += 1
            }
        }
        for position in 0..<checkCount {
            for block in 0..<blocks {
                split[block][split[block].count - checkCount + position] = codewords[index]
                index += 1
            }
        }
        var data: [UInt8] = []
        for var block in split {
            guard ReedSolomonDecoder.correct(&block, checkCount: checkCount, field: .qr) != nil else { return nil }
            data += block[0..<block.count - checkCount].map { UInt8($0) }
        }
        return data
    }

    // MARK: Segments

    private struct Bits {
        let bytes: [UInt8]
        var position = 0
        var remaining: Int { bytes.count * 8 - position }

        mutating func read(_ count: Int) -> Int? {
            guard count <= remaining else { return nil }
            var value = 0
            for _ in 0..<count {
                value = value << 1 | Int(bytes[position >> 3] >> UInt8(7 - position & 7)) & 1
                position += 1
            }
            return value
        }
    }

    private static let alphanumeric = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".utf8)

    /// The bytes the segments carry. Kanji and Hanzi segments become their Shift JIS and GB 2312 bytes; ECI
    /// designators only say how to read the bytes, so the bytes are kept as they are; in GS1 mode (FNC1 first) a `%`
    /// in alphanumeric mode is the group separator 0x1D and `%%` a percent sign.
    private static func segments(_ data: [UInt8], version: Int) -> Outcome? {
        var bits = Bits(bytes: data)
        var payload: [UInt8] = []
        let range = version <= 9 ? 0 : version <= 26 ? 1 : 2
        var gs1 = false
        while bits.remaining >= 4 {
            guard let mode = bits.read(4) else { return nil }
            switch mode {
            case 0:
                return payload.isEmpty ? nil : .payload(payload)
            case 1:
                guard var count = bits.read([10, 12, 14][range]) else { return nil }
                while count > 0 {
                    let digits = min(3, count)
                    guard let value = bits.read([4, 7, 10][digits - 1]), value < [10, 100, 1000][digits - 1] else { return nil }
                    var text: [UInt8] = []
                    var rest = value
                    for _ in 0..<digits {
                        text.insert(UInt8(0x30 + rest % 10), at: 0)
                        rest /= 10
                    }
                    payload += text
                    count -= digits
                }
            case 2:
                guard var count = bits.read([9, 11, 13][range]) else { return nil }
                var text: [UInt8] = []
                while count > 0 {
                    if count >= 2 {
                        guard let value = bits.read(11), value < 45 * 45 else { return nil }
                        text += [alphanumeric[value / 45], alphanumeric[value % 45]]
                        count -= 2
                    } else {
                        guard let value = bits.read(6), value < 45 else { return nil }
                        text.append(alphanumeric[value])
                        count -= 1
                    }
                }
                if gs1 {
                    var index = 0
                    while index < text.count {
                        if text[index] == 0x25 {
                            if index + 1 < text.count, text[index + 1] == 0x25 {
                                payload.append(0x25)
                                index += 2
                                continue
                            }
                            payload.append(0x1D)
                        } else {
                            payload.append(text[index])
                        }
                        index += 1
                    }
                } else {
                    payload += text
                }
            case 4:
                guard let count = bits.read([8, 16, 16][range]) else { return nil }
                for _ in 0..<count {
                    guard let byte = bits.read(8) else { return nil }
                    payload.append(UInt8(byte))
                }
            case 8:
                guard let count = bits.read([8, 10, 12][range]) else { return nil }
                for _ in 0..<count {
                    guard let value = bits.read(13) else { return nil }
                    var assembled = (value / 0xC0) << 8 | (value % 0xC0)
                    assembled += assembled < 0x1F00 ? 0x8140 : 0xC140
                    guard assembled <= 0xFFFF else { return nil }
                    payload += [UInt8(assembled >> 8), UInt8(assembled & 0xFF)]
                }
            case 13:
                guard let subset = bits.read(4), subset == 1, let count = bits.read([8, 10, 12][range]) else { return nil }
                for _ in 0..<count {
                    guard let value = bits.read(13) else { return nil }
                    var assembled = (value / 0x60) << 8 | (value % 0x60)
                    assembled += assembled < 0x0A00 ? 0xA1A1 : 0xA6A1
                    guard assembled <= 0xFFFF else { return nil }
                    payload += [UInt8(assembled >> 8), UInt8(assembled & 0xFF)]
                }
            case 7:
                guard let first = bits.read(8) else { return nil }
                if first & 0x80 != 0 {
                    let more = first & 0xC0 == 0x80 ? 8 : first & 0xE0 == 0xC0 ? 16 : -1
                    guard more > 0, bits.read(more) != nil else { return nil }
                }
            case 3:
                guard let index = bits.read(4), let last = bits.read(4), bits.read(8) != nil else { return nil }
                return .refused(.structuredAppend(.qr, index: index + 1, total: last + 1))
            case 5:
                gs1 = true
            case 9:
                guard bits.read(8) != nil else { return nil }
            default:
                return nil
            }
        }
        return payload.isEmpty ? nil : .payload(payload)
    }
}
