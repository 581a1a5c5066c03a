/// The 8-connected dark regions of an image, found from its row runs with a union–find.
struct DarkComponents {
    private let width: Int
    private let height: Int
    private var row: [Int32] = []
    private var start: [Int32] = []
    private var end: [Int32] = []
    private var parent: [Int32] = []

    private init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// The dark regions of `image` and its light ones (the dark regions of its inverse), from one pass over its rows.
    static func both(_ image: BitImage) -> (dark: DarkComponents, light: DarkComponents) {
        var dark = DarkComponents(width: image.width, height: image.height)
        var light = DarkComponents(width: image.width, height: image.height)
        var runs: [Int] = []
        var previousDark = 0..<0, previousLight = 0..<0
        for y in 0..<image.height {
            runs.removeAll(keepingCapacity: true)
            image.runs(ofRow: y, into: &runs)
            let firstDark = dark.start.count, firstLight = light.start.count
            var x = 0
            var isDark = false
            for length in runs {
                if length > 0 {
                    if isDark { dark.append(row: y, from: x, to: x + length) } else { light.append(row: y, from: x, to: x + length) }
                }
                x += length
                isDark.toggle()
            }
            dark.join(firstDark..<dark.start.count, to: previousDark)
            light.join(firstLight..<light.start.count, to: previousLight)
            previousDark = firstDark..<dark.start.count
            previousLight = firstLight..<light.start.count
        }
        return (dark, light)
    }

    private mutating func append(row y: Int, from x: Int, to end: Int) {
        row.append(Int32(y))
        start.append(Int32(x))
        self.end.append(Int32(end))
        parent.append(Int32(start.count - 1))
    }

    /// Runs of a row touching (or diagonally meeting) runs of the row above join their regions.
    private mutating func join(_ current: Range<Int>, to previous: Range<Int>) {
        var above = previous.lowerBound
        for index in current {
            while above < previous.upperBound, end[above] < start[index] { above += 1 }
            var touching = above
            while touching < previous.upperBound, start[touching] <= end[index] {
                union(index, touching)
                touching += 1
            }
        }
    }

    private mutating func root(_ index: Int) -> Int {
        var node = index
        while Int(parent[node]) != node {
            parent[node] = parent[Int(parent[node])]
            node = Int(parent[node])
        }
        return node
    }

    private mutating func union(_ a: Int, _ b: Int) {
        let rootA = root(a), rootB = root(b)
        if rootA != rootB { parent[max(rootA, rootB)] = Int32(min(rootA, rootB)) }
    }

    /// The convex hulls (clockwise on screen) of the regions at least `minimumSide` pixels wide and high, and not
    /// mostly empty, largest first, at most `limit`. Smaller regions hugging one (within two of its modules) join it:
    /// a symbol's sparse corner can be islands of modules that touch neither each other nor the L.
    mutating func hulls(minimumSide: Int, limit: Int) -> [DataMatrixDetector.Candidate] {
        let count = start.count
        var minX = [Int32](repeating: .max, count: count), maxX = [Int32](repeating: .min, count: count)
        var minY = [Int32](repeating: .max, count: count), maxY = [Int32](repeating: .min, count: count)
        var pixels = [Int](repeating: 0, count: count)
        var roots = [Int32](repeating: 0, count: count)
        for index in 0..<count {
            let top = root(index)
            roots[index] = Int32(top)
            minX[top] = min(minX[top], start[index])
            maxX[top] = max(maxX[top], end[index])
            minY[top] = min(minY[top], row[index])
            maxY[top] = max(maxY[top], row[index] + 1)
            pixels[top] += Int(end[index] - start[index])
        }
        let regions = (0..<count).filter { Int(roots[$0]) == $0 }
        var seeds: [(root: Int, pixels: Int)] = []
        for index in regions {
            let regionWidth = Int(maxX[index] - minX[index]), regionHeight = Int(maxY[index] - minY[index])
            // A region touching all four edges of the image is its background (or, inverted, its foreground).
            let framesImage = minX[index] == 0 && minY[index] == 0 && Int(maxX[index]) == width && Int(maxY[index]) == height
            guard regionWidth >= minimumSide, regionHeight >= minimumSide, pixels[index] * 8 >= regionWidth * regionHeight,
                !framesImage
            else { continue }
            seeds.append((index, pixels[index]))
        }
        seeds = Array(seeds.sorted { $0.pixels > $1.pixels }.prefix(limit))
        guard !seeds.isEmpty else { return [] }
        // The runs of each region together (a counting sort by region), so a region's runs can be added at once.
        var firstRun = [Int](repeating: 0, count: count + 1)
        for index in 0..<count { firstRun[Int(roots[index]) + 1] += 1 }
        for index in 0..<count { firstRun[index + 1] += firstRun[index] }
        var grouped = [Int](repeating: 0, count: count)
        var next = firstRun
        for index in 0..<count {
            grouped[next[Int(roots[index])]] = index
            next[Int(roots[index])] += 1
        }
        var hulls: [DataMatrixDetector.Candidate] = []
        var outline = Outline(height: height)
        for seed in seeds {
            let runs = grouped[firstRun[seed.root]..<firstRun[seed.root + 1]]
            outline.clear()
            outline.add(runs, row: row, start: start, end: end)
            // A third of the runs are at most this long: about a module.
            var histogram = [Int](repeating: 0, count: 65)
            for run in runs { histogram[min(64, Int(end[run] - start[run]))] += 1 }
            var module = 0, counted = 0
            while counted * 3 < runs.count, module < 64 {
                module += 1
                counted += histogram[module]
            }
            let reach = 2 * Double(module)
            var hull = outline.convexHull()
            // Regions near enough to join in a few rounds, found once: the rounds then look at these only.
            let margin = 4 * reach
            let nearLeft = Double(minX[seed.root]) - margin, nearRight = Double(maxX[seed.root]) + margin
            let nearTop = Double(minY[seed.root]) - margin, nearBottom = Double(maxY[seed.root]) + margin
            var near: [Int] = []
            for index in regions where index != seed.root && pixels[index] < seed.pixels {
                let middleX = Double(minX[index] + maxX[index]) / 2, middleY = Double(minY[index] + maxY[index]) / 2
                if middleX >= nearLeft, middleX <= nearRight, middleY >= nearTop, middleY <= nearBottom { near.append(index) }
            }
            var joined = [Bool](repeating: false, count: near.count)
            // Islands join while they hug the outline, which grows as they do (a corner can be a chain of them).
            for _ in 0..<4 where !near.isEmpty {
                var added = false
                for (position, index) in near.enumerated() where !joined[position] {
                    let middle = ImagePoint(x: Double(minX[index] + maxX[index]) / 2, y: Double(minY[index] + maxY[index]) / 2)
                    guard Self.distance(middle, outside: hull) <= reach else { continue }
                    joined[position] = true
                    added = true
                    outline.add(grouped[firstRun[index]..<firstRun[index + 1]], row: row, start: start, end: end)
                }
                guard added else { break }
                hull = outline.convexHull()
            }
            hulls.append(DataMatrixDetector.Candidate(outline: hull, module: reach / 2))
        }
        return hulls
    }

    /// The leftmost and rightmost pixel corner on each horizontal pixel edge of some rows' runs: all their convex
    /// hull needs, and already in the order the hull is built in (so nothing is sorted).
    struct Outline {
        private var left: [Int32]
        private var right: [Int32]
        private var top: Int
        private var bottom: Int

        init(height: Int) {
            left = [Int32](repeating: .max, count: height + 1)
            right = [Int32](repeating: .min, count: height + 1)
            top = height + 1
            bottom = -1
        }

        mutating func clear() {
            guard bottom >= top else { return }
            for y in top...bottom {
                left[y] = .max
                right[y] = .min
            }
            top = left.count
            bottom = -1
        }

        /// Adds the pixel corners of `runs` (indices into the run table): each run's top and bottom edges.
        mutating func add(_ runs: ArraySlice<Int>, row: [Int32], start: [Int32], end: [Int32]) {
            for run in runs {
                let y = Int(row[run])
                for edge in y...y + 1 {
                    left[edge] = min(left[edge], start[run])
                    right[edge] = max(right[edge], end[run])
                }
                top = min(top, y)
                bottom = max(bottom, y + 1)
            }
        }

        /// Andrew's monotone chain over the corners, top to bottom; clockwise on screen (y down).
        func convexHull() -> [ImagePoint] {
            var sorted: [ImagePoint] = []
            if bottom >= top {
                for y in top...bottom where left[y] <= right[y] {
                    sorted.append(ImagePoint(x: Double(left[y]), y: Double(y)))
                    if right[y] != left[y] { sorted.append(ImagePoint(x: Double(right[y]), y: Double(y))) }
                }
            }
            guard sorted.count > 2 else { return sorted }
            func cross(_ o: ImagePoint, _ a: ImagePoint, _ b: ImagePoint) -> Double {
                (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
            }
            var lower: [ImagePoint] = []
            for point in sorted {
                while lower.count >= 2, cross(lower[lower.count - 2], lower[lower.count - 1], point) <= 0 { lower.removeLast() }
                lower.append(point)
            }
            var upper: [ImagePoint] = []
            for point in sorted.reversed() {
                while upper.count >= 2, cross(upper[upper.count - 2], upper[upper.count - 1], point) <= 0 { upper.removeLast() }
                upper.append(point)
            }
            // Counter-clockwise in y-up terms is clockwise on screen.
            return Array(lower.dropLast() + upper.dropLast())
        }
    }

    /// How far `point` lies outside the convex polygon `hull` (clockwise on screen); 0 inside.
    static func distance(_ point: ImagePoint, outside hull: [ImagePoint]) -> Double {
        var farthest = 0.0
        for index in hull.indices {
            let a = hull[index], b = hull[(index + 1) % hull.count]
            let length = ((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)).squareRoot()
            guard length > 0 else { continue }
            // Outward is to the left of travel on screen: the normal (dy, −dx).
            let outward = ((point.x - a.x) * (b.y - a.y) - (point.y - a.y) * (b.x - a.x)) / length
            farthest = max(farthest, outward)
        }
        return farthest
    }
}
