/// Where PDF417 symbols are in a grey image (ISO/IEC 15438 §4.3): the start pattern (81111113) and the stop pattern
/// (711311121) are parallel bars the full height of the symbol, so lines at four angles (every 45°, read both ways,
/// dark on light and light on dark) cross them wherever the symbol is turned, each within 22.5° of its rows: a slant
/// only scales the pattern. Hits on neighbouring lines that line up become an edge; each edge is then traced along
/// the image, probe by probe, to both of its ends. A start edge and a stop edge facing it are a candidate symbol: its four corners
/// (the left edge of the start pattern's wide bar and the leading edge of the stop pattern's wide bar) map the
/// symbol's plane into the image.
enum PDF417Detector {
    /// One line crossing a start or stop pattern: the leading edge of its wide bar (in reading direction), the unit
    /// reading direction, and the module width along the line.
    struct Hit {
        let point: ImagePoint
        let direction: ImagePoint
        let module: Double
        let line: Int
    }

    /// Lined-up hits of one pattern on one family of lines, and after tracing, the edge's two ends.
    struct Edge {
        let isStart: Bool
        let inverted: Bool
        let key: Int
        var hits: [Hit]
        /// Top and bottom of the wide bar's leading edge, top meaning before the first row in reading order.
        var top = ImagePoint(x: 0, y: 0)
        var bottom = ImagePoint(x: 0, y: 0)
        /// Module width across the edge (perpendicular to it).
        var module = 0.0
        /// The reading direction across the traced edge (the lines that found it may cross it at a slant).
        var direction = ImagePoint(x: 0, y: 0)
    }

    /// A candidate symbol: the start edge and the stop edge, each top to bottom.
    struct Candidate {
        let start: Edge
        let stop: Edge
        let startIndex: Int
        let stopIndex: Int
    }

    static let angles: [Double] = [0, 45, 90, 135]
    static let startPattern: [UInt8] = [8, 1, 1, 1, 1, 1, 1, 3]
    static let stopPattern: [UInt8] = [7, 1, 1, 3, 1, 1, 1, 2, 1]
    private static let reversedStart: [UInt8] = startPattern.reversed()
    private static let reversedStop: [UInt8] = stopPattern.reversed()

    /// Candidate symbols in `image`, those with the longest edges first.
    static func candidates(in image: GrayImage) -> [Candidate] {
        let spacing = max(2, min(image.width, image.height) / 50)
        var edges: [Edge] = []
        for (angleIndex, degrees) in angles.enumerated() {
            let lines = ScanLine.lines(width: image.width, height: image.height, degrees: degrees, spacing: spacing)
            for (lineIndex, line) in lines.enumerated() {
                let runs = runLengths(of: line.samples(in: image))
                hits(runs, line: line, lineIndex: lineIndex, angleIndex: angleIndex, spacing: Double(spacing), into: &edges)
            }
        }
        edges = edges.filter { $0.hits.count >= 2 }
        guard edges.contains(where: { $0.isStart }), edges.contains(where: { !$0.isStart }) else { return [] }
        var traced: [Edge] = []
        for edge in edges {
            // Lines at two angles often find the same edge: it is traced once.
            guard let edge = trace(edge, in: image),
                !traced.contains(where: {
                    $0.isStart == edge.isStart
                        && $0.inverted == edge.inverted && length($0.top, edge.top) < 2 * edge.module
                        && length($0.bottom, edge.bottom) < 2 * edge.module
                })
            else { continue }
            traced.append(edge)
        }
        var candidates: [(Candidate, Double)] = []
        for (startIndex, start) in traced.enumerated() where start.isStart {
            for (stopIndex, stop) in traced.enumerated() where !stop.isStart && stop.inverted == start.inverted {
                if let score = pairScore(start, stop) {
                    candidates.append((Candidate(start: start, stop: stop, startIndex: startIndex, stopIndex: stopIndex), score))
                }
            }
        }
        return candidates.sorted { $0.1 > $1.1 }.map { $0.0 }
    }

    /// Start and stop hits on one line's runs (the first run light), read forwards and backwards, added to the
    /// edges they continue or as new edges.
    private static func hits(
        _ runs: [Int], line: ScanLine, lineIndex: Int, angleIndex: Int, spacing: Double,
        into edges: inout [Edge]
    ) {
        guard runs.count >= 10 else { return }
        var found: [(kind: Int, run: Int)] = []
        runs.withUnsafeBufferPointer { runs in
            for index in 0..<runs.count - 8 {
                let run = runs[index]
                // The wide bar is at least three times the runs beside it; most places end here.
                if run >= 4, run >= 3 * runs[index + 1] {
                    if index + 8 <= runs.count, isMatch(runs[index..<index + 8], startPattern) { found.append((0, index)) }
                    if index + 9 <= runs.count, isMatch(runs[index..<index + 9], stopPattern) { found.append((1, index)) }
                }
                let last8 = index + 7, last9 = index + 8
                if runs[last8] >= 4, runs[last8] >= 3 * runs[last8 - 1], isMatch(runs[index..<index + 8], reversedStart) {
                    found.append((2, index))
                }
                if last9 < runs.count, runs[last9] >= 4, runs[last9] >= 3 * runs[last9 - 1],
                    isMatch(runs[index..<index + 9], reversedStop)
                {
                    found.append((3, index))
                }
            }
        }
        guard !found.isEmpty else { return }
        let starts = runStarts(runs)
        for (kind, run) in found {
            let isStart = kind % 2 == 0
            let backwards = kind >= 2
            let length = isStart ? 8 : 9
            let modules = isStart ? 17.0 : 18.0
            let module = Double(starts[run + length] - starts[run]) / modules
            // Forwards the wide bar is the first run; backwards it is the last, and its leading edge is its end.
            let barIndex = backwards ? run + length - 1 : run
            let inverted = barIndex % 2 == 0
            let along = backwards ? Double(starts[barIndex + 1]) : Double(starts[barIndex])
            let point = line.point(at: along)
            let direction = backwards ? ImagePoint(x: -line.step.x, y: -line.step.y) : line.step
            let hit = Hit(point: point, direction: direction, module: module, line: lineIndex)
            let key = angleIndex * 2 + (backwards ? 1 : 0)
            if let index = edges.lastIndex(where: {
                $0.key == key && $0.isStart == isStart && $0.inverted == inverted
                    && continues($0.hits[$0.hits.count - 1], hit, spacing: spacing)
            }) {
                edges[index].hits.append(hit)
            } else {
                edges.append(Edge(isStart: isStart, inverted: inverted, key: key, hits: [hit]))
            }
        }
    }

    /// Whether `hit` lies on the edge whose last hit is `last`: a line or three further on, near it, with a similar
    /// module.
    private static func continues(_ last: Hit, _ hit: Hit, spacing: Double) -> Bool {
        let gap = hit.line - last.line
        guard gap >= 1, gap <= 3, hit.module < last.module * 1.4, hit.module * 1.4 > last.module else { return false }
        let dx = hit.point.x - last.point.x, dy = hit.point.y - last.point.y
        let reach = Double(gap) * spacing * 1.5 + 2 * hit.module
        return dx * dx + dy * dy <= reach * reach
    }

    /// Whether runs match a pattern of module widths closely enough for a start or stop pattern.
    static func isMatch(_ runs: Slice<UnsafeBufferPointer<Int>>, _ pattern: [UInt8]) -> Bool {
        guard let variance = patternVariance(runs, pattern, maximumIndividual: 0.8) else { return false }
        return variance < 0.3
    }

    /// The edge followed along the image from its hits to both ends: each step along it, a probe across it finds the
    /// wide bar's leading edge; a line fitted to those points and its extreme points give the edge's ends. The walk is
    /// made twice, the second time along the line the first one fitted (the hits' direction is only roughly the
    /// edge's, and a slanted probe leaves a bar through its end before crossing it). Nil when the probes find no bar.
    private static func trace(_ edge: Edge, in image: GrayImage) -> Edge? {
        let first = edge.hits[0], last = edge.hits[edge.hits.count - 1]
        var axis = unit(first.point, last.point)
        let direction = first.direction
        // The module across the edge: along the line it is longer by the line's slant to the edge's normal.
        let slant = abs(direction.x * axis.y - direction.y * axis.x)
        guard slant > 0.5 else { return nil }
        var module = 0.0
        for hit in edge.hits { module += hit.module }
        module = module / Double(edge.hits.count) * slant
        // Down the symbol is the reading direction turned a quarter clockwise (image y grows downwards).
        let down = ImagePoint(x: -direction.y, y: direction.x)
        if axis.x * down.x + axis.y * down.y < 0 { axis = ImagePoint(x: -axis.x, y: -axis.y) }
        var seed = edge.hits[edge.hits.count / 2].point
        var ends: (top: ImagePoint, bottom: ImagePoint)?
        for _ in 0..<2 {
            let points = walk(image, from: seed, axis: axis, module: module, bar: edge.isStart ? 8 : 7, inverted: edge.inverted)
            guard points.count >= 4, let line = fit(points, down: down) else { return nil }
            axis = line.axis
            ends = (line.top, line.bottom)
            seed = points[points.count / 2]
        }
        guard let ends else { return nil }
        // The module across the edge again, now that the edge's direction is known well.
        let fitted = unit(ends.top, ends.bottom)
        module = module / slant * abs(direction.x * fitted.y - direction.y * fitted.x)
        guard length(ends.top, ends.bottom) >= 3 * module else { return nil }
        var traced = edge
        traced.top = ends.top
        traced.bottom = ends.bottom
        traced.module = module
        traced.direction = ImagePoint(x: fitted.y, y: -fitted.x)
        return traced
    }

    /// Points on a bar's leading edge, probing across the edge (along its normal, towards the bar) every half module
    /// from `seed` both ways along `axis`, until three probes in a row find no bar.
    private static func walk(
        _ image: GrayImage, from seed: ImagePoint, axis: ImagePoint, module: Double, bar: Double,
        inverted: Bool
    ) -> [ImagePoint] {
        let across = ImagePoint(x: axis.y, y: -axis.x)  // the reading direction, when axis points down the symbol
        let step = max(1.0, module / 2)
        var points: [ImagePoint] = []
        for sign in [1.0, -1.0] {
            var current = seed
            var misses = 0
            var steps = 0
            while misses < 3, steps < 4_000 {
                steps += 1
                let probe = ImagePoint(x: current.x + sign * step * axis.x, y: current.y + sign * step * axis.y)
                guard probe.x >= 0, probe.y >= 0, probe.x < Double(image.width), probe.y < Double(image.height) else { break }
                if let offset = edgeOffset(image, at: probe, direction: across, module: module, bar: bar, inverted: inverted) {
                    current = ImagePoint(x: probe.x + offset * across.x, y: probe.y + offset * across.y)
                    points.append(current)
                    misses = 0
                } else {
                    current = probe
                    misses += 1
                }
            }
        }
        return points
    }

    /// The least-squares line through `points` (their principal axis, pointing `down`) and the extreme points
    /// projected onto it.
    private static func fit(_ points: [ImagePoint], down: ImagePoint) -> (axis: ImagePoint, top: ImagePoint, bottom: ImagePoint)? {
        var cx = 0.0, cy = 0.0
        for point in points {
            cx += point.x
            cy += point.y
        }
        cx /= Double(points.count)
        cy /= Double(points.count)
        var sxx = 0.0, sxy = 0.0, syy = 0.0
        for point in points {
            let dx = point.x - cx, dy = point.y - cy
            sxx += dx * dx
            sxy += dx * dy
            syy += dy * dy
        }
        let theta = 0.5 * arcTangent(2 * sxy, sxx - syy)
        var axis = ImagePoint(x: cosine(theta), y: sine(theta))
        if axis.x * down.x + axis.y * down.y < 0 { axis = ImagePoint(x: -axis.x, y: -axis.y) }
        var low = Double.infinity, high = -Double.infinity
        for point in points {
            let t = (point.x - cx) * axis.x + (point.y - cy) * axis.y
            low = min(low, t)
            high = max(high, t)
        }
        return (axis, ImagePoint(x: cx + axis.x * low, y: cy + axis.y * low), ImagePoint(x: cx + axis.x * high, y: cy + axis.y * high))
    }

    /// Where, along `direction` from `point`, a light-to-dark edge starts a dark bar about `bar` modules wide: the
    /// transition nearest the point within two modules, the threshold halfway between the darkest and lightest
    /// samples of the probe. Nil when there is none or the probe has too little contrast.
    private static func edgeOffset(
        _ image: GrayImage, at point: ImagePoint, direction: ImagePoint, module: Double,
        bar: Double, inverted: Bool
    ) -> Double? {
        let from = -3 * module, to = (bar + 1) * module
        let count = Int((to - from) / 0.5) + 1
        var samples = [Int](repeating: 0, count: count)
        var low = 255, high = 0
        for index in 0..<count {
            let t = from + Double(index) * 0.5
            var value = bilinear(image, point.x + t * direction.x, point.y + t * direction.y)
            if inverted { value = 255 - value }
            samples[index] = value
            low = min(low, value)
            high = max(high, value)
        }
        guard high - low >= 24 else { return nil }
        let threshold = (low + high) / 2
        var best: Double?
        for index in 1..<count where samples[index - 1] > threshold && samples[index] <= threshold {
            // Sub-sample position of the crossing.
            let fraction = Double(samples[index - 1] - threshold) / Double(samples[index - 1] - samples[index])
            let t = from + (Double(index - 1) + fraction) * 0.5
            guard abs(t) <= 2 * module else { continue }
            var dark = index
            while dark < count, samples[dark] <= threshold { dark += 1 }
            let width = Double(dark - index) * 0.5
            guard width >= 0.6 * bar * module, width <= 1.5 * bar * module else { continue }
            if best == nil || abs(t) < abs(best!) { best = t }
        }
        return best
    }

    /// How well a start edge and a stop edge make one symbol (nil when they cannot): the stop edge lies ahead of the
    /// start edge in reading direction, 68 to 561 modules away, roughly parallel, and the two overlap along the
    /// edges. Longer overlapping edges score higher.
    private static func pairScore(_ start: Edge, _ stop: Edge) -> Double? {
        let d = start.direction
        guard d.x * stop.direction.x + d.y * stop.direction.y > 0.5 else { return nil }
        let startMiddle = ImagePoint(x: (start.top.x + start.bottom.x) / 2, y: (start.top.y + start.bottom.y) / 2)
        let stopMiddle = ImagePoint(x: (stop.top.x + stop.bottom.x) / 2, y: (stop.top.y + stop.bottom.y) / 2)
        let startAxis = unit(start.top, start.bottom), stopAxis = unit(stop.top, stop.bottom)
        guard startAxis.x * stopAxis.x + startAxis.y * stopAxis.y > 0.7 else { return nil }
        // The stop edge's middle seen from the start edge: ahead across the rows, within the start edge's span.
        let across = ImagePoint(x: -startAxis.y, y: startAxis.x)
        var distance = (stopMiddle.x - startMiddle.x) * across.x + (stopMiddle.y - startMiddle.y) * across.y
        if across.x * d.x + across.y * d.y < 0 { distance = -distance }
        let module = (start.module + stop.module) / 2
        guard distance > 0, start.module < 2.5 * stop.module, stop.module < 2.5 * start.module else { return nil }
        let modules = distance / module
        guard modules > 17 + 51 - 12, modules < 17 * 30 + 51 + 60 else { return nil }
        let startLength = length(start.top, start.bottom), stopLength = length(stop.top, stop.bottom)
        guard startLength < 2.5 * stopLength, stopLength < 2.5 * startLength else { return nil }
        let shift = abs((stopMiddle.x - startMiddle.x) * startAxis.x + (stopMiddle.y - startMiddle.y) * startAxis.y)
        guard shift < (startLength + stopLength) / 2 else { return nil }
        return startLength + stopLength
    }

    static func unit(_ from: ImagePoint, _ to: ImagePoint) -> ImagePoint {
        let size = length(from, to)
        return size > 0 ? ImagePoint(x: (to.x - from.x) / size, y: (to.y - from.y) / size) : ImagePoint(x: 0, y: 0)
    }

    static func length(_ from: ImagePoint, _ to: ImagePoint) -> Double {
        let dx = to.x - from.x, dy = to.y - from.y
        return (dx * dx + dy * dy).squareRoot()
    }

    /// The image's luminance at a point, interpolated between the four pixels around it; white outside.
    static func bilinear(_ image: GrayImage, _ x: Double, _ y: Double) -> Int {
        let fx = x - 0.5, fy = y - 0.5
        guard fx >= 0, fy >= 0, fx < Double(image.width - 1), fy < Double(image.height - 1) else {
            let column = Int(x), row = Int(y)
            guard x >= 0, y >= 0, column < image.width, row < image.height else { return 255 }
            return Int(image.pixels[row * image.width + column])
        }
        let column = Int(fx), row = Int(fy)
        let ax = fx - Double(column), ay = fy - Double(row)
        let base = row * image.width + column
        return image.pixels.withUnsafeBufferPointer { pixels in
            let top = Double(pixels[base]) * (1 - ax) + Double(pixels[base + 1]) * ax
            let bottom = Double(pixels[base + image.width]) * (1 - ax) + Double(pixels[base + image.width + 1]) * ax
            return Int(top * (1 - ay) + bottom * ay + 0.5)
        }
    }
}

/// atan2 without Foundation: the angle of (x, y) in (−π, π], by halving the angle three times and a short series, exact
/// to far better than a pixel's worth over an edge.
func arcTangent(_ y: Double, _ x: Double) -> Double {
    if x == 0, y == 0 { return 0 }
    // Left of the y axis the half-angle formula below would cancel: mirror to the right half-plane.
    if x < 0 {
        let mirrored = arcTangent(y, -x)
        return y >= 0 ? Double.pi - mirrored : -Double.pi - mirrored
    }
    // atan2(y, x) = 2·atan(y / (√(x²+y²) + x)), applied three times brings the argument below tan(π/8).
    let r = (x * x + y * y).squareRoot()
    let t = y / (r + x)
    let t2 = t / (1 + (1 + t * t).squareRoot())
    let t3 = t2 / (1 + (1 + t2 * t2).squareRoot())
    // atan of |t3| ≤ tan(π/8) ≈ 0.414 by its Taylor series.
    var term = t3, sum = t3
    let square = t3 * t3
    for n in 1..<30 {
        term *= -square
        sum += term / Double(2 * n + 1)
    }
    return 8 * sum
}
