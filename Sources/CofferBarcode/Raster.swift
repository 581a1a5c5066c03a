/// Options shared by the image writers (PNG, SVG, PGM).
public struct RasterOptions: Sendable, Equatable {
    /// Pixels per module (1–100).
    public var scale: Int
    /// Extra margin requested by the caller. Each side is at least the symbology's standard quiet zone.
    public var quietZone: QuietZone?
    /// Bar height in modules for linear symbols; `nil` uses the symbology's nominal height.
    public var barHeight: Int?

    public init(scale: Int = 4, quietZone: QuietZone? = nil, barHeight: Int? = nil) {
        self.scale = scale
        self.quietZone = quietZone
        self.barHeight = barHeight
    }

    /// Largest image side the writers produce, so a bad option cannot request gigabytes.
    static let maximumPixels = 16_384

    func validate(_ symbology: Symbology) throws(BarcodeError) {
        guard (1...100).contains(scale) else {
            throw BarcodeError(symbology, "the scale must be between 1 and 100 pixels per module")
        }
        if let barHeight, !(1...1000).contains(barHeight) {
            throw BarcodeError(symbology, "the bar height must be between 1 and 1000 modules")
        }
        if let quietZone,
            [quietZone.left, quietZone.right, quietZone.top, quietZone.bottom].contains(where: {
                !(0...1000).contains($0)
            })
        {
            throw BarcodeError(symbology, "quiet-zone sides must be between 0 and 1000 modules")
        }
    }
}

extension EncodedBarcode {
    /// The quiet zone actually drawn: the standard one, widened on any side where `requested` asks for more.
    public func effectiveQuietZone(_ requested: QuietZone?) -> QuietZone {
        guard let requested else { return quietZone }
        return QuietZone(
            left: max(quietZone.left, requested.left), right: max(quietZone.right, requested.right),
            top: max(quietZone.top, requested.top), bottom: max(quietZone.bottom, requested.bottom))
    }

    /// The symbol as a module grid including its quiet zone; linear symbols become bars `barHeight` modules tall.
    public func moduleGrid(quietZone requested: QuietZone? = nil, barHeight: Int? = nil) -> BitMatrix {
        let zone = effectiveQuietZone(requested)
        switch symbol {
        case .matrix(let matrix):
            var grid = BitMatrix(width: matrix.width + zone.left + zone.right, height: matrix.height + zone.top + zone.bottom)
            for y in 0..<matrix.height {
                for x in 0..<matrix.width where matrix[x, y] { grid[x + zone.left, y + zone.top] = true }
            }
            return grid
        case .linear(let modules, let heightHint):
            let height = barHeight ?? heightHint
            var grid = BitMatrix(width: modules.count + zone.left + zone.right, height: height + zone.top + zone.bottom)
            for (x, bar) in modules.enumerated() where bar {
                for y in 0..<height { grid[x + zone.left, y + zone.top] = true }
            }
            return grid
        }
    }

    /// Module grid checked against the writers' size limit.
    func rasterGrid(_ options: RasterOptions) throws(BarcodeError) -> BitMatrix {
        try options.validate(symbology)
        let grid = moduleGrid(quietZone: options.quietZone, barHeight: options.barHeight)
        guard grid.width * options.scale <= RasterOptions.maximumPixels,
            grid.height * options.scale <= RasterOptions.maximumPixels
        else {
            throw BarcodeError(symbology, "the image would exceed \(RasterOptions.maximumPixels) pixels on a side")
        }
        return grid
    }
}

/// Binary greymap (Netpbm P5), 8-bit: 0 for dark modules, 255 for light.
public enum PGMWriter {
    /// The image file's bytes. Throws for a bad option or an image over 16,384 pixels on a side.
    public static func data(
        for barcode: EncodedBarcode, options: RasterOptions = RasterOptions()
    ) throws(BarcodeError)
        -> [UInt8]
    {
        let grid = try barcode.rasterGrid(options)
        let scale = options.scale
        let width = grid.width * scale
        var result = Array("P5\n\(width) \(grid.height * scale)\n255\n".utf8)
        result.reserveCapacity(result.count + width * grid.height * scale)
        var row = [UInt8](repeating: 255, count: width)
        for y in 0..<grid.height {
            for x in 0..<grid.width {
                let value: UInt8 = grid[x, y] ? 0 : 255
                for k in 0..<scale { row[x * scale + k] = value }
            }
            for _ in 0..<scale { result.append(contentsOf: row) }
        }
        return result
    }
}

/// Scalable vector output: one path of unit-height rectangles, horizontal runs merged (vertical too for linear
/// symbols), drawn with `crispEdges` so viewers do not anti-alias module edges.
public enum SVGWriter {
    /// The document as UTF-8 bytes; `options.scale` sets the pixel size, the view box is in modules.
    public static func data(
        for barcode: EncodedBarcode, options: RasterOptions = RasterOptions()
    ) throws(BarcodeError)
        -> [UInt8]
    {
        Array(try string(for: barcode, options: options).utf8)
    }

    /// The document as text.
    public static func string(
        for barcode: EncodedBarcode, options: RasterOptions = RasterOptions()
    ) throws(BarcodeError)
        -> String
    {
        let grid = try barcode.rasterGrid(options)
        var path = ""
        if case .linear(let modules, let heightHint) = barcode.symbol {
            let zone = barcode.effectiveQuietZone(options.quietZone)
            let height = options.barHeight ?? heightHint
            var x = 0
            while x < modules.count {
                guard modules[x] else {
                    x += 1
                    continue
                }
                var run = 1
                while x + run < modules.count && modules[x + run] { run += 1 }
                path += "M\(x + zone.left) \(zone.top)h\(run)v\(height)h-\(run)z"
                x += run
            }
        } else {
            for y in 0..<grid.height {
                var x = 0
                while x < grid.width {
                    guard grid[x, y] else {
                        x += 1
                        continue
                    }
                    var run = 1
                    while x + run < grid.width && grid[x + run, y] { run += 1 }
                    path += "M\(x) \(y)h\(run)v1h-\(run)z"
                    x += run
                }
            }
        }
        let width = grid.width * options.scale
        let height = grid.height * options.scale
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" \
            viewBox="0 0 \(grid.width) \(grid.height)" shape-rendering="crispEdges">
            <rect width="\(grid.width)" height="\(grid.height)" fill="#fff"/>
            <path fill="#000" d="\(path)"/>
            </svg>

            """
    }
}
