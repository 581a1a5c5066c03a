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

    /// Luminance along the line, one sample per pixel of length, nearest pixel.
    func samples(in image: GrayImage) -> [UInt8] {
        var samples = [UInt8](repeating: 255, count: count)
        for index in 0..<count {
            let x = Int(start.x + step.x * Double(index))
            let y = Int(start.y + step.y * Double(index))
            if x >= 0, y >= 0, x < image.width, y < image.height { samples[index] = image[x, y] }
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
/// of the darkest and lightest samples around it (a window of a sixteenth of the line, at least 32 samples), so an
/// uneven light across the code does not move the threshold. Where the samples around vary by less than
/// `minimumContrast` (a margin, a flat background), no edge is invented: the sample is compared with the middle of the
/// whole line instead, so a flat dark margin stays dark (light-on-dark codes) and a flat light one light.
func runLengths(of samples: [UInt8], minimumContrast: Int = 24) -> [Int] {
    let count = samples.count
    guard count > 0 else { return [] }
    let radius = max(16, count / 32)
    let lows = slidingExtreme(samples, radius: radius, keepsFirst: { $0 <= $1 })
    let highs = slidingExtreme(samples, radius: radius, keepsFirst: { $0 >= $1 })
    let lineLow = Int(samples.min() ?? 0), lineHigh = Int(samples.max() ?? 0)
    if lineHigh - lineLow < minimumContrast { return [count] }
    var runs: [Int] = [0]
    var dark = false
    for index in 0..<count {
        let low = Int(lows[index]), high = Int(highs[index])
        let middle = high - low >= minimumContrast ? low + high : lineLow + lineHigh
        let isDark = Int(samples[index]) * 2 < middle
        if isDark != dark {
            runs.append(0)
            dark = isDark
        }
        runs[runs.count - 1] += 1
    }
    return runs
}

/// The minimum (or maximum) of each sample's window of `radius` on either side, in linear time (a monotonic queue).
private func slidingExtreme(_ samples: [UInt8], radius: Int, keepsFirst: (UInt8, UInt8) -> Bool) -> [UInt8] {
    let count = samples.count
    var result = [UInt8](repeating: 0, count: count)
    var queue: [Int] = []
    var head = 0
    var next = 0
    for index in 0..<count {
        while next < min(count, index + radius + 1) {
            while queue.count > head, keepsFirst(samples[next], samples[queue[queue.count - 1]]) { queue.removeLast() }
            queue.append(next)
            next += 1
        }
        while queue[head] < index - radius { head += 1 }
        result[index] = samples[queue[head]]
    }
    return result
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
