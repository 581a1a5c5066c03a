import CofferBarcode

/// Code 128 and GS1-128 from the runs of one scan line (ISO/IEC 15417), with the encoder's pattern table. A read
/// needs a start pattern after a light margin, every symbol within tolerance, the mod-103 check symbol right and the
/// stop pattern followed by a light margin.
enum Code128Reader {
    private static let patterns = Code128.patterns
    private static let symbolPatterns = PatternTable(Array(Code128.patterns[0..<106]))
    private static let startPatterns = PatternTable(Array(Code128.patterns[103...105]))
    private static let maximumVariance = 0.25
    private static let startA = 103, startB = 104, startC = 105, stop = 106
    private static let fnc1 = 102

    enum CodeSet { case a, b, c }

    static func read(_ runs: Runs, start: Int) -> LineRead? {
        // The light margin first, because it is cheap: the standard's is 10 modules; 5 keeps codes printed close to
        // other art. Then the start pattern, against the three start patterns only.
        guard start >= 1, start + 6 <= runs.count,
            runs[start - 1] * 11 >= 5 * (runs[start] + runs[start + 1] + runs[start + 2] + runs[start + 3] + runs[start + 4] + runs[start + 5]),
            let first = startPatterns.best(runs[start..<start + 6], maximum: maximumVariance)
        else { return nil }
        var values = [startA + first.index]
        var at = start + 6
        while true {
            guard at + 7 <= runs.count else { return nil }
            if let end = patternVariance(runs[at..<at + 7], patterns[stop]), end < maximumVariance {
                let stopModule = Double(runs[at..<at + 7].reduce(0, +)) / 13
                guard at + 7 < runs.count, Double(runs[at + 7]) >= 5 * stopModule else { return nil }
                break
            }
            guard let symbol = symbolPatterns.best(runs[at..<at + 6], maximum: maximumVariance),
                symbol.index < startA
            else { return nil }
            values.append(symbol.index)
            at += 6
        }
        // Start, at least one data symbol, and the check symbol.
        guard values.count >= 3 else { return nil }
        var sum = values[0]
        for (weight, value) in values.dropFirst().dropLast().enumerated() { sum += (weight + 1) * value }
        guard sum % 103 == values[values.count - 1] else { return nil }
        guard let (payload, gs1) = decode(Array(values.dropLast())) else { return nil }
        return LineRead(symbology: gs1 ? .gs1_128 : .code128, payload: payload, firstRun: start, lastRun: at + 6)
    }

    /// The bytes the symbol values stand for; a leading FNC1 makes it GS1-128, and a later FNC1 is the GS separator
    /// (0x1D), as Coffer stores GS1 payloads. FNC4 lifts the next character (or, twice, all that follow) by 128.
    static func decode(_ values: [Int]) -> ([UInt8], Bool)? {
        var set: CodeSet = values[0] == startA ? .a : values[0] == startB ? .b : .c
        var payload: [UInt8] = []
        var gs1 = false
        var shifted = false
        var upper = false
        var upperLatched = false
        var pendingFNC4 = false
        for (index, value) in values.enumerated().dropFirst() {
            let current = shifted ? (set == .a ? CodeSet.b : .a) : set
            shifted = false
            if value == fnc1 {
                if index == 1 { gs1 = true } else { payload.append(0x1D) }
                continue
            }
            switch current {
            case .c:
                switch value {
                case 0..<100: payload.append(contentsOf: [UInt8(0x30 + value / 10), UInt8(0x30 + value % 10)])
                case 100: set = .b
                case 101: set = .a
                default: return nil
                }
            case .a, .b:
                let fnc4 = current == .a ? 101 : 100
                let otherSet = current == .a ? 100 : 101
                switch value {
                case fnc4:
                    if pendingFNC4 {
                        upperLatched.toggle()
                        pendingFNC4 = false
                    } else {
                        pendingFNC4 = true
                    }
                    continue
                case otherSet: set = current == .a ? .b : .a
                case 99: set = .c
                case 98: shifted = true
                case 96, 97: break  // FNC3, FNC2: reader instructions, no data
                default:
                    var byte: Int
                    if current == .a {
                        byte = value < 64 ? value + 32 : value - 64
                    } else {
                        byte = value + 32
                    }
                    upper = upperLatched != pendingFNC4
                    if upper { byte += 128 }
                    guard byte <= 255 else { return nil }
                    payload.append(UInt8(byte))
                }
                pendingFNC4 = false
            }
        }
        return payload.isEmpty ? nil : (payload, gs1)
    }
}
