import CZlib
import CofferScan

/// PNG (ISO/IEC 15948) to luminance: every colour type and bit depth, palettes and transparency (composited over
/// white, as a viewer shows a screenshot), Adam7 interlacing, every row filter. Each chunk's CRC is checked, and the
/// image data is inflated into a buffer of exactly the size the header declares, so a decompression bomb stops there.
enum PNGDecoder {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    private struct Header {
        let width: Int
        let height: Int
        let bitDepth: Int
        let colourType: Int
        let interlaced: Bool

        var channels: Int { [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][colourType] ?? 1 }
        var bitsPerPixel: Int { channels * bitDepth }
        /// Bytes a filter looks back (at least one).
        var filterStep: Int { max(1, bitsPerPixel / 8) }
        func rowBytes(_ width: Int) -> Int { (width * bitsPerPixel + 7) / 8 }
    }

    private static let passes: [(x: Int, y: Int, dx: Int, dy: Int)] = [
        (0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2),
    ]

    static func decode(_ bytes: [UInt8], maximumPixels: Int) throws(ImageDecodeError) -> GrayImage {
        var header: Header?
        var palette: [(UInt8, UInt8, UInt8)] = []
        var paletteAlpha: [UInt8] = []
        var transparent: [Int]?
        var compressed: [UInt8] = []
        var offset = signature.count
        var ended = false
        while !ended {
            guard offset + 12 <= bytes.count else { throw .damaged(format: "PNG", reason: "it is cut short") }
            let length = bigEndian(bytes[...], offset)
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            guard length <= 0x7FFF_FFFF, offset + 12 + length <= bytes.count else {
                throw .damaged(format: "PNG", reason: "it is cut short")
            }
            let data = bytes[offset + 8..<offset + 8 + length]
            let crc = bytes[offset + 4..<offset + 8 + length].withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
            guard UInt32(crc) == UInt32(bigEndian(bytes[...], offset + 8 + length)) else {
                throw .damaged(format: "PNG", reason: "the \(type.allSatisfy(\.isLetter) ? type : "?") chunk's checksum is wrong")
            }
            offset += 12 + length
            if header == nil && type != "IHDR" { throw .damaged(format: "PNG", reason: "it does not start with its header") }
            switch type {
            case "IHDR":
                guard header == nil else { throw .damaged(format: "PNG", reason: "it has two headers") }
                header = try readHeader(data, maximumPixels: maximumPixels)
            case "PLTE":
                guard length % 3 == 0, length / 3 >= 1, length / 3 <= 256 else { throw .damaged(format: "PNG", reason: "its palette is malformed") }
                palette = stride(from: data.startIndex, to: data.endIndex, by: 3).map { (data[$0], data[$0 + 1], data[$0 + 2]) }
            case "tRNS":
                switch header?.colourType {
                case 3: paletteAlpha = Array(data.prefix(256))
                case 0 where length == 2: transparent = [bigEndian16(data, data.startIndex)]
                case 2 where length == 6:
                    transparent = [0, 2, 4].map { bigEndian16(data, data.startIndex + $0) }
                default: break
                }
            case "IDAT":
                compressed += data
            case "IEND":
                ended = true
            default:
                // An unknown critical chunk (upper-case first letter) changes how the image is read.
                if let first = type.unicodeScalars.first, ("A"..."Z").contains(first) {
                    throw .unsupported(format: "PNG", reason: "it has a critical chunk Coffer does not know")
                }
            }
        }
        guard let header else { throw .damaged(format: "PNG", reason: "it has no header") }
        if header.colourType == 3, palette.isEmpty { throw .damaged(format: "PNG", reason: "its palette is missing") }

        // Each palette entry's luminance over white, worked out once.
        let paletteLuminance: [UInt8] = palette.enumerated().map { entry, colour in
            let red = Int(colour.0) * 299, green = Int(colour.1) * 587, blue = Int(colour.2) * 114
            let luma = (red + green + blue + 500) / 1000
            let alpha = entry < paletteAlpha.count ? Int(paletteAlpha[entry]) : 255
            return UInt8((luma * alpha + 255 * (255 - alpha) + 127) / 255)
        }
        var inflater = try Inflater(compressed)
        defer { inflater.close() }
        var pixels = [UInt8](repeating: 255, count: header.width * header.height)
        let layouts = header.interlaced ? passes : [(x: 0, y: 0, dx: 1, dy: 1)]
        for pass in layouts {
            let columns = (header.width - pass.x + pass.dx - 1) / pass.dx, rows = (header.height - pass.y + pass.dy - 1) / pass.dy
            guard columns > 0, rows > 0 else { continue }
            let rowBytes = header.rowBytes(columns)
            var previous = [UInt8](repeating: 0, count: rowBytes)
            var row = [UInt8](repeating: 0, count: rowBytes)
            var filter: [UInt8] = [0]
            for passRow in 0..<rows {
                try inflater.fill(&filter)
                try inflater.fill(&row)
                try unfilter(&row, previous: previous, filter: filter[0], step: header.filterStep)
                let y = pass.y + passRow * pass.dy
                let first = y * header.width + pass.x
                // The common 8-bit forms without transparency in their own loops (a 12-megapixel photo is 12 million
                // pixels); every other form through the general path.
                switch (header.colourType, header.bitDepth, transparent) {
                case (0, 8, nil):
                    for column in 0..<columns { pixels[first + column * pass.dx] = row[column] }
                case (2, 8, nil):
                    for column in 0..<columns {
                        let base = column * 3
                        let red = Int(row[base]) * 299, green = Int(row[base + 1]) * 587, blue = Int(row[base + 2]) * 114
                        pixels[first + column * pass.dx] = UInt8((red + green + blue + 500) / 1000)
                    }
                case (3, 8, _):
                    for column in 0..<columns {
                        let entry = Int(row[column])
                        guard entry < paletteLuminance.count else {
                            throw .damaged(format: "PNG", reason: "a pixel names a colour outside its palette")
                        }
                        pixels[first + column * pass.dx] = paletteLuminance[entry]
                    }
                default:
                    for column in 0..<columns {
                        pixels[first + column * pass.dx] = try luminance(
                            row, column: column, header: header, palette: palette, paletteAlpha: paletteAlpha, transparent: transparent)
                    }
                }
                swap(&previous, &row)
            }
        }
        guard let image = GrayImage(width: header.width, height: header.height, pixels: pixels) else {
            throw .tooManyPixels(width: header.width, height: header.height)
        }
        return image
    }

    private static func readHeader(_ data: ArraySlice<UInt8>, maximumPixels: Int) throws(ImageDecodeError) -> Header {
        guard data.count == 13 else { throw .damaged(format: "PNG", reason: "its header is malformed") }
        let start = data.startIndex
        let width = bigEndian(data, start), height = bigEndian(data, start + 4)
        let bitDepth = Int(data[start + 8]), colourType = Int(data[start + 9])
        let allowed: [Int: [Int]] = [0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16]]
        guard width > 0, height > 0, width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF, allowed[colourType]?.contains(bitDepth) == true,
            data[start + 10] == 0, data[start + 11] == 0, data[start + 12] <= 1
        else { throw .damaged(format: "PNG", reason: "its header is malformed") }
        guard width <= maximumPixels / height else { throw .tooManyPixels(width: width, height: height) }
        return Header(width: width, height: height, bitDepth: bitDepth, colourType: colourType, interlaced: data[start + 12] == 1)
    }

    private static func unfilter(_ row: inout [UInt8], previous: [UInt8], filter: UInt8, step: Int) throws(ImageDecodeError) {
        switch filter {
        case 0: break
        case 1: for index in step..<max(step, row.count) { row[index] &+= row[index - step] }
        case 2: for index in 0..<row.count { row[index] &+= previous[index] }
        case 3:
            for index in 0..<row.count {
                let left = index >= step ? Int(row[index - step]) : 0
                row[index] &+= UInt8((left + Int(previous[index])) / 2)
            }
        case 4:
            for index in 0..<row.count {
                let a = index >= step ? Int(row[index - step]) : 0
                let b = Int(previous[index])
                let c = index >= step ? Int(previous[index - step]) : 0
                let p = a + b - c
                let (pa, pb, pc) = (abs(p - a), abs(p - b), abs(p - c))
                row[index] &+= UInt8(pa <= pb && pa <= pc ? a : pb <= pc ? b : c)
            }
        default: throw .damaged(format: "PNG", reason: "a row has an unknown filter")
        }
    }

    /// Sample `index` of a row at `depth` bits (1, 2, 4, 8 or 16), as an integer.
    @inline(__always)
    private static func sample(_ row: [UInt8], index: Int, depth: Int) -> UInt16 {
        switch depth {
        case 16: return UInt16(row[index * 2]) << 8 | UInt16(row[index * 2 + 1])
        case 8: return UInt16(row[index])
        default:
            let bit = index * depth
            let shift = 8 - depth - bit % 8
            return UInt16((row[bit / 8] >> UInt8(shift)) & UInt8((1 << depth) - 1))
        }
    }

    /// The luminance of one pixel of an unfiltered row, composited over white where it is transparent.
    @inline(__always)
    private static func luminance(
        _ row: [UInt8], column: Int, header: Header, palette: [(UInt8, UInt8, UInt8)],
        paletteAlpha: [UInt8], transparent: [Int]?
    ) throws(ImageDecodeError) -> UInt8 {
        let base = column * header.channels
        let maximum = (1 << header.bitDepth) - 1
        func raw(_ channel: Int) -> Int { Int(sample(row, index: base + channel, depth: header.bitDepth)) }
        func eight(_ channel: Int) -> Int { raw(channel) * 255 / maximum }
        func luma(_ red: Int, _ green: Int, _ blue: Int) -> Int { (red * 299 + green * 587 + blue * 114 + 500) / 1000 }
        func over(_ value: Int, alpha: Int) -> UInt8 { UInt8((value * alpha + 255 * (255 - alpha) + 127) / 255) }
        switch header.colourType {
        case 0:
            return over(eight(0), alpha: transparent?.first == raw(0) ? 0 : 255)
        case 2:
            let alpha = transparent == [raw(0), raw(1), raw(2)] ? 0 : 255
            return over(luma(eight(0), eight(1), eight(2)), alpha: alpha)
        case 3:
            let entry = raw(0)
            guard entry < palette.count else { throw .damaged(format: "PNG", reason: "a pixel names a colour outside its palette") }
            let (red, green, blue) = palette[entry]
            return over(luma(Int(red), Int(green), Int(blue)), alpha: entry < paletteAlpha.count ? Int(paletteAlpha[entry]) : 255)
        case 4:
            return over(eight(0), alpha: eight(1))
        default:
            return over(luma(eight(0), eight(1), eight(2)), alpha: eight(3))
        }
    }
}

/// zlib's inflate over one copy of the compressed data, filling one row at a time: output is only ever made as far
/// as the rows the header declares, so a decompression bomb costs no more than its first rows. The stream state lives
/// at a fixed address (zlib checks that it has not moved).
private struct Inflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let input: UnsafeMutableBufferPointer<UInt8>
    private var finished = false

    init(_ compressed: [UInt8]) throws(ImageDecodeError) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        input = .allocate(capacity: max(1, compressed.count))
        _ = input.initialize(from: compressed)
        guard inflateInit_(stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            input.deallocate()
            stream.deallocate()
            throw .damaged(format: "PNG", reason: "the decompressor could not start")
        }
        stream.pointee.next_in = input.baseAddress
        stream.pointee.avail_in = uInt(compressed.count)
    }

    func close() {
        inflateEnd(stream)
        input.deallocate()
        stream.deallocate()
    }

    /// Fills `buffer` completely, or throws: the data ends first, or does not decompress.
    mutating func fill(_ buffer: inout [UInt8]) throws(ImageDecodeError) {
        var status: Int32 = Z_OK
        let stream = self.stream
        var finished = self.finished
        let left: Int = buffer.withUnsafeMutableBufferPointer { out in
            stream.pointee.next_out = out.baseAddress
            stream.pointee.avail_out = uInt(out.count)
            while stream.pointee.avail_out > 0, !finished {
                status = CZlib.inflate(stream, Z_NO_FLUSH)
                if status == Z_STREAM_END { finished = true } else if status != Z_OK { break }
            }
            return Int(stream.pointee.avail_out)
        }
        self.finished = finished
        guard left == 0 else {
            throw .damaged(format: "PNG", reason: status == Z_BUF_ERROR || finished ? "its image data is cut short" : "its image data does not decompress")
        }
    }
}

private func bigEndian(_ bytes: ArraySlice<UInt8>, _ offset: Int) -> Int {
    Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
}

private func bigEndian16(_ bytes: ArraySlice<UInt8>, _ offset: Int) -> Int {
    Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
}
