import CofferBarcode

/// A symbol found in an image: its symbology, the exact bytes it carries (as Coffer stores a card's payload), and
/// where it is (four corners, in image pixels, clockwise from the start of the first line that read it).
public struct FoundBarcode: Sendable, Equatable {
    public let symbology: Symbology
    public let payload: [UInt8]
    public let corners: [ImagePoint]
}

/// What a scan found.
public struct ScanResult: Sendable, Equatable {
    /// The symbols read, each once.
    public var found: [FoundBarcode]
    /// Symbols decoded but not returned, and why (a QR structured-append part, say), each once.
    public var refused: [ScanRefusal]

    public init(found: [FoundBarcode], refused: [ScanRefusal]) {
        self.found = found
        self.refused = refused
    }
}

/// What a reader made of one symbol: its read, or the reason a decoded symbol is not returned.
enum SymbolOutcome {
    case found(FoundBarcode)
    case refused(ScanRefusal)
}

extension ScanResult {
    /// Adds each read and refusal not already here.
    mutating func add(_ outcomes: [SymbolOutcome]) {
        for outcome in outcomes {
            switch outcome {
            case .found(let read) where !found.contains(where: { $0.symbology == read.symbology && $0.payload == read.payload }):
                found.append(read)
            case .refused(let refusal) where !refused.contains(refusal):
                refused.append(refusal)
            default:
                break
            }
        }
    }
}

/// Coffer's barcode reader. QR, Data Matrix and Aztec symbols are found on a locally thresholded image (dark on light
/// and light on dark) at any angle and in perspective, and PDF417 along lines at four angles; each is read only
/// through its Reed–Solomon check. Linear symbols are read along parallel lines at every 6° from −30° to 30° (and
/// backwards, for codes upside down; dark on light and light on dark); a linear read counts only when several lines
/// agree on it, so a single misread line never becomes a result.
public enum BarcodeReader {
    /// Lines that must agree before a linear read is reported: two, or three for ITF, which has no check digit and
    /// whose every pair of digits is another valid pair when one element is misjudged (Code 39 and Codabar carry no
    /// check digit either, but a misjudged element there makes an invalid character), and for UPC-E, short enough
    /// to be found, check digit and all, inside a blurred Code 128 (a misread that lines at any angle repeat, as
    /// turning a line only scales the widths it crosses).
    static func agreement(_ symbology: Symbology) -> Int {
        symbology == .itf || symbology == .upcE ? 3 : 2
    }

    /// Every symbol found in `image`: matrix symbols first, then linear ones most-seen first.
    public static func read(_ image: GrayImage) -> [FoundBarcode] { scan(image).found }

    /// Every symbol found in `image`, and those decoded but not returned (with the reason).
    ///
    /// With `firstOnly` (a camera frame, where the next frame comes in a tenth of a second), the scan ends as soon as
    /// one symbol is read: matrix symbols are looked for first, then linear ones at each angle in turn, from level
    /// outward, until some read has the lines it needs.
    public static func scan(_ image: GrayImage, firstOnly: Bool = false) -> ScanResult {
        var result = ScanResult(found: [], refused: [])
        let binary = BitImage(thresholding: image)
        // Matrix symbols first (their error correction makes a read certain), dark on light before light on dark; a
        // camera frame stops at the first reader that finds one.
        let inverted = binary.inverted()
        func done() -> Bool { firstOnly && !result.found.isEmpty }
        result.add(QRReader.read(binary))
        if done() { return result }
        result.add(DataMatrixReader.read(binary))
        if done() { return result }
        result.add(AztecReader.read(binary))
        if done() { return result }
        result.add(QRReader.read(inverted))
        if done() { return result }
        result.add(AztecReader.read(inverted))
        if done() { return result }
        result.add(PDF417Reader.read(image))
        if done() { return result }
        result.found += linear(image, firstOnly: firstOnly)
        return result
    }

    /// The angles of the scan lines, level first.
    static let angles: [Double] = [0, -6, 6, -12, 12, -18, 18, -24, 24, -30, 30]

    /// Linear symbols along the scan lines.
    static func linear(_ image: GrayImage, firstOnly: Bool = false) -> [FoundBarcode] {
        var tallies: [Tally] = []
        // Lines a sixtieth of the image apart: a code a tenth of the frame high is crossed by six at each angle.
        let spacing = max(2, min(image.width, image.height) / 60)
        for degrees in angles {
            if firstOnly, tallies.contains(where: { $0.lines >= agreement($0.symbology) }) { break }
            for line in ScanLine.lines(width: image.width, height: image.height, degrees: degrees, spacing: spacing) {
                let runs = runLengths(of: line.samples(in: image))
                let length = Double(runs.reduce(0, +))
                // Forwards and backwards (upside down), dark on light and light on dark (a run of no length first).
                let reversed = Array(runs.reversed())
                for (variant, backwards) in [(runs, false), (reversed, true), ([0] + runs, false), ([0] + reversed, true)] {
                    // The image's edges count as margin: a screenshot cropped to the code has none of its own.
                    var padded = variant
                    padded[0] += edgeMargin
                    if padded.count % 2 == 0 { padded.append(edgeMargin) } else { padded[padded.count - 1] += edgeMargin }
                    let reads = readLine(padded)
                    guard !reads.isEmpty else { continue }
                    let starts = runStarts(padded).map { $0 - edgeMargin }
                    for read in reads {
                        let first = Double(starts[read.firstRun]), last = Double(starts[read.lastRun + 1])
                        let from = line.point(at: backwards ? length - first : first)
                        let to = line.point(at: backwards ? length - last : last)
                        record(read.symbology, read.payload, from, to, in: &tallies)
                    }
                }
            }
        }
        // Where reads of one place disagree, the one most lines agree on stands: a misread is rarer than a read.
        var kept: [Tally] = []
        for tally in tallies.filter({ $0.lines >= agreement($0.symbology) }).sorted(by: { $0.lines > $1.lines })
        where !kept.contains(where: { $0.overlaps(tally) }) {
            kept.append(tally)
        }
        return kept.map { FoundBarcode(symbology: $0.symbology, payload: $0.payload, corners: $0.corners) }
    }

    /// Light pixels imagined beyond the image's edges, wider than any symbology's margin needs.
    static let edgeMargin = 1_000

    /// Every linear symbol on one line's runs (the first run light), left to right, none overlapping.
    static func readLine(_ runs: [Int]) -> [LineRead] {
        runs.withUnsafeBufferPointer { runs in
            var reads: [LineRead] = []
            var start = 1
            while start < runs.count {
                // Every symbology's margin is wider than its first bar and space together: most places end here.
                if start + 1 < runs.count, runs[start - 1] < runs[start] + runs[start + 1] {
                    start += 2
                    continue
                }
                if let read = EANUPCReader.read(runs, start: start) ?? Code128Reader.read(runs, start: start)
                    ?? Code39Reader.read(runs, start: start) ?? Code93Reader.read(runs, start: start)
                    ?? CodabarReader.read(runs, start: start)
                    ?? ITFReader.read(runs, start: start)
                {
                    reads.append(read)
                    start = read.lastRun + 2
                } else {
                    start += 2
                }
            }
            return reads
        }
    }

    /// The lines that read one symbol with one payload, and the ends of the first and last of them.
    struct Tally {
        let symbology: Symbology
        let payload: [UInt8]
        var lines: Int
        var first: (ImagePoint, ImagePoint)
        var last: (ImagePoint, ImagePoint)

        var corners: [ImagePoint] { [first.0, first.1, last.1, last.0] }

        /// Whether the middle of either's reads lies within the other's box.
        func overlaps(_ other: Tally) -> Bool {
            other.contains(middle) || contains(other.middle)
        }

        private var middle: ImagePoint {
            let points = corners
            return ImagePoint(x: points.map { $0.x }.reduce(0, +) / 4, y: points.map { $0.y }.reduce(0, +) / 4)
        }

        private func contains(_ point: ImagePoint) -> Bool {
            let points = corners
            let xs = points.map { $0.x }, ys = points.map { $0.y }
            let slack = 4.0
            return point.x >= xs.min()! - slack && point.x <= xs.max()! + slack && point.y >= ys.min()! - slack
                && point.y <= ys.max()! + slack
        }
    }

    private static func record(
        _ symbology: Symbology, _ payload: [UInt8], _ from: ImagePoint, _ to: ImagePoint,
        in tallies: inout [Tally]
    ) {
        if let index = tallies.firstIndex(where: { $0.symbology == symbology && $0.payload == payload }) {
            tallies[index].lines += 1
            tallies[index].last = (from, to)
        } else {
            tallies.append(Tally(symbology: symbology, payload: payload, lines: 1, first: (from, to), last: (from, to)))
        }
    }
}
