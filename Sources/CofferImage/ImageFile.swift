import CofferScan

/// Why an image file could not be read. The descriptions name the problem and sizes, never file contents.
public enum ImageDecodeError: Error, Equatable, CustomStringConvertible {
    /// Neither a PNG nor a JPEG (by the first bytes).
    case notAnImage
    /// The file is damaged or cut short where the decoder cannot go on.
    case damaged(format: String, reason: String)
    /// The header names more pixels than the reader takes.
    case tooManyPixels(width: Int, height: Int)
    /// The file is larger than the reader takes.
    case tooManyBytes(limit: Int)
    /// A valid file in a variant the decoder does not read.
    case unsupported(format: String, reason: String)

    public var description: String {
        switch self {
        case .notAnImage: "not a PNG or JPEG image"
        case .damaged(let format, let reason): "the \(format) file is damaged: \(reason)"
        case .tooManyPixels(let width, let height):
            "the image is \(width)×\(height) pixels, more than the \(GrayImage.maximumPixels / 1_000_000) megapixels Coffer reads"
        case .tooManyBytes(let limit): "the image file is larger than \(limit / 1_048_576) MiB"
        case .unsupported(let format, let reason): "this \(format) file is not supported: \(reason)"
        }
    }
}

/// Photos and screenshots as the barcode reader sees them: PNG or JPEG bytes in, luminance out, turned upright by
/// a JPEG's EXIF orientation (a phone stores a portrait photo sideways and says so there).
public enum ImageFile {
    /// The largest file read: a 50-megapixel phone photo is about 25 MiB.
    public static let maximumBytes = 64 * 1_048_576

    /// The luminance of a PNG or JPEG file. Sizes are checked from the header before any pixel is decoded, and a
    /// compressed stream is never inflated past the size its header declares.
    public static func decode(_ bytes: [UInt8], maximumPixels: Int = GrayImage.maximumPixels) throws(ImageDecodeError) -> GrayImage {
        guard bytes.count <= maximumBytes else { throw .tooManyBytes(limit: maximumBytes) }
        if bytes.starts(with: PNGDecoder.signature) { return try PNGDecoder.decode(bytes, maximumPixels: maximumPixels) }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return try JPEGDecoder.decode(bytes, maximumPixels: maximumPixels) }
        throw .notAnImage
    }

    /// A copy at half the size each way (each pixel the mean of four): large photos are read at this size first.
    public static func halved(_ image: GrayImage) -> GrayImage? {
        let width = image.width / 2, height = image.height / 2
        guard width >= 1, height >= 1 else { return nil }
        var pixels = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            let top = 2 * y * image.width, bottom = top + image.width
            for x in 0..<width {
                let sum =
                    Int(image.pixels[top + 2 * x]) + Int(image.pixels[top + 2 * x + 1]) + Int(image.pixels[bottom + 2 * x])
                    + Int(image.pixels[bottom + 2 * x + 1])
                pixels[y * width + x] = UInt8((sum + 2) / 4)
            }
        }
        return GrayImage(width: width, height: height, pixels: pixels)
    }
}
