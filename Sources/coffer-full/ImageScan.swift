import CofferBarcode
import CofferCLI
import CofferImage
import CofferInterop
import CofferPlatform
import CofferReporting
import CofferScan
import Foundation

/// The barcodes in a photo or screenshot, for `add card --scan`, `add otp --scan` and `import --from image`.
enum ImageScan {
    /// What to try when a picture shows no code.
    static let hint = "nothing found: try a sharper photo, closer, in even light, with the whole code in the frame"

    /// The codes in the image at `path`, each named by the file (and its number when there are several). A large
    /// photo is read at half size first, which is quicker and, for codes that fill the frame, as good; the full
    /// size is read when that finds nothing.
    static func codes(in path: String) throws -> [ScannedCodes.Code] {
        let bytes: [UInt8]
        do {
            bytes = try PrivateFiles.read(path, limit: ImageFile.maximumBytes)
        } catch {
            if case .tooLarge = error { throw CLIError.badData("\(path): \(ImageDecodeError.tooManyBytes(limit: ImageFile.maximumBytes))") }
            throw CLIError.failure(error.description)
        }
        let image: GrayImage
        do {
            image = try ImageFile.decode(bytes)
        } catch {
            throw CLIError.badData("\(path): \(error.description)")
        }
        var result = ScanResult(found: [], refused: [])
        if image.width * image.height > 4_000_000, let half = ImageFile.halved(image) {
            result = BarcodeReader.scan(half)
        }
        if result.found.isEmpty { result = BarcodeReader.scan(image) }
        let name = (path as NSString).lastPathComponent
        if result.found.isEmpty, let refusal = result.refused.first {
            switch refusal {
            case .structuredAppend(let symbology, let index, let total):
                let part = total.map { "part \(index) of \($0)" } ?? "part \(index)"
                throw CLIError.badData(
                    "\(path): the \(symbology.rawValue) code is \(part) of a message spread over several codes; Coffer keeps one code per item")
            }
        }
        return result.found.enumerated().map { index, found in
            ScannedCodes.Code(
                symbology: found.symbology, payload: found.payload,
                source: result.found.count == 1 ? name : "\(name), code \(index + 1)")
        }
    }

    /// The error for a picture with no code in it. Errors name the picture as it was given; the codes' sources
    /// (card names, import problems) use its file name.
    static func nothingFound(_ path: String) -> CLIError {
        .other("\(path): no barcode found", status: .badData, hint: hint)
    }
}
