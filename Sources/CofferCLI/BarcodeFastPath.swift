import ArgumentParser
import CofferKit
import CofferReporting
import Foundation

/// `coffer barcode --symbology S --png FILE` (and `--svg`, `--pgm`, `--ec`, `--scale`) run without ArgumentParser.
///
/// Parsing the root command reflects over every command and option of the CLI, which costs far more than encoding
/// a symbol; scripts that turn many payloads into images pay it on every call. This recogniser accepts only
/// argument lists that ArgumentParser would certainly parse into the same values (each option at most once, values
/// converted by the options' own `ExpressibleByArgument` conformances, no value that could be read as an option)
/// and hands everything else, including every error in the arguments, to ArgumentParser. The work itself is
/// `ImageFiles` and `StandardInputPayload`, shared with `BarcodeCommand`, so output and errors are the same.
/// `COFFER_NO_FAST_PATH` (set and not empty) turns it off, for comparing the two paths.
package struct BarcodeFastPath {
    package let symbology: Symbology
    package let errorCorrection: QRErrorCorrection
    package let scale: Int
    package let png: String?
    package let svg: String?
    package let pgm: String?

    /// `coffer barcode`'s defaults for `--ec` and `--scale`, which this must fill in as ArgumentParser would.
    package static let defaultErrorCorrection = QRErrorCorrection.M
    package static let defaultScale = 4

    /// The request in `arguments` (without the program name), or nil when ArgumentParser must handle them.
    package init?(arguments: ArraySlice<String>) {
        if let disabled = getenv("COFFER_NO_FAST_PATH"), disabled.pointee != 0 { return nil }
        guard arguments.first == "barcode" else { return nil }
        var symbologyName: String?
        var level: String?
        var pixels: String?
        var png: String?
        var svg: String?
        var pgm: String?
        var rest = arguments.dropFirst()
        while let token = rest.popFirst() {
            let name: Substring
            let value: String
            if let equals = token.firstIndex(of: "=") {
                name = token[..<equals]
                value = String(token[token.index(after: equals)...])
            } else if let next = rest.popFirst() {
                name = token[...]
                value = next
            } else {
                return nil
            }
            // An empty value, or one starting with "-", is read differently by ArgumentParser (or is an error there).
            guard let first = value.utf8.first, first != UInt8(ascii: "-") else { return nil }
            let accepted: Bool
            switch name {
            case "--symbology": accepted = Self.set(&symbologyName, value)
            case "--ec": accepted = Self.set(&level, value)
            case "--scale": accepted = Self.set(&pixels, value)
            case "--png": accepted = Self.set(&png, value)
            case "--svg": accepted = Self.set(&svg, value)
            case "--pgm": accepted = Self.set(&pgm, value)
            default: accepted = false
            }
            guard accepted else { return nil }
        }
        // Without a file the symbol is drawn on the terminal, which needs Output's colour and width detection.
        guard png != nil || svg != nil || pgm != nil else { return nil }
        guard let symbologyName, let symbology = Symbology(argument: symbologyName) else { return nil }
        guard let errorCorrection = level.map({ QRErrorCorrection(argument: $0) }) ?? Self.defaultErrorCorrection,
            let scale = pixels.map({ Int(argument: $0) }) ?? Self.defaultScale
        else { return nil }
        self.symbology = symbology
        self.errorCorrection = errorCorrection
        self.scale = scale
        self.png = png
        self.svg = svg
        self.pgm = pgm
    }

    /// Stores the first value of an option; a repeated option is left to ArgumentParser.
    private static func set(_ slot: inout String?, _ value: String) -> Bool {
        guard slot == nil else { return false }
        slot = value
        return true
    }

    /// Does what `BarcodeCommand.run` does for this request, then exits as the command would.
    package func run() -> Never {
        do throws(CLIError) {
            let images = try ImageFiles(png: png, svg: svg, pgm: pgm, scale: scale)
            let barcode = try StandardInputPayload.encode(
                as: symbology, options: BarcodeOptions(qrErrorCorrection: errorCorrection))
            try images.write(barcode)
        } catch {
            ErrorReporter.exit(reporting: error)
        }
        exit(0)
    }
}
