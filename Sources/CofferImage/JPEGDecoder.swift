import CCofferJPEG
import CofferScan

/// JPEG through libjpeg-turbo (Debian's libjpeg62-turbo): baseline and progressive, any chroma subsampling, decoded
/// straight to luminance. The size is checked from the header before decoding, and the EXIF orientation is applied,
/// so a phone's portrait photo is read upright.
enum JPEGDecoder {
    static func decode(_ bytes: [UInt8], maximumPixels: Int) throws(ImageDecodeError) -> GrayImage {
        var width: UInt32 = 0, height: UInt32 = 0
        var pixels: UnsafeMutablePointer<UInt8>?
        let status = bytes.withUnsafeBufferPointer { buffer in
            coffer_jpeg_gray(buffer.baseAddress, buffer.count, maximumPixels, &pixels, &width, &height)
        }
        switch status {
        case COFFER_JPEG_OK: break
        case COFFER_JPEG_TOO_LARGE: throw .tooManyPixels(width: Int(width), height: Int(height))
        case COFFER_JPEG_TRUNCATED: throw .damaged(format: "JPEG", reason: "it is cut short")
        case COFFER_JPEG_OUT_OF_MEMORY: throw .tooManyPixels(width: Int(width), height: Int(height))
        default: throw .damaged(format: "JPEG", reason: "libjpeg cannot decode it")
        }
        guard let pixels else { throw .damaged(format: "JPEG", reason: "libjpeg cannot decode it") }
        defer { coffer_jpeg_free(pixels) }
        let count = Int(width) * Int(height)
        let copy = Array(UnsafeBufferPointer(start: pixels, count: count))
        guard let image = GrayImage(width: Int(width), height: Int(height), pixels: copy) else {
            throw .tooManyPixels(width: Int(width), height: Int(height))
        }
        return Orientation.read(bytes).upright(image)
    }
}

/// The EXIF orientation tag (TIFF tag 0x0112 in the APP1 "Exif" segment): how the stored pixels must be turned
/// to stand upright.
enum Orientation: Int {
    case upright = 1, mirrored = 2, upsideDown = 3, upsideDownMirrored = 4, leftMirrored = 5, right = 6, rightMirrored = 7, left = 8

    /// The tag from a JPEG's segments before the image data, or upright when there is none (or it is malformed).
    static func read(_ jpeg: [UInt8]) -> Orientation {
        var offset = 2
        while offset + 4 <= jpeg.count, jpeg[offset] == 0xFF {
            let marker = jpeg[offset + 1]
            if marker == 0xDA || marker == 0xD9 { break }
            let length = Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3])
            guard length >= 2, offset + 2 + length <= jpeg.count else { break }
            if marker == 0xE1, length >= 16, Array(jpeg[offset + 4..<offset + 10]) == Array("Exif\0\0".utf8) {
                return tiffOrientation(jpeg[offset + 10..<offset + 2 + length]) ?? .upright
            }
            offset += 2 + length
        }
        return .upright
    }

    private static func tiffOrientation(_ tiff: ArraySlice<UInt8>) -> Orientation? {
        let base = tiff.startIndex
        guard tiff.count >= 8 else { return nil }
        let little: Bool
        switch (tiff[base], tiff[base + 1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            let (a, b) = (Int(tiff[base + at]), Int(tiff[base + at + 1]))
            return little ? a | b << 8 : a << 8 | b
        }
        func u32(_ at: Int) -> Int? {
            guard let low = u16(little ? at : at + 2), let high = u16(little ? at + 2 : at) else { return nil }
            return high << 16 | low
        }
        guard let ifd = u32(4), let count = u16(ifd), count <= 512 else { return nil }
        for entry in 0..<count {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { return nil }
            if tag == 0x0112, let value = u16(at + 8) { return Orientation(rawValue: value) }
        }
        return nil
    }

    /// The image turned (and mirrored) as the tag says.
    func upright(_ image: GrayImage) -> GrayImage {
        guard self != .upright else { return image }
        let (w, h) = (image.width, image.height)
        let swaps = rawValue >= 5
        let (outWidth, outHeight) = swaps ? (h, w) : (w, h)
        var pixels = [UInt8](repeating: 0, count: w * h)
        for y in 0..<outHeight {
            for x in 0..<outWidth {
                // The stored pixel that lands at (x, y) once upright.
                let (sx, sy): (Int, Int)
                switch self {
                case .upright: (sx, sy) = (x, y)
                case .mirrored: (sx, sy) = (w - 1 - x, y)
                case .upsideDown: (sx, sy) = (w - 1 - x, h - 1 - y)
                case .upsideDownMirrored: (sx, sy) = (x, h - 1 - y)
                case .leftMirrored: (sx, sy) = (y, x)
                case .right: (sx, sy) = (y, h - 1 - x)
                case .rightMirrored: (sx, sy) = (w - 1 - y, h - 1 - x)
                case .left: (sx, sy) = (w - 1 - y, x)
                }
                pixels[y * outWidth + x] = image.pixels[sy * w + sx]
            }
        }
        return GrayImage(width: outWidth, height: outHeight, pixels: pixels) ?? image
    }
}
