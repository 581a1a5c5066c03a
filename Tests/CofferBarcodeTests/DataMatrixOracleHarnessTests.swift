import CofferBarcode
import CofferTestSupport
import Foundation
import Testing

// Shared by the Data Matrix, PDF417 and Aztec tests: renders symbols to PGM files and decodes them all with one
// zxing-cpp process, so the independent decoder is the oracle and the suite stays fast.

/// One decoded symbol as zxing-cpp reports it.
struct TwoDReading: Sendable {
    let format: String
    let bytes: [UInt8]
    let symbologyIdentifier: String
    let ecLevel: String
}

/// Why the oracle could not run at all (as opposed to a symbol that did not decode).
struct TwoDOracleUnavailable: Error, CustomStringConvertible {
    let description: String
}

/// A named symbol for the oracle. The name appears in test output; payloads never do.
struct TwoDSymbol: Sendable {
    let name: String
    let matrix: BitMatrix
}

enum TwoDOracle {
    static let installHint =
        "install the decoder oracle: pip install zxing-cpp numpy (or set COFFER_PYTHON to a "
        + "python3 that has them)"

    /// Decodes each symbol (rendered at `scale` pixels per module with a `quietZone`-module margin) and returns the
    /// readings per symbol name. Every symbol is decoded in one Python process.
    static func decode(
        _ symbols: [TwoDSymbol], format: String, scale: Int = 3, quietZone: Int = 4
    ) throws -> [String: [TwoDReading]] {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("coffer-2d-oracle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        var listing = ""
        for (index, symbol) in symbols.enumerated() {
            let file = directory.appendingPathComponent("s\(index).pgm")
            try pgm(symbol.matrix, scale: scale, quietZone: quietZone).write(to: file)
            listing += "\(index)\t\(file.path)\n"
        }
        let listFile = directory.appendingPathComponent("list.tsv")
        try Data(listing.utf8).write(to: listFile)
        let scriptFile = directory.appendingPathComponent("decode.py")
        try Data(script.utf8).write(to: scriptFile)

        let process = Process()
        let python = ProcessInfo.processInfo.environment["COFFER_PYTHON"] ?? "python3"
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [python, scriptFile.path, listFile.path, format]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw TwoDOracleUnavailable(description: "cannot start \(python): \(installHint)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        _ = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TwoDOracleUnavailable(
                description: "zxing-cpp decoder script failed (exit \(process.terminationStatus)): \(installHint)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw TwoDOracleUnavailable(description: "decoder output was not UTF-8")
        }
        var readings: [String: [TwoDReading]] = [:]
        for symbol in symbols { readings[symbol.name] = [] }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 5, let index = Int(fields[0]), index < symbols.count else { continue }
            let reading = TwoDReading(
                format: fields[1], bytes: hexBytes(fields[2]), symbologyIdentifier: fields[3], ecLevel: fields[4])
            readings[symbols[index].name, default: []].append(reading)
        }
        return readings
    }

    /// Binary PGM (P5): 255 is white, 0 is black.
    static func pgm(_ matrix: BitMatrix, scale: Int, quietZone: Int) -> Data {
        let width = (matrix.width + 2 * quietZone) * scale
        let height = (matrix.height + 2 * quietZone) * scale
        var pixels = [UInt8](repeating: 255, count: width * height)
        for y in 0..<matrix.height {
            for x in 0..<matrix.width where matrix[x, y] {
                for dy in 0..<scale {
                    let row = ((y + quietZone) * scale + dy) * width
                    for dx in 0..<scale { pixels[row + (x + quietZone) * scale + dx] = 0 }
                }
            }
        }
        var data = Data("P5\n\(width) \(height)\n255\n".utf8)
        data.append(contentsOf: pixels)
        return data
    }

    private static func hexBytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            bytes.append(UInt8(nibble(high) << 4 | nibble(low)))
        }
        return bytes
    }

    private static func nibble(_ c: UInt8) -> Int {
        switch c {
        case 48...57: Int(c - 48)
        case 97...102: Int(c - 87)
        default: Int(c - 55)
        }
    }

    /// Prints one tab-separated line per barcode found: index, format, bytes (hex), symbology identifier, EC level.
    private static let script = #"""
        import sys
        import numpy
        import zxingcpp

        def read_pgm(path):
            with open(path, "rb") as f:
                data = f.read()
            parts = data.split(b"\n", 3)
            width, height = map(int, parts[1].split())
            return numpy.frombuffer(parts[3], dtype=numpy.uint8).reshape(height, width)

        formats = getattr(zxingcpp.BarcodeFormat, sys.argv[2])
        with open(sys.argv[1]) as listing:
            for line in listing:
                index, path = line.rstrip("\n").split("\t")
                for result in zxingcpp.read_barcodes(read_pgm(path), formats=formats, is_pure=True):
                    print("\t".join([index, str(result.format), bytes(result.bytes).hex(),
                                     result.symbology_identifier, str(result.ec_level)]))
        """#
}

/// A copy of `matrix` with every module in the rectangle inverted, to check that error correction repairs it.
func damaged(_ matrix: BitMatrix, x: ClosedRange<Int>, y: ClosedRange<Int>) -> BitMatrix {
    var copy = matrix
    for row in y {
        for column in x { copy[column, row].toggle() }
    }
    return copy
}

typealias TwoDSeededBytes = SplitMix64

/// A test vector: a name for output and the payload bytes (never printed).
struct TwoDPayloadCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]

    var testDescription: String { "\(name) (\(bytes.count) bytes)" }
}
