/// Wide elements are three modules, narrow ones one: the top of the 2:1–3:1 range, the easiest for scanners.
private let wide: UInt8 = 3

/// Runs for a narrow/wide pattern given as bits, most significant first, 1 = wide.
private func runs(_ pattern: Int, elements: Int) -> [UInt8] {
    (0..<elements).map { (pattern >> (elements - 1 - $0)) & 1 == 1 ? wide : 1 }
}

/// Code 39 (ISO/IEC 16388): 43 characters, `*` start/stop, narrow inter-character gap, no check character.
package enum Code39 {
    package static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-. $/+%".utf8)
    /// Nine elements per character (bar first), three of them wide.
    package static let patterns: [Int] = [
        0x034, 0x121, 0x061, 0x160, 0x031, 0x130, 0x070, 0x025, 0x124, 0x064,
        0x109, 0x049, 0x148, 0x019, 0x118, 0x058, 0x00D, 0x10C, 0x04C, 0x01C,
        0x103, 0x043, 0x142, 0x013, 0x112, 0x052, 0x007, 0x106, 0x046, 0x016,
        0x181, 0x0C1, 0x1C0, 0x091, 0x190, 0x0D0, 0x085, 0x184, 0x0C4, 0x0A8,
        0x0A2, 0x08A, 0x02A,
    ]
    package static let star = 0x094

    static func encode(_ payload: [UInt8]) throws(BarcodeError) -> EncodedBarcode {
        var indices: [Int] = []
        indices.reserveCapacity(payload.count)
        for byte in payload {
            guard let index = alphabet.firstIndex(of: byte) else {
                throw BarcodeError(
                    .code39, "Code 39 carries only digits, upper-case A-Z, space and - . $ / + % (no '*', no lower case)")
            }
            indices.append(index)
        }
        var writer = ModuleWriter(reserve: (payload.count + 2) * 16)
        writer.appendRuns(runs(star, elements: 9))
        for index in indices {
            writer.appendRuns([1], startingWithBar: false)
            writer.appendRuns(runs(patterns[index], elements: 9))
        }
        writer.appendRuns([1], startingWithBar: false)
        writer.appendRuns(runs(star, elements: 9))
        return EncodedBarcode(symbology: .code39, symbol: .linear(modules: writer.modules, heightHint: 50))
    }
}

/// Interleaved 2 of 5 (ISO/IEC 16390) and ITF-14 (GS1).
package enum ITF {
    /// Five elements per digit, two of them wide.
    package static let patterns: [Int] = [
        0b00110, 0b10001, 0b01001, 0b11000, 0b00101, 0b10100, 0b01100, 0b00011, 0b10010, 0b01010,
    ]

    static func encode(_ payload: [UInt8], as symbology: Symbology) throws(BarcodeError) -> EncodedBarcode {
        let digits: [Int]
        if symbology == .itf14 {
            digits = try EANUPC.digitsWithCheck(payload, dataLength: 13, symbology: .itf14, label: "ITF-14")
        } else {
            guard payload.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw BarcodeError(.itf, "ITF payloads may contain only the digits 0-9")
            }
            guard payload.count % 2 == 0 else {
                throw BarcodeError(.itf, "ITF encodes digits in pairs, so the payload length must be even")
            }
            digits = payload.map { Int($0 - 0x30) }
        }
        var writer = ModuleWriter(reserve: digits.count * 9 + 9)
        writer.appendRuns([1, 1, 1, 1])
        var i = 0
        while i < digits.count {
            let bars = runs(patterns[digits[i]], elements: 5)
            let spaces = runs(patterns[digits[i + 1]], elements: 5)
            for k in 0..<5 { writer.appendRuns([bars[k], spaces[k]]) }
            i += 2
        }
        writer.appendRuns([wide, 1, 1])
        return EncodedBarcode(symbology: symbology, symbol: .linear(modules: writer.modules, heightHint: 50))
    }
}

/// Codabar (NW-7): digits and - $ : / . +, between start and stop characters A–D.
package enum Codabar {
    package static let alphabet = Array("0123456789-$:/.+ABCD".utf8)
    /// Seven elements per character (bar first), 1 = wide.
    package static let patterns: [Int] = [
        0x003, 0x006, 0x009, 0x060, 0x012, 0x042, 0x021, 0x024, 0x030, 0x048,
        0x00C, 0x018, 0x045, 0x051, 0x054, 0x015, 0x01A, 0x029, 0x00B, 0x00E,
    ]

    private static func isGuard(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x44 }

    /// The payload must include its start and stop characters (A–D), because decoders report them: that keeps
    /// what is scanned identical to what is stored. Letters A–D are not allowed between them.
    static func encode(_ payload: [UInt8]) throws(BarcodeError) -> EncodedBarcode {
        guard payload.count >= 3, isGuard(payload[0]), isGuard(payload[payload.count - 1]) else {
            throw BarcodeError(
                .codabar, "a Codabar payload must start and end with a start/stop character A-D around at least one character")
        }
        var writer = ModuleWriter(reserve: payload.count * 12)
        for (position, byte) in payload.enumerated() {
            guard let index = alphabet.firstIndex(of: byte) else {
                throw BarcodeError(.codabar, "Codabar carries only digits and - $ : / . + between start and stop A-D")
            }
            if position > 0 && position < payload.count - 1 && isGuard(byte) {
                throw BarcodeError(.codabar, "Codabar start/stop characters A-D may appear only at the ends")
            }
            if position > 0 { writer.appendRuns([1], startingWithBar: false) }
            writer.appendRuns(runs(patterns[index], elements: 7))
        }
        return EncodedBarcode(symbology: .codabar, symbol: .linear(modules: writer.modules, heightHint: 50))
    }
}
