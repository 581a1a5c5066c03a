/// Data Matrix ECC 200 data encodation (ISO/IEC 16022 §5.2): turns payload bytes into data codewords using ASCII
/// (with digit pairs and Upper Shift), C40, Text and Base 256, choosing the mix of modes with the fewest codewords.
///
/// The search is a shortest path over (position, mode, values pending in the current C40/Text triplet). Costs are in
/// thirds of a codeword, because a C40/Text value is worth exactly two thirds of one. Base 256 runs are taken as whole
/// segments, since their length field depends on the run length.
struct DataMatrixEncodation {
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

    /// The codewords, and whether the last one is a C40/Text unlatch that may be dropped when it would be the very
    /// last codeword of the symbol (ISO/IEC 16022 §5.2.5.2 a/b: no unlatch is needed when the symbol is exactly full).
    let codewords: [Int]
    let trailingUnlatchIsOptional: Bool

    static let asciiPad = 129
    static let latchC40 = 230
    static let latchBase256 = 231
    static let fnc1 = 232
    static let upperShift = 235
    static let latchText = 239
    static let unlatch = 254

    private enum State: Int, CaseIterable {
        case ascii = 0, c40r0, c40r1, c40r2, textr0, textr1, textr2

        var isText: Bool { self == .textr0 || self == .textr1 || self == .textr2 }
        var pending: Int {
            switch self {
            case .ascii, .c40r0, .textr0: 0
            case .c40r1, .textr1: 1
            case .c40r2, .textr2: 2
            }
        }

        static func triplet(text: Bool, pending: Int) -> State {
            switch (text, pending % 3) {
            case (false, 0): .c40r0
            case (false, 1): .c40r1
            case (false, _): .c40r2
            case (true, 0): .textr0
            case (true, 1): .textr1
            case (true, _): .textr2
            }
        }
    }

    /// How a state was reached; enough to replay the path forwards.
    private enum Step {
        case start
        case asciiByte(Int)  // from position index - 1
        case asciiDigitPair(Int)  // from position index - 2
        case tripletChar(Int, State)  // C40/Text character from (index - 1, state)
        case latch(State)  // same position, from ASCII
        case unlatch(State)  // same position, from a C40/Text state with no pending values
        case base256(from: Int)  // whole Base 256 run ending at this position, from ASCII
    }

    private init(codewords: [Int], trailingUnlatchIsOptional: Bool) {
        self.codewords = codewords
        self.trailingUnlatchIsOptional = trailingUnlatchIsOptional
    }

    /// The cheapest encodation of `bytes`.
    /// - Parameter gs1: when true, the stream starts with FNC1 and every GS (0x1D) byte is encoded as FNC1.
    init(_ bytes: [UInt8], gs1: Bool) {
        self = Self.candidates(bytes, gs1: gs1)[0]
    }

    /// The cheapest encodation first, then (when different) the cheapest if a C40/Text ending needed no unlatch;
    /// the second pays off when its triplets end exactly at a symbol's capacity.
    static func candidates(_ bytes: [UInt8], gs1: Bool) -> [DataMatrixEncodation] {
        let search = Search(bytes, gs1: gs1)
        let withUnlatch = search.bestEnd(countingFinalUnlatch: true)
        let withoutUnlatch = search.bestEnd(countingFinalUnlatch: false)
        var result = [search.emit(endingIn: withUnlatch)]
        if withoutUnlatch != withUnlatch { result.append(search.emit(endingIn: withoutUnlatch)) }
        return result
    }

    /// C40 and Text value counts per byte, computed once.
    private static let c40ValueCounts = (0...255).map { tripletValues(UInt8($0), text: false).count }
    private static let textValueCounts = (0...255).map { tripletValues(UInt8($0), text: true).count }

    /// The shortest-path table over (position, state), filled once per payload.
    private struct Search {
        let bytes: [UInt8]
        let gs1: Bool
        private let cost: [Int]
        private let step: [Step]
        static let infinity = Int.max / 4

        private static func slot(_ i: Int, _ s: State) -> Int { i * State.allCases.count + s.rawValue }

        init(_ bytes: [UInt8], gs1: Bool) {
            self.bytes = bytes
            self.gs1 = gs1
            let n = bytes.count
            let infinity = Self.infinity
            var cost = [Int](repeating: infinity, count: (n + 1) * State.allCases.count)
            var step = [Step](repeating: .start, count: (n + 1) * State.allCases.count)
            cost[Self.slot(0, .ascii)] = 0
            // Base 256 runs: a run from `from` to i costs 3·(2 + i − from) units with a 1-byte length (≤ 249 bytes)
            // and one codeword more beyond. Both minima over `from` use cost(from) − 3·from: a sliding window
            // (monotonic deque) for the short form and a running minimum for the long form.
            var window: [Int] = []
            var windowHead = 0
            var longBest = (key: infinity, from: 0)
            let c40Counts = DataMatrixEncodation.c40ValueCounts
            let textCounts = DataMatrixEncodation.textValueCounts

            for i in 0...n {
                // Close out triplet modes, then open them, so that C40 → ASCII → Text is available at one position.
                for s in [State.c40r0, .textr0] where cost[Self.slot(i, s)] + 3 < cost[Self.slot(i, .ascii)] {
                    cost[Self.slot(i, .ascii)] = cost[Self.slot(i, s)] + 3
                    step[Self.slot(i, .ascii)] = .unlatch(s)
                }
                if i > 0 {
                    let newest = i - 1
                    let key = { (from: Int) in cost[from * State.allCases.count] - 3 * from }
                    while window.count > windowHead, key(window[window.count - 1]) >= key(newest) { window.removeLast() }
                    window.append(newest)
                    while window[windowHead] < i - 249 { windowHead += 1 }
                    let from = window[windowHead]
                    let short = key(from) + 3 * (2 + i)
                    if short < cost[Self.slot(i, .ascii)] {
                        cost[Self.slot(i, .ascii)] = short
                        step[Self.slot(i, .ascii)] = .base256(from: from)
                    }
                    if i >= 250 {
                        if key(i - 250) < longBest.key { longBest = (key(i - 250), i - 250) }
                        let long = longBest.key + 3 * (3 + i)
                        if long < cost[Self.slot(i, .ascii)] {
                            cost[Self.slot(i, .ascii)] = long
                            step[Self.slot(i, .ascii)] = .base256(from: longBest.from)
                        }
                    }
                }
                for s in [State.c40r0, .textr0] where cost[Self.slot(i, .ascii)] + 3 < cost[Self.slot(i, s)] {
                    cost[Self.slot(i, s)] = cost[Self.slot(i, .ascii)] + 3
                    step[Self.slot(i, s)] = .latch(s)
                }
                guard i < n else { break }

                let byte = bytes[i]
                let base = cost[Self.slot(i, .ascii)]
                if base < infinity {
                    if i + 1 < n, isDigit(byte), isDigit(bytes[i + 1]), base + 3 < cost[Self.slot(i + 2, .ascii)] {
                        cost[Self.slot(i + 2, .ascii)] = base + 3
                        step[Self.slot(i + 2, .ascii)] = .asciiDigitPair(i)
                    }
                    let units = byte >= 128 ? 6 : 3
                    if base + units < cost[Self.slot(i + 1, .ascii)] {
                        cost[Self.slot(i + 1, .ascii)] = base + units
                        step[Self.slot(i + 1, .ascii)] = .asciiByte(i)
                    }
                }
                // FNC1 in GS1 data is only emitted in ASCII; keeping it out of triplets keeps the stream simple.
                if gs1 && byte == 0x1D { continue }
                for s in State.allCases where s != .ascii {
                    let from = cost[Self.slot(i, s)]
                    guard from < infinity else { continue }
                    let values = s.isText ? textCounts[Int(byte)] : c40Counts[Int(byte)]
                    let next = State.triplet(text: s.isText, pending: s.pending + values)
                    if from + 2 * values < cost[Self.slot(i + 1, next)] {
                        cost[Self.slot(i + 1, next)] = from + 2 * values
                        step[Self.slot(i + 1, next)] = .tripletChar(i, s)
                    }
                }
            }
            self.cost = cost
            self.step = step
        }

        /// The cheapest state to end in: ASCII as is; a complete triplet needs an unlatch (optional if the symbol
        /// is exactly full); two pending values are completed with a Shift 1 pad value (ISO/IEC 16022 §5.2.5.2 b).
        func bestEnd(countingFinalUnlatch: Bool) -> State {
            let n = bytes.count
            var endState = State.ascii
            var endCost = cost[Self.slot(n, .ascii)]
            for s in [State.c40r0, .textr0, .c40r2, .textr2] {
                let extra = (s.pending == 2 ? 2 : 0) + (countingFinalUnlatch ? 3 : 0)
                if cost[Self.slot(n, s)] + extra < endCost {
                    endCost = cost[Self.slot(n, s)] + extra
                    endState = s
                }
            }
            return endState
        }

        /// Walks back from `endState` to list the steps, then replays them forwards as codewords.
        func emit(endingIn endState: State) -> DataMatrixEncodation {
            var path: [(index: Int, state: State, step: Step)] = []
            var index = bytes.count
            var state = endState
            walk: while true {
                let s = step[Self.slot(index, state)]
                path.append((index, state, s))
                switch s {
                case .start: break walk
                case .asciiByte(let from), .asciiDigitPair(let from), .base256(let from):
                    index = from
                    state = .ascii
                case .tripletChar(let from, let previous):
                    index = from
                    state = previous
                case .latch: state = .ascii
                case .unlatch(let previous): state = previous
                }
            }

            var out: [Int] = gs1 ? [DataMatrixEncodation.fnc1] : []
            var pendingValues: [Int] = []
            func flushTriplets() {
                var k = 0
                while k + 2 < pendingValues.count {
                    let packed = 1600 * pendingValues[k] + 40 * pendingValues[k + 1] + pendingValues[k + 2] + 1
                    out.append(packed / 256)
                    out.append(packed % 256)
                    k += 3
                }
                pendingValues.removeFirst(k)
            }
            for (index, state, s) in path.reversed() {
                switch s {
                case .start:
                    break
                case .asciiByte(let from):
                    let byte = Int(bytes[from])
                    if gs1 && byte == 0x1D {
                        out.append(DataMatrixEncodation.fnc1)
                    } else if byte >= 128 {
                        out.append(DataMatrixEncodation.upperShift)
                        out.append(byte - 128 + 1)
                    } else {
                        out.append(byte + 1)
                    }
                case .asciiDigitPair(let from):
                    out.append(130 + 10 * Int(bytes[from] - 48) + Int(bytes[from + 1] - 48))
                case .tripletChar(let from, _):
                    pendingValues += DataMatrixEncodation.tripletValues(bytes[from], text: state.isText)
                    flushTriplets()
                case .latch(let target):
                    out.append(target.isText ? DataMatrixEncodation.latchText : DataMatrixEncodation.latchC40)
                case .unlatch:
                    out.append(DataMatrixEncodation.unlatch)
                case .base256(let from):
                    let length = index - from
                    var run: [Int] = length <= 249 ? [length] : [length / 250 + 249, length % 250]
                    run += bytes[from..<index].map { Int($0) }
                    out.append(DataMatrixEncodation.latchBase256)
                    for value in run {
                        out.append(DataMatrixEncodation.randomise255(value, position: out.count + 1))
                    }
                }
            }
            var optionalUnlatch = false
            if endState != .ascii {
                if endState.pending == 2 {
                    pendingValues.append(0)
                    flushTriplets()
                }
                out.append(DataMatrixEncodation.unlatch)
                optionalUnlatch = true
            }
            return DataMatrixEncodation(codewords: out, trailingUnlatchIsOptional: optionalUnlatch)
        }
    }

    /// C40 (or Text) values for one byte (ISO/IEC 16022 Tables 7 and 8).
    static func tripletValues(_ byte: UInt8, text: Bool) -> [Int] {
        let c = Int(byte)
        if c >= 128 { return [1, 30] + tripletValues(UInt8(c - 128), text: text) }
        switch c {
        case 32: return [3]
        case 48...57: return [c - 48 + 4]
        case 0...31: return [0, c]
        case 33...47: return [1, c - 33]
        case 58...64: return [1, c - 58 + 15]
        case 91...95: return [1, c - 91 + 22]
        default: break
        }
        if text {
            switch c {
            case 97...122: return [c - 97 + 14]
            case 96: return [2, 0]
            case 65...90: return [2, c - 64]
            default: return [2, c - 123 + 27]
            }
        } else {
            switch c {
            case 65...90: return [c - 65 + 14]
            default: return [2, c - 96]
            }
        }
    }

    /// The 255-state randomising algorithm applied to Base 256 codewords (ISO/IEC 16022 Annex B.1).
    static func randomise255(_ value: Int, position: Int) -> Int {
        let pseudoRandom = (149 * position) % 255 + 1
        let sum = value + pseudoRandom
        return sum <= 255 ? sum : sum - 256
    }

    /// The 253-state randomising algorithm applied to pad codewords after the first (ISO/IEC 16022 Annex B.1).
    static func randomisedPad(position: Int) -> Int {
        let pseudoRandom = (149 * position) % 253 + 1
        let sum = asciiPad + pseudoRandom
        return sum <= 254 ? sum : sum - 254
    }
}
