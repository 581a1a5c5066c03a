/// A black-and-white image: one byte a pixel, 1 dark, 0 light. The 2D detectors work on this.
struct BitImage: Sendable {
    let width: Int
    let height: Int
    private let bits: [UInt8]
    /// 1 when dark and light are read swapped (a light-on-dark symbol), else 0: the pixels are shared, not copied.
    private let flip: UInt8

    @inline(__always) func isDark(_ x: Int, _ y: Int) -> Bool { bits[y * width + x] != flip }

    /// Whether the pixel nearest (x, y) is dark; points outside the image are light.
    @inline(__always) func isDark(at x: Double, _ y: Double) -> Bool {
        let column = Int(x), row = Int(y)
        guard x >= 0, y >= 0, column < width, row < height else { return false }
        return bits[row * width + column] != flip
    }

    /// The run lengths along row `row`, the first one light (possibly empty), appended to `runs`. A run is crossed
    /// eight pixels at a time while they all match it: most of a frame is long runs, and every 2D detector asks.
    func runs(ofRow row: Int, into runs: inout [Int]) {
        let width = self.width
        bits.withUnsafeBufferPointer { bits in
            guard let base = bits.baseAddress.map({ UnsafeRawPointer($0 + row * width) }) else { return }
            var dark = false
            var runStart = 0
            var x = 0
            while x < width {
                // The stored byte of the current run's pixels (light pixels are stored as `flip`).
                let stored = dark ? flip ^ 1 : flip
                let eight = UInt64(stored) &* 0x0101_0101_0101_0101
                while x + 8 <= width, base.loadUnaligned(fromByteOffset: x, as: UInt64.self) == eight { x += 8 }
                while x < width, base.load(fromByteOffset: x, as: UInt8.self) == stored { x += 1 }
                if x < width {
                    runs.append(x - runStart)
                    runStart = x
                    dark.toggle()
                }
            }
            runs.append(width - runStart)
        }
    }

    /// A matrix symbol's modules, row by row: the centre of module (x, y) is where `grid` maps (x + ½, y + ½). Nil when
    /// the grid runs off the image (more than a pixel past an edge).
    func modules(_ grid: Perspective, columns: Int, rows: Int) -> [Bool]? {
        var dark = [Bool](repeating: false, count: columns * rows)
        for y in 0..<rows {
            for x in 0..<columns {
                let point = grid.map(Double(x) + 0.5, Double(y) + 0.5)
                guard point.x >= -1, point.y >= -1, point.x <= Double(width), point.y <= Double(height) else { return nil }
                dark[y * columns + x] = isDark(at: point.x, point.y)
            }
        }
        return dark
    }

    /// The same image with dark and light swapped (for light-on-dark symbols).
    func inverted() -> BitImage { BitImage(width: width, height: height, bits: bits, flip: flip ^ 1) }

    private init(width: Int, height: Int, bits: [UInt8], flip: UInt8) {
        self.width = width
        self.height = height
        self.bits = bits
        self.flip = flip
    }

    /// A local threshold (ZXing's "hybrid" idea, in our own words): the image is cut into 8×8 blocks; a block's level is
    /// its mean, or, where the block is flat (a range below 24), a level that keeps it light unless its neighbours
    /// say it lies inside a dark area; each pixel is dark when it is at or below the mean level of the 5×5 blocks
    /// around its own. An uneven light across a symbol so moves the threshold with it. The last block of a row or
    /// column that does not fill 8 pixels is moved back to end at the edge (overlapping its neighbour), so every block
    /// is a whole 8×8, read and written eight pixels at a time: this runs over every pixel of every camera frame.
    init(thresholding image: GrayImage) {
        let width = image.width, height = image.height
        self.width = width
        self.height = height
        self.flip = 0
        let blockSize = 8
        guard width >= blockSize, height >= blockSize else {
            // Too small for one block: the middle of the image's range.
            let low = Int(image.pixels.min() ?? 0), high = Int(image.pixels.max() ?? 0)
            self.bits = image.pixels.map { Int($0) * 2 < low + high ? 1 : 0 }
            return
        }
        let columns = (width + blockSize - 1) / blockSize
        let rows = (height + blockSize - 1) / blockSize
        var levels = [Int](repeating: 0, count: columns * rows)
        var bits = [UInt8](repeating: 0, count: width * height)
        image.pixels.withUnsafeBytes { pixels in
            levels.withUnsafeMutableBufferPointer { levels in
                for blockRow in 0..<rows {
                    let top = min(blockRow * blockSize, height - blockSize)
                    for blockColumn in 0..<columns {
                        let left = min(blockColumn * blockSize, width - blockSize)
                        var sum = SIMD8<UInt16>(repeating: 0)
                        var lows = SIMD8<UInt8>(repeating: 255), highs = SIMD8<UInt8>(repeating: 0)
                        for y in top..<top + blockSize {
                            let eight = pixels.loadUnaligned(fromByteOffset: y * width + left, as: SIMD8<UInt8>.self)
                            sum &+= SIMD8<UInt16>(truncatingIfNeeded: eight)
                            lows = pointwiseMin(lows, eight)
                            highs = pointwiseMax(highs, eight)
                        }
                        let low = Int(lows.min()), high = Int(highs.max())
                        var level = Int(sum.wrappedSum()) / (blockSize * blockSize)
                        if high - low <= 24 {
                            // Flat: light, unless the blocks above and to the left (already known) are darker than it.
                            level = low / 2
                            if blockRow > 0, blockColumn > 0 {
                                let neighbours =
                                    (levels[(blockRow - 1) * columns + blockColumn]
                                        + 2 * levels[blockRow * columns + blockColumn - 1]
                                        + levels[(blockRow - 1) * columns + blockColumn - 1]) / 4
                                if low < neighbours { level = neighbours }
                            }
                        }
                        levels[blockRow * columns + blockColumn] = level
                    }
                }
            }
            bits.withUnsafeMutableBytes { bits in
                for blockRow in 0..<rows {
                    let top = min(blockRow * blockSize, height - blockSize)
                    let rowFrom = max(0, blockRow - 2), rowTo = min(rows - 1, blockRow + 2)
                    for blockColumn in 0..<columns {
                        let left = min(blockColumn * blockSize, width - blockSize)
                        let columnFrom = max(0, blockColumn - 2), columnTo = min(columns - 1, blockColumn + 2)
                        var sum = 0
                        for r in rowFrom...rowTo {
                            for c in columnFrom...columnTo { sum += levels[r * columns + c] }
                        }
                        let threshold = SIMD8<UInt8>(
                            repeating: UInt8(sum / ((rowTo - rowFrom + 1) * (columnTo - columnFrom + 1))))
                        let zero = SIMD8<UInt8>(repeating: 0)
                        for y in top..<top + blockSize {
                            let offset = y * width + left
                            let eight = pixels.loadUnaligned(fromByteOffset: offset, as: SIMD8<UInt8>.self)
                            bits.storeBytes(
                                of: zero.replacing(with: 1, where: eight .<= threshold), toByteOffset: offset,
                                as: SIMD8<UInt8>.self)
                        }
                    }
                }
            }
        }
        self.bits = bits
    }
}
