import ArgumentParser
import CofferKit
import CofferPlatform

extension QRErrorCorrection: ExpressibleByArgument {}

/// Drawing options shared by the commands that show barcodes.
package struct DrawingOptions: ParsableArguments {
    package init() {}

    @Flag(help: "Draw light modules instead of dark ones (for terminals that show light-on-dark glyphs).") var invert = false
    @Flag(name: .customLong("no-color"), help: "Do not force dark-on-light colours.") var noColor = false

    /// The same choice as plain values.
    package var drawing: BarcodeDrawing { BarcodeDrawing(invert: invert, noColor: noColor) }

    /// ``BarcodeDrawing/draw(_:)``.
    package func draw(_ barcode: EncodedBarcode) throws -> String { try drawing.draw(barcode) }
}

/// How a barcode is drawn on the terminal, as `--invert` and `--no-color` chose it.
package struct BarcodeDrawing: Equatable, Sendable {
    package var invert = false
    package var noColor = false

    package init(invert: Bool = false, noColor: Bool = false) {
        self.invert = invert
        self.noColor = noColor
    }

    /// The terminal drawing of `barcode`, or an error naming the width needed when the terminal is too narrow.
    package func draw(_ barcode: EncodedBarcode) throws -> String {
        let color = !noColor && Output.colorEnabled
        var renderer = TerminalRenderer(options: .init(invert: invert, color: color, maxColumns: Terminal.columns))
        if let columns = Terminal.columns, renderer.columns(for: barcode) > columns, TerminalRenderer.isStacked(barcode) {
            // A boarding pass is wider than most terminals module for module; drawn two modules a column, it fits 100.
            renderer.options.denseStacked = true
        }
        let drawing: String
        do {
            drawing = try renderer.render(barcode)
        } catch {
            // The terminal, not the data, is the problem: try again wider, or write an image.
            if let columns = Terminal.columns, renderer.columns(for: barcode) > columns {
                throw CLIError.narrowTerminal(error.reason)
            }
            throw CLIError.badData(error.reason)
        }
        if !color, !invert, Terminal.standardOutputIsTTY {
            // Without forced colours the glyphs take the theme's: light on a dark theme, which scanners misread.
            Output.note("colours are off: on a dark terminal theme add --invert so that the bars come out dark")
        }
        return drawing
    }
}
