import CofferPlatform
import CofferTestSupport
import Foundation
import GRDB
import Testing

@Suite("coffer import and export with other apps", .offCooperativePool)
struct CLIInteropTests {
    let fixtures = TestSupport.repositoryRoot.appendingPathComponent("Tests/CofferInteropTests/Fixtures").path

    @Test("Import an encrypted Aegis vault, skip duplicates on a second import, and go back to Aegis and otpauth")
    func aegisRoundTrip() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        #expect(try cli.run(["import", "--from", "aegis", fixtures + "/aegis/encrypted_v3.json"], input: "wrong password\n").status == 77)
        #expect(try cli.ok(["list"]).stdout.isEmpty)
        let first = try cli.ok(["import", "--from", "aegis", fixtures + "/aegis/encrypted_v3.json"], input: "coffer test passphrase\n")
        #expect(first.stderr.contains("Imported"))
        let count = try #require(try JSONSerialization.jsonObject(with: Data(try cli.ok(["list", "--json"]).standardOutput)) as? [Any]).count
        #expect(count > 3)
        let again = try cli.ok(["import", "--from", "aegis", fixtures + "/aegis/encrypted_v3.json"], input: "coffer test passphrase\n")
        #expect(again.stderr.contains("Imported 0 items") && again.stderr.contains("Skipped"))

        let aegisFile = cli.home + "/out.aegis.json"
        try cli.ok(["export", "--to", "aegis", aegisFile], input: "export pw\n")
        #expect(try cli.run(["export", "--to", "otpauth"]).status == 64)
        let uris = try cli.ok(["export", "--to", "otpauth", "--plaintext"])
        #expect(uris.stderr.contains("coffer: warning:"))
        #expect(uris.stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("otpauth://") })

        let other = try CLI()
        try other.ok(["init"])
        try other.ok(["import", "--from", "aegis", aegisFile], input: "export pw\n")
        let back = try #require(try JSONSerialization.jsonObject(with: Data(try other.ok(["list", "--json"]).standardOutput)) as? [Any]).count
        #expect(back == count)
        // The same tokens give the same codes (read twice in case a period ended between the two calls).
        func codes(_ cli: CLI) throws -> [String: String] {
            let lines = try #require(try JSONSerialization.jsonObject(with: Data(try cli.ok(["code", "--json"]).standardOutput)) as? [[String: Any]])
            return Dictionary(lines.map { ($0["name"] as? String ?? "", $0["code"] as? String ?? "") }, uniquingKeysWith: { first, _ in first })
        }
        var matched = try codes(cli) == codes(other)
        if !matched { matched = try codes(cli) == codes(other) }
        #expect(matched)
        let google = try cli.ok(["export", "--to", "google", "--plaintext", "--qr", "--no-color"])
        #expect(google.stdout.hasPrefix("otpauth-migration://offline?data="))
        #expect(google.stderr.contains("QR code 1 of") && google.stderr.contains("▀"))
        try google.stdout.write(toFile: cli.home + "/google.txt", atomically: true, encoding: .utf8)
        let third = try CLI()
        try third.ok(["init"])
        try third.ok(["import", "--from", "google", cli.home + "/google.txt"])
        #expect(try third.ok(["list"]).stdout.split(separator: "\n").count > 1)
        #expect(try cli.run(["import", "--from", "nope", aegisFile]).status == 64)
        #expect(try cli.run(["import", aegisFile]).status == 64)
    }

    @Test("A card without a barcode: added with --symbology none, shown by its number, never drawn, and carried by every export")
    func cardWithoutBarcode() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "card", "Library", "--symbology", "none", "--tag", "books"], input: "L-998877\n")
        let shown = try cli.ok(["show", "Library"]).stdout
        #expect(shown.contains("Barcode:") && shown.contains("Number:") && shown.contains("L-998877"))
        #expect(shown.contains("This card has no barcode: show its number, L-998877."))
        #expect(!shown.contains("Symbology"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(try cli.ok(["show", "Library", "--json"]).standardOutput)) as? [String: Any])
        #expect(json["symbology"] == nil && json["payload"] as? String == "L-998877")

        let drawn = try cli.run(["barcode", "Library", "--png", cli.home + "/library.png"])
        #expect(drawn.status == 65)
        #expect(drawn.stderr == "coffer: error: this card has no barcode: it is shown by its number (`coffer show` prints it)\n")
        #expect(!FileManager.default.fileExists(atPath: cli.home + "/library.png"))
        #expect(try cli.run(["add", "card", "X", "--symbology", "nothing"], input: "1\n").status == 64)

        // The JSON export leaves barcode_type out, and reads back into a card without a barcode.
        let export = try cli.ok(["export", "--format", "json", "--plaintext"]).stdout
        let document = try #require(try JSONSerialization.jsonObject(with: Data(export.utf8)) as? [String: Any])
        let card = try #require((document["cards"] as? [[String: Any]])?.first)
        #expect(card["barcode_type"] == nil && card["payload"] as? String == "L-998877")
        try Data(export.utf8).write(to: URL(fileURLWithPath: cli.home + "/export.json"))
        try cli.ok(["export", "--to", "catima", "--plaintext", cli.home + "/cards.zip"])
        for (format, file) in [("coffer-json", "export.json"), ("catima", "cards.zip")] {
            let other = try CLI()
            try other.ok(["init"])
            try other.ok(["import", "--from", format, cli.home + "/" + file])
            let back = try #require(try JSONSerialization.jsonObject(with: Data(try other.ok(["show", "Library", "--json"]).standardOutput)) as? [String: Any])
            #expect(back["symbology"] == nil && back["payload"] as? String == "L-998877", "\(format)")
        }

        // A barcode can be given to it, and taken away again.
        try cli.ok(["edit", "Library", "--symbology", "code128"])
        try cli.ok(["barcode", "Library", "--png", cli.home + "/library.png"])
        try cli.ok(["edit", "Library", "--symbology", "none"])
        #expect(try cli.run(["barcode", "Library"]).status == 65)
    }

    @Test("Cards go to a Catima backup and come back with their payload, symbology and tags")
    func catimaRoundTrip() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "card", "Costco", "--symbology", "code128", "--tag", "grocery"], input: "111222333\n")
        try cli.ok(["add", "card", "Library", "--symbology", "qr"], input: "https://library.example/42\n")
        #expect(try cli.run(["export", "--to", "catima", cli.home + "/cards.zip"]).status == 64)
        try cli.ok(["export", "--to", "catima", "--plaintext", cli.home + "/cards.zip"])
        let other = try CLI()
        try other.ok(["init"])
        try other.ok(["import", "--from", "catima", cli.home + "/cards.zip"])
        let costco = try other.ok(["show", "Costco", "--json"]).stdout
        #expect(costco.contains("\"payload\" : \"111222333\"") && costco.contains("code128") && costco.contains("grocery"))
        #expect(try other.ok(["show", "Library", "--json"]).stdout.contains("https://library.example/42"))
    }
}
