import CofferBarcode

/// PDF417 symbols in a grey image (ISO/IEC 15438): candidate symbols from the detector, then many lines across each,
/// parallel to its rows, each sampled at four points a module and cut into codewords by its bar and space edges. A
/// codeword's eight widths give its value and cluster (0, 3 or 6, which is its row modulo 3); the row indicators at
/// both ends give each line's row number, and the symbol's rows, columns and error-correction level. Every line votes
/// for the codewords it read; the winners, with unread codewords as erasures, are corrected by Reed–Solomon over
/// GF(929) and decoded.
enum PDF417Reader {
    static func read(_ image: GrayImage) -> [SymbolOutcome] {
        var outcomes: [SymbolOutcome] = []
        var used: [Int] = []
        var payloads: [[UInt8]] = []
        // A few candidates at most: each costs a full sampling, and a hostile image could pose many.
        for candidate in PDF417Detector.candidates(in: image).prefix(8)
        where !used.contains(candidate.startIndex) && !used.contains(candidate.stopIndex) {
            guard let (outcome, payload) = read(image, candidate) else { continue }
            used += [candidate.startIndex, candidate.stopIndex]
            if let payload {
                guard !payloads.contains(payload) else { continue }
                payloads.append(payload)
            }
            outcomes.append(outcome)
        }
        return outcomes
    }

    /// Codeword patterns by their 17 modules as bits (the first always a bar, the last always a space, so 15 bits
    /// index the table): value + 929 × cluster index, or −1.
    private static let patternTable: [Int16] = {
        var table = [Int16](repeating: -1, count: 1 << 15)
        for (cluster, patterns) in PDF417Encoder.patterns.enumerated() {
            for (value, bits) in patterns.enumerated() {
                table[Int((bits >> 1) & 0x7FFF)] = Int16(value + 929 * cluster)
            }
        }
        return table
    }()

    /// The symbol in `candidate`, read once at the column count its geometry suggests and again at the one its row
    /// indicators give if they differ. The payload is returned for a read (to tell the same symbol seen twice).
    private static func read(_ image: GrayImage, _ candidate: PDF417Detector.Candidate) -> (SymbolOutcome, [UInt8]?)? {
        let start = candidate.start, stop = candidate.stop
        guard
            let plane = Perspective(
                from: [ImagePoint(x: 0, y: 0), ImagePoint(x: 1, y: 0), ImagePoint(x: 1, y: 1), ImagePoint(x: 0, y: 1)],
                to: [start.top, stop.top, stop.bottom, start.bottom])
        else { return nil }
        let middleStart = ImagePoint(x: (start.top.x + start.bottom.x) / 2, y: (start.top.y + start.bottom.y) / 2)
        let middleStop = ImagePoint(x: (stop.top.x + stop.bottom.x) / 2, y: (stop.top.y + stop.bottom.y) / 2)
        let modules = PDF417Detector.length(middleStart, middleStop) / ((start.module + stop.module) / 2)
        let estimate = min(30, max(1, Int(((modules - 51) / 17).rounded())))
        var tried: [Int] = []
        var columns = countedColumns(image, plane, estimate: estimate, inverted: start.inverted) ?? estimate
        while !tried.contains(columns), tried.count < 3 {
            tried.append(columns)
            switch read(image, plane, columns: columns, inverted: start.inverted, height: PDF417Detector.length(start.top, start.bottom)) {
            case .decoded(let outcome, let payload):
                return (outcome, payload)
            case .otherColumns(let other):
                columns = other
            case .failed:
                return nil
            }
        }
        return nil
    }

    /// Luminance along the line at height `y` of the symbol's plane, `perModule` samples a module, from two modules
    /// before the start edge to `to` modules past it, for a symbol `width` modules from start edge to stop bar.
    private static func sampleLine(
        _ image: GrayImage, _ plane: Perspective, y: Double, width: Double, to: Double,
        perModule: Int, inverted: Bool, into samples: inout [UInt8]
    ) {
        let count = Int((to + 2) * Double(perModule))
        if samples.count != count { samples = [UInt8](repeating: 255, count: count) }
        for index in 0..<count {
            let x = (Double(index) + 0.5) / Double(perModule) - 2
            let point = plane.map(x / width, y)
            let value = PDF417Detector.bilinear(image, point.x, point.y)
            samples[index] = UInt8(inverted ? 255 - value : value)
        }
    }

    /// The column count from the runs between the start and stop patterns on a few lines across the middle of the
    /// symbol (eight runs a codeword, the two row indicators included); the count most lines agree on.
    private static func countedColumns(_ image: GrayImage, _ plane: Perspective, estimate: Int, inverted: Bool) -> Int? {
        let width = Double(17 * estimate + 51)
        var votes = [Int](repeating: 0, count: 31)
        var samples: [UInt8] = []
        for y in [0.2, 0.35, 0.5, 0.65, 0.8] {
            // Far enough past the estimated stop pattern for a symbol a third wider than the estimate.
            sampleLine(image, plane, y: y, width: width, to: width * 1.35 + 30, perModule: 4, inverted: inverted, into: &samples)
            let runs = runLengths(of: samples)
            guard let (start, stop) = anchors(runs) else { continue }
            let between = stop - start - 8
            if between % 8 == 0, between / 8 - 2 >= 1, between / 8 - 2 <= 30 { votes[between / 8 - 2] += 1 }
        }
        guard let best = votes.max(), best > 0 else { return nil }
        return votes.firstIndex(of: best)
    }

    /// The run indexes of the start pattern's wide bar (the first start pattern among the first runs) and of the
    /// stop pattern's (the first after the start and at least three codewords on; its 7-module bar is wider than
    /// any codeword's element): nil unless both are there.
    private static func anchors(_ runs: [Int]) -> (start: Int, stop: Int)? {
        runs.withUnsafeBufferPointer { runs in
            var start: Int?
            var index = 1
            while index + 8 <= runs.count, index <= 9 {
                if PDF417Detector.isMatch(runs[index..<index + 8], PDF417Detector.startPattern) {
                    start = index
                    break
                }
                index += 2
            }
            guard let start else { return nil }
            index = start + 8 + 24
            while index + 9 <= runs.count {
                if runs[index] >= 3 * runs[index + 1], PDF417Detector.isMatch(runs[index..<index + 9], PDF417Detector.stopPattern) {
                    return (start, index)
                }
                index += 2
            }
            return nil
        }
    }

    private enum Attempt {
        case decoded(SymbolOutcome, [UInt8]?)
        case otherColumns(Int)
        case failed
    }

    /// Reads the symbol mapped by `plane` (x from the start edge, 0, to the stop bar's edge, 1; y from top to bottom)
    /// as `columns` data columns.
    private static func read(_ image: GrayImage, _ plane: Perspective, columns: Int, inverted: Bool, height: Double) -> Attempt {
        let width = Double(17 * columns + 51)  // modules from the start edge to the stop bar's edge
        let perModule = 4
        let lineCount = min(400, max(12, Int(height)))
        // Indicator votes: rows (÷3), level (×3 + rows mod 3), columns − 1, each 0…29 (the level's 0…26).
        var rowVotes = [Int](repeating: 0, count: 30), levelVotes = [Int](repeating: 0, count: 30)
        var columnVotes = [Int](repeating: 0, count: 30)
        // Codeword votes: for each row and column, up to four candidate values and their counts.
        let slots = 4
        var candidateValues = [Int](repeating: -1, count: 90 * columns * slots)
        var candidateCounts = [Int](repeating: 0, count: 90 * columns * slots)
        var samples: [UInt8] = []
        for lineIndex in 0..<lineCount {
            let y = (Double(lineIndex) + 0.5) / Double(lineCount)
            sampleLine(image, plane, y: y, width: width, to: width + 20, perModule: perModule, inverted: inverted, into: &samples)
            let values = codewords(runLengths(of: samples), columns: columns, perModule: perModule)
            // Row indicators: value ÷ 30 is the row ÷ 3, the cluster is the row mod 3.
            var leftRow: Int?, rightRow: Int?
            if values[0] >= 0 {
                let value = values[0] % 929, cluster = values[0] / 929
                leftRow = 3 * (value / 30) + cluster
                switch cluster {
                case 0: rowVotes[value % 30] += 1
                case 1: levelVotes[value % 30] += 1
                default: columnVotes[value % 30] += 1
                }
            }
            if values[columns + 1] >= 0 {
                let value = values[columns + 1] % 929, cluster = values[columns + 1] / 929
                rightRow = 3 * (value / 30) + cluster
                switch cluster {
                case 0: columnVotes[value % 30] += 1
                case 1: rowVotes[value % 30] += 1
                default: levelVotes[value % 30] += 1
                }
            }
            let left = leftRow ?? rightRow, right = rightRow ?? leftRow
            guard let left, let right, left < 90, right < 90, abs(left - right) <= 2 else { continue }
            for column in 0..<columns {
                let read = values[column + 1]
                guard read >= 0 else { continue }
                let value = read % 929, cluster = read / 929
                // The row this line crosses here, between the rows at its two ends; the codeword's cluster picks the
                // one of that row and its neighbours (a line slanting across rows reads both).
                let reference = Int((Double(left) + Double(right - left) * Double(column + 1) / Double(columns + 1)).rounded())
                var row = reference - 1
                while (row % 3 + 3) % 3 != cluster { row += 1 }
                guard row >= 0, row < 90 else { continue }
                let base = (row * columns + column) * slots
                if let slot = (0..<slots).first(where: { candidateValues[base + $0] == value }) {
                    candidateCounts[base + slot] += 1
                } else if let slot = (0..<slots).first(where: { candidateValues[base + $0] < 0 }) {
                    candidateValues[base + slot] = value
                    candidateCounts[base + slot] = 1
                }
            }
        }
        guard let rowsValue = winner(rowVotes), let levelValue = winner(levelVotes), let columnsValue = winner(columnVotes)
        else { return .failed }
        if columnsValue + 1 != columns { return .otherColumns(columnsValue + 1) }
        let rows = 3 * rowsValue + levelValue % 3 + 1
        let level = levelValue / 3
        let checkCount = 2 << level
        guard rows >= 3, rows <= 90, level <= 8, rows * columns <= 928, checkCount < rows * columns
        else { return .failed }

        var codewords = [Int](repeating: 0, count: rows * columns)
        var erasures: [Int] = []
        for index in 0..<rows * columns {
            let base = index * slots
            var best = -1, bestCount = 0, tied = false
            for slot in 0..<slots where candidateCounts[base + slot] > 0 {
                if candidateCounts[base + slot] > bestCount {
                    best = candidateValues[base + slot]
                    bestCount = candidateCounts[base + slot]
                    tied = false
                } else if candidateCounts[base + slot] == bestCount {
                    tied = true
                }
            }
            if best < 0 || tied { erasures.append(index) } else { codewords[index] = best }
        }
        // One or two check codewords are kept back from correction to confirm it: a word corrected with every
        // check codeword spent would be accepted whatever was read.
        let reserve = checkCount >= 4 ? 2 : 1
        guard erasures.count <= checkCount - reserve else { return .failed }
        let read = codewords
        guard PDF417ReedSolomon.correct(&codewords, checkCount: checkCount, erasures: erasures) != nil else { return .failed }
        var errors = 0
        for index in 0..<codewords.count where codewords[index] != read[index] && !erasures.contains(index) { errors += 1 }
        guard 2 * errors + erasures.count <= checkCount - reserve else { return .failed }
        guard let decoded = PDF417Decoder.decode(Array(codewords[0..<rows * columns - checkCount])) else { return .failed }
        switch decoded {
        case .payload(let payload):
            let right = Double(17 * columns + 69) / width
            let corners = [plane.map(0, 0), plane.map(right, 0), plane.map(right, 1), plane.map(0, 1)]
            return .decoded(.found(FoundBarcode(symbology: .pdf417, payload: payload, corners: corners)), payload)
        case .refused(let refusal):
            return .decoded(.refused(refusal), nil)
        }
    }

    /// The most voted value, unless none was voted or two tie.
    private static func winner(_ votes: [Int]) -> Int? {
        guard let best = votes.max(), best > 0, votes.filter({ $0 == best }).count == 1 else { return nil }
        return votes.firstIndex(of: best)
    }

    /// The codewords along one line's runs (`perModule` samples a module, the start edge two modules in): for each
    /// column from the left row indicator to the right one, value + 929 × cluster index, or −1. Where the line shows
    /// the start and stop patterns with exactly eight runs a codeword between them, the codewords are those runs in
    /// turn; otherwise each is looked for at its place, measured from the start and stop patterns where they are found.
    private static func codewords(_ runs: [Int], columns: Int, perModule: Int) -> [Int] {
        var values = [Int](repeating: -1, count: columns + 2)
        let starts = runStarts(runs)
        let unit = Double(perModule)
        let width = Double(17 * columns + 51)
        let found = anchors(runs)
        if let found, found.stop - found.start - 8 == 8 * (columns + 2) {
            for column in 0..<columns + 2 {
                values[column] = codeword(
                    runs, starts, at: found.start + 8 + 8 * column,
                    module: Double(starts[found.stop] - starts[found.start]) / width)
            }
            return values
        }
        var origin = 2 * unit, module = unit
        if let found {
            origin = Double(starts[found.start])
            module = Double(starts[found.stop] - starts[found.start]) / width
        }
        var run = 1  // bars are the odd runs (the first run is light)
        for column in 0..<columns + 2 {
            let expected = origin + Double(17 * (column + 1)) * module
            while run + 2 < runs.count, Double(starts[run + 2]) <= expected { run += 2 }
            // The bar starting nearest the expected place, within a module and a half.
            var best = -1
            var bestDistance = 1.5 * module
            for candidate in [run, run + 2] where candidate < runs.count {
                let distance = abs(Double(starts[candidate]) - expected)
                if distance <= bestDistance {
                    best = candidate
                    bestDistance = distance
                }
            }
            if best >= 0 { values[column] = codeword(runs, starts, at: best, module: module) }
        }
        return values
    }

    /// The codeword whose first bar is run `first`: its eight widths scaled to 17 modules (edges rounded to whole
    /// modules from the start), looked up in the pattern table; −1 when they are no codeword or far from 17 modules.
    private static func codeword(_ runs: [Int], _ starts: [Int], at first: Int, module: Double) -> Int {
        guard first >= 1, first + 8 < starts.count else { return -1 }
        let total = Double(starts[first + 8] - starts[first])
        guard total >= 17 * module * 0.8, total <= 17 * module * 1.2 else { return -1 }
        var bits = 0
        var previous = 0
        for element in 0..<8 {
            let edge = element == 7 ? 17 : Int((Double(starts[first + element + 1] - starts[first]) * 17 / total).rounded())
            let modules = edge - previous
            guard modules >= 1, modules <= 6 else { return -1 }
            for _ in 0..<modules { bits = bits << 1 | (element % 2 == 0 ? 1 : 0) }
            previous = edge
        }
        let entry = patternTable[(bits >> 1) & 0x7FFF]
        return Int(entry)
    }
}
