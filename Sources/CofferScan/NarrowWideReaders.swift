import CofferBarcode

/// Which of a character's elements are wide, as bits (first element most significant, 1 = wide), when the elements
/// split cleanly into `wideCounts` wide ones and the rest narrow; nil otherwise. `alternating` elements are bar,
/// space, bar, … (a character of Code 39 or Codabar); otherwise all of one kind (the bars or the spaces of an ITF pair).
///
/// Ink spread and blur widen every bar and narrow every space by about the same amount, so alternating elements are
/// split twice: on the raw widths, then again after moving bars and spaces back by half the gap between the narrow
/// bars' and the narrow spaces' mean widths. A split counts only when the narrowest wide element is at least 1.3 times
/// the widest narrow one, and the wide ones agree within 2.5× and so do the narrow ones (at 1.5 pixels a module, a
/// narrow element is 1 or 2 pixels wide): a character is never guessed.
///
/// Motion blur can wear a narrow bar between two wide spaces down to a pixel, so that the raw widths fail the 2.5×
/// test: with `inSymbol` (a start character has been read on this line), the gap is then estimated from taking the
/// widest elements as the wide ones, and the split with it must pass every test on its own. Not at every place a
/// symbol might start: there it would cost a second look wherever a line crosses noise.
func wideBits(_ runs: RunSlice, wideCounts: ClosedRange<Int>, alternating: Bool = true, inSymbol: Bool = false) -> Int? {
    let first = split(runs, wideCounts: wideCounts, spread: 0)
    guard alternating else { return first }
    if let first { return split(runs, wideCounts: wideCounts, spread: barSpread(runs, wide: first)) ?? first }
    guard inSymbol else { return nil }
    for count in wideCounts where count < runs.count {
        if let bits = split(runs, wideCounts: count...count, spread: barSpread(runs, wide: widest(runs, count))) {
            return bits
        }
    }
    return nil
}

/// The `count` widest of `runs` as wide bits (first element most significant); ties go to the earlier element.
private func widest(_ runs: RunSlice, _ count: Int) -> Int {
    var bits = 0
    for _ in 0..<count {
        var best = -1, bestWidth = -1
        for (offset, run) in runs.enumerated() where bits & (1 << (runs.count - 1 - offset)) == 0 && run > bestWidth {
            best = offset
            bestWidth = run
        }
        bits |= 1 << (runs.count - 1 - best)
    }
    return bits
}

/// Half the gap between the narrow bars' and the narrow spaces' mean widths, with `wide` marking the wide
/// elements (bars at even offsets); 0 when either kind has no narrow element.
private func barSpread(_ runs: RunSlice, wide: Int) -> Double {
    var narrowBars = 0.0, barCount = 0.0, narrowSpaces = 0.0, spaceCount = 0.0
    for (offset, run) in runs.enumerated() where wide & (1 << (runs.count - 1 - offset)) == 0 {
        if offset % 2 == 0 {
            narrowBars += Double(run)
            barCount += 1
        } else {
            narrowSpaces += Double(run)
            spaceCount += 1
        }
    }
    guard barCount > 0, spaceCount > 0 else { return 0 }
    return (narrowBars / barCount - narrowSpaces / spaceCount) / 2
}

/// The clean split of `runs` with bars narrowed (and spaces widened) by `spread`, preferring the wide count whose
/// split is clearest.
private func split(_ runs: RunSlice, wideCounts: ClosedRange<Int>, spread: Double) -> Int? {
    let count = runs.count
    guard count <= 16 else { return nil }
    // At most nine elements: fixed storage on the stack, sorted by insertion (this runs for every candidate).
    return withUnsafeTemporaryAllocation(of: Double.self, capacity: count) { widths in
        withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { order in
            for (offset, run) in runs.enumerated() {
                widths[offset] = max(0.25, Double(run) - (offset % 2 == 0 ? spread : -spread))
                var position = offset
                while position > 0, widths[order[position - 1]] < widths[offset] {
                    order[position] = order[position - 1]
                    position -= 1
                }
                order[position] = offset
            }
            var best: (bits: Int, ratio: Double)?
            for wide in wideCounts where wide < count {
                let narrowestWide = widths[order[wide - 1]], widestNarrow = widths[order[wide]]
                let ratio = narrowestWide / widestNarrow
                guard ratio >= 1.3, widths[order[0]] <= 2.5 * narrowestWide, widestNarrow <= 2.5 * widths[order[count - 1]]
                else { continue }
                if best == nil || ratio > best!.ratio {
                    var bits = 0
                    for index in 0..<wide { bits |= 1 << (count - 1 - order[index]) }
                    best = (bits, ratio)
                }
            }
            return best?.bits
        }
    }
}

/// The light margin a narrow/wide symbol needs on either side: `modules` narrow elements, with a narrow element
/// estimated as `width / narrowPerWidth`.
private func hasMargin(_ margin: Int, width: Int, narrowPerWidth: Double, modules: Double) -> Bool {
    Double(margin) * narrowPerWidth >= modules * Double(width)
}

/// Code 39 (ISO/IEC 16388): `*`, characters of nine elements three of them wide, narrow gaps between them, `*`. The
/// payload is the characters between the stars, as Coffer stores it (no check character, no Full ASCII mapping).
enum Code39Reader {
    static func read(_ runs: Runs, start: Int) -> LineRead? {
        guard start >= 1, start + 10 <= runs.count else { return nil }
        var width = runs[start..<start + 9].reduce(0, +)
        // A character is 6 narrow and 3 wide elements: 12 to 15 narrow widths at the wide-to-narrow ratios in use.
        guard hasMargin(runs[start - 1], width: width, narrowPerWidth: 13.5, modules: 5),
            wideBits(runs[start..<start + 9], wideCounts: 3...3) == Code39.star
        else { return nil }
        var payload: [UInt8] = []
        var at = start + 9
        while true {
            guard at + 11 <= runs.count else { return nil }
            let next = runs[at + 1..<at + 10].reduce(0, +)
            // The gap between characters is narrow, and neighbouring characters are about as wide.
            guard Double(runs[at]) * 13.5 <= 2.2 * Double(width), next * 10 >= width * 7, next * 7 <= width * 10,
                let bits = wideBits(runs[at + 1..<at + 10], wideCounts: 3...3, inSymbol: true)
            else { return nil }
            width = next
            if bits == Code39.star {
                guard !payload.isEmpty, hasMargin(runs[at + 10], width: width, narrowPerWidth: 13.5, modules: 5)
                else { return nil }
                return LineRead(symbology: .code39, payload: payload, firstRun: start, lastRun: at + 9)
            }
            guard let index = Code39.patterns.firstIndex(of: bits) else { return nil }
            payload.append(Code39.alphabet[index])
            at += 10
        }
    }
}

/// Codabar: a start character A–D, characters of seven elements (two or three wide), narrow gaps, a stop character
/// A–D. The payload keeps the start and stop letters, as Coffer stores Codabar.
enum CodabarReader {
    private static func isGuard(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x44 }

    static func read(_ runs: Runs, start: Int) -> LineRead? {
        guard start >= 1, start + 8 <= runs.count else { return nil }
        var width = runs[start..<start + 7].reduce(0, +)
        // Start and stop characters have three wide elements: 10 to 13 narrow widths.
        guard hasMargin(runs[start - 1], width: width, narrowPerWidth: 11.5, modules: 5),
            let first = character(runs, at: start), isGuard(first)
        else { return nil }
        var payload = [first]
        var at = start + 7
        while true {
            guard at + 9 <= runs.count else { return nil }
            let next = runs[at + 1..<at + 8].reduce(0, +)
            guard Double(runs[at]) * 11.5 <= 2.2 * Double(width), next * 10 >= width * 6, next * 6 <= width * 10,
                let byte = character(runs, at: at + 1, inSymbol: true)
            else { return nil }
            width = next
            payload.append(byte)
            if isGuard(byte) {
                guard payload.count >= 3, hasMargin(runs[at + 8], width: width, narrowPerWidth: 11.5, modules: 5)
                else { return nil }
                return LineRead(symbology: .codabar, payload: payload, firstRun: start, lastRun: at + 7)
            }
            at += 8
        }
    }

    private static func character(_ runs: Runs, at: Int, inSymbol: Bool = false) -> UInt8? {
        guard let bits = wideBits(runs[at..<at + 7], wideCounts: 2...3, inSymbol: inSymbol),
            let index = Codabar.patterns.firstIndex(of: bits)
        else { return nil }
        return Codabar.alphabet[index]
    }
}

/// Interleaved 2 of 5 and ITF-14: a start of four narrow elements, pairs of digits (the first in the bars, the
/// second in the spaces, two of five wide each), an end of wide bar, narrow space, narrow bar. ITF carries no check
/// digit, so a read needs margins of 8 narrow elements on both sides (wider than any space inside) and at least 6
/// digits; 14 digits whose last is the GS1 check digit are ITF-14.
enum ITFReader {
    static let minimumDigits = 6

    static func read(_ runs: Runs, start: Int) -> LineRead? {
        guard start >= 1, start + 4 + 10 + 3 < runs.count else { return nil }
        let startWidth = runs[start..<start + 4].reduce(0, +)
        let narrow = Double(startWidth) / 4
        guard Double(runs[start - 1]) >= 8 * narrow,
            runs[start..<start + 4].allSatisfy({ Double($0) <= 1.6 * narrow && Double($0) >= 0.5 * narrow })
        else { return nil }
        var digits: [Int] = []
        var at = start + 4
        var pairWidth = 0
        while true {
            // The end: wide bar, narrow space, narrow bar, and the margin.
            if at + 3 < runs.count, !digits.isEmpty {
                let unit = Double(pairWidth) / 16
                let (bar, space, last, margin) = (Double(runs[at]), Double(runs[at + 1]), Double(runs[at + 2]), Double(runs[at + 3]))
                if margin >= 8 * unit, bar >= 1.5 * max(space, last), space <= 1.8 * unit, last <= 1.8 * unit {
                    guard digits.count >= minimumDigits else { return nil }
                    let payload = digits.map { UInt8(0x30 + $0) }
                    let isITF14 = digits.count == 14 && EANUPC.checkDigit(Array(digits.dropLast())) == digits[13]
                    return LineRead(symbology: isITF14 ? .itf14 : .itf, payload: payload, firstRun: start, lastRun: at + 2)
                }
            }
            guard at + 10 < runs.count else { return nil }
            let width = runs[at..<at + 10].reduce(0, +)
            // A pair is 16 to 18 narrow widths (two wide of each five, at 2:1 to 3:1).
            guard Double(width) >= 12 * narrow, Double(width) <= 26 * narrow || digits.count > 0,
                pairWidth == 0 || (width * 10 >= pairWidth * 7 && width * 7 <= pairWidth * 10)
            else { return nil }
            // The pair's bars, then its spaces, side by side.
            let bits = withUnsafeTemporaryAllocation(of: Int.self, capacity: 10) { split in
                for offset in 0..<5 {
                    split[offset] = runs[at + 2 * offset]
                    split[5 + offset] = runs[at + 2 * offset + 1]
                }
                let both = UnsafeBufferPointer(split)
                return (
                    wideBits(both[0..<5], wideCounts: 2...2, alternating: false),
                    wideBits(both[5..<10], wideCounts: 2...2, alternating: false)
                )
            }
            guard let barBits = bits.0, let spaceBits = bits.1,
                let high = ITF.patterns.firstIndex(of: barBits), let low = ITF.patterns.firstIndex(of: spaceBits)
            else { return nil }
            digits += [high, low]
            pairWidth = width
            at += 10
        }
    }
}
