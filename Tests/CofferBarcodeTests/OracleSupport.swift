import CofferTestSupport
import Foundation
import Testing

@testable import CofferBarcode

/// One symbol found by an outside decoder.
struct DecodedSymbol: Decodable, Sendable {
    /// Decoder's format name, e.g. "QR Code", "EAN-13", "CODE-128".
    let format: String
    /// Raw payload bytes as lower-case hex (no charset conversion).
    let hex: String
    /// zxing's symbology identifier, e.g. "]Q2" (QR with ECI) or "]C1" (GS1-128); empty for zbar.
    let sid: String
    /// zxing's extra fields (Version, ECLevel, DataMask), as strings.
    let extra: [String: String]

    var bytes: [UInt8] { Hex.decode(hex) }
}

enum Hex {
    static func decode(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var high: UInt8?
        for c in hex.utf8 {
            let v: UInt8 = c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57
            if let h = high {
                result.append(h << 4 | v)
                high = nil
            } else {
                high = v
            }
        }
        return result
    }
}

/// An image to decode and how.
struct DecodeJob: Sendable {
    var image: [UInt8]
    /// zxing format filter (`barcode_formats_from_str`), nil for all.
    var zxingFormats: String?
    /// Extra zbarimg arguments (symbology enables; `-Sbinary` for QR), or nil to skip zbar for this image.
    var zbarArgs: [String]?
    var fileExtension = "pgm"
    /// A clean generated image: zxing may skip detection heuristics (much faster).
    var pure = false
    /// Report the ECI-aware symbology identifier (`]Q2` for QR with ECI) and the ECI number as `extra["ECI"]`.
    var eci = false
}

struct DecodeResult: Sendable {
    var zxing: [DecodedSymbol]
    var zbar: [DecodedSymbol]?
}

/// Runs zxing-cpp (Python `zxingcpp`) and `zbarimg` over many images in one Python process, keeping suites fast.
enum Oracle {
    static let install = "install the decoders: `pip install zxing-cpp pillow` and `apt-get install -y zbar-tools`"

    private static let script = #"""
        import json, sys, subprocess
        try:
            import zxingcpp
            from PIL import Image
        except ImportError as e:
            print(json.dumps({"fatal": "missing python module: %s" % e})); sys.exit(0)
        req = json.load(sys.stdin)
        out = {"zxing": [], "zbar": {}}
        for item in req["jobs"]:
            img = Image.open(item["path"]); img.load()
            kw = {"try_invert": False}
            if item.get("formats"):
                kw["formats"] = zxingcpp.barcode_formats_from_str(item["formats"])
            if item.get("pure"):
                kw["is_pure"] = True
                kw["try_downscale"] = False
            res = zxingcpp.read_barcodes(img, **kw)
            found = [{"format": str(r.format), "hex": r.bytes.hex(), "sid": r.symbology_identifier,
                      "extra": {k: str(v) for k, v in (r.extra or {}).items()}} for r in res]
            if found and item.get("eci"):
                # The ECI-aware transmission starts with the real identifier, e.g. "]Q2\000026" for UTF-8.
                eci = zxingcpp.read_barcodes(img, text_mode=zxingcpp.TextMode.HexECI, **kw)
                if eci and eci[0].text.startswith("5D 51 32"):
                    stream = bytes.fromhex(eci[0].text.replace(" ", ""))
                    found[0]["sid"] = stream[:3].decode("latin-1")
                    if stream[3:4] == b"\\": found[0]["extra"]["ECI"] = stream[4:10].decode("latin-1")
            out["zxing"].append(found)
        for item in req["jobs"]:
            args = item.get("zbar")
            if args is None: continue
            try:
                p = subprocess.run(["zbarimg", "--nodbus", "-q", "--raw"] + args + [item["path"]], capture_output=True)
            except FileNotFoundError:
                print(json.dumps({"fatal": "zbarimg not found"})); sys.exit(0)
            raw = p.stdout
            # Without -Sbinary zbarimg ends each symbol with a newline; with it, bytes are written untouched.
            if "-Sbinary" not in args and raw.endswith(b"\n"): raw = raw[:-1]
            out["zbar"][item["path"]] = [{"format": "zbar", "hex": raw.hex(), "sid": "", "extra": {}}] if p.returncode == 0 and raw else []
        print(json.dumps(out))
        """#

    private struct Output: Decodable {
        let fatal: String?
        let zxing: [[DecodedSymbol]]?
        let zbar: [String: [DecodedSymbol]]?
    }

    /// Decodes every job; records a test failure (naming what to install) when a decoder is missing.
    static func decode(_ jobs: [DecodeJob]) throws -> [DecodeResult] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-barcode-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var requests: [[String: Any]] = []
        for (index, job) in jobs.enumerated() {
            let path = directory.appendingPathComponent("\(index).\(job.fileExtension)").path
            try Data(job.image).write(to: URL(fileURLWithPath: path))
            var request: [String: Any] = ["path": path]
            if let formats = job.zxingFormats { request["formats"] = formats }
            if let zbar = job.zbarArgs { request["zbar"] = zbar }
            if job.pure { request["pure"] = true }
            if job.eci { request["eci"] = true }
            requests.append(request)
        }
        let scriptURL = directory.appendingPathComponent("decode.py")
        try Data(script.utf8).write(to: scriptURL)
        let input = try JSONSerialization.data(withJSONObject: ["jobs": requests])
        let stdout = try run(["python3", scriptURL.path], input: input)
        let output = try JSONDecoder().decode(Output.self, from: stdout)
        if let fatal = output.fatal {
            Issue.record("decoder unavailable (\(fatal)); \(install)")
            throw OracleError.unavailable
        }
        let zxing = output.zxing ?? []
        return jobs.indices.map { index in
            let path = directory.appendingPathComponent("\(index).\(jobs[index].fileExtension)").path
            return DecodeResult(zxing: zxing[index], zbar: jobs[index].zbarArgs == nil ? nil : output.zbar?[path] ?? [])
        }
    }

    enum OracleError: Error { case unavailable, failed(String) }

    /// Runs a command through `env` (so PATH finds python3 and tools) and returns its standard output.
    static func run(_ arguments: [String], input: Data? = nil) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let outPipe = Pipe()
        let inPipe = Pipe()
        process.standardOutput = outPipe
        process.standardInput = inPipe
        let errPipe = Pipe()
        process.standardError = errPipe
        do { try process.run() } catch {
            Issue.record("cannot run \(arguments[0]); \(install)")
            throw OracleError.unavailable
        }
        if let input { inPipe.fileHandleForWriting.write(input) }
        try inPipe.fileHandleForWriting.close()
        let data = outPipe.fileHandleForReading.readDataToEndOfFile()
        let errors = errPipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 || arguments[0] != "python3" else {
            let tail = String(decoding: errors.suffix(600), as: UTF8.self)
            Issue.record("the decoder script failed (\(tail)); \(install)")
            throw OracleError.failed(arguments[0])
        }
        return data
    }
}

typealias SeededRandom = SplitMix64

extension EncodedBarcode {
    /// A PGM image for decoders: matrix symbols at `scale` px per module, linear ones 3 px per module.
    func pgm(scale: Int = 3) throws -> [UInt8] {
        try PGMWriter.data(for: self, options: RasterOptions(scale: scale))
    }
}
