/// Finding Data Matrix symbols in a black-and-white image.
///
/// A symbol's solid L and its data are one connected dark region: each region large enough is a candidate. Its convex
/// hull gives a first quadrilateral; each side is then fitted as a line to the outermost dark pixels met by walking in
/// from outside (a clock-track side is dark at every other module, so only its outer half of the points is trusted);
/// the corners are where the lines meet, so a symbol seen at an angle or in perspective is framed exactly. Which
/// corner holds the L, and the symbol's size, are then chosen by sampling the border for every size: only the right
/// one has both solid edges dark and both clock tracks alternating.
enum DataMatrixDetector {
    /// A framed symbol: its corners clockwise from the top-left (the L's corner is the bottom-left) and its size.
    struct Frame {
        let corners: [ImagePoint]
        let size: DataMatrixSize
        let grid: Perspective
    }

    /// The smallest candidate, in pixels a side: a 10×10 symbol at just over one pixel a module.
    static let smallestSide = 12

    /// A dark region that may be a symbol: its convex hull (clockwise on screen) and about how wide a module is.
    struct Candidate {
        let outline: [ImagePoint]
        let module: Double
    }

    /// Candidate regions, largest first: dark on light, then light on dark.
    static func candidates(in image: BitImage) -> (dark: [Candidate], light: [Candidate]) {
        var (dark, light) = DarkComponents.both(image)
        return (dark.hulls(minimumSide: smallestSide, limit: 12), light.hulls(minimumSide: smallestSide, limit: 12))
    }

    /// The frames a candidate may hold, most convincing first.
    static func frames(_ image: BitImage, _ candidate: Candidate) -> [Frame] {
        // A symbol's outline is all but a quadrilateral (its corners cut by at most a module): text, blots and
        // card art mostly are not.
        guard let first = largestQuadrilateral(candidate.outline),
            area(of: first) >= 0.85 * area(of: candidate.outline),
            let quad = refined(image, first, module: candidate.module)
        else { return [] }
        var scored: [(Frame, Double)] = []
        for rotation in 0..<4 {
            // Clockwise from the L's corner: bottom-left, top-left, top-right, bottom-right.
            let bottomLeft = quad[rotation], topLeft = quad[(rotation + 1) % 4]
            let topRight = quad[(rotation + 2) % 4], bottomRight = quad[(rotation + 3) % 4]
            let corners = [topLeft, topRight, bottomRight, bottomLeft]
            let across = distance(topLeft, topRight) + distance(bottomLeft, bottomRight)
            let down = distance(topLeft, bottomLeft) + distance(topRight, bottomRight)
            // Only the corner with a solid side either way can hold the L: the others are let go before any size is
            // tried (the sides sampled half a module in, at the module size the region's runs suggest).
            guard
                let unit = Perspective(
                    from: [ImagePoint(x: 0, y: 0), ImagePoint(x: 1, y: 0), ImagePoint(x: 1, y: 1), ImagePoint(x: 0, y: 1)],
                    to: corners),
                looksSolid(image, unit, inset: min(0.06, max(0.002, candidate.module / across)))
            else { continue }
            for size in DataMatrixSize.all {
                // The sides' lengths must roughly agree with the size's proportions (perspective allows a lot).
                let ratio = (across / Double(size.columns)) / (down / Double(size.rows))
                guard ratio > 0.5, ratio < 2,
                    across / Double(2 * size.columns) >= 1,
                    let grid = Perspective(
                        from: [
                            ImagePoint(x: 0, y: 0), ImagePoint(x: Double(size.columns), y: 0),
                            ImagePoint(x: Double(size.columns), y: Double(size.rows)), ImagePoint(x: 0, y: Double(size.rows)),
                        ],
                        to: corners)
                else { continue }
                let score = borderScore(image, grid, size)
                if score.solid >= 0.8, score.clock >= 0.75 {
                    scored.append((Frame(corners: corners, size: size, grid: grid), score.solid + score.clock))
                }
            }
        }
        return scored.sorted { $0.1 > $1.1 }.prefix(3).map { $0.0 }
    }

    /// Each module's centre sampled; nil when the grid runs off the image.
    static func sample(_ image: BitImage, _ frame: Frame) -> [Bool]? {
        image.modules(frame.grid, columns: frame.size.columns, rows: frame.size.rows)
    }

    /// Whether the left and bottom sides of the unit square mapped by `unit` are dark along most of their length,
    /// sampled `inset` of the side inside them.
    private static func looksSolid(_ image: BitImage, _ unit: Perspective, inset: Double) -> Bool {
        var dark = 0
        let samples = 32
        for step in 0..<samples {
            let along = 0.04 + 0.92 * Double(step) / Double(samples - 1)
            let left = unit.map(inset, along), bottom = unit.map(along, 1 - inset)
            if image.isDark(at: left.x, left.y) { dark += 1 }
            if image.isDark(at: bottom.x, bottom.y) { dark += 1 }
        }
        return dark * 4 >= samples * 2 * 3
    }

    /// The share of the L's modules read dark, and of the clock tracks' read as they alternate.
    private static func borderScore(_ image: BitImage, _ grid: Perspective, _ size: DataMatrixSize) -> (solid: Double, clock: Double) {
        var solid = 0, clock = 0
        let rows = size.rows, columns = size.columns
        for x in 0..<columns {
            let bottom = grid.map(Double(x) + 0.5, Double(rows) - 0.5)
            if image.isDark(at: bottom.x, bottom.y) { solid += 1 }
            let top = grid.map(Double(x) + 0.5, 0.5)
            if image.isDark(at: top.x, top.y) == (x % 2 == 0) { clock += 1 }
        }
        for y in 0..<rows {
            let left = grid.map(0.5, Double(y) + 0.5)
            if image.isDark(at: left.x, left.y) { solid += 1 }
            let right = grid.map(Double(columns) - 0.5, Double(y) + 0.5)
            if image.isDark(at: right.x, right.y) == (y % 2 == 1) { clock += 1 }
        }
        let count = Double(rows + columns)
        return (Double(solid) / count, Double(clock) / count)
    }

    /// The quadrilateral of largest area with its corners on the outline (clockwise, as the outline).
    static func largestQuadrilateral(_ outline: [ImagePoint]) -> [ImagePoint]? {
        // A long outline is thinned evenly: the corners need only be close, the sides are fitted afterwards.
        let stride = max(1, (outline.count + 27) / 28)
        let points = Swift.stride(from: 0, to: outline.count, by: stride).map { outline[$0] }
        let count = points.count
        guard count >= 4 else { return nil }
        func area(_ a: ImagePoint, _ b: ImagePoint, _ c: ImagePoint) -> Double {
            abs((b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y)) / 2
        }
        var best = 0.0
        var corners = [0, 1, 2, 3]
        for i in 0..<count - 3 {
            for k in i + 2..<count - 1 {
                var left = 0.0, leftIndex = i + 1
                for j in i + 1..<k {
                    let value = area(points[i], points[j], points[k])
                    if value > left { left = value; leftIndex = j }
                }
                var right = 0.0, rightIndex = k + 1
                for l in k + 1..<count {
                    let value = area(points[k], points[l], points[i])
                    if value > right { right = value; rightIndex = l }
                }
                if left + right > best {
                    best = left + right
                    corners = [i, leftIndex, k, rightIndex]
                }
            }
        }
        return corners.map { points[$0] }
    }

    /// The quadrilateral with each side fitted to the symbol's outer edge; nil when a side finds no edge.
    static func refined(_ image: BitImage, _ quad: [ImagePoint], module: Double) -> [ImagePoint]? {
        var lines: [Line] = []
        for side in 0..<4 {
            guard let line = fittedSide(image, from: quad[side], to: quad[(side + 1) % 4], module: module) else { return nil }
            lines.append(line)
        }
        var corners: [ImagePoint] = []
        for side in 0..<4 {
            guard let corner = lines[(side + 3) % 4].intersection(lines[side]) else { return nil }
            corners.append(corner)
        }
        // A fit that moved a corner far from where the outline had it is not this region's edge.
        let span = distance(quad[0], quad[2]) + distance(quad[1], quad[3])
        for (corner, first) in zip(corners, quad) where distance(corner, first) > span / 8 { return nil }
        return corners
    }

    /// A line through `point` along the unit vector `direction`.
    struct Line {
        let point: ImagePoint
        let direction: ImagePoint

        func intersection(_ other: Line) -> ImagePoint? {
            let cross = direction.x * other.direction.y - direction.y * other.direction.x
            guard abs(cross) > 1e-6 else { return nil }
            let dx = other.point.x - point.x, dy = other.point.y - point.y
            let t = (dx * other.direction.y - dy * other.direction.x) / cross
            return ImagePoint(x: point.x + t * direction.x, y: point.y + t * direction.y)
        }
    }

    /// The outer edge along the side from `a` to `b` (the quadrilateral clockwise, so outside is to the left of the
    /// direction of travel on screen): the first dark pixel met walking in from outside, at points along the side.
    private static func fittedSide(_ image: BitImage, from a: ImagePoint, to b: ImagePoint, module: Double) -> Line? {
        let length = distance(a, b)
        guard length >= 4 else { return nil }
        let ux = (b.x - a.x) / length, uy = (b.y - a.y) / length
        // Clockwise on screen (y down): the outward normal of a side travelled along u is (uy, −ux).
        let nx = uy, ny = -ux
        // The outline lies within a module or two of the edge (more only at a corner the clock track leaves light).
        let reach = 3 * module + 2
        // About three points a module, at most one a pixel: a side's few hundred walks are most of what framing costs.
        let steps = min(200, max(12, min(Int(length), Int(3 * length / max(1, module)))))
        var along: [Double] = []
        var depths: [Double] = []
        for step in 0..<steps {
            let t = length * (0.08 + 0.84 * Double(step) / Double(steps - 1))
            let baseX = a.x + ux * t, baseY = a.y + uy * t
            // The first dark pixel after a light one: a walk that starts on something dark beside the symbol (the
            // card's print, where the quiet zone is narrow) first walks off it.
            var depth = -reach
            var seenLight = false
            while depth <= reach {
                if image.isDark(at: baseX - nx * depth, baseY - ny * depth) {
                    if seenLight {
                        along.append(t)
                        depths.append(depth)
                        break
                    }
                } else {
                    seenLight = true
                }
                depth += 0.5
            }
        }
        guard along.count >= steps / 4 else { return nil }
        // The outermost points of each sixth of the side: a sixth spans more than one module of any symbol's clock
        // track, so it meets a dark clock module even where the walk between them went on into the data.
        var keep = [Bool](repeating: false, count: along.count)
        let segments = 6
        var first = 0
        for segment in 0..<segments {
            let limit = length * (0.08 + 0.84 * Double(segment + 1) / Double(segments))
            var last = first
            while last < along.count, along[last] <= limit + 1e-9 { last += 1 }
            if last > first {
                let outermost = depths[first..<last].min()!
                for index in first..<last where depths[index] <= outermost + 1 { keep[index] = true }
            }
            first = last
        }
        // Then a line through them, dropping points far from it (clutter met outside the symbol) and fitting again.
        var fit: (intercept: Double, slope: Double)?
        for _ in 0..<3 {
            guard let line = leastSquares(along, depths, keep) else { break }
            fit = line
            let residuals = along.indices.map { abs(depths[$0] - (line.intercept + line.slope * along[$0])) }
            keep = along.indices.map { keep[$0] && residuals[$0] <= 1.5 }
        }
        guard let line = fit else { return nil }
        // Back to image space: depth d at t lies at a + u t − n d.
        let start = ImagePoint(x: a.x - nx * line.intercept, y: a.y - ny * line.intercept)
        let endT = length
        let endDepth = line.intercept + line.slope * endT
        let end = ImagePoint(x: a.x + ux * endT - nx * endDepth, y: a.y + uy * endT - ny * endDepth)
        let span = distance(start, end)
        guard span > 0 else { return nil }
        return Line(point: start, direction: ImagePoint(x: (end.x - start.x) / span, y: (end.y - start.y) / span))
    }

    private static func leastSquares(_ xs: [Double], _ ys: [Double], _ keep: [Bool]) -> (intercept: Double, slope: Double)? {
        var n = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
        for index in xs.indices where keep[index] {
            let x = xs[index], y = ys[index]
            n += 1
            sx += x
            sy += y
            sxx += x * x
            sxy += x * y
        }
        guard n >= 3 else { return nil }
        let denominator = n * sxx - sx * sx
        guard abs(denominator) > 1e-9 else { return nil }
        let slope = (n * sxy - sx * sy) / denominator
        return ((sy - slope * sx) / n, slope)
    }

    /// The area of a simple polygon.
    static func area(of polygon: [ImagePoint]) -> Double {
        var twice = 0.0
        for index in polygon.indices {
            let a = polygon[index], b = polygon[(index + 1) % polygon.count]
            twice += a.x * b.y - b.x * a.y
        }
        return abs(twice) / 2
    }

    static func distance(_ a: ImagePoint, _ b: ImagePoint) -> Double {
        ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
    }
}
