import CofferKit
import CofferPlatform

// The work behind `coffer barcode`'s image files and `--symbology`, shared by the ArgumentParser command and the
// start-up fast path (BarcodeFastPath) so that both give the same bytes and the same errors. Nothing here touches
// Foundation or the vault: the fast path exists to keep that start-up cost out of a plain encoder run.

/// The image files a barcode command writes, checked before any other work is done.
package struct ImageFiles {
    package let png: String?
    package let svg: String?
    package let pgm: String?
    package let raster: RasterOptions
    /// Whether an existing file may be replaced (`--force`), as `coffer export` allows.
    package let force: Bool

    /// Throws a usage error when `scale` is outside 1–64 pixels per module, or when a file exists and `force` is not
    /// given (checked for every file before any is written, so a refusal leaves nothing half done).
    package init(png: String?, svg: String?, pgm: String?, scale: Int, force: Bool = false) throws(CLIError) {
        guard (1...64).contains(scale) else { throw .usage("--scale must be 1 to 64") }
        self.png = png
        self.svg = svg
        self.pgm = pgm
        self.force = force
        raster = RasterOptions(scale: scale)
        if !force {
            for case let path? in [png, svg, pgm] where PrivateFiles.exists(path) {
                throw .usage("\(path) exists; add --force to replace it")
            }
        }
    }

    /// Whether no file was asked for (the barcode is then drawn on the terminal).
    package var isEmpty: Bool { png == nil && svg == nil && pgm == nil }

    /// Writes each requested file, PNG then SVG then PGM, stopping at the first failure.
    package func write(_ barcode: EncodedBarcode) throws(CLIError) {
        let raster = raster
        let files: [(String?, () throws(BarcodeError) -> [UInt8])] = [
            (png, { () throws(BarcodeError) in try PNGWriter.data(for: barcode, options: raster) }),
            (svg, { () throws(BarcodeError) in try SVGWriter.data(for: barcode, options: raster) }),
            (pgm, { () throws(BarcodeError) in try PGMWriter.data(for: barcode, options: raster) }),
        ]
        for case (let path?, let render) in files {
            let bytes: [UInt8]
            do {
                bytes = try render()
            } catch {
                throw .badData(error.description)
            }
            // An image of the barcode is as secret as the payload: owner-only, written atomically.
            do {
                try PrivateFiles.write(bytes, to: path, exclusive: !force)
            } catch .alreadyExists {
                throw .usage("\(path) exists; add --force to replace it")
            } catch {
                throw .failure(error.description)
            }
        }
    }
}

/// `coffer barcode --symbology`: standard input's bytes, less one final newline (LF, CRLF or a lone CR), encoded.
package enum StandardInputPayload {
    /// Reads standard input to its end (prompting first on a terminal) and encodes it as `symbology`.
    package static func encode(as symbology: Symbology, options: BarcodeOptions) throws(CLIError) -> EncodedBarcode {
        if Terminal.standardInputIsTTY { Terminal.writeError("Payload, then Ctrl-D:\n") }
        var payload = try readAll()
        if payload.last == 0x0A { payload.removeLast() }
        if payload.last == 0x0D { payload.removeLast() }
        do {
            return try CofferBarcode.encode(payload, as: symbology, options: options)
        } catch {
            throw .badData(error.description)
        }
    }

    /// All of standard input, refusing more than `SecretInput.standardInputLimit` bytes like every other command.
    private static func readAll() throws(CLIError) -> [UInt8] {
        try CLIError.reading { () throws(StandardInputError) in
            try Terminal.readStandardInput(limit: SecretInput.standardInputLimit, typed: false)
        }
    }
}
