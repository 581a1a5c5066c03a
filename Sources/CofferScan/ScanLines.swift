/// Straight lines across the image along which linear symbols are read: parallel lines at each of a few angles, so a
/// code held up to 30° off level is still crossed end to end by some of them.
struct ScanLine {
    /// Where the line enters the image and its step per sample (a unit vector).
    let start: ImagePoint
    let step: ImagePoint
    let count: Int

    func point(at index: Double) -> ImagePoint {
        ImagePoint(x: start.x + step.x * index, y: start.y + step.y * index)
    }

    /// Luminance along the line, one sample per pixel of length, nearest pixel. Stepped in 16.16 fixed point: this
    /// runs for every pixel of every line.
    func samples(in image: GrayImage) -> [UInt8] {
        var samples = [UInt8](repeating: 255, count: count)
        let scale = 65_536.0
        var x = Int(start.x * scale), y = Int(start.y * scale)
        let dx = Int(step.x * scale), dy = Int(step.y * scale)
        let width = image.width, height = image.height
        image.pixels.withUnsafeBufferPointer { pixels in
            samples.withUnsafeMutableBufferPointer { out in
                for index in 0..<count {
                    let column = x >> 16, row = y >> 16
                    if column >= 0, row >= 0, column < width, row < height { out[index] = pixels[row * width + column] }
                    x += dx
                    y += dy
                }
            }
        }
        return samples
    }

    /// Lines at `degrees` from horizontal, `spacing` pixels apart, each clipped to the image.
    static func lines(width: Int, height: Int, degrees: Double, spacing: Int) -> [ScanLine] {
        let radians = degrees * Double.pi / 180
        let direction = ImagePoint(x: cosine(radians), y: sine(radians))
        let normal = ImagePoint(x: -direction.y, y: direction.x)
        let centre = ImagePoint(x: Double(width) / 2, y: Double(height) / 2)
        let reach = (Double(width * width + height * height)).squareRoot() / 2
        var lines: [ScanLine] = []
        var offset = -reach
        while offset <= reach {
            let middle = ImagePoint(x: centre.x + normal.x * offset, y: centre.y + normal.y * offset)
            if let line = clipped(middle: middle, direction: direction, reach: reach, width: width, height: height) {
                lines.append(line)
            }
            offset += Double(spacing)
        }
        return lines
    }

    /// The part of the line through `middle` along `direction` that lies inside the image, or nil.
    private static func clipped(middle: ImagePoint, direction: ImagePoint, reach: Double, width: Int, height: Int) -> ScanLine? {
        var low = -reach
        var high = reach
        for (origin, delta, limit) in [(middle.x, direction.x, Double(width)), (middle.y, direction.y, Double(height))] {
            if abs(delta) < 1e-9 {
                if origin < 0 || origin >= limit { return nil }
                continue
            }
            var enter = (0 - origin) / delta
            var leave = (limit - 1e-6 - origin) / delta
            if enter > leave { swap(&enter, &leave) }
            low = max(low, enter)
            high = min(high, leave)
        }
        guard high - low >= 20 else { return nil }
        let start = ImagePoint(x: middle.x + direction.x * low, y: middle.y + direction.y * low)
        return ScanLine(start: start, step: direction, count: Int(high - low))
    }
}

/// Alternating run lengths of a line's samples, the first one light: each sample is dark when it is below the middle
/// of the darkest and lightest samples around it (within one to two blocks of a sixty-fourth of the line, at least
/// 16 samples, either side), so an uneven light across the code does not move the threshold. Where the samples
/// around vary by less than `minimumContrast` (a margin, a flat background), no edge is invented: the sample is
/// compared with the middle of the whole line instead, so a flat dark margin stays dark (light-on-dark codes) and a
/// flat light one light.
func runLengths(of samples: [UInt8], minimumContrast: Int = 24) -> [Int] {
    let count = samples.count
    guard count > 0 else { return [] }
    return samples.withUnsafeBufferPointer { samples in
        var lineLow: UInt8 = 255, lineHigh: UInt8 = 0
        for sample in samples {
            lineLow = min(lineLow, sample)
            lineHigh = max(lineHigh, sample)
        }
        if Int(lineHigh) - Int(lineLow) < minimumContrast { return [count] }
        // The extremes of each block, then of each block with its two neighbours: every sample then looks up its own.
        let block = max(16, count / 64)
        let blocks = (count + block - 1) / block
        var blockLow = [UInt8](repeating: 255, count: blocks), blockHigh = [UInt8](repeating: 0, count: blocks)
        for which in 0..<blocks {
            var low: UInt8 = 255, high: UInt8 = 0
            for index in which * block..<min(count, (which + 1) * block) {
                low = min(low, samples[index])
                high = max(high, samples[index])
            }
            blockLow[which] = low
            blockHigh[which] = high
        }
        var middles = [Int](repeating: 0, count: blocks)
        for which in 0..<blocks {
            let from = max(0, which - 1), to = min(blocks - 1, which + 1)
            var low: UInt8 = 255, high: UInt8 = 0
            for neighbour in from...to {
                low = min(low, blockLow[neighbour])
                high = max(high, blockHigh[neighbour])
            }
            middles[which] = Int(high) - Int(low) >= minimumContrast ? Int(low) + Int(high) : Int(lineLow) + Int(lineHigh)
        }
        // Where the colour changes, recorded without a branch (a line across a barcode changes every few samples, a
        // branch there is mispredicted half the time); the runs are the distances between changes.
        return [Int](unsafeUninitializedCapacity: count + 2) { changes, initialized in
            var found = 0
            var dark = false
            for which in 0..<blocks {
                let middle = middles[which]
                for index in which * block..<min(count, (which + 1) * block) {
                    let isDark = Int(samples[index]) &* 2 < middle
                    changes[found] = index
                    found &+= isDark != dark ? 1 : 0
                    dark = isDark
                }
            }
            // Runs from the changes, in place: the first run (light) from 0 to the first change, the last to the end.
            var previous = 0
            for which in 0..<found {
                let change = changes[which]
                changes[which] = change - previous
                previous = change
            }
            changes[found] = count - previous
            initialized = found + 1
        }
    }
}

// Sine and cosine without Foundation (the reader also runs as Embedded Swift): a Taylor series after reducing the
// angle to [-π, π], exact to 1e-12 there, which is far more than a pixel needs.
func sine(_ radians: Double) -> Double {
    var x = radians
    while x > Double.pi { x -= 2 * Double.pi }
    while x < -Double.pi { x += 2 * Double.pi }
    var term = x
    var sum = x
    for n in 1..<12 {
        term *= -x * x / Double((2 * n) * (2 * n + 1))
        sum += term
    }
    return sum
}

func cosine(_ radians: Double) -> Double { sine(radians + Double.pi / 2) }
