/// Appends bar/space runs to a module array.
struct ModuleWriter {
    private(set) var modules: [Bool] = []

    init(reserve: Int = 0) { modules.reserveCapacity(reserve) }

    /// Appends alternating runs starting with a bar; each digit of `widths` is one run's width in modules.
    mutating func appendRuns(_ widths: [UInt8], startingWithBar: Bool = true) {
        var bar = startingWithBar
        for width in widths {
            modules.append(contentsOf: repeatElement(bar, count: Int(width)))
            bar.toggle()
        }
    }

    /// Appends modules spelled as "1" (bar) and "0" (space).
    mutating func appendBits(_ bits: String) {
        for character in bits.utf8 { modules.append(character == UInt8(ascii: "1")) }
    }
}

/// Code 128 (ISO/IEC 15417) and GS1-128, with the fewest symbol characters over code sets A, B and C.
package enum Code128 {
    /// Bar/space widths of symbol values 0–106 (106 is the stop pattern, whose final bar makes it 13 modules); the
    /// reader's too (CofferScan).
    package static let patterns: [[UInt8]] = [
        "212222", "222122", "222221", "121223", "121322", "131222", "122213", "122312", "132212", "221213",
        "221312", "231212", "112232", "122132", "122231", "113222", "123122", "123221", "223211", "221132",
        "221231", "213212", "223112", "312131", "311222", "321122", "321221", "312212", "322112", "322211",
        "212123", "212321", "232121", "111323", "131123", "131321", "112313", "132113", "132311", "211313",
        "231113", "231311", "112133", "112331", "132131", "113123", "113321", "133121", "313121", "211331",
        "231131", "213113", "213311", "213131", "311123", "311321", "331121", "312113", "312311", "332111",
        "314111", "221411", "431111", "111224", "111422", "121124", "121421", "141122", "141221", "112214",
        "112412", "122114", "122411", "142112", "142211", "241211", "221114", "413111", "241112", "134111",
        "111242", "121142", "121241", "114212", "124112", "124211", "411212", "421112", "421211", "212141",
        "214121", "412121", "111143", "111341", "131141", "114113", "114311", "411113", "411311", "113141",
        "114131", "311141", "411131", "211412", "211214", "211232", "2331112",
    ].map { $0.utf8.map { $0 - 0x30 } }

    private static let fnc1: Int = 102
    private static let shift: Int = 98
    private static let stop: Int = 106
    private static let setA = 0, setB = 1, setC = 2

    /// One input element: a byte, or FNC1 (a GS1 separator).
    private static let fnc1Token = -1

    static func encode(_ payload: [UInt8], gs1: Bool, charset: BarcodeCharset) throws(BarcodeError) -> EncodedBarcode {
        let symbology: Symbology = gs1 ? .gs1_128 : .code128
        if gs1 {
            try GS1.validate(payload, symbology: symbology)
        } else if charset == .utf8, payload.contains(where: { $0 >= 0x80 }) {
            throw BarcodeError(
                symbology,
                "Code 128 has no charset indicator and scanners read bytes above 0x7F as ISO-8859-1, "
                    + "so only ASCII UTF-8 text can be carried (or use QR with ECI)")
        }
        let tokens = payload.map { gs1 && $0 == GS1.separator ? fnc1Token : Int($0) }
        let values = symbolValues(tokens, gs1: gs1)

        var checksum = values[0]
        for (position, value) in values.enumerated().dropFirst() { checksum += position * value }
        var writer = ModuleWriter(reserve: (values.count + 2) * 11 + 2)
        for value in values { writer.appendRuns(patterns[value]) }
        writer.appendRuns(patterns[checksum % 103])
        writer.appendRuns(patterns[stop])
        return EncodedBarcode(symbology: symbology, symbol: .linear(modules: writer.modules, heightHint: 50))
    }

    /// Whether ASCII `c` is in code set A (controls, digits, upper case) or B (printable ASCII).
    private static func fits(_ c: Int, _ set: Int) -> Bool { set == setA ? c < 96 : (c >= 32 && c < 128) }
    private static func isDigit(_ c: Int) -> Bool { c >= 0x30 && c <= 0x39 }
    private static func value(_ c: Int, set: Int) -> Int { set == setA && c < 32 ? c + 64 : c - 32 }

    /// How one step of the optimal path consumed input.
    private enum Step {
        /// Consume tokens in set `set`, arriving from set `from` (-1: start character).
        case consume(from: Int, set: Int, count: Int, shifted: Bool)
    }

    /// Symbol values from the start character through the last data character (no checksum or stop).
    ///
    /// A shortest-path search over (position, code set): each step optionally switches set (one symbol), then
    /// consumes one token in that set (one symbol, two with FNC4 or a single-character shift) or a digit pair in C.
    private static func symbolValues(_ tokens: [Int], gs1: Bool) -> [Int] {
        let n = tokens.count
        let infinity = Int.max / 4
        var cost = [Int](repeating: infinity, count: (n + 1) * 3)
        var step = [Step?](repeating: nil, count: (n + 1) * 3)

        func consumptions(_ i: Int, set: Int) -> [(count: Int, symbols: Int, shifted: Bool)] {
            let token = tokens[i]
            if token == fnc1Token { return [(1, 1, false)] }
            if set == setC {
                if i + 1 < n, isDigit(token), isDigit(tokens[i + 1]) { return [(2, 1, false)] }
                return []
            }
            let otherSet = set == setA ? setB : setA
            if token < 128 {
                if fits(token, set) { return [(1, 1, false)] }
                if fits(token, otherSet) { return [(1, 2, true)] }
                return []
            }
            return fits(token - 128, set) ? [(1, 2, false)] : []
        }

        for i in 0..<n {
            for from in -1..<3 {
                let base: Int
                if from == -1 {
                    guard i == 0 else { continue }
                    base = 0
                } else {
                    guard i > 0, cost[i * 3 + from] < infinity else { continue }
                    base = cost[i * 3 + from]
                }
                for set in [setB, setC, setA] {
                    let switchCost = (from == set) ? 0 : 1
                    for option in consumptions(i, set: set) {
                        let target = (i + option.count) * 3 + set
                        let total = base + switchCost + option.symbols
                        if total < cost[target] {
                            cost[target] = total
                            step[target] = .consume(from: from, set: set, count: option.count, shifted: option.shifted)
                        }
                    }
                }
            }
        }

        var finalSet = setB
        for set in [setB, setC, setA] where cost[n * 3 + set] < cost[n * 3 + finalSet] { finalSet = set }
        var path: [(from: Int, set: Int, start: Int, shifted: Bool)] = []
        var position = n
        var set = finalSet
        while position > 0, case .consume(let from, let consumedSet, let count, let shifted)? = step[position * 3 + set] {
            path.append((from, consumedSet, position - count, shifted))
            position -= count
            set = from
        }

        var values: [Int] = []
        values.reserveCapacity(n + 4)
        for (from, set, start, shifted) in path.reversed() {
            if from == -1 {
                values.append(103 + set)
                if gs1 { values.append(fnc1) }
            } else if from != set {
                values.append(set == setA ? 101 : (set == setB ? 100 : 99))
            }
            let token = tokens[start]
            if token == fnc1Token {
                values.append(fnc1)
            } else if set == setC {
                values.append((token - 0x30) * 10 + tokens[start + 1] - 0x30)
            } else if shifted {
                values.append(shift)
                values.append(value(token, set: set == setA ? setB : setA))
            } else if token >= 128 {
                values.append(set == setA ? 101 : 100)
                values.append(value(token - 128, set: set))
            } else {
                values.append(value(token, set: set))
            }
        }
        return values
    }
}
