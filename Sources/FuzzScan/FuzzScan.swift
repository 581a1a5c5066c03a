import CofferImage
import CofferScan

#if !FUZZING
import FuzzSupport
#endif

/// Outcome counts for the replay summary.
struct Tally {
    var decoded = 0
    var rejected = 0
    var found = 0
}

/// The cap the fuzzer decodes to: large enough for every seed, small enough that each input runs in milliseconds.
let fuzzPixels = 1 << 20

/// Feeds one input to the image decoders and the reader.
///
/// Byte 0 even: the rest is an image file (PNG or JPEG) for `ImageFile.decode`, capped at a megapixel, and what it
/// decodes to is scanned. Byte 0 odd: byte 1 + 1 is a width, and the rest are grey pixels for the reader directly
/// (rows cut to whole). Decoders must return an image within the cap or throw an `ImageDecodeError`; the reader
/// must return symbols with a payload and four finite corners inside the image's neighbourhood. Anything else (a
/// trap, a sanitizer report) is a finding.
func exercise(_ input: [UInt8], tally: inout Tally) {
    guard input.count >= 2 else { return }
    let image: GrayImage
    if input[0] & 1 == 0 {
        do {
            image = try ImageFile.decode(Array(input.dropFirst()), maximumPixels: fuzzPixels)
        } catch {
            precondition(!error.description.isEmpty, "an image error must say what is wrong")
            tally.rejected += 1
            return
        }
        precondition(image.width * image.height <= fuzzPixels, "decoded past the cap")
        tally.decoded += 1
    } else {
        let width = Int(input[1]) + 1
        let pixels = Array(input.dropFirst(2))
        let height = pixels.count / width
        guard height > 0, let grey = GrayImage(width: width, height: height, pixels: Array(pixels.prefix(width * height)))
        else { return }
        image = grey
    }
    let result = BarcodeReader.scan(image)
    for found in result.found {
        precondition(!found.payload.isEmpty, "a symbol with no payload")
        precondition(found.corners.count == 4, "a symbol needs four corners")
        for corner in found.corners {
            precondition(corner.x.isFinite && corner.y.isFinite, "a corner off the plane")
            precondition(
                abs(corner.x) < Double(image.width) * 4 + 64 && abs(corner.y) < Double(image.height) * 4 + 64,
                "a corner far outside the image")
        }
    }
    tally.found += result.found.count
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var tally = Tally()
    exercise(Array(UnsafeBufferPointer(start: data, count: size)), tally: &tally)
    return 0
}
#else
/// Without libFuzzer: replays corpus files and directories given as arguments, or, with none, generated grey
/// pictures of noise and stripes.
@main
struct FuzzScanReplay {
    static func main() throws {
        var tally = Tally()
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.isEmpty {
            var bytes = FuzzBytes(seed: 28)
            for width in [1, 16, 64, 255] {
                exercise([1, UInt8(width)] + (0..<(width + 1) * 40).map { _ in bytes.next() }, tally: &tally)
            }
        } else {
            try FuzzReplay.corpus(arguments) { exercise($0, tally: &tally) }
        }
        print("FuzzScan replay: \(tally.decoded) images decoded, \(tally.rejected) refused with a clear error, \(tally.found) symbols found")
    }
}
#endif
