import CZlib

/// PNG output, greyscale, compressed with zlib's deflate (not stored blocks).
public enum PNGWriter {
    /// Pixel format of the image.
    public enum Depth: Sendable, Equatable {
        /// One bit per pixel: the smallest files.
        case bilevel
        /// Eight-bit greyscale, for tools that mishandle sub-byte depths.
        case grey8
    }

    /// The PNG file's bytes (IHDR, one IDAT deflated at zlib's best compression, IEND; CRC-32 from zlib).
    /// Throws for a bad option, an image over 16,384 pixels on a side, or a zlib failure.
    public static func data(
        for barcode: EncodedBarcode, options: RasterOptions = RasterOptions(), depth: Depth = .bilevel
    ) throws(BarcodeError) -> [UInt8] {
        let grid = try barcode.rasterGrid(options)
        let scale = options.scale
        let width = grid.width * scale
        let height = grid.height * scale
        let rowBytes = depth == .bilevel ? (width + 7) / 8 : width

        // Scanlines: the first of each module row unfiltered, its repeats with the Up filter (all zero bytes),
        // which deflate shrinks to almost nothing.
        var raw = [UInt8]()
        raw.reserveCapacity((rowBytes + 1) * height)
        var row = [UInt8](repeating: 0, count: rowBytes)
        let zeroRow = [UInt8](repeating: 0, count: rowBytes)
        for y in 0..<grid.height {
            for i in 0..<rowBytes { row[i] = 0 }
            for x in 0..<grid.width where !grid[x, y] {
                for k in 0..<scale {
                    let px = x * scale + k
                    if depth == .bilevel { row[px >> 3] |= UInt8(0x80 >> (px & 7)) } else { row[px] = 255 }
                }
            }
            raw.append(0)
            raw.append(contentsOf: row)
            for _ in 1..<scale {
                raw.append(2)
                raw.append(contentsOf: zeroRow)
            }
        }

        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header = [UInt8]()
        appendBigEndian(UInt32(width), to: &header)
        appendBigEndian(UInt32(height), to: &header)
        header += [depth == .bilevel ? 1 : 8, 0, 0, 0, 0]
        appendChunk("IHDR", header, to: &png)
        appendChunk("IDAT", try deflate(raw, symbology: barcode.symbology), to: &png)
        appendChunk("IEND", [], to: &png)
        return png
    }

    private static func deflate(_ input: [UInt8], symbology: Symbology) throws(BarcodeError) -> [UInt8] {
        var capacity = compressBound(uLong(input.count))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let status = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { source in
                compress2(out.baseAddress, &capacity, source.baseAddress, uLong(source.count), Z_BEST_COMPRESSION)
            }
        }
        guard status == Z_OK else { throw BarcodeError(symbology, "zlib could not compress the PNG image data") }
        output.removeSubrange(Int(capacity)...)
        return output
    }

    private static func appendBigEndian(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static func appendChunk(_ type: String, _ body: [UInt8], to png: inout [UInt8]) {
        appendBigEndian(UInt32(body.count), to: &png)
        let typed = Array(type.utf8) + body
        png += typed
        let crc = typed.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        appendBigEndian(UInt32(truncatingIfNeeded: crc), to: &png)
    }
}
