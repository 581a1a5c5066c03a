import CofferBarcode

/// How far pixel runs are from a pattern of module widths: the summed deviation from the widths scaled to the runs'
/// total, per pixel of that total. Nil when one run deviates by more than `maximumIndividual` of a module, or when
/// the runs are narrower than one pixel a module.
func patternVariance(_ runs: RunSlice, _ pattern: [UInt8], maximumIndividual: Double = 0.7) -> Double? {
    var total = 0
    var modules = 0
    for run in runs { total += run }
    for width in pattern { modules += Int(width) }
    guard total >= modules, runs.count == pattern.count else { return nil }
    let unit = Double(total) / Double(modules)
    var sum = 0.0
    var index = runs.startIndex
    for width in pattern {
        let deviation = abs(Double(runs[index]) - Double(width) * unit)
        if deviation > maximumIndividual * unit { return nil }
        sum += deviation
        index += 1
    }
    return sum / Double(total)
}

/// Patterns of one length (a symbology's characters as module widths), stored flat: the decoders match against
/// them at every candidate place, and one buffer costs no reference counting per pattern.
struct PatternTable: Sendable {
    let length: Int
    private let widths: [UInt8]
    private let modules: [Int]

    init(_ patterns: [[UInt8]]) {
        let length = patterns.first?.count ?? 0
        precondition(patterns.allSatisfy { $0.count == length })
        self.length = length
        widths = patterns.flatMap { $0 }
        modules = patterns.map { $0.reduce(0) { $0 + Int($1) } }
    }

    /// The pattern that `runs` match best, if its variance (as ``patternVariance(_:_:maximumIndividual:)``
    /// measures it) is below `maximum`: `(index, variance)`.
    func best(_ runs: RunSlice, maximum: Double, maximumIndividual: Double = 0.7) -> (index: Int, variance: Double)? {
        guard runs.count == length else { return nil }
        var total = 0
        for run in runs { total += run }
        var best: (index: Int, variance: Double)?
        widths.withUnsafeBufferPointer { widths in
            patterns: for pattern in 0..<modules.count {
                guard total >= modules[pattern] else { continue }
                let unit = Double(total) / Double(modules[pattern])
                var sum = 0.0
                var index = runs.startIndex
                for offset in pattern * length..<(pattern + 1) * length {
                    let deviation = abs(Double(runs[index]) - Double(widths[offset]) * unit)
                    if deviation > maximumIndividual * unit { continue patterns }
                    sum += deviation
                    index += 1
                }
                let variance = sum / Double(total)
                if variance < maximum, best == nil || variance < best!.variance { best = (pattern, variance) }
            }
        }
        return best
    }
}

/// One scan line's run lengths as the decoders read them: a buffer, so that the many small slices the decoders take
/// at every candidate place cost no reference counting.
typealias Runs = UnsafeBufferPointer<Int>
typealias RunSlice = Slice<UnsafeBufferPointer<Int>>

/// Where a decoder found a symbol on a line: the first and last run it used (as run indexes).
struct LineRead: Equatable {
    let symbology: Symbology
    let payload: [UInt8]
    let firstRun: Int
    let lastRun: Int
}

/// The sample positions at which each run starts, and one past the last.
func runStarts(_ runs: [Int]) -> [Int] {
    var starts = [0]
    starts.reserveCapacity(runs.count + 1)
    for run in runs { starts.append(starts[starts.count - 1] + run) }
    return starts
}
