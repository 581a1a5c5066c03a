/// Appends big-endian bit fields to a byte array.
struct BitBuffer {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    init(capacityBits: Int = 0) { bytes.reserveCapacity((capacityBits + 7) / 8) }

    mutating func append(_ value: UInt32, bits: Int) {
        var remaining = bits
        while remaining > 0 {
            remaining -= 1
            if count % 8 == 0 { bytes.append(0) }
            if (value >> UInt32(remaining)) & 1 == 1 { bytes[count / 8] |= UInt8(0x80 >> (count % 8)) }
            count += 1
        }
    }
}

/// Reed–Solomon over GF(256) with the QR polynomial x⁸+x⁴+x³+x²+1 (0x11D).
enum QRReedSolomon {
    static let exp: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 512)
        var value = 1
        for i in 0..<255 {
            table[i] = UInt8(value)
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        for i in 255..<512 { table[i] = table[i - 255] }
        return table
    }()

    static let log: [Int] = {
        var table = [Int](repeating: 0, count: 256)
        for i in 0..<255 { table[Int(exp[i])] = i }
        return table
    }()

    /// The generator polynomial ∏(x − αⁱ), i = 0..<degree, leading 1 omitted. Built per symbol (at most 900
    /// products) rather than tabulated for every degree up front, which would cost each short-lived process more
    /// than encoding its one symbol.
    static func generator(degree: Int) -> [UInt8] {
        let exp = self.exp
        let log = self.log
        var poly = [UInt8](repeating: 0, count: degree)
        guard degree > 0 else { return poly }
        poly[degree - 1] = 1
        // Multiply by (x − αⁱ) for each root αⁱ in turn.
        for i in 0..<degree {
            for j in 0..<degree {
                poly[j] = poly[j] == 0 ? 0 : exp[log[Int(poly[j])] &+ i]
                if j + 1 < degree { poly[j] ^= poly[j + 1] }
            }
        }
        return poly
    }

    /// The error-correction codewords for `data` (as many as the generator's degree): the remainder of
    /// data(x)·x^degree ÷ generator(x).
    static func remainder(_ data: ArraySlice<UInt8>, generator: [UInt8]) -> [UInt8] {
        let degree = generator.count
        let exp = self.exp
        let log = self.log
        var result = [UInt8](repeating: 0, count: degree)
        result.withUnsafeMutableBufferPointer { remainder in
            for byte in data {
                let factor = byte ^ remainder[0]
                for j in 0..<(degree - 1) { remainder[j] = remainder[j + 1] }
                remainder[degree - 1] = 0
                guard factor != 0 else { continue }
                let logFactor = log[Int(factor)]
                for j in 0..<degree where generator[j] != 0 {
                    remainder[j] ^= exp[log[Int(generator[j])] &+ logFactor]
                }
            }
        }
        return result
    }
}

/// QR Code Model 2 encoder (ISO/IEC 18004).
enum QREncoder {
    static func encode(_ payload: [UInt8], options: BarcodeOptions) throws(BarcodeError) -> EncodedBarcode {
        let level = options.qrErrorCorrection
        guard (1...40).contains(options.qrMinimumVersion) else {
            throw BarcodeError(.qr, "the minimum version must be between 1 and 40")
        }
        if let mask = options.qrMask, !(0...7).contains(mask) {
            throw BarcodeError(.qr, "the mask must be between 0 and 7")
        }
        if options.gs1 { try GS1.validate(payload, symbology: .qr) }
        let useECI = try wantsUTF8ECI(payload, charset: options.charset)
        let prefixBits = (useECI ? 12 : 0) + (options.gs1 ? 4 : 0)

        var chosen: (version: Int, segments: [QRSegment])?
        var cachedRange = -1
        var segments: [QRSegment] = []
        for version in options.qrMinimumVersion...40 {
            let range = version <= 9 ? 0 : (version <= 26 ? 1 : 2)
            if range != cachedRange {
                segments = QRSegmenter.segments(payload, version: version, gs1: options.gs1)
                cachedRange = range
            }
            let bits = prefixBits + QRSegmenter.bitLength(segments, version: version)
            if bits <= QRTables.dataCodewords(version: version, level: level) * 8 {
                chosen = (version, segments)
                break
            }
        }
        guard let (version, chosenSegments) = chosen else {
            throw BarcodeError(.qr, "the payload exceeds the capacity of QR version 40 at level \(level.rawValue)")
        }

        let data = dataCodewords(
            payload, segments: chosenSegments, version: version, level: level, eci: useECI, gs1: options.gs1)
        let codewords = interleave(data, version: version, level: level)
        var builder = QRMatrixBuilder(version: version)
        builder.drawFunctionPatterns()
        builder.place(codewords)
        let mask = options.qrMask ?? builder.bestMask(level: level)
        builder.applyMask(mask)
        builder.drawFormatBits(level: level, mask: mask)
        return EncodedBarcode(
            symbology: .qr,
            symbol: .matrix(builder.bitMatrix()),
            qr: QRSymbolInfo(version: version, errorCorrection: level, mask: mask, utf8ECI: useECI))
    }

    /// Whether to emit ECI 26. Under `.automatic` only well-formed UTF-8 with non-ASCII content is labelled, so
    /// ISO-8859-1 payloads (the QR default) and binary data stay unlabelled.
    private static func wantsUTF8ECI(_ payload: [UInt8], charset: BarcodeCharset) throws(BarcodeError) -> Bool {
        guard payload.contains(where: { $0 >= 0x80 }) else { return false }
        switch charset {
        case .iso8859_1:
            return false
        case .automatic:
            return UTF8Validation.isValid(payload)
        case .utf8:
            guard UTF8Validation.isValid(payload) else {
                throw BarcodeError(.qr, "the charset is UTF-8 but the payload is not valid UTF-8")
            }
            return true
        }
    }

    private static func dataCodewords(
        _ payload: [UInt8], segments: [QRSegment], version: Int, level: QRErrorCorrection, eci: Bool, gs1: Bool
    ) -> [UInt8] {
        let capacityBits = QRTables.dataCodewords(version: version, level: level) * 8
        var buffer = BitBuffer(capacityBits: capacityBits)
        if eci {
            buffer.append(0b0111, bits: 4)
            buffer.append(26, bits: 8)
        }
        if gs1 { buffer.append(0b0101, bits: 4) }
        for segment in segments {
            buffer.append(segment.mode.indicator, bits: 4)
            buffer.append(UInt32(segment.range.count), bits: QRTables.countBits(segment.mode, version: version))
            let bytes = payload[segment.range]
            switch segment.mode {
            case .numeric:
                var index = bytes.startIndex
                while index < bytes.endIndex {
                    let take = min(3, bytes.endIndex - index)
                    var value: UInt32 = 0
                    for k in index..<(index + take) { value = value * 10 + UInt32(bytes[k] - 0x30) }
                    buffer.append(value, bits: take * 3 + 1)
                    index += take
                }
            case .alphanumeric:
                var index = bytes.startIndex
                while index < bytes.endIndex {
                    let first = UInt32(QRTables.alphanumericValue[Int(bytes[index])])
                    if index + 1 < bytes.endIndex {
                        let second = UInt32(QRTables.alphanumericValue[Int(bytes[index + 1])])
                        buffer.append(first * 45 + second, bits: 11)
                        index += 2
                    } else {
                        buffer.append(first, bits: 6)
                        index += 1
                    }
                }
            case .byte:
                for byte in bytes { buffer.append(UInt32(byte), bits: 8) }
            }
        }
        buffer.append(0, bits: min(4, capacityBits - buffer.count))
        buffer.append(0, bits: (8 - buffer.count % 8) % 8)
        var result = buffer.bytes
        var pad: UInt8 = 0xEC
        while result.count < capacityBits / 8 {
            result.append(pad)
            pad ^= 0xEC ^ 0x11
        }
        return result
    }

    /// Splits data into blocks, appends each block's error correction and interleaves them (ISO 18004 §7.6).
    private static func interleave(_ data: [UInt8], version: Int, level: QRErrorCorrection) -> [UInt8] {
        let blocks = QRTables.blockCount[level.ordinal][version]
        let eccLength = QRTables.eccPerBlock[level.ordinal][version]
        let rawCodewords = QRTables.rawDataModules(version: version) / 8
        let shortBlocks = blocks - rawCodewords % blocks
        let shortDataLength = rawCodewords / blocks - eccLength

        var dataBlocks: [ArraySlice<UInt8>] = []
        var eccBlocks: [[UInt8]] = []
        let generator = QRReedSolomon.generator(degree: eccLength)
        var offset = 0
        for block in 0..<blocks {
            let length = shortDataLength + (block < shortBlocks ? 0 : 1)
            let slice = data[offset..<(offset + length)]
            dataBlocks.append(slice)
            eccBlocks.append(QRReedSolomon.remainder(slice, generator: generator))
            offset += length
        }
        var result: [UInt8] = []
        result.reserveCapacity(rawCodewords)
        for i in 0...shortDataLength {
            for block in dataBlocks where i < block.count {
                result.append(block[block.startIndex + i])
            }
        }
        for i in 0..<eccLength {
            for block in eccBlocks { result.append(block[i]) }
        }
        return result
    }
}

enum UTF8Validation {
    /// Strict UTF-8 check (no overlongs, no surrogates, nothing above U+10FFFF).
    static func isValid(_ bytes: [UInt8]) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }
}
