import CofferBarcode

#if !FUZZING
import FuzzSupport
#endif

/// Outcome counts for the replay summary.
struct Tally {
    var encoded = 0
    var rejected = 0
}

/// Feeds one input to `encode` and, when it succeeds, to every renderer.
///
/// Byte 0 picks the symbology, byte 1 the options (EC level, charset, GS1 flag), byte 2 the minimum QR version and
/// the image scale; the rest is the payload. Encoders must either return a well-formed symbol or throw a
/// `BarcodeError`; anything else (a trap, an inconsistent symbol) is a finding.
func exercise(_ input: [UInt8], tally: inout Tally) {
    guard input.count >= 3 else { return }
    let symbology = Symbology.allCases[Int(input[0]) % Symbology.allCases.count]
    let flags = input[1]
    let options = BarcodeOptions(
        qrErrorCorrection: QRErrorCorrection.allCases[Int(flags & 3)],
        qrMinimumVersion: Int(input[2] % 40) + 1,
        qrMask: flags & 0x80 != 0 ? Int(input[2] % 8) : nil,
        gs1: flags & 4 != 0,
        charset: BarcodeCharset.allCases[Int(flags >> 3 & 3) % BarcodeCharset.allCases.count])
    let payload = Array(input.dropFirst(3))
    let symbol: EncodedBarcode
    do {
        symbol = try encode(payload, as: symbology, options: options)
    } catch {
        precondition(error.symbology == symbology && !error.reason.isEmpty, "error must name its symbology and rule")
        tally.rejected += 1
        return
    }
    tally.encoded += 1
    switch symbol.symbol {
    case .matrix(let matrix):
        precondition(matrix.width > 0 && matrix.height > 0, "empty matrix")
        if let qr = symbol.qr {
            precondition(matrix.width == 17 + 4 * qr.version && matrix.height == matrix.width, "QR size")
            precondition(qr.version >= options.qrMinimumVersion && qr.errorCorrection == options.qrErrorCorrection)
        }
    case .linear(let modules, let height):
        precondition(!modules.isEmpty && height > 0 && modules.first == true && modules.last == true, "bar pattern")
    }
    let raster = RasterOptions(scale: Int(input[2] % 3) + 1, barHeight: Int(flags % 16) + 1)
    do {
        _ = try PNGWriter.data(for: symbol, options: raster, depth: flags & 0x40 != 0 ? .grey8 : .bilevel)
        _ = try SVGWriter.data(for: symbol, options: raster)
        _ = try PGMWriter.data(for: symbol, options: raster)
        _ = try TerminalRenderer(options: .init(invert: flags & 0x20 != 0, color: flags & 0x10 != 0, maxColumns: 200))
            .render(symbol)
    } catch {
        precondition(error.symbology == symbology, "renderer error must name the symbology")
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var tally = Tally()
    exercise(Array(UnsafeBufferPointer(start: data, count: size)), tally: &tally)
    return 0
}
#else
/// Without libFuzzer: replays corpus files and directories given as arguments, or, with none, a fixed set of
/// generated inputs covering every symbology.
@main
struct FuzzBarcodeReplay {
    static func main() throws {
        var tally = Tally()
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.isEmpty {
            var bytes = FuzzBytes(seed: 0x5EED)
            func next() -> UInt8 { bytes.next() }
            for round in 0..<3000 {
                let length = [0, 1, 2, 5, 8, 12, 13, 14, 20, 64, 300][round % 11]
                var input = [UInt8(round % Symbology.allCases.count), next(), next()]
                let digitsOnly = round % 3 == 0
                for _ in 0..<length { input.append(digitsOnly ? 0x30 + next() % 10 : next()) }
                exercise(input, tally: &tally)
            }
        } else {
            try FuzzReplay.corpus(arguments) { exercise($0, tally: &tally) }
        }
        print("FuzzBarcode replay: \(tally.encoded) encoded, \(tally.rejected) rejected with a clear error")
    }
}
#endif
