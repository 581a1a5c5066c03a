import CofferTestSupport
import Foundation
import Testing

@testable import CofferImage
@testable import CofferScan

/// The image decoders against Pillow: every PNG colour type and bit depth, transparency, Adam7, and JPEG with EXIF
/// orientation, compared pixel for pixel with Pillow's reading of the same file; and hostile files give one error,
/// checked before anything large is allocated.
@Suite("Image files: PNG and JPEG", .serialized)
struct ImageFileTests {
    struct Sample: Sendable, CustomTestStringConvertible {
        let request: [String: any Sendable]
        /// Largest difference allowed from Pillow's luminance (its rounding of 16-bit samples and of alpha differs by one).
        let tolerance: Int
        var testDescription: String {
            request.filter { $0.key != "seed" }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }

    static let samples: [Sample] = {
        var samples: [Sample] = []
        func png(_ mode: String, _ extra: [String: any Sendable] = [:]) {
            var request: [String: any Sendable] = ["format": "png", "mode": mode, "width": 37, "height": 23, "seed": samples.count]
            request.merge(extra) { $1 }
            samples.append(Sample(request: request, tolerance: 1))
        }
        for mode in ["1", "L", "I;16", "LA", "RGB", "RGBA", "P", "PA"] { png(mode) }
        for bits in [1, 2, 4] { png("P", ["bits": bits]) }
        png("L", ["transparency": 200])
        png("L", ["interlace": true])
        png("RGB", ["interlace": true, "width": 3, "height": 2])
        png("RGB", ["interlace": true, "width": 61, "height": 45])
        for (mode, orientation) in [("L", 1), ("RGB", 3), ("RGB", 6), ("L", 8), ("RGB", 5)] {
            samples.append(
                Sample(
                    request: [
                        "format": "jpeg", "mode": mode, "width": 40, "height": 24, "seed": samples.count,
                        "orientation": orientation, "quality": 92,
                    ], tolerance: 0))
        }
        return samples
    }()

    static func make(_ requests: [[String: any Sendable]]) throws -> [(file: [UInt8], width: Int, height: Int, luminance: [UInt8])] {
        try TestSupport.pythonOracle("image_oracle.py", input: requests.map { $0 as [String: Any] }).map { answer in
            let fields = try #require(answer as? [String: Any])
            let fileText = try #require(fields["file"] as? String), luminanceText = try #require(fields["luminance"] as? String)
            let file = try #require(Data(base64Encoded: fileText)), luminance = try #require(Data(base64Encoded: luminanceText))
            let width = try #require(fields["width"] as? Int), height = try #require(fields["height"] as? Int)
            return (Array(file), width, height, Array(luminance))
        }
    }

    @Test("decoded as Pillow reads it", arguments: samples)
    func matchesPillow(_ sample: Sample) throws {
        let made = try #require(try Self.make([sample.request]).first)
        let image = try ImageFile.decode(made.file)
        #expect(image.width == made.width && image.height == made.height)
        let worst = zip(image.pixels, made.luminance).map { abs(Int($0) - Int($1)) }.max() ?? 255
        #expect(image.pixels.count == made.luminance.count && worst <= sample.tolerance, "largest difference \(worst)")
    }

    @Test("a phone's sideways JPEG of a linear code is read upright")
    func orientedPhoto() throws {
        let made = try OracleImage.make([["zint": ["type": "EANX", "data": "400638133393", "scale": 2]] as [String: Any]])
        // The stored pixels are turned a quarter; the EXIF tag (6: turn right) brings them back.
        let jpeg = try Self.jpeg(made[0].image, orientation: 6, quality: 85)
        let image = try ImageFile.decode(jpeg)
        #expect(BarcodeReader.read(image).map(\.payload) == [Array("4006381333931".utf8)])
    }

    @Test("hostile files: one clear error each, before anything large is allocated")
    func hostile() throws {
        let made = try Self.make([
            ["format": "png", "mode": "RGB", "width": 64, "height": 64, "seed": 9],
            ["format": "jpeg", "mode": "RGB", "width": 64, "height": 64, "seed": 9],
        ])
        let png = made[0].file, jpeg = made[1].file

        #expect(throws: ImageDecodeError.notAnImage) { try ImageFile.decode(Array("GIF89a".utf8) + [UInt8](repeating: 0, count: 64)) }
        #expect(throws: ImageDecodeError.notAnImage) { try ImageFile.decode([]) }
        #expect(throws: ImageDecodeError.damaged(format: "PNG", reason: "it is cut short")) { try ImageFile.decode(Array(png.prefix(60))) }
        var flipped = png
        flipped[40] ^= 0x01
        #expect(throws: (any Error).self) { try ImageFile.decode(flipped) }
        #expect(throws: ImageDecodeError.damaged(format: "JPEG", reason: "it is cut short")) {
            try ImageFile.decode(Array(jpeg.prefix(jpeg.count / 2)))
        }
        #expect(throws: ImageDecodeError.damaged(format: "JPEG", reason: "libjpeg cannot decode it")) {
            try ImageFile.decode([0xFF, 0xD8, 0xFF] + [UInt8](repeating: 0x42, count: 300))
        }

        // 100 megapixels in the header (10 000 × 10 000), valid checksums, and a few bytes of data.
        #expect(throws: ImageDecodeError.tooManyPixels(width: 10_000, height: 10_000)) {
            try ImageFile.decode(Self.png(width: 10_000, height: 10_000, zeroBytes: 0))
        }
        var bigJPEG = jpeg
        let frame = try #require(Self.startOfFrame(in: bigJPEG))
        bigJPEG[frame + 5] = 0x27; bigJPEG[frame + 6] = 0x10  // height 10 000
        bigJPEG[frame + 7] = 0x27; bigJPEG[frame + 8] = 0x10  // width 10 000
        #expect(throws: ImageDecodeError.tooManyPixels(width: 10_000, height: 10_000)) { try ImageFile.decode(bigJPEG) }

        // A bomb: 50 MB of zero rows deflated to about 50 KB behind a 200 × 200 header: read as 200 rows, no more.
        let bomb = try Self.png(width: 200, height: 200, zeroBytes: 50_000_000)
        #expect(bomb.count < 100_000)
        let image = try ImageFile.decode(bomb)
        #expect(image.width == 200 && image.pixels.allSatisfy { $0 == 0 })

        // Too few rows for the header's size.
        #expect(throws: ImageDecodeError.damaged(format: "PNG", reason: "its image data is cut short")) {
            try ImageFile.decode(Self.png(width: 200, height: 200, zeroBytes: 201 * 100))
        }
        #expect(throws: ImageDecodeError.tooManyBytes(limit: ImageFile.maximumBytes)) {
            try ImageFile.decode(PNGDecoder.signature + [UInt8](repeating: 0, count: ImageFile.maximumBytes))
        }
    }

    @Test("images of noise and flat images read as nothing, not as an error")
    func noise() throws {
        var generator = SplitMix64(seed: 3)
        let pixels = (0..<(320 * 240)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        let image = try #require(GrayImage(width: 320, height: 240, pixels: pixels))
        #expect(BarcodeReader.scan(image) == ScanResult(found: [], refused: []))
        let flat = try #require(GrayImage(width: 320, height: 240, pixels: [UInt8](repeating: 128, count: 320 * 240)))
        #expect(BarcodeReader.read(flat).isEmpty)
    }

    /// A grey 8-bit PNG whose IDAT deflates `zeroBytes` zero bytes (filter bytes included), with valid checksums.
    static func png(width: Int, height: Int, zeroBytes: Int) throws -> [UInt8] {
        let answer = try TestSupport.pythonOracle("image_oracle.py", input: [["raw_png": ["width": width, "height": height, "zeros": zeroBytes]]])
        let fields = try #require((answer as? [[String: Any]])?.first)
        let text = try #require(fields["file"] as? String)
        return Array(try #require(Data(base64Encoded: text)))
    }

    static func jpeg(_ image: GrayImage, orientation: Int, quality: Int) throws -> [UInt8] {
        let request: [String: Any] = [
            "jpeg_of": [
                "width": image.width, "height": image.height,
                "pixels": Data(image.pixels).base64EncodedString(),
            ],
            "orientation": orientation, "quality": quality,
        ]
        let answer = try TestSupport.pythonOracle("image_oracle.py", input: [request])
        let fields = try #require((answer as? [[String: Any]])?.first)
        let text = try #require(fields["file"] as? String)
        return Array(try #require(Data(base64Encoded: text)))
    }

    /// Where the first SOF0/SOF2 segment starts (its marker's 0xFF).
    static func startOfFrame(in jpeg: [UInt8]) -> Int? {
        var offset = 2
        while offset + 4 < jpeg.count {
            let marker = jpeg[offset + 1]
            if marker == 0xC0 || marker == 0xC2 { return offset }
            offset += 2 + (Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3]))
        }
        return nil
    }
}
