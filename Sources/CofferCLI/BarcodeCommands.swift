import ArgumentParser
import CofferKit

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
        let renderer = TerminalRenderer(options: .init(invert: invert, color: color, maxColumns: Terminal.columns))
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

package struct BarcodeCommand: ParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "barcode",
        abstract: "Draw a card's barcode in the terminal or to PNG, SVG or PGM; or encode stdin with --symbology.",
        discussion: """
            The symbol is drawn with its quiet zone in the terminal's own colours, or written as an image to scan \
            from another screen. With --symbology and no name, standard input is encoded instead of a card.

            Examples:
              coffer barcode Costco                       # drawn here
              coffer barcode Costco --png costco.png --scale 6
              printf 'HELLO' | coffer barcode --symbology qr --svg hello.svg
            """)

    @OptionGroup package var vaultOption: VaultOption
    @OptionGroup package var drawing: DrawingOptions
    @Argument(help: "Card name or id (omit with --symbology to encode standard input).") var card: String?
    @Option(help: "Encode standard input (its bytes, less one final newline) instead of a card.") var symbology: Symbology?
    @Option(name: .customLong("ec"), help: "QR error correction: L, M, Q or H.")
    package var errorCorrection: QRErrorCorrection = Self.defaultErrorCorrection
    @Option(help: "Write a PNG to this file.") package var png: String?
    @Option(help: "Write an SVG to this file.") package var svg: String?
    @Option(help: "Write a PGM (P5) to this file.") var pgm: String?
    @Option(help: "Pixels per module in image files.") package var scale: Int = Self.defaultScale

    // Shared with BarcodeFastPath, which must fill in what ArgumentParser would.
    package static let defaultErrorCorrection = QRErrorCorrection.M
    package static let defaultScale = 4

    package func run() throws {
        let images = try ImageFiles(png: png, svg: svg, pgm: pgm, scale: scale)
        let options = BarcodeOptions(qrErrorCorrection: errorCorrection)
        let barcode: EncodedBarcode
        switch (card, symbology) {
        case (let query?, nil):
            let coffer = try vaultOption.openItems()
            let item = try coffer.find(query, kind: .card)
            guard case .card(let card) = item.content else { return }
            guard let drawn = try card.barcode(options: options) else {
                throw CLIError.badData("this card has no barcode: it is shown by its number (`coffer show` prints it)")
            }
            barcode = drawn
        case (nil, let symbology?):
            barcode = try StandardInputPayload.encode(as: symbology, options: options)
        default:
            throw CLIError.usage("give a card, or --symbology to encode standard input (not both)")
        }
        if images.isEmpty {
            Output.raw(try drawing.draw(barcode))
        } else {
            try images.write(barcode)
        }
    }
}

package struct OTPCommand: ParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        commandName: "otp", abstract: "Hand a 2FA token to another authenticator.",
        discussion: """
            Examples:
              coffer otp qr GitHub                      # scan it with another app
            """, subcommands: [QR.self])

    package struct QR: ParsableCommand {
        package init() {}

        package static let configuration = CommandConfiguration(
            abstract: "Draw a token's otpauth:// URI as a QR code, to scan into a phone. It shows the secret.",
            discussion: """
                Anyone who sees the code can copy the token: draw it only where nobody watches.

                Examples:
                  coffer otp qr GitHub
                  coffer otp qr GitHub --invert             # on a dark terminal
                """)

        @OptionGroup package var vaultOption: VaultOption
        @OptionGroup package var drawing: DrawingOptions
        @Argument(help: "Token name (\"Issuer (account)\", issuer, account, or id).") var query: String

        package func run() throws {
            let coffer = try vaultOption.open()
            let item = try coffer.find(query, kind: .otp)
            guard case .otp(let otp) = item.content else { return }
            let uri = try otp.token().uri
            let barcode = try CofferBarcode.encode(Array(uri.utf8), as: .qr, options: BarcodeOptions(qrErrorCorrection: .M, charset: .utf8))
            Output.warning("this QR code contains the token's secret: anyone who sees or photographs it can make your codes")
            Output.raw(try drawing.draw(barcode))
        }
    }
}
