import CofferBarcode

/// Aztec symbols in a black-and-white image: each bull's-eye found is fitted, turned and mirrored by its orientation
/// marks, its mode message read, and its layers sampled in the encoder's order and decoded. Aztec runes (an 11×11
/// core alone, carrying one byte in its mode message) are read too, as three decimal digits like zxing-cpp.
enum AztecReader {
    /// Every Aztec symbol in `image` (dark on light; the inverted image gives light on dark ones).
    static func read(_ image: BitImage) -> [SymbolOutcome] {
        AztecDetector.centres(in: image).compactMap { read(image, at: $0) }
    }

    /// The symbol around one bull's-eye centre, if it decodes.
    static func read(_ image: BitImage, at centre: AztecDetector.Centre) -> SymbolOutcome? {
        let rays = AztecDetector.castRays(image, centre)
        guard let inner = AztecDetector.fitSquare(AztecDetector.ringPoints(rays, centre, ring: 3), ring: 3) else { return nil }
        // In a full symbol the light ring five modules out gives a grid twice as far-reaching: it is tried first when
        // it is there (a compact symbol's mode message makes no clean ring).
        var attempts: [(compact: Bool, grid: Perspective)] = [(true, inner), (false, inner)]
        if let outer = AztecDetector.fitSquare(AztecDetector.ringPoints(rays, centre, ring: 5), ring: 5) {
            attempts.insert((false, outer), at: 0)
        }
        for attempt in attempts {
            if let outcome = decode(image, grid: attempt.grid, compact: attempt.compact) { return outcome }
        }
        return nil
    }

    /// The eight ways a symbol can lie (four turns, each also mirrored): where the symbol's module offset (x, y)
    /// from the centre lies on the fitted grid, as the matrix (a, b, c, d): (a·x + b·y, c·x + d·y).
    private static let orientations: [(a: Int, b: Int, c: Int, d: Int)] = [
        (1, 0, 0, 1), (0, -1, 1, 0), (-1, 0, 0, -1), (0, 1, -1, 0),
        (-1, 0, 0, 1), (0, -1, -1, 0), (1, 0, 0, -1), (0, 1, 1, 0),
    ]

    /// The symbol on `grid` (module offsets from the centre to pixels) with the given bull's-eye size.
    private static func decode(_ image: BitImage, grid: Perspective, compact: Bool) -> SymbolOutcome? {
        let radius = compact ? 5 : 7
        let side = 2 * radius + 1
        // The bull's-eye and its mode-message ring, sampled once for all eight orientations.
        var patch = [Bool](repeating: false, count: side * side)
        var mismatches = 0
        for v in -radius...radius {
            for u in -radius...radius {
                guard let dark = sample(image, grid, Double(u), Double(v)) else { return nil }
                patch[(v + radius) * side + u + radius] = dark
                let ring = max(abs(u), abs(v))
                if ring < radius, dark != (ring % 2 == 0) { mismatches += 1 }
            }
        }
        // The rings are dark at even distances; a few modules may be lost to blur, not a sixth of them.
        guard mismatches * 6 <= (side - 2) * (side - 2) else { return nil }
        let marks = AztecSymbol.orientationMarks(radius: radius)
        let modeModules = AztecSymbol(compact: compact, layers: 1).modeMessageModules
        for orientation in orientations {
            func at(_ x: Int, _ y: Int) -> Bool {
                let u = orientation.a * x + orientation.b * y, v = orientation.c * x + orientation.d * y
                return patch[(v + radius) * side + u + radius]
            }
            // The twelve modules at the ring's corners: at most two wrong (ISO/IEC 24778 allows three, but two
            // orientations then become indistinguishable).
            var wrong = 0
            for (sx, sy) in [(-1, -1), (1, -1), (1, 1), (-1, 1)] {
                let (cx, cy) = (sx * radius, sy * radius)
                for (x, y) in [(cx, cy), (cx - sx, cy), (cx, cy - sy)]
                where at(x, y) != marks.contains(where: { $0.x == x && $0.y == y }) {
                    wrong += 1
                }
            }
            guard wrong <= 2 else { continue }
            let modeBits = modeModules.map { at($0.x, $0.y) }
            guard let mode = AztecDecoder.modeMessage(modeBits, compact: compact) else {
                guard compact, let value = AztecDecoder.rune(modeBits) else { continue }
                let corners = symbolCorners(grid, size: 11, orientation: orientation)
                return .found(FoundBarcode(symbology: .aztec, payload: AztecDecoder.runePayload(value), corners: corners))
            }
            let symbol = mode.symbol
            let refined = AztecGrid.refine(image, grid, halfSize: symbol.size / 2)
            // The grid fitted to the core alone is the fallback where the refitting lost its way (a blot, glare).
            for grid in [refined, grid] {
                guard let bits = sampleLayers(image, grid, symbol: symbol, orientation: orientation) else { continue }
                switch AztecDecoder.decode(bits, mode: mode) {
                case .payload(let payload):
                    let corners = symbolCorners(grid, size: symbol.size, orientation: orientation)
                    return .found(FoundBarcode(symbology: .aztec, payload: payload, corners: corners))
                case .refused(let refusal):
                    return .refused(refusal)
                case nil:
                    continue
                }
            }
            return nil
        }
        return nil
    }

    /// The symbol's outer corners (half a module beyond its outermost module centres), clockwise from its own
    /// top-left.
    private static func symbolCorners(
        _ grid: Perspective, size: Int, orientation: (a: Int, b: Int, c: Int, d: Int)
    )
        -> [ImagePoint]
    {
        let half = Double(size) / 2
        let (a, b) = (Double(orientation.a), Double(orientation.b))
        let (c, d) = (Double(orientation.c), Double(orientation.d))
        var corners: [ImagePoint] = []
        for (x, y) in [(-half, -half), (half, -half), (half, half), (-half, half)] {
            corners.append(grid.map(a * x + b * y, c * x + d * y))
        }
        return corners
    }

    /// The data layers' bits in drawing order, sampled on `grid` with the symbol turned by `orientation`; nil when
    /// part of the symbol lies outside the image.
    private static func sampleLayers(
        _ image: BitImage, _ grid: Perspective, symbol: AztecSymbol,
        orientation: (a: Int, b: Int, c: Int, d: Int)
    ) -> [Bool]? {
        let size = symbol.size, centre = size / 2
        var bits: [Bool] = []
        bits.reserveCapacity(symbol.totalBits)
        for module in symbol.dataModules() {
            let x = module % size - centre, y = module / size - centre
            let u = orientation.a * x + orientation.b * y, v = orientation.c * x + orientation.d * y
            guard let dark = sample(image, grid, Double(u), Double(v)) else { return nil }
            bits.append(dark)
        }
        return bits
    }

    /// Whether the module at offset (u, v) from the centre is dark; nil when it lies outside the image.
    @inline(__always)
    private static func sample(_ image: BitImage, _ grid: Perspective, _ u: Double, _ v: Double) -> Bool? {
        let point = grid.map(u, v)
        guard point.x >= 0, point.y >= 0, point.x < Double(image.width), point.y < Double(image.height) else { return nil }
        return image.isDark(at: point.x, point.y)
    }
}
