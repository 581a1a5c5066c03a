import CofferBarcode

/// EAN-13, UPC-A, EAN-8 and UPC-E from the runs of one scan line (ISO/IEC 15420), with the encoder's code tables.
/// A read needs the guard patterns, light margins on both sides, every digit within the pattern tolerance, and the
/// check digit right (for UPC-E, the parity pattern that carries it): a digit is never guessed.
enum EANUPCReader {
    /// Run widths (space, bar, space, bar) of the L codes of digits 0–9, and of the G codes (the L widths reversed).
    /// Right-hand codes have the L widths starting with a bar.
    static let lPatterns: [[UInt8]] = EANUPC.lCodes.map { runs(of: $0) }
    static let gPatterns: [[UInt8]] = lPatterns.map { Array($0.reversed()) }
    static let lgPatterns = lPatterns + gPatterns
    private static let lTable = PatternTable(lPatterns)
    private static let lgTable = PatternTable(lgPatterns)

    private static func runs(of code: UInt8) -> [UInt8] {
        var runs: [UInt8] = []
        var previous: UInt8 = 2
        for bit in 0..<7 {
            let value = (code >> UInt8(6 - bit)) & 1
            if value == previous { runs[runs.count - 1] += 1 } else { runs.append(1) }
            previous = value
        }
        return runs
    }

    private static let guardPattern: [UInt8] = [1, 1, 1]
    private static let middlePattern: [UInt8] = [1, 1, 1, 1, 1]
    private static let upcEEndPattern: [UInt8] = [1, 1, 1, 1, 1, 1]
    private static let maximumVariance = 0.48

    /// Every symbol that starts with a bar at run `start` (an odd index) on this line.
    static func read(_ runs: Runs, start: Int) -> LineRead? {
        // The light margin before the start guard, checked first because it is cheap: the standard asks for 7–11
        // modules; 3 (the guard's own width) keeps cropped photos.
        guard start >= 1, start + 2 < runs.count, runs[start - 1] >= runs[start] + runs[start + 1] + runs[start + 2],
            let guardVariance = patternVariance(runs[start..<start + 3], guardPattern), guardVariance < maximumVariance
        else { return nil }
        // Every variant starts with four digits of L or G codes (EAN-8's are all L): matched once, shared.
        guard let four = digits(runs, from: start + 3, count: 4, lgTable) else { return nil }
        let six = digits(runs, from: start + 19, count: 2, lgTable).map { four + $0 }
        var read: LineRead?
        if let six { read = thirteen(runs, start, six) ?? upcE(runs, start, six) }
        if read == nil, four.allSatisfy({ $0 < 10 }) { read = eight(runs, start, four) }
        guard let read else { return nil }
        let (modules, margin) = read.symbology == .ean8 ? (67, 7) : read.symbology == .upcE ? (51, 7) : (95, 5)
        guard hasMargins(runs, read, modules: modules, margin: margin) else { return nil }
        return read
    }

    /// Light margins of at least `margin` modules (of the whole symbol's width) on both sides. The standards ask for
    /// 7 to 11; 5 still keeps a tightly cropped photo of an EAN-13 or UPC-A. The short symbols need 7: a UPC-E or
    /// EAN-8 pattern can be found inside a Code 128 or ITF symbol, whose spaces are up to 4 modules wide and, at
    /// 1.5 pixels a module, can measure half as wide again.
    private static func hasMargins(_ runs: Runs, _ read: LineRead, modules: Int, margin: Int) -> Bool {
        let width = runs[read.firstRun...read.lastRun].reduce(0, +)
        return runs[read.firstRun - 1] * modules >= margin * width && runs[read.lastRun + 1] * modules >= margin * width
    }

    /// `count` digits of 4 runs each from run `from`, matched against `patterns`: the pattern indexes.
    private static func digits(_ runs: Runs, from: Int, count: Int, _ patterns: PatternTable) -> [Int]? {
        guard from + count * 4 <= runs.count else { return nil }
        var found: [Int] = []
        for digit in 0..<count {
            let at = from + digit * 4
            guard let best = patterns.best(runs[at..<at + 4], maximum: maximumVariance) else { return nil }
            found.append(best.index)
        }
        return found
    }

    /// The end guard at run `guardAt`, with a run after it for the margin (checked by `hasMargins`).
    private static func endsWithGuard(_ runs: Runs, guardAt: Int, length: Int) -> Bool {
        guard guardAt + length < runs.count,
            let variance = patternVariance(runs[guardAt..<guardAt + length], length == 3 ? guardPattern : upcEEndPattern)
        else { return false }
        return variance < maximumVariance
    }

    /// EAN-13's and EAN-8's right half: the middle guard at run `middle`, `count` right-hand digits, the end guard.
    private static func rightHalf(_ runs: Runs, middle: Int, count: Int) -> [Int]? {
        guard middle + 5 <= runs.count, let variance = patternVariance(runs[middle..<middle + 5], middlePattern),
            variance < maximumVariance,
            let right = digits(runs, from: middle + 5, count: count, lTable),
            endsWithGuard(runs, guardAt: middle + 5 + count * 4, length: 3)
        else { return nil }
        return right
    }

    private static func thirteen(_ runs: Runs, _ start: Int, _ leftCodes: [Int]) -> LineRead? {
        let middle = start + 3 + 24
        guard let rightCodes = rightHalf(runs, middle: middle, count: 6) else { return nil }
        var parity: UInt8 = 0
        for code in leftCodes { parity = parity << 1 | (code >= 10 ? 1 : 0) }
        guard let first = EANUPC.ean13Parity.firstIndex(of: parity) else { return nil }
        let all = [first] + leftCodes.map { $0 % 10 } + rightCodes
        guard EANUPC.checkDigit(Array(all.dropLast())) == all[12] else { return nil }
        // An EAN-13 number starting with 0 is a UPC-A symbol: twelve digits, as Coffer stores UPC-A.
        let symbology: Symbology = first == 0 ? .upcA : .ean13
        let text = first == 0 ? all.dropFirst() : all[...]
        return LineRead(symbology: symbology, payload: text.map { UInt8(0x30 + $0) }, firstRun: start, lastRun: middle + 31)
    }

    private static func eight(_ runs: Runs, _ start: Int, _ leftDigits: [Int]) -> LineRead? {
        let middle = start + 3 + 16
        guard let rightDigits = rightHalf(runs, middle: middle, count: 4) else { return nil }
        let all = leftDigits + rightDigits
        guard EANUPC.checkDigit(Array(all.dropLast())) == all[7] else { return nil }
        return LineRead(symbology: .ean8, payload: all.map { UInt8(0x30 + $0) }, firstRun: start, lastRun: middle + 23)
    }

    private static func upcE(_ runs: Runs, _ start: Int, _ codes: [Int]) -> LineRead? {
        let left = start + 3
        guard endsWithGuard(runs, guardAt: left + 24, length: 6) else { return nil }
        var parity: UInt8 = 0
        for code in codes { parity = parity << 1 | (code >= 10 ? 1 : 0) }
        // The parity pattern carries the number system (0 as tabled, 1 inverted) and the check digit.
        let numberSystem: Int
        let check: Int
        if let index = EANUPC.upcEParity.firstIndex(of: parity) {
            (numberSystem, check) = (0, index)
        } else if let index = EANUPC.upcEParity.firstIndex(of: ~parity & 0b111111) {
            (numberSystem, check) = (1, index)
        } else {
            return nil
        }
        let six = codes.map { $0 % 10 }
        guard EANUPC.checkDigit(EANUPC.expandUPCE([numberSystem] + six)) == check else { return nil }
        let all = [numberSystem] + six + [check]
        return LineRead(symbology: .upcE, payload: all.map { UInt8(0x30 + $0) }, firstRun: start, lastRun: left + 29)
    }
}
