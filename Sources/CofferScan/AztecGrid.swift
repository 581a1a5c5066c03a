/// Keeps an Aztec symbol's sampling grid on its modules far from the bull's-eye. A grid fitted to the small core is
/// off by a module or more at the edge of a large symbol seen in a photo, so it is refitted outward in steps: within
/// a square of the symbol that the current grid still places to within half a module, every boundary between two
/// neighbouring modules of different colours is found in the image, and the perspective that puts all of them on
/// their module boundaries (least squares) replaces the grid before the square grows.
enum AztecGrid {
    /// `grid` (module offsets from the centre → pixels) refitted out to `halfSize` modules from the centre.
    static func refine(_ image: BitImage, _ grid: Perspective, halfSize: Int) -> Perspective {
        var grid = grid
        var reach = 5
        while true {
            // Half as far again each time: the error outside the refitted square grows with the distance.
            reach = min(halfSize, max(reach + 3, reach * 3 / 2))
            guard let refitted = refit(image, grid, reach: reach) else { return grid }
            grid = refitted
            if reach == halfSize { return grid }
        }
    }

    /// The grid refitted to the module boundaries within `reach` modules of the centre; nil when too few are seen.
    static func refit(_ image: BitImage, _ grid: Perspective, reach: Int) -> Perspective? {
        // Image coordinates are taken relative to the centre, in units of about a module, so the normal equations
        // stay well conditioned.
        let origin = grid.map(0, 0)
        let across = grid.map(Double(reach), 0)
        let scale = max(
            1,
            ((across.x - origin.x) * (across.x - origin.x) + (across.y - origin.y) * (across.y - origin.y))
                .squareRoot() / Double(reach))
        var system = NormalEquations()
        let side = 2 * reach + 1
        // The colour of each module's centre, read once.
        var dark = [Int8](repeating: -1, count: side * side)
        for v in -reach...reach {
            for u in -reach...reach {
                let point = grid.map(Double(u), Double(v))
                guard point.x >= 0, point.y >= 0, point.x < Double(image.width), point.y < Double(image.height) else { continue }
                dark[(v + reach) * side + u + reach] = image.isDark(at: point.x, point.y) ? 1 : 0
            }
        }
        var count = 0
        for v in -reach...reach {
            for u in -reach...reach {
                let here = dark[(v + reach) * side + u + reach]
                guard here >= 0 else { continue }
                // The boundary with the right-hand neighbour (constant u) and with the one below (constant v).
                for (du, dv) in [(1, 0), (0, 1)] where u + du <= reach && v + dv <= reach {
                    let there = dark[(v + dv + reach) * side + u + du + reach]
                    guard there >= 0, there != here,
                        let edge = boundary(
                            image, from: grid.map(Double(u), Double(v)),
                            to: grid.map(Double(u + du), Double(v + dv)), startDark: here == 1)
                    else { continue }
                    let x = (edge.x - origin.x) / scale, y = (edge.y - origin.y) / scale
                    if du == 1 {
                        system.add(x: x, y: y, u: Double(u) + 0.5, alongU: true)
                    } else {
                        system.add(x: x, y: y, u: Double(v) + 0.5, alongU: false)
                    }
                    count += 1
                }
            }
        }
        // Far more boundaries than the eight unknowns, so stray ones (noise, a blot) weigh little.
        guard count >= 32, let inverse = system.solve() else { return nil }
        // Four image points well apart, and where the refitted inverse puts them, fix the new grid.
        let corners = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)].map { grid.map($0.0 * Double(reach), $0.1 * Double(reach)) }
        var modules: [ImagePoint] = []
        for corner in corners {
            guard let module = inverse.map((corner.x - origin.x) / scale, (corner.y - origin.y) / scale) else { return nil }
            modules.append(module)
        }
        return Perspective(from: modules, to: corners)
    }

    /// The first change from dark (or light) to the other on the segment between two module centres, where the
    /// segment changes colour exactly once.
    private static func boundary(_ image: BitImage, from: ImagePoint, to: ImagePoint, startDark: Bool) -> ImagePoint? {
        let length = ((to.x - from.x) * (to.x - from.x) + (to.y - from.y) * (to.y - from.y)).squareRoot()
        let steps = Int(length * 3) + 1
        var changeAt = -1
        var current = startDark
        for step in 1...steps {
            let t = Double(step) / Double(steps)
            let dark = image.isDark(at: from.x + (to.x - from.x) * t, from.y + (to.y - from.y) * t)
            if dark != current {
                guard changeAt < 0 else { return nil }
                changeAt = step
                current = dark
            }
        }
        guard changeAt > 0, current != startDark else { return nil }
        let t = (Double(changeAt) - 0.5) / Double(steps)
        return ImagePoint(x: from.x + (to.x - from.x) * t, y: from.y + (to.y - from.y) * t)
    }

    /// A projective map from image to module coordinates, u = (a·x + b·y + c) / (g·x + h·y + 1) and likewise v with
    /// d, e, f.
    struct InverseMap {
        let a, b, c, d, e, f, g, h: Double

        func map(_ x: Double, _ y: Double) -> ImagePoint? {
            let denominator = g * x + h * y + 1
            guard abs(denominator) > 1e-9 else { return nil }
            return ImagePoint(x: (a * x + b * y + c) / denominator, y: (d * x + e * y + f) / denominator)
        }
    }

    /// Least squares for the eight coefficients of an ``InverseMap`` from points known to lie on a line of constant u
    /// (or v): each gives a·x + b·y + c − u·g·x − u·h·y = u, linear in the coefficients.
    struct NormalEquations {
        /// The 8×8 matrix AᵀA and the vector Aᵀu, row-major, accumulated one equation at a time.
        private var matrix = [Double](repeating: 0, count: 64)
        private var vector = [Double](repeating: 0, count: 8)

        /// The equation's five non-zero coefficients and where they stand, kept to save an allocation per equation.
        private var coefficients = [Double](repeating: 0, count: 5)
        private var columns = [0, 1, 2, 6, 7]

        mutating func add(x: Double, y: Double, u: Double, alongU: Bool) {
            let offset = alongU ? 0 : 3
            columns[0] = offset
            columns[1] = offset + 1
            columns[2] = offset + 2
            coefficients[0] = x
            coefficients[1] = y
            coefficients[2] = 1
            coefficients[3] = -u * x
            coefficients[4] = -u * y
            for i in 0..<5 {
                vector[columns[i]] += coefficients[i] * u
                for j in 0..<5 { matrix[columns[i] * 8 + columns[j]] += coefficients[i] * coefficients[j] }
            }
        }

        /// Gaussian elimination with partial pivoting; nil when the points do not fix the map.
        func solve() -> InverseMap? {
            var m = matrix, r = vector
            for column in 0..<8 {
                var pivot = column
                for row in column + 1..<8 where abs(m[row * 8 + column]) > abs(m[pivot * 8 + column]) { pivot = row }
                guard abs(m[pivot * 8 + column]) > 1e-9 else { return nil }
                if pivot != column {
                    for k in 0..<8 { m.swapAt(column * 8 + k, pivot * 8 + k) }
                    r.swapAt(column, pivot)
                }
                for row in 0..<8 where row != column {
                    let factor = m[row * 8 + column] / m[column * 8 + column]
                    guard factor != 0 else { continue }
                    for k in column..<8 { m[row * 8 + k] -= factor * m[column * 8 + k] }
                    r[row] -= factor * r[column]
                }
            }
            let s = (0..<8).map { r[$0] / m[$0 * 8 + $0] }
            return InverseMap(a: s[0], b: s[1], c: s[2], d: s[3], e: s[4], f: s[5], g: s[6], h: s[7])
        }
    }
}
