/// Code 93 (AIM USS Code 93): 47 characters of nine modules each, three bars and three spaces one to four modules
/// wide; `*` start and stop, two check characters C and K (weighted sums modulo 47, weights 1–20 and 1–15 from the
/// right), and a one-module termination bar after the stop. The four shift characters ($) (%) (/) (+) carry the rest
/// of ASCII (full ASCII, as readers decode it): any byte 0–127 can be carried, in one or two characters.
package enum Code93 {
    /// The 43 characters carried as themselves, in value order; values 43–46 are the shifts ($) (%) (/) (+).
    package static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-. $/+%".utf8)
    /// Each value's nine modules as bits, first module most significant, 1 = bar; the last is the start and stop `*`.
    package static let patterns: [Int] = [
        0x114, 0x148, 0x144, 0x142, 0x128, 0x124, 0x122, 0x150, 0x112, 0x10A,
        0x1A8, 0x1A4, 0x1A2, 0x194, 0x192, 0x18A, 0x168, 0x164, 0x162, 0x134,
        0x11A, 0x158, 0x14C, 0x146, 0x12C, 0x116, 0x1B4, 0x1B2, 0x1AC, 0x1A6,
        0x196, 0x19A, 0x16C, 0x166, 0x136, 0x13A, 0x12E, 0x1D4, 0x1D2, 0x1CA,
        0x16E, 0x176, 0x1AE, 0x126, 0x1DA, 0x1D6, 0x132, 0x15E,
    ]
    package static let startStop = 47
    package static let dollarShift = 43, percentShift = 44, slashShift = 45, plusShift = 46

    /// The six element widths (bar first) of a nine-module pattern.
    package static func runs(_ pattern: Int) -> [UInt8] {
        var runs: [UInt8] = []
        var previous = -1
        for bit in (0..<9).reversed() {
            let module = (pattern >> bit) & 1
            if module == previous { runs[runs.count - 1] += 1 } else { runs.append(1) }
            previous = module
        }
        return runs
    }

    /// The check characters C and K of `values` (data characters, shifts included).
    package static func checkCharacters(_ values: [Int]) -> (c: Int, k: Int) {
        func check(_ values: [Int], maximumWeight: Int) -> Int {
            var sum = 0
            for (offset, value) in values.reversed().enumerated() { sum += (offset % maximumWeight + 1) * value }
            return sum % 47
        }
        let c = check(values, maximumWeight: 20)
        return (c, check(values + [c], maximumWeight: 15))
    }

    /// The characters that carry `byte` (one, or a shift and a letter), or nil for a byte above 127.
    package static func values(for byte: UInt8) -> [Int]? {
        if let direct = alphabet.firstIndex(of: byte) { return [direct] }
        func letter(_ offset: UInt8) -> Int { Int(offset) + 10 }
        switch byte {
        case 0x00: return [percentShift, letter(20)]  // (%)U
        case 0x01...0x1A: return [dollarShift, letter(byte - 0x01)]  // ($)A–($)Z
        case 0x1B...0x1F: return [percentShift, letter(byte - 0x1B)]  // (%)A–(%)E
        case 0x21...0x2C: return [slashShift, letter(byte - 0x21)]  // (/)A–(/)L: ! " # & ' ( ) * ,
        case 0x3A: return [slashShift, letter(25)]  // (/)Z: ':'
        case 0x3B...0x3F: return [percentShift, letter(byte - 0x3B + 5)]  // (%)F–(%)J
        case 0x40: return [percentShift, letter(21)]  // (%)V: '@'
        case 0x5B...0x5F: return [percentShift, letter(byte - 0x5B + 10)]  // (%)K–(%)O
        case 0x60: return [percentShift, letter(22)]  // (%)W: '`'
        case 0x61...0x7A: return [plusShift, letter(byte - 0x61)]  // (+)A–(+)Z: lower case
        case 0x7B...0x7F: return [percentShift, letter(byte - 0x7B + 15)]  // (%)P–(%)T
        default: return nil
        }
    }

    static func encode(_ payload: [UInt8]) throws(BarcodeError) -> EncodedBarcode {
        var values: [Int] = []
        values.reserveCapacity(payload.count * 2 + 2)
        for byte in payload {
            guard let carried = Self.values(for: byte) else { throw BarcodeError(.code93, "Code 93 carries ASCII only (bytes 0-127)") }
            values += carried
        }
        let check = checkCharacters(values)
        values += [check.c, check.k]
        var writer = ModuleWriter(reserve: (values.count + 2) * 9 + 1)
        writer.appendRuns(runs(patterns[startStop]))
        for value in values { writer.appendRuns(runs(patterns[value])) }
        writer.appendRuns(runs(patterns[startStop]))
        writer.appendRuns([1])
        return EncodedBarcode(symbology: .code93, symbol: .linear(modules: writer.modules, heightHint: 50))
    }
}
