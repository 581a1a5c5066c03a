/// Aztec Code encoder (ISO/IEC 24778): compact symbols (1–4 layers) and full-range symbols (1–32 layers).
public enum AztecEncoder {
    /// Which symbol forms may be chosen.
    public enum Format: Sendable, Equatable {
        /// The smallest symbol: compact when it fits in 4 layers, otherwise full-range (4–32 layers).
        case automatic
        /// Compact symbols only (1–4 layers, at most 64 data codewords).
        case compact
        /// Full-range symbols only (1–32 layers).
        case full
    }

    /// Error correction recommended by ISO/IEC 24778: 23 % of the symbol's codewords plus 3.
    public static let defaultErrorCorrectionPercent = 23

    /// Encodes `bytes` as the smallest Aztec symbol of the requested format that holds them with at least
    /// `minimumErrorCorrectionPercent` % of the codewords (plus 3) for error correction.
    ///
    /// Characters go through the standard's Upper/Lower/Mixed/Punct/Digit modes with latches and shifts, and other
    /// bytes through Binary Shift, choosing the shortest bit stream; bytes are carried exactly (decoders read them as
    /// ISO-8859-1 unless told otherwise).
    /// - Returns: the symbol's modules. Aztec needs no quiet zone, though renderers usually add a small one.
    /// - Throws: `BarcodeError` for an empty payload, a percentage outside 5–95, or a payload that does not fit.
    public static func encode(
        _ bytes: [UInt8], minimumErrorCorrectionPercent: Int = defaultErrorCorrectionPercent,
        format: Format = .automatic
    ) throws(BarcodeError) -> BitMatrix {
        guard !bytes.isEmpty else { throw BarcodeError(.aztec, "payload is empty") }
        guard (5...95).contains(minimumErrorCorrectionPercent) else {
            throw BarcodeError(.aztec, "error-correction percentage must be 5 to 95")
        }
        // The largest symbol holds 19968 bits; no character takes fewer than 2.5 bits, so longer input cannot fit.
        guard bytes.count <= 7987 else {
            throw BarcodeError(.aztec, "payload exceeds the capacity of the largest Aztec symbol")
        }
        let bits = AztecHighLevel.encode(bytes)
        let candidates: [AztecSymbol] =
            switch format {
            case .automatic:
                (1...4).map { AztecSymbol(compact: true, layers: $0) }
                    + (4...32).map { AztecSymbol(compact: false, layers: $0) }
            case .compact: (1...4).map { AztecSymbol(compact: true, layers: $0) }
            case .full: (1...32).map { AztecSymbol(compact: false, layers: $0) }
            }
        for symbol in candidates {
            let words = AztecSymbol.stuff(bits, wordSize: symbol.wordSize)
            guard words.count <= symbol.maximumDataWords else { continue }
            let required = (symbol.totalWords * minimumErrorCorrectionPercent + 99) / 100 + 3
            guard symbol.totalWords - words.count >= required else { continue }
            return symbol.draw(dataWords: words)
        }
        let limit = format == .compact ? "the largest compact Aztec symbol (4 layers)" : "the largest Aztec symbol"
        throw BarcodeError(.aztec, "payload exceeds the capacity of \(limit) at this error-correction level")
    }
}

/// One Aztec symbol size and how its codewords, mode message and finder are laid out (shared with the reader, which
/// samples the modules in the order drawn here).
package struct AztecSymbol: Sendable {
    package let compact: Bool
    package let layers: Int

    package init(compact: Bool, layers: Int) {
        self.compact = compact
        self.layers = layers
    }

    /// Codeword width: 6 bits up to 2 layers, 8 up to 8, 10 up to 22, 12 beyond.
    package var wordSize: Int {
        switch layers {
        case ...2: 6
        case ...8: 8
        case ...22: 10
        default: 12
        }
    }

    /// Bits available in the data layers.
    package var totalBits: Int { ((compact ? 88 : 112) + 16 * layers) * layers }
    package var totalWords: Int { totalBits / wordSize }
    /// The mode message counts data codewords in 6 bits (compact) or 11 bits (full).
    var maximumDataWords: Int { min(compact ? 64 : 2048, totalWords) }
    /// Side length before reference-grid lines are inserted.
    var baseSize: Int { (compact ? 11 : 14) + 4 * layers }
    /// Side length of the symbol.
    package var size: Int { compact ? baseSize : baseSize + 1 + 2 * ((baseSize / 2 - 1) / 15) }

    static func field(wordSize: Int) -> BinaryFieldReedSolomon {
        switch wordSize {
        case 4: BinaryFieldReedSolomon(size: 16, primitive: 0x13)
        case 6: BinaryFieldReedSolomon(size: 64, primitive: 0x43)
        case 8: BinaryFieldReedSolomon(size: 256, primitive: 0x12D)
        case 10: BinaryFieldReedSolomon(size: 1024, primitive: 0x409)
        default: BinaryFieldReedSolomon(size: 4096, primitive: 0x1069)
        }
    }

    /// Splits the bit stream into codewords, inserting a complemented bit whenever the first `wordSize − 1` bits of a
    /// word would be all zeros or all ones (such words are reserved); the tail is padded with ones.
    static func stuff(_ bits: [Bool], wordSize: Int) -> [Int] {
        var words: [Int] = []
        words.reserveCapacity(bits.count / (wordSize - 1) + 1)
        let upperMask = (1 << wordSize) - 2
        var index = 0
        while index < bits.count {
            var word = 0
            for k in 0..<wordSize {
                let bit = index + k >= bits.count || bits[index + k]
                if bit { word |= 1 << (wordSize - 1 - k) }
            }
            let upper = word & upperMask
            if upper == upperMask {
                words.append(upperMask)
                index += wordSize - 1
            } else if upper == 0 {
                words.append(1)
                index += wordSize - 1
            } else {
                words.append(word)
                index += wordSize
            }
        }
        return words
    }

    func draw(dataWords: [Int]) -> BitMatrix {
        let check = Self.field(wordSize: wordSize).checkSymbols(for: dataWords, count: totalWords - dataWords.count)
        var message = AztecBitWriter()
        // Layers hold a whole number of codewords; the leftover bits come first and are zero.
        message.append(0, totalBits % wordSize)
        for word in dataWords + check { message.append(word, wordSize) }

        let size = self.size
        var matrix = BitMatrix(width: size, height: size)
        let center = size / 2
        for (bit, module) in zip(message.bits, dataModules()) where bit { matrix[module % size, module / size] = true }

        drawModeMessage(&matrix, dataWords: dataWords.count)

        // Bullseye: dark rings at even distances from the centre, then the orientation marks at its corners.
        let radius = compact ? 5 : 7
        for ring in stride(from: 0, to: radius, by: 2) {
            for k in (center - ring)...(center + ring) {
                matrix[k, center - ring] = true
                matrix[k, center + ring] = true
                matrix[center - ring, k] = true
                matrix[center + ring, k] = true
            }
        }
        for (dx, dy) in Self.orientationMarks(radius: radius) { matrix[center + dx, center + dy] = true }

        // Full symbols: reference grid lines every 16 modules from the centre, alternating dark and light.
        if !compact {
            var distance = 0
            while distance < center {
                for k in stride(from: center % 2, to: size, by: 2) {
                    matrix[center - distance, k] = true
                    matrix[center + distance, k] = true
                    matrix[k, center - distance] = true
                    matrix[k, center + distance] = true
                }
                distance += 16
            }
        }
        return matrix
    }

    /// The dark orientation marks on the mode-message ring at `radius` (5 compact, 7 full), as offsets from the centre:
    /// three modules at the top-left corner, two at the top-right, one at the bottom-right, none at the bottom-left.
    package static func orientationMarks(radius: Int) -> [(x: Int, y: Int)] {
        [
            (-radius, -radius), (-radius + 1, -radius), (-radius, -radius + 1), (radius, -radius), (radius, -radius + 1),
            (radius, radius - 1),
        ]
    }

    /// The module (`y * size + x`) that carries each bit of the data layers, in bit-stream order.
    ///
    /// Layers go outermost first: each is two modules thick and read as dominoes on the left side downwards, the
    /// bottom rightwards, the right side upwards and the top leftwards.
    package func dataModules() -> [Int] {
        let size = self.size
        let center = size / 2
        // Position in the symbol of each coordinate of the grid-less layout (full symbols skip the reference grid
        // lines every 16 modules from the centre).
        var position = Array(0..<baseSize)
        if !compact {
            let half = baseSize / 2
            for i in 0..<half {
                let offset = i + i / 15
                position[half - i - 1] = center - offset - 1
                position[half + i] = center + offset + 1
            }
        }
        var modules = [Int](repeating: 0, count: totalBits)
        var offset = 0
        for layer in 0..<layers {
            let dominoes = (layers - layer) * 4 + (compact ? 9 : 12)
            let low = 2 * layer
            let high = baseSize - 1 - 2 * layer
            for j in 0..<dominoes {
                for k in 0..<2 {
                    let along = 2 * j + k
                    modules[offset + along] = position[low + j] * size + position[low + k]
                    modules[offset + 2 * dominoes + along] = position[high - k] * size + position[low + j]
                    modules[offset + 4 * dominoes + along] = position[high - j] * size + position[high - k]
                    modules[offset + 6 * dominoes + along] = position[low + k] * size + position[high - j]
                }
            }
            offset += 8 * dominoes
        }
        return modules
    }

    /// The module offsets from the centre that carry the mode message's 28 (compact) or 40 (full) bits, in order:
    /// clockwise from the top-left, top row, right column, bottom row, left column; full symbols step over the
    /// central reference line on each side.
    package var modeMessageModules: [(x: Int, y: Int)] {
        let perSide = compact ? 7 : 10
        let distance = compact ? 5 : 7
        var modules = [(x: Int, y: Int)](repeating: (0, 0), count: 4 * perSide)
        for i in 0..<perSide {
            let along = compact ? i - 3 : i - 5 + i / 5
            modules[i] = (along, -distance)
            modules[i + perSide] = (distance, along)
            modules[3 * perSide - 1 - i] = (along, distance)
            modules[4 * perSide - 1 - i] = (-distance, along)
        }
        return modules
    }

    /// Layer count and data codeword count, protected by Reed–Solomon over GF(16), around the bullseye.
    private func drawModeMessage(_ matrix: inout BitMatrix, dataWords: Int) {
        let value = compact ? (layers - 1) << 6 | (dataWords - 1) : (layers - 1) << 11 | (dataWords - 1)
        let dataNibbles = compact ? 2 : 4
        let nibbles = (0..<dataNibbles).map { (value >> (4 * (dataNibbles - 1 - $0))) & 0xF }
        let check = Self.field(wordSize: 4).checkSymbols(for: nibbles, count: compact ? 5 : 6)
        var writer = AztecBitWriter()
        for nibble in nibbles + check { writer.append(nibble, 4) }
        let center = size / 2
        for (bit, module) in zip(writer.bits, modeMessageModules) where bit {
            matrix[center + module.x, center + module.y] = true
        }
    }
}
