import CofferTestSupport
import Foundation
import Testing

/// `coffer edit --photo/--remove-photo`, `coffer show --photo --out`, and photos through Catima backups, driven through
/// the real binary.
@Suite("Card photos at the command line", .offCooperativePool)
struct PhotoCLITests {
    static func write(_ bytes: [UInt8], _ path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test("edit --photo stores a photo, show names it (and --json gives side, type and size, never the bytes), show --photo --out writes it")
    func editAndShow() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "card", "Costco", "--symbology", "code128"], input: "111222333\n")
        let front = TestPhotos.jpeg(size: 150_000)
        let back = TestPhotos.png(size: 3_000)
        try Self.write(front, cli.home + "/front.jpg")
        try Self.write(back, cli.home + "/back.png")
        let edited = try cli.ok(["edit", "Costco", "--photo", "front", cli.home + "/front.jpg"])
        #expect(edited.stdout.isEmpty)
        try cli.ok(["edit", "Costco", "--photo", "back", cli.home + "/back.png", "--add-tag", "warehouse"])
        let shown = try cli.ok(["show", "Costco", "--no-barcode"]).stdout
        #expect(shown.contains("Photos:    front (JPEG, 147 KiB), back (PNG, 3 KiB)\n"))
        let json = try cli.ok(["show", "Costco", "--json"]).stdout
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let photos = try #require(object["photos"] as? [[String: Any]])
        #expect(photos.count == 2)
        #expect(photos[0]["side"] as? String == "front" && photos[0]["type"] as? String == "image/jpeg" && photos[0]["size"] as? Int == front.count)
        #expect(photos[1]["side"] as? String == "back" && photos[1]["type"] as? String == "image/png" && photos[1]["size"] as? Int == back.count)
        #expect(Set(photos.flatMap(\.keys)) == ["side", "type", "size"])
        // The list never reads a photo and shows one card.
        #expect(try cli.ok(["list", "--json"]).stdout.components(separatedBy: "\"kind\"").count == 2)

        let out = cli.home + "/out.jpg"
        let written = try cli.ok(["show", "Costco", "--photo", "front", "--out", out])
        #expect(written.stdout.isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(front))
        #expect(try Self.mode(out) == 0o600)
        // Never replaced without --force; with it, replaced (by the back photo here).
        let refused = try cli.run(["show", "Costco", "--photo", "back", "--out", out])
        #expect(refused.status != 0 && refused.stderr.hasPrefix("coffer: error: ") && refused.stderr.contains("--force"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(front))
        try cli.ok(["show", "Costco", "--photo", "back", "--out", out, "--force"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(back))
        #expect(try Self.mode(out) == 0o600)

        try cli.ok(["edit", "Costco", "--remove-photo", "back"])
        let none = try cli.run(["show", "Costco", "--photo", "back", "--out", cli.home + "/none.png"])
        #expect(none.status != 0 && none.stderr.contains("has no back photo"))
        #expect(!FileManager.default.fileExists(atPath: cli.home + "/none.png"))
        #expect(try cli.ok(["show", "Costco", "--no-barcode"]).stdout.contains("Photos:    front (JPEG, 147 KiB)\n"))
    }

    @Test(
        "a file that is not PNG or JPEG, one over 2 MiB, a missing one, and --photo on a token: one-line error, nothing changed",
        arguments: ["gif", "large", "missing", "token", "no side"])
    func refused(kind: String) throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "card", "Costco", "--symbology", "code128"], input: "111222333\n")
        try cli.ok(["add", "otp"], input: "otpauth://totp/GitHub:ada?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=GitHub\n")
        let file = cli.home + "/image"
        var arguments = ["edit", "Costco", "--photo", "front", file, "--add-tag", "changed"]
        switch kind {
        case "gif": try Self.write(Array("GIF89a".utf8) + Array(repeating: 0, count: 50), file)
        case "large": try Self.write(TestPhotos.png(size: 2 * 1024 * 1024 + 1), file)
        case "missing": break
        case "token":
            try Self.write(TestPhotos.png(size: 100), file)
            arguments = ["edit", "GitHub", "--photo", "front", file]
        default: arguments = ["edit", "Costco", "--photo", file]
        }
        let before = try cli.ok(["show", "Costco", "--json"]).stdout
        let result = try cli.run(arguments)
        #expect(result.status != 0)
        #expect(result.stderr.hasPrefix("coffer: error: ") || result.stderr.hasPrefix("Error: "))
        #expect(try cli.ok(["show", "Costco", "--json"]).stdout == before)
    }

    @Test("a Catima backup's images become photos (bad ones reported), and the Catima export carries them back")
    func catima() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        let fixture = TestSupport.repositoryRoot.appendingPathComponent("Tests/CofferInteropTests/Fixtures/catima/catima_v2.zip").path
        let imported = try cli.ok(["import", "--from", "catima", fixture])
        #expect(imported.stderr.contains("Imported 6 items from catima."))
        #expect(imported.stderr.contains("Café Ünter: its front image was left out: photo: is not a PNG or JPEG image"))
        #expect(imported.stderr.contains("Gym: its back image is larger than 2 MiB and was left out"))
        #expect(imported.stderr.contains("Bakery: its icon image was left out"))
        let pharmacy = try cli.ok(["show", "Pharmacy", "--no-barcode"]).stdout
        #expect(pharmacy.contains("Photos:") && pharmacy.contains("front (PNG, ") && pharmacy.contains("back (JPEG, "))
        try cli.ok(["show", "Pharmacy", "--photo", "back", "--out", cli.home + "/back.jpg"])
        let back = try Data(contentsOf: URL(fileURLWithPath: cli.home + "/back.jpg"))
        #expect(Array(back.prefix(3)) == [0xFF, 0xD8, 0xFF])

        try cli.ok(["export", "--to", "catima", "--plaintext", cli.home + "/cards.zip"])
        let other = try CLI()
        try other.ok(["init"])
        try other.ok(["import", "--from", "catima", cli.home + "/cards.zip"])
        try other.ok(["show", "Pharmacy", "--photo", "back", "--out", other.home + "/back.jpg"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: other.home + "/back.jpg")) == back)
        // Python's zipfile reads the export: Catima's image names (the card's number in the export), intact.
        let script = "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; print(' '.join(sorted(z.namelist())))"
        let listed = try TestSupport.run("/usr/bin/env", ["python3", "-c", script, cli.home + "/cards.zip"])
        let names = String(decoding: listed.standardOutput, as: UTF8.self).split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(names.count == 3 && names.last == "catima.csv")
        #expect(names.dropLast().allSatisfy { $0.wholeMatch(of: /card_[0-9]+_(front|back)\.png/) != nil })
    }

    @Test("a photo syncs through a real coffer-server to a second device, and goes when its card is purged there")
    func sync() throws {
        try #require(FileManager.default.isExecutableFile(atPath: SyncCLITests.serverBinary), "build coffer-server first (swift build)")
        let server = try SyncCLITests.Server()
        try server.start()
        let passphrase = "photo meadow harbor pencil \(UUID().uuidString.prefix(6))"
        let email = "photo-\(UUID().uuidString.prefix(8).lowercased())@example.org"
        let a = try CLI()
        try a.ok(["init"])
        try a.ok(["add", "card", "Costco", "--symbology", "code128"], input: "111222333\n")
        let front = TestPhotos.jpeg(size: 300_000, seed: 77)
        try Self.write(front, a.home + "/front.jpg")
        try a.ok(["edit", "Costco", "--photo", "front", a.home + "/front.jpg"])
        try a.ok(["sync", "register", "--server", server.url, "--email", email], input: "\(passphrase)\n")

        let b = try CLI()
        try b.ok(["sync", "login", "--server", server.url, "--email", email], input: "\(passphrase)\n")
        try b.ok(["show", "Costco", "--photo", "front", "--out", b.home + "/front.jpg"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: b.home + "/front.jpg")) == Data(front))
        #expect(try SyncCLITests.names(b) == ["Costco"])

        try b.ok(["rm", "Costco", "--purge", "--yes"])
        try b.ok(["sync"])
        try a.ok(["sync"])
        #expect(try SyncCLITests.names(a).isEmpty)
        let parts = try TestSupport.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM item WHERE kind = 'card_photo' AND deleted = 0\").fetchone()[0])",
                a.vaultFile,
            ])
        #expect(parts.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
    }

    @Test("the plaintext JSON export carries the photos (read by Python's json and base64); coffer-json brings them back, refusing a bad one")
    func jsonExport() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "card", "Costco", "--symbology", "code128"], input: "111222333\n")
        let front = TestPhotos.jpeg(size: 90_000, seed: 31)
        let back = TestPhotos.png(size: 1_000, seed: 32)
        try Self.write(front, cli.home + "/front.jpg")
        try Self.write(back, cli.home + "/back.png")
        try cli.ok(["edit", "Costco", "--photo", "front", cli.home + "/front.jpg", "--photo", "back", cli.home + "/back.png"])
        let path = cli.home + "/export.json"
        try cli.ok(["export", "--format", "json", "--plaintext", path])
        let answer = try #require(try TestSupport.openSSLOracle([["op": "read_export", "path": path]]).first as? [String: Any])
        let items = try #require(answer["items"] as? [[String: Any]])
        let card = try #require(items.first?["content"] as? [String: Any])
        let photos = try #require(card["photos"] as? [[String: Any]])
        #expect(photos.map { $0["side"] as? String } == ["front", "back"])
        #expect(photos.map { $0["type"] as? String } == ["image/jpeg", "image/png"])
        #expect(photos.map { $0["image"] as? String } == [TestSupport.hex(front), TestSupport.hex(back)])

        let other = try CLI()
        try other.ok(["init"])
        try other.ok(["import", "--from", "coffer-json", path])
        try other.ok(["show", "Costco", "--photo", "back", "--out", other.home + "/back.png"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: other.home + "/back.png")) == Data(back))

        // A photo whose bytes are not the type it claims breaks its card's entry, and nothing of it is added.
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let forged = text.replacingOccurrences(of: Data(back).base64EncodedString(), with: Data(Array("GIF89a-not-an-image".utf8)).base64EncodedString())
        try forged.write(toFile: cli.home + "/forged.json", atomically: true, encoding: .utf8)
        let third = try CLI()
        try third.ok(["init"])
        let refused = try third.run(["import", "--from", "coffer-json", cli.home + "/forged.json"])
        #expect(refused.status == 65 && refused.stderr.contains("coffer: error: nothing imported from"))
        #expect(refused.stderr.contains("Costco: photo: is not a PNG or JPEG image"))
        #expect(try SyncCLITests.names(third).isEmpty)
    }
}
