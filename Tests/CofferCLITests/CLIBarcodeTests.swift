import CofferPlatform
import CofferTestSupport
import Foundation
import GRDB
import Testing

@Suite("coffer barcodes", .offCooperativePool)
struct CLIBarcodeTests {
    /// Decodes image files with zxing-cpp (PyPI) and returns each one's raw bytes as hex.
    func decode(_ paths: [String]) throws -> [String] {
        let script = """
            import sys, zxingcpp
            from PIL import Image
            for path in sys.argv[1:]:
                found = zxingcpp.read_barcodes(Image.open(path))
                print(found[0].bytes.hex() if found else "none")
            """
        let result = try TestSupport.run("/usr/bin/env", ["python3", "-c", script] + paths)
        guard result.status == 0 else {
            throw TestSupport.OracleError.unavailable("zxing-cpp and pillow (pip install zxing-cpp pillow): \(result.stderr.suffix(300))")
        }
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test("Cards, stdin payloads and tokens come out as images an independent decoder reads back byte for byte")
    func images() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "card", "Costco", "--symbology", "code128"], input: "111222333444\n")
        try cli.ok(["add", "card", "Library", "--symbology", "pdf417", "--charset", "iso-8859-1"], input: "M\u{FC}ller 42\n")
        try cli.ok(["add", "otp"], input: "otpauth://totp/GitHub:alice?secret=JBSWY3DPEHPK3PXP&issuer=GitHub\n")
        try cli.ok(["barcode", "Costco", "--png", cli.home + "/a.png"])
        try cli.ok(["barcode", "Library", "--png", cli.home + "/b.png", "--scale", "3"])
        try cli.ok(["barcode", "--symbology", "datamatrix", "--png", cli.home + "/c.png"], input: "Hello, world\n")
        let decoded = try decode([cli.home + "/a.png", cli.home + "/b.png", cli.home + "/c.png"])
        #expect(
            decoded == [
                TestSupport.hex(Array("111222333444".utf8)), TestSupport.hex([0x4D, 0xFC] + Array("ller 42".utf8)),
                TestSupport.hex(Array("Hello, world".utf8)),
            ])
        let attributes = try FileManager.default.attributesOfItem(atPath: cli.home + "/a.png")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let qr = try cli.ok(["otp", "qr", "GitHub"])
        #expect(qr.stderr.contains("coffer: warning:") && qr.stdout.contains("▀"))
        let show = try cli.ok(["show", "Costco"]).stdout
        #expect(show.contains("█") || show.contains("▌"))
        #expect(try cli.run(["barcode"]).status == 64)
        #expect(try cli.run(["add", "card", "EAN", "--symbology", "ean13"], input: "12345678901X\n").status == 65)
        #expect(try cli.run(["barcode", "--symbology", "ean13"], input: "5901234123457\n").status == 0)
        #expect(try cli.run(["barcode", "--symbology", "ean13"], input: "5901234123458\n").status == 65)
    }
}
