/// Data Matrix ECC 200 encoder (ISO/IEC 16022), square symbols 10×10 to 144×144.
public enum DataMatrixEncoder {
    /// The largest payload accepted before encodation is attempted; every byte costs at least half a codeword and the
    /// largest symbol holds 1558 data codewords, so anything longer cannot fit.
    static let maximumInputLength = 3116

    /// Encodes `bytes` into the smallest square ECC 200 symbol that holds them.
    ///
    /// Encodation mixes ASCII (digit pairs, Upper Shift for bytes ≥ 128), C40, Text and Base 256 to minimise the
    /// codeword count; bytes are carried exactly (no character-set conversion).
    /// - Parameters:
    ///   - bytes: the payload. For GS1 it is the element string with GS (0x1D) between variable-length fields and no
    ///     leading FNC1 (the encoder adds it).
    ///   - gs1: mark the symbol as GS1 Data Matrix (leading FNC1, GS encoded as FNC1).
    /// - Returns: the symbol's modules, without quiet zone (one module of quiet zone is the minimum when rendering).
    /// - Throws: `BarcodeError` for an empty payload, a GS1 payload with characters GS1 does not allow, or a payload
    ///   that does not fit the largest symbol.
    public static func encode(_ bytes: [UInt8], gs1: Bool = false) throws(BarcodeError) -> BitMatrix {
        let symbology: Symbology = gs1 ? .gs1DataMatrix : .dataMatrix
        guard !bytes.isEmpty else { throw BarcodeError(symbology, "payload is empty") }
        if gs1 { try validateGS1(bytes) }
        guard bytes.count <= maximumInputLength else {
            throw BarcodeError(symbology, "payload exceeds the capacity of the largest symbol (144x144)")
        }
        // The cheapest stream, and the one that would be cheapest if it could end without its final unlatch; the
        // second wins only when it exactly fills a smaller symbol.
        var best: (data: [Int], symbol: DataMatrixSymbol)?
        for encodation in DataMatrixEncodation.candidates(bytes, gs1: gs1) {
            let count = encodation.codewords.count
            guard
                let symbol = DataMatrixSymbol.all.first(where: { symbol in
                    count <= symbol.dataCodewords
                        || (encodation.trailingUnlatchIsOptional && count - 1 == symbol.dataCodewords)
                })
            else { continue }
            if let current = best, current.symbol.size <= symbol.size { continue }
            best = (encodation.codewords, symbol)
        }
        guard let best else {
            throw BarcodeError(symbology, "payload exceeds the capacity of the largest symbol (144x144)")
        }
        var data = best.data
        let symbol = best.symbol
        if data.count > symbol.dataCodewords { data.removeLast() }
        if data.count < symbol.dataCodewords {
            data.append(DataMatrixEncodation.asciiPad)
            while data.count < symbol.dataCodewords {
                data.append(DataMatrixEncodation.randomisedPad(position: data.count + 1))
            }
        }
        return symbol.draw(codewords: symbol.withErrorCorrection(data))
    }

    /// GS1 element strings use a subset of printable ASCII; GS separates variable-length fields and cannot lead.
    private static func validateGS1(_ bytes: [UInt8]) throws(BarcodeError) {
        if bytes.first == 0x1D {
            throw BarcodeError(.gs1DataMatrix, "GS1 data must not start with a GS separator (FNC1 is added)")
        }
        if bytes.contains(where: { !($0 == 0x1D || (0x21...0x7E).contains($0)) }) {
            throw BarcodeError(
                .gs1DataMatrix, "GS1 data must be printable ASCII without spaces, with GS (0x1D) as separator")
        }
    }
}

/// One square ECC 200 symbol size (ISO/IEC 16022 Table 7).
package struct DataMatrixSymbol: Sendable {
    package let size: Int
    package let regionSize: Int
    package let regionsPerSide: Int
    package let dataCodewords: Int
    package let errorCodewords: Int
    package let blocks: Int

    package static let all: [DataMatrixSymbol] = [
        .init(size: 10, regionSize: 8, regionsPerSide: 1, dataCodewords: 3, errorCodewords: 5, blocks: 1),
        .init(size: 12, regionSize: 10, regionsPerSide: 1, dataCodewords: 5, errorCodewords: 7, blocks: 1),
        .init(size: 14, regionSize: 12, regionsPerSide: 1, dataCodewords: 8, errorCodewords: 10, blocks: 1),
        .init(size: 16, regionSize: 14, regionsPerSide: 1, dataCodewords: 12, errorCodewords: 12, blocks: 1),
        .init(size: 18, regionSize: 16, regionsPerSide: 1, dataCodewords: 18, errorCodewords: 14, blocks: 1),
        .init(size: 20, regionSize: 18, regionsPerSide: 1, dataCodewords: 22, errorCodewords: 18, blocks: 1),
        .init(size: 22, regionSize: 20, regionsPerSide: 1, dataCodewords: 30, errorCodewords: 20, blocks: 1),
        .init(size: 24, regionSize: 22, regionsPerSide: 1, dataCodewords: 36, errorCodewords: 24, blocks: 1),
        .init(size: 26, regionSize: 24, regionsPerSide: 1, dataCodewords: 44, errorCodewords: 28, blocks: 1),
        .init(size: 32, regionSize: 14, regionsPerSide: 2, dataCodewords: 62, errorCodewords: 36, blocks: 1),
        .init(size: 36, regionSize: 16, regionsPerSide: 2, dataCodewords: 86, errorCodewords: 42, blocks: 1),
        .init(size: 40, regionSize: 18, regionsPerSide: 2, dataCodewords: 114, errorCodewords: 48, blocks: 1),
        .init(size: 44, regionSize: 20, regionsPerSide: 2, dataCodewords: 144, errorCodewords: 56, blocks: 1),
        .init(size: 48, regionSize: 22, regionsPerSide: 2, dataCodewords: 174, errorCodewords: 68, blocks: 1),
        .init(size: 52, regionSize: 24, regionsPerSide: 2, dataCodewords: 204, errorCodewords: 84, blocks: 2),
        .init(size: 64, regionSize: 14, regionsPerSide: 4, dataCodewords: 280, errorCodewords: 112, blocks: 2),
        .init(size: 72, regionSize: 16, regionsPerSide: 4, dataCodewords: 368, errorCodewords: 144, blocks: 4),
        .init(size: 80, regionSize: 18, regionsPerSide: 4, dataCodewords: 456, errorCodewords: 192, blocks: 4),
        .init(size: 88, regionSize: 20, regionsPerSide: 4, dataCodewords: 576, errorCodewords: 224, blocks: 4),
        .init(size: 96, regionSize: 22, regionsPerSide: 4, dataCodewords: 696, errorCodewords: 272, blocks: 4),
        .init(size: 104, regionSize: 24, regionsPerSide: 4, dataCodewords: 816, errorCodewords: 336, blocks: 6),
        .init(size: 120, regionSize: 18, regionsPerSide: 6, dataCodewords: 1050, errorCodewords: 408, blocks: 6),
        .init(size: 132, regionSize: 20, regionsPerSide: 6, dataCodewords: 1304, errorCodewords: 496, blocks: 8),
        .init(size: 144, regionSize: 22, regionsPerSide: 6, dataCodewords: 1558, errorCodewords: 620, blocks: 10),
    ]

    static let field = BinaryFieldReedSolomon(size: 256, primitive: 0x12D)

    /// Appends the interleaved error-correction codewords: codeword p of the whole stream belongs to block p mod
    /// `blocks`. Where the data does not divide evenly (144×144: eight blocks of 156, two of 155), the check codewords'
    /// interleave so carries on from the block the data stopped at (ISO/IEC 16022 §5.8.2, as zint draws it), rather
    /// than starting again at block 0.
    func withErrorCorrection(_ data: [Int]) -> [Int] {
        let perBlock = errorCodewords / blocks
        let generator = Self.field.generator(count: perBlock)
        var all = data + [Int](repeating: 0, count: errorCodewords)
        for block in 0..<blocks {
            let blockData = stride(from: block, to: data.count, by: blocks).map { data[$0] }
            let check = Self.field.checkSymbols(for: blockData, generator: generator)
            let first = (block - data.count % blocks + blocks) % blocks
            for (j, value) in check.enumerated() {
                all[data.count + first + j * blocks] = value
            }
        }
        return all
    }

    /// Places the codewords with the standard's diagonal "utah" pattern into the mapping matrix, then adds the finder
    /// (solid left and bottom edges) and clock track (alternating top and right edges) around each data region.
    func draw(codewords: [Int]) -> BitMatrix {
        let mapping = DataMatrixPlacement(side: regionSize * regionsPerSide, codewords: codewords).modules
        let side = regionSize * regionsPerSide
        var matrix = BitMatrix(width: size, height: size)
        let block = regionSize + 2
        for regionY in 0..<regionsPerSide {
            for regionX in 0..<regionsPerSide {
                let left = regionX * block
                let top = regionY * block
                for k in 0..<block {
                    matrix[left, top + k] = true
                    matrix[left + k, top + block - 1] = true
                    matrix[left + k, top] = k % 2 == 0
                    matrix[left + block - 1, top + k] = k % 2 == 1
                }
                for y in 0..<regionSize {
                    for x in 0..<regionSize {
                        let mx = regionX * regionSize + x
                        let my = regionY * regionSize + y
                        matrix[left + 1 + x, top + 1 + y] = mapping[my * side + mx]
                    }
                }
            }
        }
        return matrix
    }
}

/// ISO/IEC 16022 Annex F placement of codeword bits into the mapping matrix (data regions without finders).
package struct DataMatrixPlacement {
    private(set) var modules: [Bool]
    /// For each module of the mapping matrix, the codeword bit it carries (codeword × 8 + bit, bit 0 the most
    /// significant), or -1 for the fixed corner pattern: the reader's map back from modules to codewords.
    package private(set) var owners: [Int]
    private var placed: [Bool]
    private let rows: Int
    private let columns: Int
    private let codewords: [Int]

    init(side: Int, codewords: [Int]) {
        self.init(rows: side, columns: side, codewords: codewords)
    }

    /// The placement in a `rows` × `columns` mapping matrix (rectangular symbols have one).
    package init(rows: Int, columns: Int, codewords: [Int] = []) {
        self.rows = rows
        self.columns = columns
        self.codewords = codewords
        modules = [Bool](repeating: false, count: rows * columns)
        owners = [Int](repeating: -1, count: rows * columns)
        placed = [Bool](repeating: false, count: rows * columns)
        fill()
    }

    /// Sets one bit (1 = most significant) of `codeword`, wrapping coordinates that fall outside the matrix as the
    /// standard prescribes.
    private mutating func module(_ row: Int, _ column: Int, _ codeword: Int, _ bit: Int) {
        var r = row
        var c = column
        if r < 0 {
            r += rows
            c += 4 - ((rows + 4) % 8)
        }
        if c < 0 {
            c += columns
            r += 4 - ((columns + 4) % 8)
        }
        let value = codeword < codewords.count ? codewords[codeword] : 0
        modules[r * columns + c] = (value >> (8 - bit)) & 1 == 1
        owners[r * columns + c] = codeword * 8 + bit - 1
        placed[r * columns + c] = true
    }

    /// The nominal L-shaped 8-module character with its bottom-right module at (row, column).
    private mutating func utah(_ row: Int, _ column: Int, _ codeword: Int) {
        module(row - 2, column - 2, codeword, 1)
        module(row - 2, column - 1, codeword, 2)
        module(row - 1, column - 2, codeword, 3)
        module(row - 1, column - 1, codeword, 4)
        module(row - 1, column, codeword, 5)
        module(row, column - 2, codeword, 6)
        module(row, column - 1, codeword, 7)
        module(row, column, codeword, 8)
    }

    /// The four special corner characters, as (row, column) for bits 1…8; negative values count from the far edge.
    private mutating func corner(_ cells: [(Int, Int)], _ codeword: Int) {
        for (bit, cell) in cells.enumerated() {
            let r = cell.0 < 0 ? rows + cell.0 : cell.0
            let c = cell.1 < 0 ? columns + cell.1 : cell.1
            module(r, c, codeword, bit + 1)
        }
    }

    private mutating func fill() {
        var codeword = 0
        var row = 4
        var column = 0
        repeat {
            if row == rows && column == 0 {
                corner([(-1, 0), (-1, 1), (-1, 2), (0, -2), (0, -1), (1, -1), (2, -1), (3, -1)], codeword)
                codeword += 1
            }
            if row == rows - 2 && column == 0 && columns % 4 != 0 {
                corner([(-3, 0), (-2, 0), (-1, 0), (0, -4), (0, -3), (0, -2), (0, -1), (1, -1)], codeword)
                codeword += 1
            }
            if row == rows - 2 && column == 0 && columns % 8 == 4 {
                corner([(-3, 0), (-2, 0), (-1, 0), (0, -2), (0, -1), (1, -1), (2, -1), (3, -1)], codeword)
                codeword += 1
            }
            if row == rows + 4 && column == 2 && columns % 8 == 0 {
                corner([(-1, 0), (-1, -1), (0, -3), (0, -2), (0, -1), (1, -3), (1, -2), (1, -1)], codeword)
                codeword += 1
            }
            // Sweep up and to the right.
            repeat {
                if row < rows && column >= 0 && !placed[row * columns + column] {
                    utah(row, column, codeword)
                    codeword += 1
                }
                row -= 2
                column += 2
            } while row >= 0 && column < columns
            row += 1
            column += 3
            // Sweep down and to the left.
            repeat {
                if row >= 0 && column < columns && !placed[row * columns + column] {
                    utah(row, column, codeword)
                    codeword += 1
                }
                row += 2
                column -= 2
            } while row < rows && column >= 0
            row += 3
            column += 1
        } while row < rows || column < columns
        // Sizes whose area is not a multiple of 8 leave the bottom-right 2×2 unused; it gets a fixed pattern.
        if !placed[rows * columns - 1] {
            modules[rows * columns - 1] = true
            modules[(rows - 2) * columns + columns - 2] = true
        }
    }
}
