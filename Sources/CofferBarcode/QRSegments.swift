/// One run of payload bytes encoded in a single QR mode.
struct QRSegment: Equatable, Sendable {
    let mode: QRMode
    let range: Range<Int>
}

/// Splits a payload into mode segments with the fewest total bits (ISO/IEC 18004 Annex J, solved exactly).
///
/// The count-indicator widths differ between versions 1–9, 10–26 and 27–40, so the optimum is computed per
/// version range. A dynamic programme walks the bytes once with six states: numeric with 0, 1 or 2 digits in the
/// open group, alphanumeric with 0 or 1 characters in the open pair, and byte. Group costs are charged as they
/// grow (4, +3, +3 bits for 1/2/3 digits; 6, +5 for 1/2 characters), so every state's cost is exact.
enum QRSegmenter {
    private static let stateCount = 6
    // States: 0 N0, 1 N1, 2 N2, 3 A0, 4 A1, 5 B.
    private static func mode(ofState state: Int) -> QRMode {
        state <= 2 ? .numeric : (state <= 4 ? .alphanumeric : .byte)
    }

    /// Optimal segments for symbols of `version`'s range. `gs1` keeps `%` out of alphanumeric mode, where it
    /// would mean FNC1.
    static func segments(_ payload: [UInt8], version: Int, gs1: Bool) -> [QRSegment] {
        let n = payload.count
        let header = [
            4 + QRTables.countBits(.numeric, version: version),
            4 + QRTables.countBits(.alphanumeric, version: version),
            4 + QRTables.countBits(.byte, version: version),
        ]
        let unreachable = Int.max / 4
        // cost[i * 6 + s]: fewest bits encoding payload[0..<i] ending in state s.
        var cost = [Int](repeating: unreachable, count: (n + 1) * stateCount)
        // from[i * 6 + s]: previous state, or -1 at the start; started[...]: whether byte i-1 opened a segment.
        var from = [Int8](repeating: -1, count: (n + 1) * stateCount)
        var started = [Bool](repeating: false, count: (n + 1) * stateCount)

        for i in 0..<n {
            let byte = payload[i]
            let isDigit = byte >= 0x30 && byte <= 0x39
            let isAlnum = QRTables.alphanumericValue[Int(byte)] >= 0 && !(gs1 && byte == 0x25)
            let base = i * stateCount
            let next = (i + 1) * stateCount

            // Cheapest way to have finished byte i-1 in any state, for opening a new segment here.
            var bestEnd = 0
            var bestEndState = -1
            if i > 0 {
                bestEnd = unreachable
                for s in 0..<stateCount where cost[base + s] < bestEnd {
                    bestEnd = cost[base + s]
                    bestEndState = s
                }
            }
            if isDigit {
                relax(&cost, &from, &started, next + 1, bestEnd + header[0] + 4, bestEndState, true)
                if i > 0 {
                    relax(&cost, &from, &started, next + 1, cost[base + 0] + 4, 0, false)
                    relax(&cost, &from, &started, next + 2, cost[base + 1] + 3, 1, false)
                    relax(&cost, &from, &started, next + 0, cost[base + 2] + 3, 2, false)
                }
            }
            if isAlnum {
                relax(&cost, &from, &started, next + 4, bestEnd + header[1] + 6, bestEndState, true)
                if i > 0 {
                    relax(&cost, &from, &started, next + 4, cost[base + 3] + 6, 3, false)
                    relax(&cost, &from, &started, next + 3, cost[base + 4] + 5, 4, false)
                }
            }
            relax(&cost, &from, &started, next + 5, bestEnd + header[2] + 8, bestEndState, true)
            if i > 0 { relax(&cost, &from, &started, next + 5, cost[base + 5] + 8, 5, false) }
        }

        var state = 0
        var best = Int.max
        for s in 0..<stateCount where cost[n * stateCount + s] < best {
            best = cost[n * stateCount + s]
            state = s
        }
        var segments: [QRSegment] = []
        var end = n
        var i = n
        while i > 0 {
            let index = i * stateCount + state
            let previous = Int(from[index])
            if started[index] {
                segments.append(QRSegment(mode: mode(ofState: state), range: (i - 1)..<end))
                end = i - 1
            }
            state = previous
            i -= 1
        }
        return segments.reversed()
    }

    /// Records a cheaper way to reach state `index`.
    @inline(__always)
    private static func relax(
        _ cost: inout [Int], _ from: inout [Int8], _ started: inout [Bool], _ index: Int, _ value: Int,
        _ previous: Int, _ opened: Bool
    ) {
        if value < cost[index] {
            cost[index] = value
            from[index] = Int8(previous)
            started[index] = opened
        }
    }

    /// Bits the segments take in a symbol of `version`, including mode and count indicators.
    static func bitLength(_ segments: [QRSegment], version: Int) -> Int {
        var total = 0
        for segment in segments {
            let count = segment.range.count
            total += 4 + QRTables.countBits(segment.mode, version: version)
            switch segment.mode {
            case .numeric: total += count / 3 * 10 + [0, 4, 7][count % 3]
            case .alphanumeric: total += count / 2 * 11 + (count % 2) * 6
            case .byte: total += count * 8
            }
        }
        return total
    }
}
