import CofferBarcode

/// Code 93 from the runs of one scan line, with the encoder's table: a start `*` after a light margin, characters of
/// six elements over nine modules, the stop `*` and its one-module termination bar followed by a light margin. Both
/// check characters must be right; the shift pairs are read back into the bytes they carry (full ASCII), as Coffer
/// stores the payload.
enum Code93Reader {
    private static let table = PatternTable(Code93.patterns.map(Code93.runs))
    private static let maximumVariance = 0.25

    static func read(_ runs: Runs, start: Int) -> LineRead? {
        guard start >= 1, start + 6 <= runs.count else { return nil }
        let startWidth = runs[start..<start + 6].reduce(0, +)
        // The standard's quiet zone is 10 modules; 5 keeps codes printed close to other art readable.
        guard runs[start - 1] * 9 >= 5 * startWidth,
            let first = table.best(runs[start..<start + 6], maximum: maximumVariance), first.index == Code93.startStop
        else { return nil }
        var values: [Int] = []
        var at = start + 6
        while true {
            guard at + 7 <= runs.count, let symbol = table.best(runs[at..<at + 6], maximum: maximumVariance) else { return nil }
            if symbol.index == Code93.startStop {
                // The termination bar, one module, then the light margin.
                let module = Double(runs[at..<at + 6].reduce(0, +)) / 9
                guard Double(runs[at + 6]) < 2 * module, at + 7 < runs.count, Double(runs[at + 7]) >= 5 * module else { return nil }
                break
            }
            values.append(symbol.index)
            at += 6
        }
        guard values.count >= 3 else { return nil }
        let data = Array(values.dropLast(2))
        let check = Code93.checkCharacters(data)
        guard values[values.count - 2] == check.c, values[values.count - 1] == check.k,
            let payload = decode(data)
        else { return nil }
        return LineRead(symbology: .code93, payload: payload, firstRun: start, lastRun: at + 6)
    }

    /// The bytes `values` carry, each shift read with the letter after it; nil for a shift without a letter it maps.
    static func decode(_ values: [Int]) -> [UInt8]? {
        var payload: [UInt8] = []
        var index = 0
        while index < values.count {
            let value = values[index]
            index += 1
            guard value >= Code93.alphabet.count else {
                payload.append(Code93.alphabet[value])
                continue
            }
            guard value < Code93.startStop, index < values.count, (10...35).contains(values[index]) else { return nil }
            let letter = UInt8(values[index] - 10)
            index += 1
            guard let byte = (0...127).first(where: { Code93.values(for: UInt8($0)) == [value, Int(letter) + 10] }) else { return nil }
            payload.append(UInt8(byte))
        }
        return payload
    }
}
