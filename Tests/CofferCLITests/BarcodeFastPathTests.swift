import CofferBarcode
import CofferTestSupport
import Foundation
import Testing

@testable import CofferCLI

/// `coffer barcode --symbology … --png …` skips ArgumentParser (BarcodeFastPath). These tests run the real binary
/// both ways (`COFFER_NO_FAST_PATH=1` forces ArgumentParser) and require the same files, bytes, messages and exit
/// codes; and they pin down which argument lists the fast path takes.
@Suite("coffer barcode fast path", .offCooperativePool)
struct BarcodeFastPathTests {
    /// One invocation. `{dir}` in an argument is replaced by a fresh directory shared by both runs.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let arguments: [String]
        let input: [UInt8]
        /// Files (under `{dir}`) the run may write; compared byte for byte.
        let files: [String]
        let status: Int32

        init(_ name: String, _ arguments: [String], input: String, files: [String] = [], status: Int32 = 0) {
            self.init(name, arguments, bytes: Array(input.utf8), files: files, status: status)
        }

        init(_ name: String, _ arguments: [String], bytes: [UInt8], files: [String] = [], status: Int32 = 0) {
            self.name = name
            self.arguments = arguments
            self.input = bytes
            self.files = files
            self.status = status
        }

        var testDescription: String { name }
    }

    struct Outcome: Equatable {
        let status: Int32
        let stdout: [UInt8]
        let stderr: String
        let files: [[UInt8]?]
    }

    static let url = "https://example.com/card/1234567890?member=Jane+Doe"

    static let cases: [Case] = [
        Case("QR to PNG", ["barcode", "--symbology", "qr", "--png", "{dir}/a.png"], input: url, files: ["a.png"]),
        Case(
            "QR, level H, scale 3, newline dropped",
            ["barcode", "--symbology", "qr", "--ec", "H", "--scale", "3", "--png", "{dir}/a.png"], input: url + "\n",
            files: ["a.png"]),
        Case(
            "attached values, CRLF dropped", ["barcode", "--png={dir}/a.png", "--symbology=qr", "--ec=L"],
            input: "HELLO WORLD 42\r\n", files: ["a.png"]),
        Case(
            "Data Matrix to PNG, SVG and PGM",
            ["barcode", "--symbology", "datamatrix", "--png", "{dir}/a.png", "--svg", "{dir}/a.svg", "--pgm", "{dir}/a.pgm"],
            input: "Hello, world\n", files: ["a.png", "a.svg", "a.pgm"]),
        Case("PDF417", ["barcode", "--symbology", "pdf417", "--png", "{dir}/a.png", "--scale", "2"], input: "MEMBER 0042", files: ["a.png"]),
        Case("Aztec to SVG", ["barcode", "--symbology", "aztec", "--svg", "{dir}/a.svg"], input: "Aztec 123", files: ["a.svg"]),
        Case("EAN-13", ["barcode", "--symbology", "ean13", "--png", "{dir}/a.png"], input: "5901234123457\n", files: ["a.png"]),
        Case("binary payload", ["barcode", "--symbology", "qr", "--png", "{dir}/a.png"], bytes: [0, 0xFF, 0x80, 0x0D, 0x0A, 7], files: ["a.png"]),
        // Errors raised by the shared work after parsing.
        Case("empty payload", ["barcode", "--symbology", "qr", "--png", "{dir}/a.png"], input: "\n", files: ["a.png"], status: 65),
        Case("bad check digit", ["barcode", "--symbology", "ean13", "--png", "{dir}/a.png"], input: "5901234123458", files: ["a.png"], status: 65),
        Case("scale 0", ["barcode", "--symbology", "qr", "--scale", "0", "--png", "{dir}/a.png"], input: url, files: ["a.png"], status: 64),
        Case("scale 65", ["barcode", "--symbology", "qr", "--scale", "65", "--png", "{dir}/a.png"], input: url, files: ["a.png"], status: 64),
        Case("missing directory", ["barcode", "--symbology", "qr", "--png", "{dir}/no/such/a.png"], input: url, status: 1),
        Case(
            "image over 16,384 pixels", ["barcode", "--symbology", "code128", "--scale", "64", "--png", "{dir}/a.png"],
            input: String(repeating: "A", count: 400), files: ["a.png"], status: 65),
        Case(
            "standard input over 1 MiB", ["barcode", "--symbology", "qr", "--png", "{dir}/a.png"],
            bytes: [UInt8](repeating: 0x41, count: (1 << 20) + 1), files: ["a.png"], status: 64),
        // Argument lists the fast path leaves to ArgumentParser: its own errors, and the card form.
        Case("unknown symbology", ["barcode", "--symbology", "telepen", "--png", "{dir}/a.png"], input: url, status: 64),
        // Symbologies are taken as people type them, on both paths.
        Case("symbology as typed", ["barcode", "--symbology", "QR code", "--png", "{dir}/a.png"], input: url, files: ["a.png"]),
        Case("bad level", ["barcode", "--symbology", "qr", "--ec", "X", "--png", "{dir}/a.png"], input: url, status: 64),
        Case("negative scale", ["barcode", "--symbology", "qr", "--scale=-2", "--png", "{dir}/a.png"], input: url, status: 64),
        Case("card and symbology", ["barcode", "Costco", "--symbology", "qr", "--png", "{dir}/a.png"], input: url, status: 64),
        Case("missing value", ["barcode", "--symbology", "qr", "--png"], input: url, status: 64),
        // ArgumentParser keeps the last value of a repeated option.
        Case(
            "repeated option", ["barcode", "--symbology", "qr", "--png", "{dir}/a.png", "--png", "{dir}/b.png"],
            input: url, files: ["b.png"]),
    ]

    @Test("The fast path writes the same files and reports the same errors as the ArgumentParser command", arguments: cases)
    func sameBothWays(_ testCase: Case) throws {
        let directory = try TestSupport.temporaryDirectory("fast-path")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = testCase.arguments.map { $0.replacingOccurrences(of: "{dir}", with: directory) }
        func outcome(fastPath: Bool) throws -> Outcome {
            let cli = try CLI(extraEnvironment: fastPath ? [:] : ["COFFER_NO_FAST_PATH": "1"])
            defer { try? FileManager.default.removeItem(atPath: cli.home) }
            let result = try TestSupport.run(CLI.binary, arguments, input: testCase.input, environment: cli.environment)
            let files = testCase.files.map { name -> [UInt8]? in
                let path = directory + "/" + name
                defer { try? FileManager.default.removeItem(atPath: path) }
                return FileManager.default.contents(atPath: path).map { Array($0) }
            }
            return Outcome(status: result.status, stdout: result.standardOutput, stderr: result.stderr, files: files)
        }
        let fast = try outcome(fastPath: true)
        let parsed = try outcome(fastPath: false)
        #expect(fast == parsed)
        #expect(fast.status == testCase.status, "\(fast.stderr)")
        if testCase.status == 0 {
            #expect(fast.stderr.isEmpty && fast.files.allSatisfy { $0 != nil && !$0!.isEmpty })
        } else {
            #expect(fast.stderr.hasPrefix("coffer: error: "))
            #expect(fast.files.allSatisfy { $0 == nil })
        }
        // Payloads can be secrets: no message may quote one.
        if testCase.input.count > 3, let text = String(validating: testCase.input, as: UTF8.self) {
            let payload = text.trimmingCharacters(in: .newlines)
            #expect(!fast.stderr.contains(payload))
        }
    }

    @Test("Plain encoder argument lists are taken, with ArgumentParser's defaults and value conversions")
    func taken() throws {
        let plain = try #require(BarcodeFastPath(arguments: ["barcode", "--symbology", "qr", "--png", "a.png"]))
        #expect(plain.symbology == .qr && plain.errorCorrection == .M && plain.scale == 4)
        #expect(plain.png == "a.png" && plain.svg == nil && plain.pgm == nil)
        let full = try #require(
            BarcodeFastPath(arguments: [
                "barcode", "--scale=7", "--ec", "Q", "--svg", "b=c.svg", "--pgm=d.pgm", "--symbology=datamatrix",
            ]))
        #expect(full.symbology == .dataMatrix && full.errorCorrection == .Q && full.scale == 7)
        #expect(full.png == nil && full.svg == "b=c.svg" && full.pgm == "d.pgm")
        // Out-of-range scales are taken: the shared ImageFiles check reports them exactly as the command does.
        #expect(BarcodeFastPath(arguments: ["barcode", "--symbology", "qr", "--scale", "0", "--png", "a"])?.scale == 0)
    }

    @Test(
        "Everything else is left to ArgumentParser",
        arguments: [
            [], ["list"], ["barcode"], ["barcode", "Costco", "--png", "a.png"],
            ["barcode", "--symbology", "qr"],  // terminal drawing
            ["barcode", "--symbology", "qr", "--png", "a.png", "--invert"],
            ["barcode", "--symbology", "qr", "--png", "a.png", "--vault", "v"],
            ["barcode", "--symbology", "qr", "--png", "a.png", "--help"],
            ["barcode", "--symbology", "qr", "--png", "a.png", "--png", "b.png"],
            ["barcode", "--symbology", "qr", "--png", "a.png", "--force"],
            ["barcode", "--symbology", "qr", "--ec", "m", "--png", "a.png"],
            ["barcode", "--symbology", "qr", "--scale", "x", "--png", "a.png"],
            ["barcode", "--symbology", "qr", "--png", "-a.png"],
            ["barcode", "--symbology", "qr", "--png=", "a.png"],
            ["barcode", "--symbology", "qr", "--", "--png", "a.png"],
            ["barcode", "-h", "--symbology", "qr", "--png", "a.png"],
            ["--vault", "v", "barcode", "--symbology", "qr", "--png", "a.png"],
        ])
    func leftToArgumentParser(_ arguments: [String]) {
        #expect(BarcodeFastPath(arguments: arguments[...]) == nil)
    }
}
