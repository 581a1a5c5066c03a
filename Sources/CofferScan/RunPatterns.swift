import CofferBarcode

/// How far pixel runs are from a pattern of module widths: the summed deviation from the widths scaled to the runs'
/// total, per pixel of that total. Nil when one run deviates by more than `maximumIndividual` of a module, or when
/// the runs are narrower than one pixel a module.
func patternVariance(_ runs: ArraySlice<Int>, _ pattern: [UInt8], maximumIndividual: Double = 0.7) -> Double? {
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

/// The pattern of `patterns` that `runs` match best, if its variance is below `maximum`: `(index, variance)`.
func bestPattern(_ runs: ArraySlice<Int>, _ patterns: [[UInt8]], maximum: Double) -> (index: Int, variance: Double)? {
    var best: (index: Int, variance: Double)?
    for (index, pattern) in patterns.enumerated() {
        guard let variance = patternVariance(runs, pattern), variance < maximum else { continue }
        if best == nil || variance < best!.variance { best = (index, variance) }
    }
    return best
}

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
