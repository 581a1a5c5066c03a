import CofferBarcode
import CofferModel
import Foundation
import Testing

@testable import CofferInterop

/// Fixtures from Fixtures/pkpass/make_pkpass.py (Python's zipfile, Apple's pass.json keys).
@Suite struct PKPassTests {
    static func read(_ file: String) throws -> ImportResult {
        try PKPassImporter.read(CatimaFixtures.bytes("pkpass", file), password: nil)
    }

    @Test func importsStoreCardWithLocationsAndExpiry() throws {
        let result = try Self.read("store_card.pkpass")
        #expect(result.problems.isEmpty)
        let card = try #require(CatimaFixtures.cards(result).first)
        #expect(card.name == "Coffee Club")
        #expect(card.notes == "Coffee Club membership")
        // The unknown format listed first is skipped for the first one Coffer draws.
        #expect(card.symbology == .qr)
        #expect(card.payload == Array("MEMBER-0042-Zoë".utf8))
        #expect(card.payloadCharset == .utf8)
        #expect(card.cardNumber == "0042")
        // 2027-06-30T23:59:59+02:00 is 21:59:59 UTC.
        #expect(card.validTo == Date(timeIntervalSince1970: 1_814_392_799))
        #expect(card.metadata == ["location_1": "52.52,13.405", "location_2": "-33.8688,151.2093"])
    }

    @Test func importsLegacyBarcodeDictionary() throws {
        let result = try Self.read("legacy_barcode.pkpass")
        let card = try #require(CatimaFixtures.cards(result).first)
        #expect(card.name == "Boarding pass")
        #expect(card.notes == nil)
        #expect(card.symbology == .pdf417)
        #expect(card.payloadCharset == .latin1)
        #expect(card.payload == Array("M1DOE/JANE EABC123".utf8))
        #expect(card.validTo == nil)
    }

    @Test func importsCode128() throws {
        let card = try #require(CatimaFixtures.cards(Self.read("code128.pkpass")).first)
        #expect(card.symbology == .code128)
        #expect(card.payload == Array("HW-778899".utf8))
    }

    @Test func passWithoutBarcodeIsACardShownByItsSerialNumber() throws {
        let result = try Self.read("no_barcode.pkpass")
        #expect(result.problems.isEmpty)
        let card = try #require(CatimaFixtures.cards(result).first)
        #expect(card.name == "Museum" && card.symbology == nil)
        #expect(card.payload == Array("0001".utf8) && card.payloadCharset == .utf8)
        #expect(try card.barcode() == nil)
    }

    @Test func passWithNeitherBarcodeNorSerialNumberIsAProblem() throws {
        var writer = ZipWriter()
        writer.add("pass.json", Array(#"{"organizationName": "Museum", "barcodes": [{"format": "PKBarcodeFormatQR"}]}"#.utf8))
        let result = try PKPassImporter.read(writer.finish(), password: nil)
        #expect(result.items.isEmpty)
        #expect(result.problems == [ImportProblem(entry: "Museum", reason: "neither a barcode nor a serial number")])
    }

    @Test(arguments: [
        ("no_pass_json.pkpass", "the pass has no pass.json"),
        ("bad_json.pkpass", "pass.json is not valid JSON"),
        ("wrong_types.pkpass", "the pass has neither organizationName nor description"),
    ])
    func malformedPassesAreRefused(file: String, reason: String) throws {
        #expect(throws: InteropError.malformedFile(reason)) { try Self.read(file) }
    }

    @Test func notAZipIsRefused() {
        #expect(throws: InteropError.malformedFile("no ZIP end-of-central-directory record")) {
            try PKPassImporter.read(Array(String(repeating: "{}", count: 20).utf8), password: nil)
        }
    }

    @Test func hostileZipIsRefused() throws {
        let data = try CatimaFixtures.bytes("catima", "traversal.zip")
        #expect(throws: InteropError.self) { try PKPassImporter.read(data, password: nil) }
    }

    @Test func badLocationsAndDatesAreProblemsNotFailures() throws {
        var writer = ZipWriter()
        let json = """
            {"organizationName": "Shop", "expirationDate": "soon",
             "locations": [{"latitude": 400, "longitude": 1}, {"latitude": "x"}, {"latitude": 1.5, "longitude": 2}],
             "barcodes": [{"format": "PKBarcodeFormatAztec", "message": "A1", "messageEncoding": "iso-8859-1"}]}
            """
        writer.add("pass.json", Array(json.utf8))
        let result = try PKPassImporter.read(writer.finish(), password: nil)
        let card = try #require(CatimaFixtures.cards(result).first)
        #expect(card.symbology == .aztec)
        #expect(card.metadata == ["location_3": "1.5,2.0"])
        #expect(
            result.problems.map(\.reason) == [
                "location 1 is not a valid position", "location 2 is not a valid position",
                "expirationDate is not a W3C date; ignored",
            ])
        #expect(!result.problems.map(\.description).joined().contains("400"))
    }
}
