/// A picture as the reader sees it: one byte of luminance per pixel (0 black, 255 white), row-major, origin top-left.
public struct GrayImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public let pixels: [UInt8]

    /// The largest image the reader takes: 40 megapixels (a phone's full-resolution photo is 12–50; a camera frame
    /// is 1). Decoders cap what they decode at this before allocating anything.
    public static let maximumPixels = 40_000_000

    /// Nil when the sizes do not describe `pixels` or the image is empty or larger than ``maximumPixels``.
    public init?(width: Int, height: Int, pixels: [UInt8]) {
        guard width > 0, height > 0, width <= Self.maximumPixels / height, pixels.count == width * height else { return nil }
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Luminance of 8-bit RGBA (a canvas's `ImageData`) by the BT.601 weights, in integers.
    public init?(width: Int, height: Int, rgba: [UInt8]) {
        guard width > 0, height > 0, width <= Self.maximumPixels / height, rgba.count == width * height * 4 else { return nil }
        var pixels = [UInt8](repeating: 0, count: width * height)
        for index in 0..<pixels.count {
            let red = Int(rgba[index * 4]), green = Int(rgba[index * 4 + 1]), blue = Int(rgba[index * 4 + 2])
            pixels[index] = UInt8((red * 299 + green * 587 + blue * 114 + 500) / 1000)
        }
        self.init(width: width, height: height, pixels: pixels)
    }

    @inline(__always)
    subscript(x: Int, y: Int) -> UInt8 { pixels[y * width + x] }
}

/// A point in image coordinates (pixels, origin top-left).
public struct ImagePoint: Sendable, Equatable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}
