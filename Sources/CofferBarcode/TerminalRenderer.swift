/// Draws symbols with Unicode block elements for display in a terminal.
///
/// Two-dimensional symbols pack two module rows into each text line (`▀ ▄ █` and space); linear symbols pack two
/// modules into each column (`▌ ▐ █` and space), repeated over several lines. The quiet zone is always drawn.
/// With `denseStacked`, a stacked symbol (PDF417, whose rows are several modules tall) is drawn as linear ones are:
/// one text line per row and two modules per column, so a boarding pass fits in half the width (a terminal cell is
/// about twice as tall as wide, so a row comes out about four modules tall, above the standard's three).
///
/// With colour (the default) every line sets a black foreground on a white background and resets at its end, so
/// the code is dark-on-light whatever the terminal theme. Without colour the glyphs are the dark modules, which is
/// right for light themes; `invert` makes the glyphs the light modules instead, which is right for dark themes.
/// With colour, `invert` swaps the colours too, so the picture stays dark-on-light (some fonts draw the two glyph
/// sets with different gaps, so this can help a scanner).
public struct TerminalRenderer: Sendable {
    public struct Options: Sendable, Equatable {
        /// Draw the light modules as glyphs instead of the dark ones.
        public var invert: Bool
        /// Force dark-on-light with ANSI colours.
        public var color: Bool
        /// Terminal width in columns; a wider symbol is an error rather than a broken drawing.
        public var maxColumns: Int?
        /// Text lines of bars for linear symbols.
        public var linearLines: Int
        /// Draw stacked symbols (PDF417) one text line per row and two modules per column.
        public var denseStacked: Bool

        public init(invert: Bool = false, color: Bool = true, maxColumns: Int? = nil, linearLines: Int = 6, denseStacked: Bool = false) {
            self.invert = invert
            self.color = color
            self.maxColumns = maxColumns
            self.linearLines = linearLines
            self.denseStacked = denseStacked
        }
    }

    public var options: Options

    public init(options: Options = Options()) { self.options = options }

    /// 256-colour black and white: exact on every palette, unlike the theme-dependent 16 basic colours.
    private static let darkOnLight = "\u{1B}[38;5;16;48;5;231m"
    private static let lightOnDark = "\u{1B}[38;5;231;48;5;16m"
    private static let reset = "\u{1B}[0m"

    /// Text columns the symbol needs, quiet zone included.
    public func columns(for barcode: EncodedBarcode) -> Int {
        let zone = barcode.quietZone
        let width = barcode.width + zone.left + zone.right
        switch barcode.symbol {
        case .matrix: return options.denseStacked && Self.isStacked(barcode) ? (width + 1) / 2 : width
        case .linear: return (width + 1) / 2
        }
    }

    /// Whether `barcode` has a dense drawing (`Options.denseStacked`) narrower than its usual one.
    public static func isStacked(_ barcode: EncodedBarcode) -> Bool { barcode.symbology == .pdf417 }

    /// The drawing, one line per `\n`-terminated line.
    public func render(_ barcode: EncodedBarcode) throws(BarcodeError) -> String {
        let needed = columns(for: barcode)
        if let available = options.maxColumns, needed > available {
            throw BarcodeError(
                barcode.symbology,
                "the symbol needs \(needed) terminal columns but only \(available) are available; "
                    + "widen the terminal or write an image instead")
        }
        guard (1...100).contains(options.linearLines) else {
            throw BarcodeError(barcode.symbology, "linear symbols need between 1 and 100 lines")
        }
        let glyphIsDark = !options.invert
        let lines: [String]
        switch barcode.symbol {
        case .matrix where options.denseStacked && Self.isStacked(barcode):
            let grid = barcode.moduleGrid()
            let zone = barcode.quietZone
            let blank = String(repeating: glyphIsDark ? " " : "█", count: needed)
            var result = [blank]
            // The first module row of each symbol row stands for the row (all of its module rows are the same).
            for y in stride(from: zone.top, to: grid.height - zone.bottom, by: PDF417Encoder.rowHeight) {
                result.append(Self.halfBlocks((0..<grid.width).map { grid[$0, y] }, glyphIsDark: glyphIsDark))
            }
            lines = result + [blank]
        case .matrix:
            let grid = barcode.moduleGrid()
            var result: [String] = []
            var y = 0
            while y < grid.height {
                var line = ""
                line.reserveCapacity(grid.width * 3)
                for x in 0..<grid.width {
                    let top = grid[x, y] == glyphIsDark
                    // An odd last row is completed with quiet zone.
                    let bottom = (y + 1 < grid.height ? grid[x, y + 1] : false) == glyphIsDark
                    line.append(top ? (bottom ? "█" : "▀") : (bottom ? "▄" : " "))
                }
                result.append(line)
                y += 2
            }
            lines = result
        case .linear(let modules, _):
            let zone = barcode.quietZone
            let row = [Bool](repeating: false, count: zone.left) + modules + [Bool](repeating: false, count: zone.right)
            let bars = Self.halfBlocks(row, glyphIsDark: glyphIsDark)
            let blank = String(repeating: glyphIsDark ? " " : "█", count: needed)
            lines = [blank] + [String](repeating: bars, count: options.linearLines) + [blank]
        }
        guard options.color else { return lines.map { $0 + "\n" }.joined() }
        let colours = options.invert ? Self.lightOnDark : Self.darkOnLight
        return lines.map { colours + $0 + Self.reset + "\n" }.joined()
    }

    /// A row of modules two to a column (`▌ ▐ █` and space); an odd last module is completed with quiet zone.
    private static func halfBlocks(_ row: [Bool], glyphIsDark: Bool) -> String {
        var bars = ""
        var x = 0
        while x < row.count {
            let left = row[x] == glyphIsDark
            let right = (x + 1 < row.count ? row[x + 1] : false) == glyphIsDark
            bars.append(left ? (right ? "█" : "▌") : (right ? "▐" : " "))
            x += 2
        }
        return bars
    }
}
