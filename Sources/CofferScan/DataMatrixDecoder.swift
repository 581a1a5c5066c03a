import CofferBarcode

/// One Data Matrix ECC 200 size as the reader needs it (ISO/IEC 16022 Table 7): the squares Coffer draws and the six
/// rectangles other encoders may choose.
struct DataMatrixSize: Sendable {
    let rows: Int
    let columns: Int
    /// Data regions across and down; each has a solid edge on its left and bottom and a clock track on its top and right.
    let regionsAcross: Int
    let regionsDown: Int
    let dataCodewords: Int
    let errorCodewords: Int
    let blocks: Int

    var regionRows: Int { rows / regionsDown - 2 }
    var regionColumns: Int { columns / regionsAcross - 2 }

    static let all: [DataMatrixSize] =
        DataMatrixSymbol.all.map {
            DataMatrixSize(
                rows: $0.size, columns: $0.size, regionsAcross: $0.regionsPerSide, regionsDown: $0.regionsPerSide,
                dataCodewords: $0.dataCodewords, errorCodewords: $0.errorCodewords, blocks: $0.blocks)
        } + [
            DataMatrixSize(rows: 8, columns: 18, regionsAcross: 1, regionsDown: 1, dataCodewords: 5, errorCodewords: 7, blocks: 1),
            DataMatrixSize(rows: 8, columns: 32, regionsAcross: 2, regionsDown: 1, dataCodewords: 10, errorCodewords: 11, blocks: 1),
            DataMatrixSize(rows: 12, columns: 26, regionsAcross: 1, regionsDown: 1, dataCodewords: 16, errorCodewords: 14, blocks: 1),
            DataMatrixSize(rows: 12, columns: 36, regionsAcross: 2, regionsDown: 1, dataCodewords: 22, errorCodewords: 18, blocks: 1),
            DataMatrixSize(rows: 16, columns: 36, regionsAcross: 2, regionsDown: 1, dataCodewords: 32, errorCodewords: 24, blocks: 1),
            DataMatrixSize(rows: 16, columns: 48, regionsAcross: 2, regionsDown: 1, dataCodewords: 49, errorCodewords: 28, blocks: 1),
        ]

    /// Whether the module at (x, y), counted from the top-left, belongs to a region's finder or clock track, and its
    /// colour there: the left and bottom edges of every region are dark, the top and right alternate.
    func fixedModule(_ x: Int, _ y: Int) -> Bool? {
        let blockWidth = regionColumns + 2, blockHeight = regionRows + 2
        let inX = x % blockWidth, inY = y % blockHeight
        if inX == 0 || inY == blockHeight - 1 { return true }
        if inY == 0 { return inX % 2 == 0 }
        if inX == blockWidth - 1 { return inY % 2 == 1 }
        return nil
    }
}

/// The payload of a sampled Data Matrix module grid: the data regions joined into the mapping matrix, the codewords
/// read back along the standard's placement, blocks de-interleaved and corrected by Reed–Solomon over GF(256), then
/// the data encodation (ASCII, C40, Text, X12, EDIFACT, Base 256) decoded.
enum DataMatrixDecoder {
    enum Outcome: Equatable {
        case payload([UInt8], gs1: Bool)
        case refused(ScanRefusal)
    }

    /// `dark` holds the symbol's modules row by row (`size.rows` × `size.columns`); nil when the codewords do not
    /// correct or do not decode.
    static func decode(_ dark: [Bool], size: DataMatrixSize) -> Outcome? {
        guard let data = correctedData(dark, size: size) else { return nil }
        return Encodation.decode(data)
    }

    /// Placement maps, one per size, built once: module of the mapping matrix → codeword bit.
    private static let owners: [[Int]] = DataMatrixSize.all.map {
        DataMatrixPlacement(rows: $0.regionRows * $0.regionsDown, columns: $0.regionColumns * $0.regionsAcross).owners
    }

    /// The data codewords of a sampled grid, every block corrected; nil when one does not correct.
    static func correctedData(_ dark: [Bool], size: DataMatrixSize) -> [Int]? {
        guard let sizeIndex = DataMatrixSize.all.firstIndex(where: { $0.rows == size.rows && $0.columns == size.columns })
        else { return nil }
        let owners = owners[sizeIndex]
        let total = size.dataCodewords + size.errorCodewords
        var codewords = [Int](repeating: 0, count: total)
        let mappingColumns = size.regionColumns * size.regionsAcross
        for regionY in 0..<size.regionsDown {
            for regionX in 0..<size.regionsAcross {
                for y in 0..<size.regionRows {
                    for x in 0..<size.regionColumns {
                        let symbolX = regionX * (size.regionColumns + 2) + 1 + x
                        let symbolY = regionY * (size.regionRows + 2) + 1 + y
                        let owner = owners[(regionY * size.regionRows + y) * mappingColumns + regionX * size.regionColumns + x]
                        guard owner >= 0, owner >> 3 < total, dark[symbolY * size.columns + symbolX] else { continue }
                        codewords[owner >> 3] |= 0x80 >> (owner & 7)
                    }
                }
            }
        }
        if let data = corrected(codewords, size: size, continuingInterleave: true) { return data }
        // Symbols of 144×144 from libdmtx (and from Coffer before it followed the standard there) start the check
        // codewords' interleave again at block 0; zxing-cpp reads those too.
        return size.dataCodewords % size.blocks == 0 ? nil : corrected(codewords, size: size, continuingInterleave: false)
    }

    /// The data codewords, each block corrected; codeword p of the whole stream belongs to block p mod n (where the
    /// data does not divide evenly, the check codewords' interleave carries on from where the data's stopped).
    private static func corrected(_ codewords: [Int], size: DataMatrixSize, continuingInterleave: Bool) -> [Int]? {
        let total = codewords.count
        let blocks = size.blocks
        let checkPerBlock = size.errorCodewords / blocks
        var data = [Int](repeating: 0, count: size.dataCodewords)
        for block in 0..<blocks {
            var word: [Int] = []
            word.reserveCapacity(size.dataCodewords / blocks + 1 + checkPerBlock)
            for index in stride(from: block, to: size.dataCodewords, by: blocks) { word.append(codewords[index]) }
            let skew = continuingInterleave ? (block - size.dataCodewords % blocks + blocks) % blocks : block
            for index in stride(from: size.dataCodewords + skew, to: total, by: blocks) { word.append(codewords[index]) }
            guard word.count - checkPerBlock >= 1,
                ReedSolomonDecoder.correct(&word, checkCount: checkPerBlock, field: .dataMatrix) != nil
            else { return nil }
            for (offset, index) in stride(from: block, to: size.dataCodewords, by: blocks).enumerated() {
                data[index] = word[offset]
            }
        }
        return data
    }
}

/// ISO/IEC 16022 §5.2 data encodation, decoded. Bytes are kept as the symbol carries them: ECI designators say how to
/// read them and are not applied; FNC1 first marks GS1 data, elsewhere it is the separator GS (0x1D), as zxing-cpp
/// returns it.
private enum Encodation {
    private enum Mode { case ascii, c40, text, x12, edifact, base256 }

    static func decode(_ codewords: [Int]) -> DataMatrixDecoder.Outcome? {
        var output: [UInt8] = []
        var trailer: [UInt8] = []
        var gs1 = false
        var position = 0
        var mode = Mode.ascii
        var upperShift = false
        // A C40 or Text shift in progress (0 none, 1 to 3 the set): it may carry over into the next codeword pair.
        var shift = 0
        // Where an FNC1 means "GS1 data" rather than a separator: the first codeword, or the first after a structured-append header.
        let firstFNC1 = 0

        func emit(_ byte: Int) {
            output.append(UInt8(truncatingIfNeeded: upperShift ? byte + 128 : byte))
            upperShift = false
        }

        while position < codewords.count {
            switch mode {
            case .ascii:
                let codeword = codewords[position]
                position += 1
                switch codeword {
                case 1...128: emit(codeword - 1)
                case 129: return .payload(output + trailer, gs1: gs1)
                case 130...229:
                    let pair = codeword - 130
                    emit(48 + pair / 10)
                    emit(48 + pair % 10)
                case 230: mode = .c40
                case 231: mode = .base256
                case 232:
                    if position - 1 == firstFNC1 { gs1 = true } else { output.append(0x1D) }
                case 233:
                    guard position == 1, position + 2 < codewords.count else { return nil }
                    let sequence = codewords[position]
                    let index = sequence >> 4 + 1, total = 17 - sequence & 0x0F
                    guard total >= 2, index <= total else { return nil }
                    return .refused(.structuredAppend(.dataMatrix, index: index, total: total))
                case 234: break  // Reader programming: a flag for the reader, no data.
                case 235: upperShift = true
                case 236, 237:
                    guard position == 1 else { return nil }
                    output += Array("[)>\u{1E}0\(codeword == 236 ? 5 : 6)\u{1D}".utf8)
                    trailer = [0x1E, 0x04]
                case 238: mode = .x12
                case 239: mode = .text
                case 240: mode = .edifact
                case 241:
                    guard position < codewords.count else { return nil }
                    let first = codewords[position]
                    position += first <= 127 ? 1 : first <= 191 ? 2 : 3
                    guard position <= codewords.count else { return nil }
                default: return nil
                }
            case .c40, .text, .x12:
                // One codeword left is ASCII (the encoder may end a triplet mode without its unlatch).
                guard position + 1 < codewords.count, codewords[position] != 254 else {
                    if position < codewords.count, codewords[position] == 254 { position += 1 }
                    mode = .ascii
                    continue
                }
                let value = codewords[position] * 256 + codewords[position + 1] - 1
                position += 2
                guard value >= 0, value < 64_000 else { return nil }
                let values = [value / 1600, value / 40 % 40, value % 40]
                if mode == .x12 {
                    for value in values {
                        switch value {
                        case 0: emit(13)
                        case 1: emit(42)
                        case 2: emit(62)
                        case 3: emit(32)
                        case 4...13: emit(value + 44)
                        case 14...39: emit(value + 51)
                        default: return nil
                        }
                    }
                } else {
                    guard triplet(values, text: mode == .text, shift: &shift, output: &output, upperShift: &upperShift)
                    else { return nil }
                }
            case .edifact:
                guard codewords.count - position > 2 else {
                    mode = .ascii
                    continue
                }
                let bits = codewords[position] << 16 | codewords[position + 1] << 8 | codewords[position + 2]
                position += 3
                for index in 0..<4 {
                    let value = bits >> (18 - 6 * index) & 0x3F
                    if value == 0x1F {
                        // Unlatch: the rest of this codeword triple is padding; ASCII resumes at the next codeword
                        // boundary after the unlatch.
                        position -= 3 - (6 * (index + 1) + 7) / 8
                        mode = .ascii
                        break
                    }
                    emit(value & 0x20 == 0 ? value | 0x40 : value)
                }
            case .base256:
                var length = unrandomised(codewords[position], at: position + 1)
                position += 1
                if length == 0 {
                    length = codewords.count - position
                } else if length >= 250 {
                    guard position < codewords.count else { return nil }
                    length = 250 * (length - 249) + unrandomised(codewords[position], at: position + 1)
                    position += 1
                }
                guard length <= codewords.count - position else { return nil }
                for _ in 0..<length {
                    output.append(UInt8(unrandomised(codewords[position], at: position + 1)))
                    position += 1
                }
                mode = .ascii
            }
        }
        return .payload(output + trailer, gs1: gs1)
    }

    /// Three C40 or Text values, with the shift carried over; false on a value no set has.
    private static func triplet(_ values: [Int], text: Bool, shift: inout Int, output: inout [UInt8], upperShift: inout Bool) -> Bool {
        func emit(_ byte: Int) {
            output.append(UInt8(truncatingIfNeeded: upperShift ? byte + 128 : byte))
            upperShift = false
        }
        for value in values {
            switch shift {
            case 0:
                switch value {
                case 0...2: shift = value + 1
                case 3: emit(32)
                case 4...13: emit(value + 44)
                default: emit(value + (text ? 83 : 51))
                }
                continue
            case 1:
                emit(value)
            case 2:
                switch value {
                case 0...14: emit(value + 33)
                case 15...21: emit(value + 43)
                case 22...26: emit(value + 69)
                case 27: output.append(0x1D)
                case 30: upperShift = true
                default: return false
                }
            default:
                if text {
                    switch value {
                    case 0: emit(96)
                    case 1...26: emit(value + 64)
                    case 27...31: emit(value + 96)
                    default: return false
                    }
                } else {
                    guard value <= 31 else { return false }
                    emit(value + 96)
                }
            }
            shift = 0
        }
        return true
    }

    /// A Base 256 codeword with the 255-state randomising of its 1-based position removed.
    private static func unrandomised(_ codeword: Int, at position: Int) -> Int {
        let pseudoRandom = 149 * position % 255 + 1
        let value = codeword - pseudoRandom
        return value >= 0 ? value : value + 256
    }
}
