import CofferTestSupport
import Foundation
import Testing

/// `add card --scan`, `add otp --scan` and `import --from image` through the real binary, on pictures drawn by zint
/// and qrencode (and Google Authenticator export codes made by the fixture script): what is read is what is stored,
/// a picture that cannot be used gives one error and adds nothing, and no secret reaches the output.
@Suite("Scanning pictures at the command line", .offCooperativePool)
struct ScanCLITests {
    static let otpauth = "otpauth://totp/GitHub:alice@example.com?secret=JBSWY3DPEHPK3PXP&issuer=GitHub"

    /// Runs an encoder (zint or qrencode) that writes `path`.
    static func draw(_ tool: String, _ arguments: [String]) throws {
        let result = try TestSupport.run("/usr/bin/\(tool)", arguments, input: [], environment: ["PATH": "/usr/bin:/bin"])
        try #require(result.status == 0, "\(tool) failed: \(result.stderr)")
    }

    /// A picture made by Tests/oracles/scan_oracle.py (see its requests), written to `path` as PNG.
    static func picture(_ request: [String: Any], to path: String) throws {
        var request = request
        request["save"] = path
        _ = try TestSupport.pythonOracle("scan_oracle.py", input: [request])
    }

    static func show(_ cli: CLI, _ name: String) throws -> [String: Any] {
        let json = try cli.ok(["show", name, "--json"]).stdout
        return try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    static func count(_ cli: CLI) throws -> Int {
        let json = try cli.ok(["list", "--json"]).stdout
        return (try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [Any])?.count ?? -1
    }

    @Test("add card --scan stores the symbology and the exact payload, from a tight crop and with --symbology choosing")
    func card() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        // zint draws Code 128 with no margin of its own: the picture's edge is the margin.
        try Self.draw("zint", ["-b", "CODE128", "-d", "111222333444", "-o", cli.home + "/costco.png"])
        let added = try cli.ok(["add", "card", "Costco", "--scan", cli.home + "/costco.png", "--tag", "warehouse"])
        #expect(added.stdout.count == 37 && added.stderr.isEmpty)
        let costco = try Self.show(cli, "Costco")
        #expect(costco["symbology"] as? String == "code128" && costco["payload"] as? String == "111222333444")
        #expect(costco["tags"] as? [String] == ["warehouse"])

        // Two codes in one picture: a script must choose; --symbology does.
        let both = cli.home + "/both.png"
        try Self.picture(
            [
                "beside": [
                    ["zint": ["type": "EANX", "data": "400638133393", "scale": 2]],
                    ["qrencode": ["data_hex": Data("member-0042".utf8).map { String(format: "%02x", $0) }.joined()]],
                ]
            ],
            to: both)
        let several = try cli.run(["add", "card", "Both", "--scan", both])
        #expect(several.status == 64 && several.stderr.contains("2 barcodes found (") && several.stderr.contains("--symbology"))
        try cli.ok(["add", "card", "Shop", "--scan", both, "--symbology", "ean13"])
        #expect(try Self.show(cli, "Shop")["payload"] as? String == "4006381333931")
        let missing = try cli.run(["add", "card", "Gym", "--scan", both, "--symbology", "code39"])
        #expect(missing.status == 65 && missing.stderr.hasPrefix("coffer: error: \(both): no code39 barcode found\n"))
        #expect(try Self.count(cli) == 2)
    }

    @Test("add otp --scan adds the token; a card's code and a token's code each point to the other command")
    func token() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try Self.draw("qrencode", ["-o", cli.home + "/github.png", Self.otpauth])
        try Self.draw("zint", ["-b", "CODE128", "-d", "111222333444", "-o", cli.home + "/card.png"])
        let added = try cli.ok(["add", "otp", "--scan", cli.home + "/github.png"])
        #expect(!added.stdout.contains("JBSWY3DP") && !added.stderr.contains("JBSWY3DP"))
        let token = try Self.show(cli, "GitHub")
        #expect(token["issuer"] as? String == "GitHub" && token["account"] as? String == "alice@example.com")

        let asCard = try cli.run(["add", "card", "Oops", "--scan", cli.home + "/github.png"])
        #expect(asCard.status == 65 && asCard.stderr.contains("is a 2FA token, not a card") && asCard.stderr.contains("coffer add otp --scan"))
        #expect(!asCard.stderr.contains("JBSWY3DP"))
        let asToken = try cli.run(["add", "otp", "--scan", cli.home + "/card.png"])
        #expect(asToken.status == 65 && asToken.stderr.contains("holds no otpauth:// URI") && asToken.stderr.contains("coffer add card"))
        // The same token again is skipped, not added twice.
        try cli.ok(["add", "otp", "--scan", cli.home + "/github.png"])
        #expect(try Self.count(cli) == 1)
    }

    @Test("a Google Authenticator export spread over two QR codes imports as the text export does")
    func googleExport() throws {
        let lines = try String(
            contentsOf: TestSupport.repositoryRoot.appendingPathComponent(
                "Tests/CofferInteropTests/Fixtures/google/export.txt"), encoding: .utf8
        )
        .split(separator: "\n").filter { $0.hasPrefix("otpauth-migration://") }.map(String.init)
        try #require(lines.count == 2)
        let cli = try CLI()
        try cli.ok(["init"])
        var pictures: [String] = []
        for (index, line) in lines.enumerated() {
            pictures.append(cli.home + "/export-\(index + 1).png")
            try Self.draw("qrencode", ["-o", pictures[index], "-s", "3", line])
        }
        let imported = try cli.ok(["import", "--from", "image"] + pictures)
        let reference = try CLI()
        try reference.ok(["init"])
        try reference.ok([
            "import", "--from", "google",
            TestSupport.repositoryRoot.appendingPathComponent(
                "Tests/CofferInteropTests/Fixtures/google/export.txt"
            ).path,
        ])
        let names = { (cli: CLI) throws -> [String] in
            let json = try cli.ok(["list", "--json"]).stdout
            let items = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
            return items.compactMap { $0["name"] as? String }.sorted()
        }
        #expect(try names(cli) == names(reference))
        #expect(imported.stderr.contains("Imported "))

        // One of the two codes alone: its tokens are added and the missing part is named.
        let alone = try CLI()
        try alone.ok(["init"])
        let partial = try alone.ok(["add", "otp", "--scan", pictures[0], "--json"])
        #expect(partial.stderr.contains("coffer: warning: ") && partial.stderr.contains("batch 2 of 2"))
        let added = try #require(try JSONSerialization.jsonObject(with: Data(partial.stdout.utf8)) as? [[String: Any]])
        let stored = try Self.count(alone)
        #expect(!added.isEmpty && added.count == stored && added.allSatisfy { $0["kind"] as? String == "otp" })
    }

    @Test("pictures that cannot be used: one error each, nothing added, the import goes on past them")
    func badPictures() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        let home = cli.home
        try Data("not a picture".utf8).write(to: URL(fileURLWithPath: home + "/notes.png"))
        try Self.draw("qrencode", ["-o", home + "/good.png", "-s", "3", "member-7"])
        let good = try Data(contentsOf: URL(fileURLWithPath: home + "/good.png"))
        try good.prefix(good.count / 2).write(to: URL(fileURLWithPath: home + "/cut.png"))
        let white = Data(repeating: 255, count: 300 * 200).base64EncodedString()
        try Self.picture(["gray": ["width": 300, "height": 200, "pixels": white]], to: home + "/blank.png")
        try Self.draw("zint", ["-b", "QRCODE", "-d", "PART ONE", "--structapp=1,2", "-o", home + "/part.png"])

        let cases: [(String, String)] = [
            ("notes.png", "coffer: error: \(home)/notes.png: not a PNG or JPEG image\n"),
            ("cut.png", "coffer: error: \(home)/cut.png: the PNG file is damaged: it is cut short\n"),
            (
                "blank.png",
                "coffer: error: \(home)/blank.png: no barcode found\ncoffer: hint: nothing found: try a sharper photo, closer, in even light, with the whole code in the frame\n"
            ),
            (
                "part.png",
                "coffer: error: \(home)/part.png: the qr code is part 1 of 2 of a message spread over several codes; Coffer keeps one code per item\n"
            ),
            ("absent.png", "coffer: error: \(home)/absent.png does not exist\n"),
        ]
        for (file, message) in cases {
            let result = try cli.run(["add", "card", "X", "--scan", home + "/" + file])
            #expect(result.status != 0 && result.stderr == message, "\(file): \(result.stderr)")
        }
        #expect(try Self.count(cli) == 0)

        let imported = try cli.ok(["import", "--from", "image", home + "/good.png", home + "/notes.png", home + "/blank.png"])
        #expect(
            imported.stderr.contains("added card good") && imported.stderr.contains("notes.png: not a PNG or JPEG image")
                && imported.stderr.contains("blank.png: no barcode found"))
        #expect(try Self.show(cli, "good")["payload"] as? String == "member-7")
        let nothing = try cli.run(["import", "--from", "image", home + "/blank.png"])
        #expect(nothing.status == 65 && nothing.stderr.contains("coffer: error: nothing imported"))
        let usage = try cli.run(["import", "--from", "aegis", home + "/a.json", home + "/b.json"])
        #expect(usage.status == 64 && usage.stderr.contains("several only with --from image"))
    }
}
