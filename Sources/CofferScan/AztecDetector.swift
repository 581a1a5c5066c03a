/// Finds Aztec bull's-eyes in a black-and-white image and fits the module grid around them: rows are scanned for the
/// core's equal runs (light, dark, light, dark centre, …), each hit is confirmed along its column and both diagonals,
/// then rays cast from the centre find the light rings' edges, and a square fitted to them gives the perspective.
enum AztecDetector {
    /// A bull's-eye centre, and the longest of its seven-module core's crossings (a bound on its size in pixels).
    struct Centre {
        let x: Double
        let y: Double
        let reach: Double
    }

    /// Centres looked at in one image at most: a hostile image full of rings costs no more than this.
    static let maximumCentres = 24

    /// Every bull's-eye centre in `image`.
    static func centres(in image: BitImage) -> [Centre] {
        var found: [Centre] = []
        // The core's equal runs show only on rows through the one-module centre: rows two pixels apart (in a
        // 720-line frame) meet a centre module down to 1.5 px in most images; smaller frames are scanned on every
        // row, and no image's rows more than three pixels apart (a photo's small symbol has small modules too).
        let step = max(1, min(3, image.height / 360))
        var runs: [Int] = []
        runs.reserveCapacity(image.width + 1)
        var hits: [(x: Double, width: Int)] = []
        for row in stride(from: step / 2, to: image.height, by: step) {
            runs.removeAll(keepingCapacity: true)
            image.runs(ofRow: row, into: &runs)
            // A dark run, the core's seven and a dark run after the row's first light run.
            guard runs.count >= 10 else { continue }
            hits.removeAll(keepingCapacity: true)
            runs.withUnsafeBufferPointer { runs in
                // runs[0] is light, so light runs sit at even indexes; the core's seven runs start with a light one
                // and have dark runs on both sides, no thinner than its centre.
                var start = runs[0] + runs[1]
                var index = 2
                while index + 7 < runs.count {
                    let centre = runs[index + 3]
                    if runs[index - 1] >= centre - 2, runs[index + 7] >= centre - 2,
                        isCore(
                            runs[index], runs[index + 1], runs[index + 2], centre, runs[index + 4], runs[index + 5],
                            runs[index + 6])
                    {
                        var width = 0
                        for k in index..<index + 7 { width += runs[k] }
                        hits.append(
                            (
                                Double(start + runs[index] + runs[index + 1] + runs[index + 2]) + Double(centre) / 2,
                                width
                            ))
                    }
                    start += runs[index] + runs[index + 1]
                    index += 2
                }
            }
            for (x, width) in hits where !found.contains(where: { abs($0.x - x) + abs($0.y - Double(row)) < $0.reach / 2 }) {
                if let centre = confirm(image, x: x, y: Double(row) + 0.5, width: width) {
                    found.append(centre)
                    if found.count == maximumCentres { return found }
                }
            }
        }
        return found
    }

    /// Whether seven runs (light, dark, light, the dark centre, light, dark, light) are a bull's-eye's core: each
    /// light run with its dark neighbour about as long as every other such pair (a pair is immune to the threshold's
    /// bias between dark and light), and the centre with the light runs beside it about three modules long (the
    /// lone centre module is the first that blur thins, to a pixel or two, so it is not measured on its own).
    @inline(__always)
    private static func isCore(_ r0: Int, _ r1: Int, _ r2: Int, _ r3: Int, _ r4: Int, _ r5: Int, _ r6: Int) -> Bool {
        let p0 = r0 + r1, p1 = r1 + r2, p2 = r4 + r5, p3 = r5 + r6
        let low = min(min(p0, p1), min(p2, p3)), high = max(max(p0, p1), max(p2, p3))
        guard high <= low * 4 / 3 + 1 else { return false }
        // Three modules are one and a half pairs: between 1.1 and 2.
        let middle = 40 * (r2 + r3 + r4), pairs = p0 + p1 + p2 + p3
        return middle >= 11 * pairs && middle <= 20 * pairs
    }

    /// The centre near (x, y), where a row's core is `width` pixels wide, when its column and both diagonals show
    /// the core too, about as wide (a turn or a tilt changes a crossing's length by a factor of two at most).
    private static func confirm(_ image: BitImage, x: Double, y: Double, width: Int) -> Centre? {
        var x = x, y = y
        let expected = Double(width)
        guard let vertical = crossCheck(image, x: x, y: y, dx: 0, dy: 1, expected: expected) else { return nil }
        y = vertical.middle
        guard let horizontal = crossCheck(image, x: x, y: y, dx: 1, dy: 0, expected: expected) else { return nil }
        x = horizontal.middle
        guard let falling = crossCheck(image, x: x, y: y, dx: 1, dy: 1, expected: expected / 1.4143),
            let rising = crossCheck(image, x: x, y: y, dx: 1, dy: -1, expected: expected / 1.4143)
        else { return nil }
        // A diagonal step is √2 pixels long.
        let lengths = [
            Double(vertical.spread), Double(horizontal.spread), 1.4143 * Double(falling.spread),
            1.4143 * Double(rising.spread),
        ]
        let shortest = lengths.min()!, reach = lengths.max()!
        guard reach <= 2.2 * shortest else { return nil }
        return Centre(x: x, y: y, reach: reach)
    }

    /// The seven runs through (x, y) along (dx, dy) both ways: their total length in steps and where their middle
    /// lies (x for a row, y for a column), when they are the core.
    private static func crossCheck(
        _ image: BitImage, x: Double, y: Double, dx: Int, dy: Int, expected: Double
    )
        -> (spread: Int, middle: Double)?
    {
        let x0 = Int(x), y0 = Int(y)
        guard x0 >= 0, y0 >= 0, x0 < image.width, y0 < image.height else { return nil }
        let limit = Int(expected) + 1
        func run(_ px: inout Int, _ py: inout Int, _ sx: Int, _ sy: Int, dark: Bool, cap: Int) -> Int {
            var length = 0
            while length < cap, px >= 0, py >= 0, px < image.width, py < image.height, image.isDark(px, py) == dark {
                length += 1
                px += sx
                py += sy
            }
            return length
        }
        var fx = x0, fy = y0, bx = x0 - dx, by = y0 - dy
        // A centre lost to blur leaves the light ring around it: its runs start at (x, y) and the one before.
        let forward = run(&fx, &fy, dx, dy, dark: true, cap: limit)
        let backward = forward == 0 ? 0 : run(&bx, &by, -dx, -dy, dark: true, cap: limit)
        let centre = forward + backward
        // The centre is one of the seven equal modules, in a crossing up to twice as long as the row's.
        guard Double(centre) <= expected * 2 / 7 else { return nil }
        // Three runs out from the centre each way: light, dark, light; none longer than half the core.
        let cap = limit / 2 + 1
        var ahead = (0, 0, 0), behind = (0, 0, 0)
        for forwards in [true, false] {
            var px = forwards ? fx : bx, py = forwards ? fy : by
            let (sx, sy) = forwards ? (dx, dy) : (-dx, -dy)
            var lengths = (0, 0, 0)
            lengths.0 = run(&px, &py, sx, sy, dark: false, cap: cap)
            lengths.1 = run(&px, &py, sx, sy, dark: true, cap: cap)
            lengths.2 = run(&px, &py, sx, sy, dark: false, cap: cap)
            // A run that reaches the cap or the image's edge is not a ring.
            guard lengths.0 > 0, lengths.1 > 0, lengths.2 > 0, lengths.0 < cap, lengths.1 < cap, lengths.2 < cap,
                px >= 0, py >= 0, px < image.width, py < image.height
            else { return nil }
            if forwards { ahead = lengths } else { behind = lengths }
        }
        guard isCore(behind.2, behind.1, behind.0, centre, ahead.0, ahead.1, ahead.2) else { return nil }
        let spread = centre + ahead.0 + ahead.1 + ahead.2 + behind.0 + behind.1 + behind.2
        guard Double(spread) <= 2 * expected, Double(spread) * 2 >= expected else { return nil }
        // The middle between the inner edges of the dark ring around the centre (steadier than the centre alone),
        // along the axis that moves.
        return (spread, Double(dx != 0 ? x0 : y0) + Double(forward + ahead.0 - backward - behind.0) / 2)
    }

    // MARK: The grid

    /// Rays cast from the centre to find the rings' edges.
    static let rayCount = 64
    private static let directions: [(x: Double, y: Double)] = (0..<rayCount).map { index in
        let angle = 2 * Double.pi * Double(index) / Double(rayCount)
        return (cosine(angle), sine(angle))
    }

    /// The edges along each ray from the centre outward, in pixels: up to six (the rings at 0.5 to 5.5 modules).
    struct Rays {
        /// `edges[ray * 6 + k]`, the k-th colour change along the ray; `counts[ray]` of them were found.
        var edges: [Double]
        var counts: [Int]
    }

    /// The colour changes along each ray, out to where the light ring five modules out ends. The first change is
    /// the centre module's edge, or, where blur has lost the centre, the first sample's.
    static func castRays(_ image: BitImage, _ centre: Centre) -> Rays {
        var rays = Rays(edges: [Double](repeating: 0, count: rayCount * 6), counts: [Int](repeating: 0, count: rayCount))
        // The core spans seven modules; the sixth edge lies 5.5 modules out, 7.8 along a diagonal, more in a tilt.
        let maximum = centre.reach / 7 * 11
        for ray in 0..<rayCount {
            let (dx, dy) = directions[ray]
            var dark = true, count = 0
            var distance = 0.5
            while distance < maximum, count < 6 {
                if image.isDark(at: centre.x + dx * distance, centre.y + dy * distance) != dark {
                    rays.edges[ray * 6 + count] = distance - 0.25
                    count += 1
                    dark.toggle()
                }
                distance += 0.5
            }
            rays.counts[ray] = count
        }
        return rays
    }

    /// Points on the middle of the light ring `ring` (3, or 5 in a full symbol) modules from the centre, one a ray
    /// where the ray's edges up to it are evenly spaced (nil elsewhere).
    static func ringPoints(_ rays: Rays, _ centre: Centre, ring: Int) -> [ImagePoint?] {
        (0..<rayCount).map { ray -> ImagePoint? in
            guard rays.counts[ray] >= ring + 1 else { return nil }
            let base = ray * 6
            // Edges at 0.5, 1.5, … modules: the ring's outer edge is the (ring + 1)-th. The centre's own edge is
            // left out of the spacing: blur thins the lone centre module, or loses it.
            let width = (rays.edges[base + ring] - rays.edges[base + 1]) / Double(ring - 1)
            guard width > 0.7, rays.edges[base + 1] > 0.9 * width, rays.edges[base + 1] < 2.2 * width else { return nil }
            for k in 2...ring {
                let step = rays.edges[base + k] - rays.edges[base + k - 1]
                guard step > 0.5 * width, step < 1.5 * width else { return nil }
            }
            let middle = (rays.edges[base + ring - 1] + rays.edges[base + ring]) / 2
            let (dx, dy) = directions[ray]
            return ImagePoint(x: centre.x + dx * middle, y: centre.y + dy * middle)
        }
    }

    /// The perspective taking module offsets from the centre to the image, from the square of half-side `ring`
    /// through `points` (in ray order, so clockwise): its corners are where the four sides' fitted lines meet.
    static func fitSquare(_ points: [ImagePoint?], ring: Int) -> Perspective? {
        var indexes: [Int] = []
        var sumX = 0.0, sumY = 0.0
        for (index, point) in points.enumerated() {
            guard let point else { continue }
            indexes.append(index)
            sumX += point.x
            sumY += point.y
        }
        guard indexes.count >= rayCount / 2 else { return nil }
        let cx = sumX / Double(indexes.count), cy = sumY / Double(indexes.count)
        func point(_ index: Int) -> ImagePoint { points[index]! }
        func distance(_ index: Int) -> Double {
            let p = point(index)
            return ((p.x - cx) * (p.x - cx) + (p.y - cy) * (p.y - cy)).squareRoot()
        }
        // A corner is the farthest point; the opposite one the farthest half-way round; the others the farthest
        // from the diagonal between them, a quarter of the way round either side.
        let first = indexes.max { distance($0) < distance($1) }!
        func offset(_ index: Int) -> Int { (index - first + rayCount) % rayCount }
        func within(_ from: Int, _ to: Int) -> [Int] {
            indexes.filter { offset($0) >= from * rayCount / 8 && offset($0) <= to * rayCount / 8 }
        }
        guard let opposite = within(3, 5).max(by: { distance($0) < distance($1) }) else { return nil }
        let diagonal = Line(point(first), point(opposite))
        guard let second = within(1, 3).max(by: { abs(diagonal.distance(point($0))) < abs(diagonal.distance(point($1))) }),
            let fourth = within(5, 7).max(by: { abs(diagonal.distance(point($0))) < abs(diagonal.distance(point($1))) })
        else { return nil }
        let cornerOffsets = [0, offset(second), offset(opposite), offset(fourth), rayCount]
        var lines: [Line] = []
        for side in 0..<4 {
            let members = indexes.filter { offset($0) > cornerOffsets[side] && offset($0) < cornerOffsets[side + 1] }
            guard members.count >= 3, let line = Line(fitting: members.map(point)) else { return nil }
            // Every point lies within half a module of its side: a ray that met something else (a blot, glare)
            // spoils the fit.
            let tolerance = max(1.0, line.length / Double(2 * ring) * 0.5)
            guard members.allSatisfy({ abs(line.distance(point($0))) <= tolerance }) else { return nil }
            lines.append(line)
        }
        var corners: [ImagePoint] = []
        for side in 0..<4 {
            guard let corner = lines[(side + 3) % 4].intersection(lines[side]) else { return nil }
            corners.append(corner)
        }
        let half = Double(ring)
        return Perspective(
            from: [
                ImagePoint(x: -half, y: -half), ImagePoint(x: half, y: -half),
                ImagePoint(x: half, y: half), ImagePoint(x: -half, y: half),
            ], to: corners)
    }

    /// A straight line through a point, with a unit direction, and the extent of the points it was fitted to.
    struct Line {
        let x: Double, y: Double
        let dx: Double, dy: Double
        let length: Double

        init(_ a: ImagePoint, _ b: ImagePoint) {
            let length = ((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)).squareRoot()
            (x, y) = (a.x, a.y)
            (dx, dy) = length > 0 ? ((b.x - a.x) / length, (b.y - a.y) / length) : (1, 0)
            self.length = length
        }

        /// The least-squares (orthogonal) line through `points`.
        init?(fitting points: [ImagePoint]) {
            guard points.count >= 2 else { return nil }
            let n = Double(points.count)
            let mx = points.reduce(0) { $0 + $1.x } / n, my = points.reduce(0) { $0 + $1.y } / n
            var sxx = 0.0, syy = 0.0, sxy = 0.0
            for p in points {
                sxx += (p.x - mx) * (p.x - mx)
                syy += (p.y - my) * (p.y - my)
                sxy += (p.x - mx) * (p.y - my)
            }
            // The principal axis of the scatter: the eigenvector of its larger eigenvalue (of two expressions for
            // it, the longer: the other vanishes when the line is level or upright).
            let largest = (sxx + syy) / 2 + (((sxx - syy) / 2) * ((sxx - syy) / 2) + sxy * sxy).squareRoot()
            var (ex, ey) = (sxy, largest - sxx)
            if ex * ex + ey * ey < (largest - syy) * (largest - syy) + sxy * sxy { (ex, ey) = (largest - syy, sxy) }
            let norm = (ex * ex + ey * ey).squareRoot()
            guard norm > 0 else { return nil }
            (x, y) = (mx, my)
            (dx, dy) = (ex / norm, ey / norm)
            var low = 0.0, high = 0.0
            for p in points {
                let along = (p.x - mx) * dx + (p.y - my) * dy
                low = min(low, along)
                high = max(high, along)
            }
            length = high - low
        }

        /// Signed distance of `point` from the line.
        func distance(_ point: ImagePoint) -> Double { (point.x - x) * dy - (point.y - y) * dx }

        func intersection(_ other: Line) -> ImagePoint? {
            let denominator = dx * other.dy - dy * other.dx
            guard abs(denominator) > 1e-9 else { return nil }
            let t = ((other.x - x) * other.dy - (other.y - y) * other.dx) / denominator
            return ImagePoint(x: x + t * dx, y: y + t * dy)
        }
    }
}
