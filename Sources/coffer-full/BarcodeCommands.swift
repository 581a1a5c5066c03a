import ArgumentParser
import CofferCLI
import CofferKit

struct BarcodeCommand: ParsableCommand {
    init() {}

    static let configuration = CommandConfiguration(
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

    @OptionGroup var vaultOption: VaultOption
    @OptionGroup var drawing: DrawingOptions
    @Argument(help: "Card name or id (omit with --symbology to encode standard input).", completion: ItemCompletion.names(.card))
    var card: String?
    @Option(help: "Encode standard input (its bytes, less one final newline) instead of a card.") var symbology: Symbology?
    @Option(name: .customLong("ec"), help: "QR error correction: L, M, Q or H.")
    var errorCorrection: QRErrorCorrection = Self.defaultErrorCorrection
    @Option(help: "Write a PNG to this file.") var png: String?
    @Option(help: "Write an SVG to this file.") var svg: String?
    @Option(help: "Write a PGM (P5) to this file.") var pgm: String?
    @Option(help: "Pixels per module in image files.") var scale: Int = Self.defaultScale
    @Flag(help: "Replace image files that exist.") var force = false

    // Shared with BarcodeFastPath, which must fill in what ArgumentParser would.
    static let defaultErrorCorrection = BarcodeFastPath.defaultErrorCorrection
    static let defaultScale = BarcodeFastPath.defaultScale

    func run() throws {
        let images = try ImageFiles(png: png, svg: svg, pgm: pgm, scale: scale, force: force)
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

struct OTPCommand: ParsableCommand {
    init() {}

    static let configuration = CommandConfiguration(
        commandName: "otp", abstract: "Hand a 2FA token to another authenticator.",
        discussion: """
            Examples:
              coffer otp qr GitHub                      # scan it with another app
            """, subcommands: [QR.self])

    struct QR: ParsableCommand {
        init() {}

        static let configuration = CommandConfiguration(
            abstract: "Draw a token's otpauth:// URI as a QR code, to scan into a phone. It shows the secret.",
            discussion: """
                Anyone who sees the code can copy the token: draw it only where nobody watches.

                Examples:
                  coffer otp qr GitHub
                  coffer otp qr GitHub --invert             # on a dark terminal
                """)

        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var drawing: DrawingOptions
        @Argument(help: "Token name (\"Issuer (account)\", issuer, account, or id).", completion: ItemCompletion.names(.otp))
        var query: String

        func run() throws {
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
