import Foundation
import CofferTestSupport
import Testing

@testable import CofferBarcode

/// Throughput checks. Floors are loose in debug builds; run `swift test -c release --filter SpeedTests` for the
/// figures that matter (printed on stdout).
@Suite(.serialized, .offCooperativePool)
struct SpeedTests {
    static let optimized = !_isDebugAssertConfiguration()

    /// Runs `body` repeatedly for about `seconds` and returns calls per second.
    static func rate(seconds: Double = 0.4, _ body: () throws -> Void) rethrows -> Double {
        let start = Date()
        var count = 0
        while Date().timeIntervalSince(start) < seconds {
            try body()
            count += 1
        }
        return Double(count) / Date().timeIntervalSince(start)
    }

    @Test func qrVersion10ByteModeLevelM() throws {
        var random = SeededRandom(seed: 10)
        let payload = random.bytes(QRDecodeTests.byteCapacity(version: 10, level: .M))
        let options = BarcodeOptions(qrErrorCorrection: .M, charset: .iso8859_1)
        #expect(try encode(payload, as: .qr, options: options).qr?.version == 10)
        let perSecond = try Self.rate { _ = try encode(payload, as: .qr, options: options) }
        print("speed: QR 10-M byte mode \(Int(perSecond)) symbols/s (\(Self.optimized ? "release" : "debug"))")
        #expect(perSecond > (Self.optimized ? 300 : 20))
    }

    @Test func code128() throws {
        let payload = Array("LOYALTY-0042-98765432-ABC".utf8)
        let perSecond = try Self.rate { _ = try encode(payload, as: .code128) }
        print("speed: Code 128 (25 chars) \(Int(perSecond)) symbols/s (\(Self.optimized ? "release" : "debug"))")
        // Debug builds run about 3,000 a second alone and a sixth of that while the whole suite shares two cores.
        #expect(perSecond > (Self.optimized ? 50000 : 100))
    }

    /// Writing QR PNG files end to end (encode, render, deflate, write) against `qrencode -o` and `zint -o`, one
    /// invocation per file as a caller of those tools would do. Only asserted in release builds.
    @Test func pngFilesAgainstQrencodeAndZint() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-speed-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let count = 40
        let payloads = (0..<count).map { "https://example.com/loyalty/card/\($0)/" + String(repeating: "X", count: 60) }

        func writeOurs(_ text: String, _ name: String) throws {
            let symbol = try encode(Array(text.utf8), as: .qr)
            let png = try PNGWriter.data(for: symbol, options: RasterOptions(scale: 3))
            try Data(png).write(to: directory.appendingPathComponent(name))
        }
        // One untimed file each, so one-time runtime and page-cache costs do not count for anyone.
        try writeOurs(payloads[0], "warm.png")
        var start = Date()
        for (index, text) in payloads.enumerated() { try writeOurs(text, "ours-\(index).png") }
        let ours = Date().timeIntervalSince(start) / Double(count)

        /// Spawns the tool directly (no `env` hop), as a caller of it would. A tool that is missing, fails or writes
        /// no file is an error: a comparison against a tool that did not run would be won by default.
        func timeTool(_ arguments: (String, String) -> [String]) throws -> Double {
            let name = arguments("", "")[0]
            let located = String(decoding: try Oracle.run(["which", name]), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard !located.isEmpty else { throw ToolMissing(name: name) }
            func once(_ output: String, _ text: String) throws {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: located)
                process.arguments = Array(arguments(output, text).dropFirst())
                try process.run()
                process.waitUntilExit()
                guard process.terminationStatus == 0, FileManager.default.fileExists(atPath: output) else {
                    throw ToolFailed(name: name, status: process.terminationStatus)
                }
            }
            try once(directory.appendingPathComponent("\(name)-warm.png").path, payloads[0])
            start = Date()
            for (index, text) in payloads.enumerated() {
                try once(directory.appendingPathComponent("\(name)-\(index).png").path, text)
            }
            return Date().timeIntervalSince(start) / Double(count)
        }
        let qrencode = try timeTool { ["qrencode", "-l", "M", "-s", "3", "-o", $0, $1] }
        let zint = try timeTool { ["zint", "-b", "QRCODE", "--secure=2", "--scale=1.5", "-o", $0, "-d", $1] }
        print(String(format: "speed: QR PNG per file: ours %.3f ms, qrencode %.3f ms, zint %.3f ms (%@)",
                     ours * 1000, qrencode * 1000, zint * 1000, Self.optimized ? "release" : "debug"))
        if Self.optimized {
            #expect(ours <= qrencode && ours <= zint)
        } else {
            #expect(ours < 1, "a debug PNG should still take well under a second")
        }
    }

    struct ToolMissing: Error, CustomStringConvertible {
        let name: String
        var description: String { "\(name) is not installed, so there is nothing to compare with: `apt-get install -y qrencode zint`" }
    }

    struct ToolFailed: Error, CustomStringConvertible {
        let name: String
        let status: Int32
        var description: String { "\(name) exited with status \(status) or wrote no file" }
    }
}
