/// Aztec high-level encoding (ISO/IEC 24778 §7.3): the shortest bit stream for the payload using the five character
/// modes (Upper, Lower, Mixed, Punct, Digit) with their latches and shifts, and Binary Shift for anything else.
///
/// It is a shortest-path search over (position, latched mode). Binary Shift runs are whole segments whose cost
/// depends only on their length (5 + 5 bits for 1–31 bytes, 5 + 16 bits for 32–2078, plus 8 per byte), so the best
/// start for a run ending at each position comes from a 31-entry scan plus a sliding-window minimum, keeping the
/// work linear in the payload length.
package enum AztecHighLevel {
    package enum Mode: Int, CaseIterable {
        case upper = 0, lower, mixed, punct, digit

        var codeBits: Int { self == .digit ? 4 : 5 }
    }

    static let maximumBinaryRun = 2078

    // MARK: - Character tables (ISO/IEC 24778 Table 2)

    /// Code of each byte in each mode, or -1 when the mode cannot encode it.
    package static let codes: [[Int]] = {
        var table = [[Int]](repeating: [Int](repeating: -1, count: 256), count: 5)
        table[Mode.upper.rawValue][32] = 1
        table[Mode.lower.rawValue][32] = 1
        table[Mode.mixed.rawValue][32] = 1
        table[Mode.digit.rawValue][32] = 1
        for k in 0..<26 {
            table[Mode.upper.rawValue][65 + k] = 2 + k
            table[Mode.lower.rawValue][97 + k] = 2 + k
        }
        let mixed: [Int] = Array(1...13) + Array(27...31) + [64, 92, 94, 95, 96, 124, 126, 127]
        for (k, c) in mixed.enumerated() { table[Mode.mixed.rawValue][c] = 2 + k }
        table[Mode.punct.rawValue][13] = 1
        let punct = Array("!\"#$%&'()*+,-./:;<=>?[]{}".utf8)
        for (k, c) in punct.enumerated() { table[Mode.punct.rawValue][Int(c)] = 6 + k }
        for k in 0..<10 { table[Mode.digit.rawValue][48 + k] = 2 + k }
        table[Mode.digit.rawValue][44] = 12
        table[Mode.digit.rawValue][46] = 13
        return table
    }()

    /// Punct codes 2–5 stand for two characters each: CR LF, ". ", ", ", ": ".
    package static let punctPairs: [(UInt8, UInt8)] = [(13, 10), (46, 32), (44, 32), (58, 32)]

    private static func pairCode(_ first: UInt8, _ second: UInt8) -> Int? {
        punctPairs.firstIndex { $0.0 == first && $0.1 == second }.map { $0 + 2 }
    }

    /// Codes (with their widths) that latch from one mode to another by the shortest route.
    private static func latch(from: Mode, to: Mode) -> [(code: Int, bits: Int)] {
        switch (from, to) {
        case (.upper, .lower): [(28, 5)]
        case (.upper, .mixed): [(29, 5)]
        case (.upper, .digit): [(30, 5)]
        case (.upper, .punct): [(29, 5), (30, 5)]
        case (.lower, .upper): [(30, 5), (14, 4)]
        case (.lower, .mixed): [(29, 5)]
        case (.lower, .digit): [(30, 5)]
        case (.lower, .punct): [(29, 5), (30, 5)]
        case (.mixed, .upper): [(29, 5)]
        case (.mixed, .lower): [(28, 5)]
        case (.mixed, .digit): [(29, 5), (30, 5)]
        case (.mixed, .punct): [(30, 5)]
        case (.punct, .upper): [(31, 5)]
        case (.punct, .lower): [(31, 5), (28, 5)]
        case (.punct, .mixed): [(31, 5), (29, 5)]
        case (.punct, .digit): [(31, 5), (30, 5)]
        case (.digit, .upper): [(14, 4)]
        case (.digit, .lower): [(14, 4), (28, 5)]
        case (.digit, .mixed): [(14, 4), (29, 5)]
        case (.digit, .punct): [(14, 4), (29, 5), (30, 5)]
        default: []
        }
    }

    private static let latchCost: [[Int]] = Mode.allCases.map { from in
        Mode.allCases.map { to in latch(from: from, to: to).reduce(0) { $0 + $1.bits } }
    }

    // MARK: - Search

    /// How the state (position, mode) was reached from the latched state (`from`, same mode).
    private enum Step {
        case none
        case character(from: Int)  // one character in the mode itself
        case punctPair(from: Int)  // two characters as one Punct code, latched in Punct
        case punctShift(from: Int)  // P/S then one Punct code
        case punctShiftPair(from: Int)  // P/S then a two-character Punct code
        case upperShift(from: Int)  // U/S then one Upper code (from Lower or Digit)
        case binary(from: Int)  // B/S run of bytes from..<position
    }

    /// The encoded bit stream (true = 1), most significant bit of each code first.
    static func encode(_ bytes: [UInt8]) -> [Bool] {
        let n = bytes.count
        let modes = Mode.allCases.count
        let infinity = Int.max / 4
        var arrived = [Int](repeating: infinity, count: (n + 1) * modes)
        var arrivedStep = [Step](repeating: .none, count: (n + 1) * modes)
        var latched = [Int](repeating: infinity, count: (n + 1) * modes)
        var latchedFrom = [Int](repeating: 0, count: (n + 1) * modes)
        arrived[Mode.upper.rawValue] = 0

        // Binary Shift is only available in Upper, Lower and Mixed (Digit and Punct latch to Upper first, which
        // the latch step already offers). Deques hold start positions for runs of 32+ bytes, by increasing cost.
        let binaryModes: [Mode] = [.upper, .lower, .mixed]
        var windows = [[Int]](repeating: [], count: modes)
        var windowHeads = [Int](repeating: 0, count: modes)

        for j in 0...n {
            // Binary runs ending at j.
            for m in binaryModes {
                let mi = m.rawValue
                for i in stride(from: j - 1, through: max(0, j - 31), by: -1) {
                    let c = latched[i * modes + mi] + 10 + 8 * (j - i)
                    if c < arrived[j * modes + mi] {
                        arrived[j * modes + mi] = c
                        arrivedStep[j * modes + mi] = .binary(from: i)
                    }
                }
                if j >= 32 {
                    let newStart = j - 32
                    let key = { (i: Int) in latched[i * modes + mi] - 8 * i }
                    while windows[mi].count > windowHeads[mi], key(windows[mi].last!) >= key(newStart) {
                        windows[mi].removeLast()
                    }
                    windows[mi].append(newStart)
                    while windows[mi][windowHeads[mi]] < j - maximumBinaryRun { windowHeads[mi] += 1 }
                    let i = windows[mi][windowHeads[mi]]
                    let c = latched[i * modes + mi] + 21 + 8 * (j - i)
                    if c < arrived[j * modes + mi] {
                        arrived[j * modes + mi] = c
                        arrivedStep[j * modes + mi] = .binary(from: i)
                    }
                }
            }
            // Latches at j (the table already holds the shortest route between any two modes).
            for to in Mode.allCases {
                for from in Mode.allCases {
                    let c = arrived[j * modes + from.rawValue] + latchCost[from.rawValue][to.rawValue]
                    if c < latched[j * modes + to.rawValue] {
                        latched[j * modes + to.rawValue] = c
                        latchedFrom[j * modes + to.rawValue] = from.rawValue
                    }
                }
            }
            guard j < n else { break }

            // Characters from j.
            let byte = Int(bytes[j])
            let pair = j + 1 < n ? pairCode(bytes[j], bytes[j + 1]) : nil
            func relax(_ target: Int, _ mode: Mode, _ cost: Int, _ step: Step) {
                let slot = target * modes + mode.rawValue
                if cost < arrived[slot] {
                    arrived[slot] = cost
                    arrivedStep[slot] = step
                }
            }
            for m in Mode.allCases {
                let base = latched[j * modes + m.rawValue]
                guard base < infinity else { continue }
                if codes[m.rawValue][byte] >= 0 { relax(j + 1, m, base + m.codeBits, .character(from: j)) }
                if m == .punct {
                    if pair != nil { relax(j + 2, m, base + 5, .punctPair(from: j)) }
                } else {
                    if codes[Mode.punct.rawValue][byte] >= 0 {
                        relax(j + 1, m, base + m.codeBits + 5, .punctShift(from: j))
                    }
                    if pair != nil { relax(j + 2, m, base + m.codeBits + 5, .punctShiftPair(from: j)) }
                }
                if (m == .lower || m == .digit) && codes[Mode.upper.rawValue][byte] >= 0 {
                    relax(j + 1, m, base + m.codeBits + 5, .upperShift(from: j))
                }
            }
        }

        // Best final state, then walk back collecting (latch, step) pairs.
        var mode = Mode.upper
        for m in Mode.allCases where arrived[n * modes + m.rawValue] < arrived[n * modes + mode.rawValue] { mode = m }
        var position = n
        var segments: [(from: Mode, to: Mode, step: Step, end: Int)] = []
        while position > 0 {
            let step = arrivedStep[position * modes + mode.rawValue]
            let start: Int
            switch step {
            case .none: start = 0
            case .character(let from), .punctPair(let from), .punctShift(let from), .punctShiftPair(let from),
                .upperShift(let from), .binary(let from):
                start = from
            }
            let previous = Mode(rawValue: latchedFrom[start * modes + mode.rawValue]) ?? .upper
            segments.append((previous, mode, step, position))
            position = start
            mode = previous
        }

        var bits = AztecBitWriter()
        for (from, to, step, end) in segments.reversed() {
            for code in latch(from: from, to: to) { bits.append(code.code, code.bits) }
            switch step {
            case .none:
                break
            case .character(let from):
                bits.append(codes[to.rawValue][Int(bytes[from])], to.codeBits)
            case .punctPair(let from):
                bits.append(pairCode(bytes[from], bytes[from + 1]) ?? 0, 5)
            case .punctShift(let from):
                bits.append(0, to.codeBits)
                bits.append(codes[Mode.punct.rawValue][Int(bytes[from])], 5)
            case .punctShiftPair(let from):
                bits.append(0, to.codeBits)
                bits.append(pairCode(bytes[from], bytes[from + 1]) ?? 0, 5)
            case .upperShift(let from):
                bits.append(to == .digit ? 15 : 28, to.codeBits)
                bits.append(codes[Mode.upper.rawValue][Int(bytes[from])], 5)
            case .binary(let from):
                let length = end - from
                bits.append(31, 5)
                if length <= 31 {
                    bits.append(length, 5)
                } else {
                    bits.append(0, 5)
                    bits.append(length - 31, 11)
                }
                for k in from..<end { bits.append(Int(bytes[k]), 8) }
            }
        }
        return bits.bits
    }
}

/// Appends fixed-width codes to a bit list, most significant bit first.
struct AztecBitWriter {
    private(set) var bits: [Bool] = []

    mutating func append(_ value: Int, _ width: Int) {
        for k in stride(from: width - 1, through: 0, by: -1) { bits.append((value >> k) & 1 == 1) }
    }
}
