import Foundation
import CofferTestSupport
import Testing

@testable import CofferBarcode

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Symbols every renderer test draws: a 2D code with ECI, and linear codes of both families.
private let samples: [(Symbology, [UInt8], String, [String])] = [
    (.qr, bytes("https://example.com/c/Käse-1234567890"), "QRCode", ["-Sbinary", "-Sdisable", "-Sqrcode.enable"]),
    (.code128, bytes("98765432-ABC"), "Code128", ["-Sdisable", "-Scode128.enable"]),
    (.ean13, bytes("5901234123457"), "EAN13", ["-Sdisable", "-Sean13.enable"]),
]

struct ImageWriterTests {
    @Test func pngDecodesAndUsesRealDeflate() throws {
        var jobs: [DecodeJob] = []
        for (symbology, payload, format, zbar) in samples {
            let symbol = try encode(payload, as: symbology)
            for depth in [PNGWriter.Depth.bilevel, .grey8] {
                let png = try PNGWriter.data(for: symbol, options: RasterOptions(scale: 3), depth: depth)
                #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
                let idat = try #require(Self.chunk("IDAT", in: png))
                // zlib header (CMF 0x78), then the first deflate block's BTYPE (bits 1–2) must not be 00 (stored).
                #expect(idat[0] == 0x78)
                #expect((idat[2] >> 1) & 0b11 != 0, "\(symbology): IDAT uses stored blocks")
                jobs.append(DecodeJob(image: png, zxingFormats: format, zbarArgs: zbar, fileExtension: "png"))
            }
        }
        let results = try Oracle.decode(jobs)
        for (index, result) in results.enumerated() {
            let expected = samples[index / 2].1
            #expect(result.zxing.first?.bytes == expected, "PNG \(index): zxing")
            #expect(result.zbar?.first?.bytes == expected, "PNG \(index): zbar")
        }
    }

    /// The body of the first chunk of `type`.
    static func chunk(_ type: String, in png: [UInt8]) -> [UInt8]? {
        var offset = 8
        while offset + 8 <= png.count {
            let length = png[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            let name = String(decoding: png[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if name == type { return Array(png[(offset + 8)..<(offset + 8 + length)]) }
            offset += 12 + length
        }
        return nil
    }

    @Test func svgRasterisedByLibrsvgDecodes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-svg-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var jobs: [DecodeJob] = []
        for (index, (symbology, payload, format, _)) in samples.enumerated() {
            let symbol = try encode(payload, as: symbology)
            let svg = try SVGWriter.string(for: symbol, options: RasterOptions(scale: 4))
            #expect(svg.contains("shape-rendering=\"crispEdges\""))
            let svgPath = directory.appendingPathComponent("\(index).svg").path
            let pngPath = directory.appendingPathComponent("\(index).png").path
            try Data(svg.utf8).write(to: URL(fileURLWithPath: svgPath))
            _ = try Oracle.run(["rsvg-convert", "-o", pngPath, svgPath])
            guard let png = FileManager.default.contents(atPath: pngPath) else {
                Issue.record("rsvg-convert produced nothing: `apt-get install -y librsvg2-bin`")
                return
            }
            jobs.append(DecodeJob(image: Array(png), zxingFormats: format, zbarArgs: nil, fileExtension: "png"))
        }
        let results = try Oracle.decode(jobs)
        for (index, result) in results.enumerated() {
            #expect(result.zxing.first?.bytes == samples[index].1, "SVG \(samples[index].0)")
        }
    }

    @Test func pgmHeaderAndQuietZone() throws {
        let symbol = try encode(bytes("01234567"), as: .qr)
        let pgm = try PGMWriter.data(for: symbol, options: RasterOptions(scale: 2))
        let header = Array("P5\n58 58\n255\n".utf8)  // (21 + 2 × 4) × 2
        #expect(Array(pgm.prefix(header.count)) == header)
        let pixels = pgm.dropFirst(header.count)
        #expect(pixels.count == 58 * 58)
        #expect(pixels.prefix(58 * 8).allSatisfy { $0 == 255 }, "four light modules on top")
    }

    @Test func quietZoneIsNeverNarrowerThanStandard() throws {
        let symbol = try encode(bytes("12345670"), as: .ean8)
        let grid = symbol.moduleGrid(quietZone: QuietZone(all: 1))
        #expect(grid.width == 67 + 7 + 7)
        let wider = symbol.moduleGrid(quietZone: QuietZone(left: 20, right: 0, top: 0, bottom: 0))
        #expect(wider.width == 67 + 20 + 7)
    }

    @Test func oversizedImagesAreRefused() throws {
        let symbol = try encode(bytes("1"), as: .qr)
        #expect(throws: BarcodeError.self) { try PNGWriter.data(for: symbol, options: RasterOptions(scale: 0)) }
        var random = SeededRandom(seed: 1)
        let big = try encode(random.bytes(2900), as: .qr, options: BarcodeOptions(qrErrorCorrection: .L))
        // 177 + 8 modules at 100 px is over the 16,384 px limit.
        #expect(throws: BarcodeError.self) { _ = try PNGWriter.data(for: big, options: RasterOptions(scale: 100)).count }
    }
}

/// Simulates a terminal drawing the renderer's output (each cell 8 × 16 pixels, glyphs in the foreground colour)
/// and decodes the picture, proving the terminal output scans.
struct TerminalRasterTests {
    enum Theme { case light, dark }

    static func rasterise(_ text: String, theme: Theme) -> [UInt8] {
        let cellWidth = 8
        let cellHeight = 16
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        var cells: [[(Character, UInt8, UInt8)]] = []
        for line in lines {
            var foreground: UInt8 = theme == .light ? 0 : 255
            var background: UInt8 = theme == .light ? 255 : 0
            var row: [(Character, UInt8, UInt8)] = []
            var scalars = Substring(line).unicodeScalars[...]
            while let scalar = scalars.first {
                if scalar == "\u{1B}" {
                    // Parse "ESC [ params m".
                    let body = scalars.dropFirst(2).prefix { $0 != "m" }
                    let params = String(String.UnicodeScalarView(body)).split(separator: ";").map { Int($0) ?? 0 }
                    var i = 0
                    while i < params.count {
                        if params[i] == 0 {
                            foreground = theme == .light ? 0 : 255
                            background = theme == .light ? 255 : 0
                        } else if (params[i] == 38 || params[i] == 48), i + 2 < params.count, params[i + 1] == 5 {
                            let grey: UInt8 = params[i + 2] == 16 ? 0 : 255
                            if params[i] == 38 { foreground = grey } else { background = grey }
                            i += 2
                        }
                        i += 1
                    }
                    scalars = scalars.dropFirst(2 + body.count + 1)
                    continue
                }
                row.append((Character(scalar), foreground, background))
                scalars = scalars.dropFirst()
            }
            cells.append(row)
        }
        let columns = cells.map(\.count).max() ?? 0
        let width = columns * cellWidth
        let height = cells.count * cellHeight
        var pixels = [UInt8](repeating: theme == .light ? 255 : 0, count: width * height)
        for (lineIndex, row) in cells.enumerated() {
            for (column, (glyph, fg, bg)) in row.enumerated() {
                for py in 0..<cellHeight {
                    for px in 0..<cellWidth {
                        let top = py < cellHeight / 2
                        let left = px < cellWidth / 2
                        let inGlyph: Bool
                        switch glyph {
                        case "█": inGlyph = true
                        case "▀": inGlyph = top
                        case "▄": inGlyph = !top
                        case "▌": inGlyph = left
                        case "▐": inGlyph = !left
                        default: inGlyph = false
                        }
                        pixels[(lineIndex * cellHeight + py) * width + column * cellWidth + px] = inGlyph ? fg : bg
                    }
                }
            }
        }
        return Array("P5\n\(width) \(height)\n255\n".utf8) + pixels
    }

    @Test func everyModeScansOnItsTheme() throws {
        let modes: [(TerminalRenderer.Options, Theme)] = [
            (.init(invert: false, color: true), .dark),
            (.init(invert: false, color: true), .light),
            (.init(invert: true, color: true), .dark),
            (.init(invert: false, color: false), .light),
            (.init(invert: true, color: false), .dark),
        ]
        var jobs: [DecodeJob] = []
        var expected: [[UInt8]] = []
        for (symbology, payload, format, zbar) in samples {
            let symbol = try encode(payload, as: symbology)
            for (options, theme) in modes {
                let text = try TerminalRenderer(options: options).render(symbol)
                jobs.append(DecodeJob(image: Self.rasterise(text, theme: theme), zxingFormats: format, zbarArgs: zbar))
                expected.append(payload)
            }
        }
        let results = try Oracle.decode(jobs)
        for (index, result) in results.enumerated() {
            let label = "terminal \(samples[index / modes.count].0) mode \(index % modes.count)"
            #expect(result.zxing.first?.bytes == expected[index], "\(label): zxing")
            #expect(result.zbar?.first?.bytes == expected[index], "\(label): zbar")
        }
    }

    /// Wrong polarity (dark-module glyphs on a dark theme without colour) must not scan: the test can fail.
    @Test func wrongPolarityDoesNotScan() throws {
        let symbol = try encode(samples[0].1, as: .qr)
        let text = try TerminalRenderer(options: .init(invert: false, color: false)).render(symbol)
        let results = try Oracle.decode([DecodeJob(image: Self.rasterise(text, theme: .dark), zxingFormats: "QRCode")])
        #expect(results[0].zxing.isEmpty)
    }

    /// A boarding pass (IATA BCBP, about 160 characters) needs more than 100 columns module for module; drawn two
    /// modules a column it fits, and it still scans on both themes.
    @Test func denseBoardingPassFitsAHundredColumnsAndScans() throws {
        let pass = bytes(
            "M1DESMARAIS/LUC       EABC123 YULFRAAC 0834 326J001A0025 14D>5181WW6225BAC 00141234560032A0141234567890 1AC AC 1234567890123    20KYLX58ZDEF456 FRAGVA"
        )
        let symbol = try encode(pass, as: .pdf417)
        #expect(TerminalRenderer().columns(for: symbol) > 100)
        guard case .matrix(let matrix) = symbol.symbol else { Issue.record("PDF417 is a matrix"); return }
        let modes: [(TerminalRenderer.Options, Theme)] = [
            (.init(invert: false, color: true, denseStacked: true), .dark),
            (.init(invert: false, color: false, denseStacked: true), .light),
            (.init(invert: true, color: false, denseStacked: true), .dark),
        ]
        var jobs: [DecodeJob] = []
        for (options, theme) in modes {
            let renderer = TerminalRenderer(options: options)
            #expect(renderer.columns(for: symbol) <= 100)
            let text = try renderer.render(symbol)
            let lines = text.split(separator: "\n")
            // One line a row, and a blank line above and below.
            #expect(lines.count == matrix.height / PDF417Encoder.rowHeight + 2)
            jobs.append(DecodeJob(image: Self.rasterise(text, theme: theme), zxingFormats: "PDF417"))
        }
        for (index, result) in try Oracle.decode(jobs).enumerated() {
            #expect(result.zxing.first?.bytes == pass, "dense PDF417, mode \(index)")
        }
        // A QR code keeps square modules: it has no dense drawing.
        let qr = try encode(samples[0].1, as: .qr)
        #expect(TerminalRenderer(options: .init(denseStacked: true)).columns(for: qr) == TerminalRenderer().columns(for: qr))
    }

    @Test func tooNarrowIsAnErrorNotABrokenDrawing() throws {
        let qr = try encode(bytes("01234567"), as: .qr)
        let renderer = TerminalRenderer(options: .init(maxColumns: 28))
        #expect(renderer.columns(for: qr) == 29)
        #expect(throws: BarcodeError.self) { try renderer.render(qr) }
        #expect(throws: Never.self) { try TerminalRenderer(options: .init(maxColumns: 29)).render(qr) }
        let code128 = try encode(bytes("98765432-ABC"), as: .code128)
        #expect(TerminalRenderer().columns(for: code128) == (134 + 20 + 1) / 2)
    }

    @Test func quietZoneAndColourResetOnEveryLine() throws {
        let qr = try encode(bytes("01234567"), as: .qr)
        let text = try TerminalRenderer().render(qr)
        let lines = text.split(separator: "\n")
        #expect(lines.count == (29 + 1) / 2)
        for line in lines {
            #expect(line.hasPrefix("\u{1B}[38;5;16;48;5;231m") && line.hasSuffix("\u{1B}[0m"))
        }
        let plain = try TerminalRenderer(options: .init(color: false)).render(qr).split(separator: "\n")
        #expect(plain.first?.allSatisfy { $0 == " " } == true)
        #expect(plain.allSatisfy { $0.hasPrefix("    ") && $0.hasSuffix("    ") })
    }
}
