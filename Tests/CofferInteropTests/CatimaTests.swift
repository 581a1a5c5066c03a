import CofferBarcode
import CofferModel
import CofferTestSupport
import Foundation
import Testing

@testable import CofferInterop

/// Fixtures from Fixtures/catima/make_catima.py (Python's zipfile, Catima's published export layout).
enum CatimaFixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func bytes(_ format: String, _ name: String) throws -> [UInt8] {
        let url = root.appendingPathComponent(format).appendingPathComponent(name)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            Issue.record("fixture \(format)/\(name) is missing: run its make_\(format).py script")
            throw CocoaError(.fileNoSuchFile)
        }
        return Array(data)
    }

    static func cards(_ result: ImportResult) -> [Card] {
        result.items.compactMap { if case .card(let card) = $0 { card } else { nil } }
    }
}

@Suite(.offCooperativePool) struct CatimaTests {
    @Test(arguments: ["catima_v2.zip", "catima_v2_stored.zip"])
    func importsVersion2(file: String) throws {
        let result = try CatimaImporter.read(CatimaFixtures.bytes("catima", file), password: nil)
        let cards = CatimaFixtures.cards(result)
        #expect(cards.map(\.name) == ["Pharmacy", "Café Ünter", "Library", "Cinema", "Gym", "Bakery"])
        #expect(cards[3].symbology == .code93)
        var problems: [ImportProblem] = []
        if file == "catima_v2.zip" {
            // Images that are not PNG or JPEG, over 2 MiB, or icons are reported and left out; the cards stay.
            problems.insert(ImportProblem(entry: "Café Ünter", reason: "its front image was left out: photo: is not a PNG or JPEG image"), at: 0)
            problems += [
                ImportProblem(entry: "Gym", reason: "its back image is larger than 2 MiB and was left out"),
                ImportProblem(entry: "Bakery", reason: "its icon image was left out (Coffer keeps the front and back photos)"),
            ]
            #expect(result.photos.keys.sorted() == [0])
            #expect(result.photos[0].map { PhotoType.detect($0[.front] ?? Data()) } == .png)
            #expect(result.photos[0].map { PhotoType.detect($0[.back] ?? Data()) } == .jpeg)
        } else {
            #expect(result.photos.isEmpty)
        }
        #expect(result.problems == problems)
        guard cards.count == 6 else { return }

        let pharmacy = cards[0]
        #expect(pharmacy.symbology == .ean13)
        #expect(pharmacy.payload == Array("4006381333931".utf8))
        #expect(pharmacy.payloadCharset == .utf8)
        #expect(pharmacy.cardNumber == nil)
        #expect(pharmacy.tags == ["Health"])
        #expect(pharmacy.validFrom == Date(timeIntervalSince1970: 1_601_510_400))
        #expect(pharmacy.validTo == Date(timeIntervalSince1970: 1_893_456_000))
        #expect(pharmacy.notes == nil)

        let cafe = cards[1]
        #expect(cafe.symbology == .qr)
        // Empty barcodeencoding means ISO-8859-1: "É" is the single byte 0xC9.
        #expect(cafe.payload == Array("CAF".utf8) + [0xC9] + Array("-5678".utf8))
        #expect(cafe.payloadCharset == .latin1)
        #expect(cafe.cardNumber == "1234 5678")
        #expect(cafe.tags == ["Health", "Food, Drink"])
        #expect(cafe.validFrom == nil)
        // Catima's own test data holds seconds here, and Catima reads every date as milliseconds (January 1970):
        // so does Coffer, so a card comes back as Catima shows it.
        #expect(cafe.validTo == Date(timeIntervalSince1970: 1_618_053.234))
        #expect(cafe.notes == "Line one\r\n\r\nLine \"three\"")
        #expect(cafe.metadata == ["balance": "12.50", "balance_currency": "EUR", "starred": "true"])

        // A card without a barcode, shown by its number.
        let library = cards[2]
        #expect(library.symbology == nil)
        #expect(library.payload == Array("L-998877".utf8))
        #expect(library.payloadCharset == .latin1)
        #expect(library.cardNumber == nil)

        #expect(cards[4].symbology == .code128)
        #expect(cards[5].symbology == .upcA)
        #expect(cards[5].tags.isEmpty)
    }

    @Test func importsBareVersion1CSV() throws {
        let result = try CatimaImporter.read(CatimaFixtures.bytes("catima", "catima_v1.csv"), password: nil)
        let cards = CatimaFixtures.cards(result)
        #expect(cards.count == 2)
        #expect(cards.first?.name == "Old Store")
        #expect(cards.first?.symbology == .code39)
        #expect(cards.first?.payload == Array("12345678".utf8))
        #expect(cards.first?.notes == "An old note")
        #expect(cards.last?.name == "Text Only")
        #expect(cards.last?.symbology == nil)
        #expect(cards.last?.payload == Array("987".utf8))
        #expect(result.problems.isEmpty)
    }

    @Test(arguments: [
        ("QR_CODE", Symbology.qr, "HELLO"), ("CODE_128", .code128, "ABC-1"), ("EAN_13", .ean13, "4006381333931"),
        ("UPC_A", .upcA, "036000291452"), ("PDF_417", .pdf417, "PDF"), ("AZTEC", .aztec, "AZ"),
        ("DATA_MATRIX", .dataMatrix, "DM"), ("CODE_39", .code39, "CODE39"), ("ITF", .itf, "12345678"),
        ("CODABAR", .codabar, "A1234B"), ("EAN_8", .ean8, "96385074"), ("UPC_E", .upcE, "01234565"),
    ])
    func mapsEveryBarcodeType(name: String, symbology: Symbology, payload: String) throws {
        let csv = "_id,store,cardid,barcodetype\n1,Shop,\(payload),\(name)\n"
        let result = try CatimaImporter.read(Array(csv.utf8), password: nil)
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(CatimaFixtures.cards(result).first?.symbology == symbology)
        #expect(CatimaBarcodeType.name(for: symbology) == name)
    }

    static func sampleCards() throws -> [Card] {
        [
            try Card(
                name: "Pharmacy", symbology: .ean13, payload: Array("4006381333931".utf8), tags: ["Health", "A, B"],
                validFrom: Date(timeIntervalSince1970: 1_601_510_400), validTo: Date(timeIntervalSince1970: 1_893_456_000),
                notes: "multi\nline \"quoted\", with comma\r\n\r\nand a blank line",
                metadata: ["balance": "3.5", "balance_currency": "USD"]),
            try Card(
                name: "Café", symbology: .qr, payload: Array("Zoë ✓".utf8), cardNumber: "0042", tags: ["Food"]),
            try Card(name: "Latin", symbology: .code128, payload: [0x41, 0xE9, 0x42], payloadCharset: .latin1),
            try Card(name: "Library", symbology: nil, payload: Array("L-998877".utf8), payloadCharset: .latin1),
        ]
    }

    @Test func exportRoundTrips() throws {
        let cards = try Self.sampleCards()
        let result = try CatimaImporter.read(CatimaExporter.export(cards), password: nil)
        #expect(result.problems.isEmpty)
        #expect(CatimaFixtures.cards(result) == cards)
    }

    @Test("photos travel through an export and back, named as Catima names them")
    func exportCarriesPhotos() throws {
        let cards = try Self.sampleCards()
        let photos: [Int: [PhotoSide: Data]] = [
            0: [.front: Data(TestPhotos.png(size: 5_000)), .back: Data(TestPhotos.jpeg(size: 300))],
            3: [.back: Data(TestPhotos.png(size: 100, seed: 3))],
        ]
        let zip = CatimaExporter.export(cards, photos: photos)
        let archive = try ZipArchive(zip)
        #expect(archive.entries.map(\.name) == ["catima.csv", "card_1_front.png", "card_1_back.png", "card_4_back.png"])
        let result = try CatimaImporter.read(zip, password: nil)
        #expect(result.problems.isEmpty)
        #expect(result.photos == photos)
    }

    /// Python's zipfile and csv modules (not Coffer's reader) check the export: CRCs, the entry name, and the
    /// version-2 sections with the card columns Catima's importer expects.
    @Test func exportReadsInPython() throws {
        let directory = try TestSupport.temporaryDirectory("catima-export")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/export.zip"
        try Data(CatimaExporter.export(Self.sampleCards())).write(to: URL(fileURLWithPath: path))
        let script = """
            import csv, io, json, sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None and z.namelist() == ["catima.csv"]
            raw = z.read("catima.csv").decode("utf-8")
            assert "\\r\\n" in raw
            print(json.dumps(list(csv.reader(io.StringIO(raw, newline="")))))
            """
        let python = ProcessInfo.processInfo.environment["COFFER_PYTHON"] ?? "python3"
        let run = try TestSupport.run("/usr/bin/env", [python, "-c", script, path])
        try #require(run.status == 0, "python3 could not read the export (install python3): \(run.stderr.suffix(300))")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput)) as? [[String]])
        let header =
            "_id,store,note,validfrom,expiry,balance,balancetype,cardid,barcodeid,barcodetype,barcodeencoding,"
            + "headercolor,starstatus,lastused,archive"
        #expect(rows.first == ["2"])
        #expect(rows.dropFirst().first == [])
        #expect(Array(rows[2..<7]) == [["_id"], ["Health"], ["A, B"], ["Food"], []])
        #expect(rows[7] == header.split(separator: ",").map(String.init))
        #expect(
            rows[8] == [
                "1", "Pharmacy", "multi\nline \"quoted\", with comma\r\n\r\nand a blank line", "1601510400000",
                "1893456000000", "3.5", "USD", "4006381333931", "", "EAN_13", "UTF-8", "", "0", "0", "0",
            ])
        #expect(rows[9] == ["2", "Café", "", "", "", "0", "", "0042", "Zoë ✓", "QR_CODE", "UTF-8", "", "0", "0", "0"])
        #expect(rows[10] == ["3", "Latin", "", "", "", "0", "", "AéB", "", "CODE_128", "ISO-8859-1", "", "0", "0", "0"])
        // A card without a barcode: its number in cardid, no barcode type (as Catima writes one).
        #expect(rows[11] == ["4", "Library", "", "", "", "0", "", "L-998877", "", "", "ISO-8859-1", "", "0", "0", "0"])
        #expect(Array(rows[12...]) == [[], ["cardId", "groupId"], ["1", "Health"], ["1", "A, B"], ["2", "Food"]])
    }

    @Test(arguments: [
        ("traversal.zip", "a ZIP entry name is absolute or climbs out of the archive"),
        ("absolute.zip", "a ZIP entry name is absolute or climbs out of the archive"),
        ("bomb_declared.zip", "the ZIP entries expand to more than 67108864 bytes"),
        ("bomb_understated.zip", "a ZIP entry's deflate data is damaged or does not match its size"),
    ])
    func refusesHostileZips(file: String, reason: String) throws {
        let data = try CatimaFixtures.bytes("catima", file)
        #expect(throws: InteropError.malformedFile(reason)) { try CatimaImporter.read(data, password: nil) }
    }

    @Test func refusesMalformedCSV() {
        let cases: [(String, InteropError)] = [
            ("", .malformedFile("the CSV is empty")),
            ("3\r\n\r\n_id\r\n", .unsupportedVersion("3")),
            ("2\r\n\r\n_id\r\n", .malformedFile("the backup has no card section")),
            ("_id,store\n1,\"unclosed\n", .malformedFile("a quoted CSV field starting on line 2 is not closed")),
            ("hello,world\n", .malformedFile("the first line is neither a version nor a header")),
            ("_id,store\n1,Shop\n", .malformedFile("the card table has no cardid column")),
        ]
        for (csv, error) in cases {
            #expect(throws: error) { try CatimaImporter.read(Array(csv.utf8), password: nil) }
        }
    }

    @Test func reportsBadCardsWithoutTheirPayload() throws {
        let csv = "_id,store,cardid,barcodetype\nx,NoID,1,QR_CODE\n2,BadEAN,SECRET123,EAN_13\n3,,1,QR_CODE\n"
        let result = try CatimaImporter.read(Array(csv.utf8), password: nil)
        #expect(result.items.isEmpty)
        #expect(result.problems.count == 3)
        #expect(result.problems.first?.reason == "the card id is not a number")
        #expect(!result.problems.map(\.description).joined().contains("SECRET123"))
    }

    @Test func refusesOversizedInput() {
        let data = [UInt8](repeating: 0x41, count: importSizeLimit + 1)
        #expect(throws: InteropError.tooLarge(limit: importSizeLimit)) { try CatimaImporter.read(data, password: nil) }
    }

    @Test("colour, star, last use and archive come in from Catima and go back out to it; a short row refuses the file")
    func catimaFieldsBothWays() throws {
        let header =
            "_id,store,note,validfrom,expiry,balance,balancetype,cardid,barcodeid,barcodetype,barcodeencoding,"
            + "headercolor,starstatus,lastused,archive"
        let csv =
            "2\r\n\r\n_id\r\n\r\n\(header)\r\n"
            + "1,Gym,,1601510400000,,0,,5432,,QR_CODE,,-10902850,1,1766674620,1\r\n"
            + "2,Shop,,,,0,,99,,CODE_128,,,0,0,0\r\n\r\ncardId,groupId\r\n"
        let result = try CatimaImporter.read(Array(csv.utf8), password: nil)
        let cards = CatimaFixtures.cards(result)
        #expect(cards.count == 2)
        let gym = try #require(cards.first)
        #expect(gym.metadata == [CardMetadata.color: "#59A2BE", CardMetadata.starred: "true", CardMetadata.lastUsedAt: "1766674620000"])
        #expect(gym.archivedAt == Date(timeIntervalSince1970: 1_766_674_620))
        #expect(gym.validFrom == Date(timeIntervalSince1970: 1_601_510_400))
        #expect(cards[1].metadata.isEmpty && cards[1].archivedAt == nil)
        #expect(CardMetadata.argb(hexColor: CardMetadata.hexColor(argb: -10_902_850)) == -10_902_850)

        // Out and back in: the same fields.
        let exported = CatimaExporter.export(cards)
        let again = CatimaFixtures.cards(try CatimaImporter.read(exported, password: nil))
        #expect(again.map(\.metadata) == cards.map(\.metadata))
        #expect(again.map { $0.archivedAt != nil } == [true, false])

        // A row cut short (here the last three columns) is refused as Catima refuses it: nothing is imported.
        let short = "_id,store,cardid,barcodeid,barcodetype,starstatus,lastused,archive\n1,Shop,1234,5432,QR_CODE\n"
        #expect(throws: InteropError.malformedFile("line 2 has 5 of the table's 8 columns: the file is cut short or damaged")) {
            try CatimaImporter.read(Array(short.utf8), password: nil)
        }
    }

    @Test("dates at the ends of 64 bits (only a hostile file holds them) import without trapping")
    func extremeDates() throws {
        let header = "_id,store,validfrom,expiry,cardid,barcodetype,lastused,archive"
        let csv = "\(header)\n1,Far,9223372036854775807,-9223372036854775808,1,QR_CODE,9223372036854775807,1\n"
        let cards = CatimaFixtures.cards(try CatimaImporter.read(Array(csv.utf8), password: nil))
        let far = try #require(cards.first)
        // The last use does not fit in milliseconds: it is dropped, not wrapped.
        #expect(far.metadata[CardMetadata.lastUsedAt] == nil)
        #expect(far.archivedAt != nil)
        #expect(far.validTo == nil)
        _ = CatimaExporter.export(cards)
    }
}
