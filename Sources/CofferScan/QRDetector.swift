/// Finds QR symbols in a black-and-white image: the three finder patterns (dark, light, dark ×3, light, dark along
/// every line through their centres), the bottom-right alignment pattern where the version has one, and the
/// perspective that maps the module grid onto the image.
enum QRDetector {
    /// A finder pattern's centre, its module size, and how many scan rows confirmed it.
    struct Finder: Equatable {
        var x: Double
        var y: Double
        var moduleSize: Double
        var confirmations: Int
    }

    /// Where a symbol's grid lies: the finders (top-left, top-right, bottom-left), its estimated size in modules
    /// and the map from module coordinates to image pixels.
    struct Placement {
        let topLeft: Finder, topRight: Finder, bottomLeft: Finder
        let dimension: Int
        let grid: Perspective
    }

    // MARK: Finder patterns

    /// Every finder pattern: rows are scanned for 1:1:3:1:1 runs, each hit is checked down its column, along its
    /// row again and along a diagonal, and hits of one pattern are merged.
    static func finders(in image: BitImage) -> [Finder] {
        var found: [Finder] = []
        // A pattern 7 modules high is crossed by several rows even at 1.5 px a module; larger images need fewer.
        let step = max(1, image.height / 320)
        var runs: [Int] = []
        runs.reserveCapacity(image.width)
        for row in stride(from: step / 2, to: image.height, by: step) {
            // Run lengths along the row, the first one light (possibly empty).
            runs.removeAll(keepingCapacity: true)
            image.runs(ofRow: row, into: &runs)
            var end = runs[0]
            var index = 1
            while index + 4 < runs.count {
                // The middle run (three modules) is longer than the light runs beside it (one each) in every pattern
                // the ratio test accepts: most places fail this first, and only candidates get their own array.
                let middle = runs[index + 2]
                if middle > runs[index + 1], middle > runs[index + 3] {
                    let counts = Array(runs[index..<index + 5])
                    let patternEnd = end + counts.reduce(0, +)
                    let outer = cappedOuterRuns(counts)
                    if isFinderRatio(counts) || isFinderEdgeRatio(outer),
                        let centre = confirm(image, counts: counts, expected: outer.reduce(0, +), row: row, end: patternEnd)
                    {
                        merge(centre, into: &found)
                    }
                }
                end += runs[index] + runs[index + 1]
                index += 2
            }
        }
        return found
    }

    /// Whether five runs are 1:1:3:1:1 within `tolerance` of a module each (the middle within three times that).
    static func isFinderRatio(_ counts: [Int], tolerance: Double = 0.5) -> Bool {
        let total = counts.reduce(0, +)
        guard total >= 7, counts.allSatisfy({ $0 > 0 }) else { return false }
        let module = Double(total) / 7
        let slack = module * tolerance
        return abs(module - Double(counts[0])) < slack && abs(module - Double(counts[1])) < slack
            && abs(3 * module - Double(counts[2])) < 3 * slack && abs(module - Double(counts[3])) < slack
            && abs(module - Double(counts[4])) < slack
    }

    /// Whether five runs are 1:1:3:1:1 measured edge to edge: each dark run with the light run after it, and each
    /// light run with the dark run after it, spans 2, 4, 4 and 2 modules. Blur and a threshold set too dark or too
    /// light widen every dark run and narrow every light one by the same amount, which such sums cancel; a ring
    /// worn to a third of a module by motion blur passes here where the plain ratio fails. Each sum may be off by
    /// half a module and half a pixel. Modules under 2 pixels are left to the plain ratio: there, sensor noise
    /// makes such runs everywhere, and blur that wears a ring that thin leaves nothing to read anyway.
    static func isFinderEdgeRatio(_ counts: [Int]) -> Bool {
        guard counts.allSatisfy({ $0 > 0 }) else { return false }
        let sums = [counts[0] + counts[1], counts[1] + counts[2], counts[2] + counts[3], counts[3] + counts[4]]
        let module = Double(sums.reduce(0, +)) / 12
        guard module >= 2 else { return false }
        let slack = module / 2 + 0.5
        return abs(Double(sums[0]) - 2 * module) <= slack && abs(Double(sums[1]) - 4 * module) <= slack
            && abs(Double(sums[2]) - 4 * module) <= slack && abs(Double(sums[3]) - 2 * module) <= slack
    }

    /// The runs with the outer two cut to a module and a half (a module measured on the inner three): a blurred
    /// ring runs into the data or the card next to it, and the inner runs then decide.
    static func cappedOuterRuns(_ counts: [Int]) -> [Int] {
        let cap = Int((Double(counts[1] + counts[2] + counts[3]) / 5 * 1.5).rounded(.up))
        return [min(counts[0], cap), counts[1], counts[2], counts[3], min(counts[4], cap)]
    }

    /// The centre of the finder whose row runs end at `end`, when its column, its row through that centre and a
    /// diagonal show the same pattern about `expected` pixels across.
    private static func confirm(_ image: BitImage, counts: [Int], expected total: Int, row: Int, end: Int) -> Finder? {
        let centreX = Double(end - counts[4] - counts[3]) - Double(counts[2]) / 2
        guard let vertical = crossCheck(image, from: (centreX, Double(row)), direction: (0, 1), expected: total),
            let horizontal = crossCheck(image, from: (centreX, vertical.centre), direction: (1, 0), expected: total)
        else { return nil }
        let x = horizontal.centre, y = vertical.centre
        guard crossCheck(image, from: (x, y), direction: (1, 1), expected: total) != nil else { return nil }
        return Finder(x: x, y: y, moduleSize: (vertical.total + horizontal.total) / 14, confirmations: 1)
    }

    /// The runs through `from` along `direction` and back: the centre (along the axis that moves) and total
    /// length, when they are 1:1:3:1:1 and about as long as `expected`.
    private static func crossCheck(
        _ image: BitImage, from: (Double, Double), direction: (Int, Int), expected: Int
    )
        -> (centre: Double, total: Double)?
    {
        let x0 = Int(from.0), y0 = Int(from.1)
        guard x0 >= 0, y0 >= 0, x0 < image.width, y0 < image.height, image.isDark(x0, y0) else { return nil }
        let limit = expected * 2
        // counts[2] is the middle dark run; walk back for runs 1 and 0, forward for 3 and 4.
        var counts = [0, 0, 0, 0, 0]
        func inside(_ x: Int, _ y: Int) -> Bool { x >= 0 && y >= 0 && x < image.width && y < image.height }
        func walk(_ index: Int, dark: Bool, from point: inout (Int, Int), sign: Int, cap: Int) {
            while inside(point.0, point.1), image.isDark(point.0, point.1) == dark, counts[index] <= cap {
                counts[index] += 1
                point.0 += sign * direction.0
                point.1 += sign * direction.1
            }
        }
        var back = (x0, y0), ahead = (x0 + direction.0, y0 + direction.1)
        walk(2, dark: true, from: &back, sign: -1, cap: limit)
        walk(1, dark: false, from: &back, sign: -1, cap: limit)
        walk(2, dark: true, from: &ahead, sign: 1, cap: limit)
        walk(3, dark: false, from: &ahead, sign: 1, cap: limit)
        let startOfCentre = (direction.1 != 0 ? back.1 : back.0) + 1 + counts[1]
        // The outer ring is walked only a module and a half: in a photo a shadow or the card's edge can run into it,
        // and the light separator around it is then lost in the threshold; the inner three runs decide.
        let innerModule = Double(counts[1] + counts[2] + counts[3]) / 5
        let outerCap = Int((innerModule * 1.5).rounded(.up))
        walk(0, dark: true, from: &back, sign: -1, cap: outerCap)
        walk(4, dark: true, from: &ahead, sign: 1, cap: outerCap)
        counts[0] = min(counts[0], outerCap)
        counts[4] = min(counts[4], outerCap)
        let total = counts.reduce(0, +)
        // Along a row or column the total is near the row's. A diagonal is counted in steps of √2 pixels: through a
        // level pattern it takes as many steps as the row has pixels, through one turned 45° half as many.
        // The diagonal runs through the pattern's corners, where blur and the threshold wear the rings thinnest at
        // small sizes: its runs get nearly a module of slack; the row and column take the plain or the edge-to-edge
        // ratio, and decoding stays strict.
        let diagonal = direction.0 != 0 && direction.1 != 0
        let (low, high) = diagonal ? (0.4, 1.3) : (0.6, 1.4)
        guard isFinderRatio(counts, tolerance: diagonal ? 0.9 : 0.5) || isFinderEdgeRatio(counts),
            Double(total) >= low * Double(expected),
            Double(total) <= high * Double(expected)
        else { return nil }
        // The middle of the centre run, on the axis that moves.
        let centre = Double(startOfCentre) + Double(counts[2]) / 2
        return (centre, Double(total))
    }

    private static func merge(_ finder: Finder, into found: inout [Finder]) {
        for index in found.indices {
            let other = found[index]
            if abs(other.x - finder.x) <= other.moduleSize * 1.5, abs(other.y - finder.y) <= other.moduleSize * 1.5,
                abs(other.moduleSize - finder.moduleSize) <= max(1, other.moduleSize * 0.5)
            {
                let n = Double(other.confirmations)
                found[index] = Finder(
                    x: (other.x * n + finder.x) / (n + 1), y: (other.y * n + finder.y) / (n + 1),
                    moduleSize: (other.moduleSize * n + finder.moduleSize) / (n + 1), confirmations: other.confirmations + 1)
                return
            }
        }
        found.append(finder)
    }

    // MARK: Symbols

    /// Triples of finders that can be one symbol's corners (module sizes that agree, a near right angle at one of
    /// them, sides of about equal length), most plausible first, each ordered top-left, top-right, bottom-left.
    static func candidateTriples(_ finders: [Finder]) -> [(Finder, Finder, Finder)] {
        let pool = Array(finders.sorted { $0.confirmations > $1.confirmations }.prefix(16))
        var triples: [(score: Double, triple: (Finder, Finder, Finder))] = []
        guard pool.count >= 3 else { return [] }
        for i in 0..<pool.count - 2 {
            for j in i + 1..<pool.count - 1 {
                for k in j + 1..<pool.count {
                    let sizes = [pool[i].moduleSize, pool[j].moduleSize, pool[k].moduleSize]
                    guard sizes.max()! <= 1.6 * sizes.min()! else { continue }
                    if let (score, ordered) = order(pool[i], pool[j], pool[k]) { triples.append((score, ordered)) }
                }
            }
        }
        return triples.sorted { $0.score < $1.score }.map { $0.triple }
    }

    /// The corner at the right angle, then the other two in reading order; a score (lower is better), or nil when
    /// the three cannot be a symbol's finders.
    private static func order(_ a: Finder, _ b: Finder, _ c: Finder) -> (Double, (Finder, Finder, Finder))? {
        func distance(_ p: Finder, _ q: Finder) -> Double { ((p.x - q.x) * (p.x - q.x) + (p.y - q.y) * (p.y - q.y)).squareRoot() }
        let ab = distance(a, b), bc = distance(b, c), ac = distance(a, c)
        var (corner, p, q) = (a, b, c)
        var legs = (ab, ac), hypotenuse = bc
        if ab >= bc && ab >= ac {
            (corner, p, q) = (c, a, b)
            legs = (ac, bc)
            hypotenuse = ab
        } else if ac >= bc && ac >= ab {
            (corner, p, q) = (b, a, c)
            legs = (ab, bc)
            hypotenuse = ac
        }
        let module = (a.moduleSize + b.moduleSize + c.moduleSize) / 3
        // At least version 1 apart (14 modules between centres), legs within a factor 1.5 (a steep tilt), and
        // the hypotenuse near √2 legs.
        guard min(legs.0, legs.1) >= 10 * module, max(legs.0, legs.1) <= 1.5 * min(legs.0, legs.1) else { return nil }
        let expected = (legs.0 * legs.0 + legs.1 * legs.1).squareRoot()
        let skew = abs(hypotenuse - expected) / expected
        guard skew < 0.25 else { return nil }
        // Top-right is the one that a clockwise quarter turn from the corner reaches first (image y grows down).
        let cross = (p.x - corner.x) * (q.y - corner.y) - (p.y - corner.y) * (q.x - corner.x)
        let (topRight, bottomLeft) = cross > 0 ? (p, q) : (q, p)
        let score =
            skew + abs(legs.0 - legs.1) / max(legs.0, legs.1)
            + abs(a.moduleSize - b.moduleSize) / module + abs(b.moduleSize - c.moduleSize) / module
        return (score, (corner, topRight, bottomLeft))
    }

    /// The places the symbol's bottom-right reference point may be, most likely first: the alignment pattern near
    /// where the finders put it (versions 2 and up), then the fourth corner of the finders' parallelogram and points
    /// around it up to `search` modules away, for a tilt the parallelogram misses. Each comes with the module
    /// coordinate it stands for.
    static func bottomRightCandidates(
        _ image: BitImage, _ triple: (Finder, Finder, Finder), dimension: Int,
        search: Int
    ) -> [(point: ImagePoint, module: Double)] {
        let (topLeft, topRight, bottomLeft) = triple
        let side = Double(dimension)
        // A tilted symbol's modules shrink with distance from the camera. Along a line, a perspective map's scale
        // goes as 1/(1 + c·s)², so the square root of the module-size ratio between two finders is the ratio of the
        // map's denominators there, r; the fourth corner is then (r_u·TR + r_v·BL − TL) / (r_u + r_v − 1) (the
        // parallelogram's corner when both are 1).
        func ratio(_ near: Finder, _ far: Finder) -> Double {
            guard let nearSize = moduleSize(image, of: near, toward: far), let farSize = moduleSize(image, of: far, toward: near)
            else { return 1 }
            return min(1.6, max(0.6, (nearSize / farSize).squareRoot()))
        }
        let (across, down) = (ratio(topLeft, topRight), ratio(topLeft, bottomLeft))
        let denominator = across + down - 1
        let corner = ImagePoint(
            x: (across * topRight.x + down * bottomLeft.x - topLeft.x) / denominator,
            y: (across * topRight.y + down * bottomLeft.y - topLeft.y) / denominator)
        var candidates: [(point: ImagePoint, module: Double)] = []
        if dimension > 21,
            let first = Perspective(
                from: [
                    ImagePoint(x: 3.5, y: 3.5), ImagePoint(x: side - 3.5, y: 3.5), ImagePoint(x: side - 3.5, y: side - 3.5),
                    ImagePoint(x: 3.5, y: side - 3.5),
                ],
                to: [
                    ImagePoint(x: topLeft.x, y: topLeft.y), ImagePoint(x: topRight.x, y: topRight.y), corner,
                    ImagePoint(x: bottomLeft.x, y: bottomLeft.y),
                ])
        {
            // The alignment pattern's centre lies 3 modules in from the bottom-right finder-centre lines.
            let estimate = first.map(side - 6.5, side - 6.5)
            let module = (topLeft.moduleSize + topRight.moduleSize + bottomLeft.moduleSize) / 3
            if let found = alignment(image, near: estimate, moduleSize: module) { candidates.append((found, side - 6.5)) }
        }
        let stepAcross = ImagePoint(x: (topRight.x - topLeft.x) / (side - 7), y: (topRight.y - topLeft.y) / (side - 7))
        let stepDown = ImagePoint(x: (bottomLeft.x - topLeft.x) / (side - 7), y: (bottomLeft.y - topLeft.y) / (side - 7))
        var offsets: [(Int, Int)] = []
        for dx in -search...search {
            for dy in -search...search { offsets.append((dx, dy)) }
        }
        for (dx, dy) in offsets.sorted(by: { abs($0.0) + abs($0.1) < abs($1.0) + abs($1.1) }) {
            let point = ImagePoint(
                x: corner.x + Double(dx) * stepAcross.x + Double(dy) * stepDown.x,
                y: corner.y + Double(dx) * stepAcross.y + Double(dy) * stepDown.y)
            candidates.append((point, side - 3.5))
        }
        return candidates
    }

    /// The grid of the symbol with these finders at `dimension` modules a side, its bottom-right reference point at
    /// `bottomRight` (standing for module coordinate `module` on both axes).
    static func placement(
        _ triple: (Finder, Finder, Finder), dimension: Int, bottomRight: ImagePoint, module: Double
    )
        -> Placement?
    {
        let (topLeft, topRight, bottomLeft) = triple
        guard dimension >= 21, dimension <= 177 else { return nil }
        let side = Double(dimension)
        guard
            let grid = Perspective(
                from: [
                    ImagePoint(x: 3.5, y: 3.5), ImagePoint(x: side - 3.5, y: 3.5), ImagePoint(x: module, y: module),
                    ImagePoint(x: 3.5, y: side - 3.5),
                ],
                to: [
                    ImagePoint(x: topLeft.x, y: topLeft.y), ImagePoint(x: topRight.x, y: topRight.y), bottomRight,
                    ImagePoint(x: bottomLeft.x, y: bottomLeft.y),
                ])
        else { return nil }
        return Placement(topLeft: topLeft, topRight: topRight, bottomLeft: bottomLeft, dimension: dimension, grid: grid)
    }

    /// The symbol's size in modules the finders imply: their distances over the module size measured along the
    /// same lines (a turned symbol's finders look wider along rows and columns than along its own axes), plus the 7
    /// modules the centres stand in from the edges, rounded to the nearest 4k + 1.
    static func estimatedDimension(_ image: BitImage, _ triple: (Finder, Finder, Finder)) -> Int {
        let (topLeft, topRight, bottomLeft) = triple
        func modules(_ p: Finder, _ q: Finder) -> Double {
            let distance = ((p.x - q.x) * (p.x - q.x) + (p.y - q.y) * (p.y - q.y)).squareRoot()
            let measured = [moduleSize(image, of: p, toward: q), moduleSize(image, of: q, toward: p)].compactMap { $0 }
            let module = measured.isEmpty ? (p.moduleSize + q.moduleSize) / 2 : measured.reduce(0, +) / Double(measured.count)
            return distance / module
        }
        let between = (modules(topLeft, topRight) + modules(topLeft, bottomLeft)) / 2
        let raw = Int((between + 7).rounded())
        return ((raw - 17 + 2) / 4) * 4 + 17
    }

    /// A finder's module size along the line to `other`: from its centre out through the dark middle, the light
    /// ring and the dark ring, both ways, is 7 modules.
    static func moduleSize(_ image: BitImage, of finder: Finder, toward other: Finder) -> Double? {
        let dx = other.x - finder.x, dy = other.y - finder.y
        let length = (dx * dx + dy * dy).squareRoot()
        guard length > 0 else { return nil }
        let (ux, uy) = (dx / length, dy / length)
        var total = 0.0
        for sign in [1.0, -1.0] {
            // Three changes of colour from the dark centre: to light, to dark, to light outside the pattern.
            var changes = 0
            var dark = true
            var step = 0.0
            let limit = finder.moduleSize * 6
            while changes < 3, step < limit {
                step += 0.5
                let isDark = image.isDark(at: finder.x + sign * ux * step, finder.y + sign * uy * step)
                if isDark != dark {
                    changes += 1
                    dark = isDark
                }
            }
            guard changes == 3 else { return nil }
            total += step
        }
        let module = total / 7
        guard module >= finder.moduleSize * 0.5, module <= finder.moduleSize * 1.5 else { return nil }
        return module
    }

    /// The centre of an alignment pattern (a dark module in a light ring in a dark ring) within a few modules of
    /// `near`: rows are searched outward for light, dark, light runs of a module each between dark runs, and a hit
    /// must show the same down its column.
    private static func alignment(_ image: BitImage, near: ImagePoint, moduleSize: Double) -> ImagePoint? {
        let reach = Int(moduleSize * 6)
        let centreX = Int(near.x), centreY = Int(near.y)
        var best: (distance: Double, point: ImagePoint)?
        for offset in 0...(2 * reach) {
            let y = centreY + (offset % 2 == 0 ? offset / 2 : -(offset + 1) / 2)
            guard y >= 0, y < image.height else { continue }
            let left = max(0, centreX - reach), right = min(image.width - 1, centreX + reach)
            guard left < right else { continue }
            var runs: [(start: Int, length: Int, dark: Bool)] = []
            var x = left
            while x <= right {
                let dark = image.isDark(x, y)
                if let last = runs.last, last.dark == dark {
                    runs[runs.count - 1].length += 1
                } else {
                    runs.append((x, 1, dark))
                }
                x += 1
            }
            guard runs.count >= 5 else { continue }
            for index in 2..<runs.count - 2 where runs[index].dark {
                let (before, centre, after) = (runs[index - 1], runs[index], runs[index + 1])
                guard !before.dark, !after.dark, runs[index - 2].dark, runs[index + 2].dark,
                    [before.length, centre.length, after.length].allSatisfy({ abs(Double($0) - moduleSize) <= moduleSize * 0.7 })
                else { continue }
                let cx = Double(centre.start) + Double(centre.length) / 2
                guard let vertical = alignmentColumn(image, x: Int(cx), y: y, moduleSize: moduleSize) else { continue }
                let point = ImagePoint(x: cx, y: vertical)
                let distance = (point.x - near.x) * (point.x - near.x) + (point.y - near.y) * (point.y - near.y)
                if best == nil || distance < best!.distance { best = (distance, point) }
            }
            if best != nil, offset > Int(moduleSize * 2) { break }
        }
        return best?.point
    }

    /// The vertical centre of the alignment pattern's middle module through (x, y), when its column shows light
    /// runs of about a module above and below it and dark beyond.
    private static func alignmentColumn(_ image: BitImage, x: Int, y: Int, moduleSize: Double) -> Double? {
        guard image.isDark(x, y) else { return nil }
        var top = y, bottom = y
        while top > 0, image.isDark(x, top - 1), Double(y - top) < moduleSize * 2 { top -= 1 }
        while bottom < image.height - 1, image.isDark(x, bottom + 1), Double(bottom - y) < moduleSize * 2 { bottom += 1 }
        let centre = Double(bottom - top + 1)
        guard abs(centre - moduleSize) <= moduleSize * 0.7 else { return nil }
        var above = 0, below = 0
        var row = top - 1
        while row >= 0, !image.isDark(x, row), Double(above) < moduleSize * 2 { above += 1; row -= 1 }
        guard row >= 0, image.isDark(x, row) else { return nil }
        row = bottom + 1
        while row < image.height, !image.isDark(x, row), Double(below) < moduleSize * 2 { below += 1; row += 1 }
        guard row < image.height, image.isDark(x, row),
            abs(Double(above) - moduleSize) <= moduleSize * 0.7, abs(Double(below) - moduleSize) <= moduleSize * 0.7
        else { return nil }
        return Double(top) + centre / 2
    }
}
