import CofferBarcode
import CofferCrypto
import CofferModel
import Foundation

/// Catima's export names (ZXing's `BarcodeFormat`) for the symbologies both apps draw.
enum CatimaBarcodeType {
    static let toSymbology: [String: Symbology] = [
        "CODE_128": .code128, "QR_CODE": .qr, "EAN_13": .ean13, "UPC_A": .upcA, "PDF_417": .pdf417,
        "AZTEC": .aztec, "DATA_MATRIX": .dataMatrix, "CODE_39": .code39, "ITF": .itf, "CODABAR": .codabar,
        "EAN_8": .ean8, "UPC_E": .upcE, "CODE_93": .code93,
    ]

    /// Catima has no GS1 or ITF-14 variants: those export as the plain symbology that draws the same bars.
    static func name(for symbology: Symbology) -> String {
        switch symbology {
        case .qr: return "QR_CODE"
        case .code128, .gs1_128: return "CODE_128"
        case .ean13: return "EAN_13"
        case .ean8: return "EAN_8"
        case .upcA: return "UPC_A"
        case .upcE: return "UPC_E"
        case .code39: return "CODE_39"
        case .code93: return "CODE_93"
        case .itf, .itf14: return "ITF"
        case .codabar: return "CODABAR"
        case .pdf417: return "PDF_417"
        case .aztec: return "AZTEC"
        case .dataMatrix, .gs1DataMatrix: return "DATA_MATRIX"
        }
    }
}

/// Reads Catima (CatimaLoyalty/Android) backups: the zip holding `catima.csv` version 2, or the older bare CSV
/// (version 1). A card with no barcode type is a card without a barcode. Card images in the zip
/// (`card_<id>_front.png`, `card_<id>_back.png`) become the card's photos when they are PNG or JPEG (by their first
/// bytes) of at most 2 MiB; others, and icons (`card_<id>_icon.png`, which Coffer does not keep), are reported and
/// left out. Password-protected (WinZip AES) backups are refused.
public enum CatimaImporter: Importer {
    public static let formatName = "catima"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        guard data.count <= importSizeLimit else { throw .tooLarge(limit: importSizeLimit) }
        let csv: [UInt8]
        var images: ZipArchive?
        if ZipArchive.looksLikeZip(data) {
            var archive = try ZipArchive(data)
            // Catima encrypts its export with the password the user gives (zip4j's WinZip AES).
            if archive.isEncrypted, password == nil { throw .passwordRequired }
            archive.password = password
            images = archive
            guard let entry = archive.entry(named: "catima.csv") else {
                throw .malformedFile("the zip has no catima.csv")
            }
            csv = try archive.contents(of: entry)
            guard csv.count <= importSizeLimit else { throw .tooLarge(limit: importSizeLimit) }
        } else {
            csv = data
        }
        var body = csv[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        let records = try ImportCSV.records(body)
        guard let first = records.first?.fields.first else { throw .malformedFile("the CSV is empty") }
        if first == "_id" { return try readCards(records, groups: [:], images: images) }
        let version = String(first.prefix { $0.isNumber })
        guard !version.isEmpty else { throw .malformedFile("the first line is neither a version nor a header") }
        guard version == "2" else { throw .unsupportedVersion(version) }
        return try readVersion2(Array(records.dropFirst()), images: images)
    }

    /// Version 2: sections separated by empty records, each introduced by its header (groups, cards, card–group
    /// links).
    private static func readVersion2(_ records: [CSV.Record], images: ZipArchive?) throws(InteropError) -> ImportResult {
        var sections: [[CSV.Record]] = []
        var current: [CSV.Record] = []
        for record in records {
            if record.fields == [""] {
                if !current.isEmpty { sections.append(current) }
                current = []
            } else {
                current.append(record)
            }
        }
        if !current.isEmpty { sections.append(current) }

        var cardSection: [CSV.Record]?
        var links: [String: [String]] = [:]
        for section in sections {
            guard let header = section.first?.fields else { continue }
            switch header.first {
            case "_id" where header.count == 1:
                break  // The group list: a group's name is its id, and the links below name it again.
            case "_id":
                cardSection = section
            case "cardId":
                for link in section.dropFirst() where link.fields.count >= 2 {
                    links[link.fields[0], default: []].append(link.fields[1])
                }
            default:
                throw .malformedFile("an unknown section starts on line \(section[0].line)")
            }
        }
        guard let cardSection else { throw .malformedFile("the backup has no card section") }
        return try readCards(cardSection, groups: links, images: images)
    }

    /// Reads a card table (header record first); `groups` maps a card's `_id` to its group names, `images` is the
    /// backup's zip (nil for a bare CSV).
    private static func readCards(
        _ records: [CSV.Record], groups: [String: [String]], images: ZipArchive?
    ) throws(InteropError)
        -> ImportResult
    {
        guard let header = records.first?.fields else { throw .malformedFile("the card table has no header") }
        var column: [String: Int] = [:]
        for (index, name) in header.enumerated() where column[name] == nil { column[name] = index }
        for required in ["_id", "store", "cardid"] where column[required] == nil {
            throw .malformedFile("the card table has no \(required) column")
        }
        var result = ImportResult()
        for record in records.dropFirst() {
            // Catima refuses a short row and imports nothing (its CSV reader throws on the missing column): a row cut
            // short would otherwise become a wrong card, its barcode read from the card number.
            guard record.fields.count >= header.count else {
                throw .malformedFile(
                    "line \(record.line) has \(record.fields.count) of the table's \(header.count) columns: the file is cut short or damaged")
            }
            func field(_ name: String) -> String {
                guard let index = column[name], index < record.fields.count else { return "" }
                return record.fields[index]
            }
            let store = field("store")
            let label = store.isEmpty ? "card on line \(record.line)" : store
            guard Int(field("_id")) != nil else {
                result.problems.append(ImportProblem(entry: label, reason: "the card id is not a number"))
                continue
            }
            // An empty type is a card without a barcode, shown by its number.
            let type = field("barcodetype")
            let symbology = CatimaBarcodeType.toSymbology[type]
            guard type.isEmpty || symbology != nil else {
                result.problems.append(ImportProblem(entry: label, reason: "barcode type \(type) is not supported"))
                continue
            }
            let cardID = field("cardid")
            guard !cardID.isEmpty else {
                result.problems.append(ImportProblem(entry: label, reason: "the card number is empty"))
                continue
            }
            let barcodeID = field("barcodeid")
            let text = barcodeID.isEmpty ? cardID : barcodeID
            // Catima's default, and what its database migration forced on old cards, is ISO-8859-1.
            let (payload, charset) = payloadBytes(text, encoding: field("barcodeencoding"))
            var metadata: [String: String] = [:]
            let balance = field("balance")
            if !balance.isEmpty, Decimal(string: balance) != 0 {
                metadata["balance"] = balance
                let currency = field("balancetype")
                if !currency.isEmpty { metadata["balance_currency"] = currency }
            }
            if let argb = Int32(field("headercolor").trimmingCharacters(in: .whitespaces)) {
                metadata[CardMetadata.color] = CardMetadata.hexColor(argb: argb)
            }
            if field("starstatus") == "1" { metadata[CardMetadata.starred] = "true" }
            // Catima writes the last use in seconds, its dates in milliseconds.
            let lastUsed = Int64(field("lastused").trimmingCharacters(in: .whitespaces)) ?? 0
            if lastUsed > 0, case (let milliseconds, false) = lastUsed.multipliedReportingOverflow(by: 1000) {
                metadata[CardMetadata.lastUsedAt] = String(milliseconds)
            }
            let card: Card
            do {
                card = try Card(
                    name: store, symbology: symbology, payload: payload, payloadCharset: charset,
                    cardNumber: barcodeID.isEmpty || barcodeID == cardID ? nil : cardID,
                    tags: groups[field("_id")] ?? [], validFrom: date(field("validfrom")),
                    validTo: date(field("expiry")),
                    archivedAt: field("archive") == "1" ? UnixTime.date(seconds: max(lastUsed, 0)) : nil,
                    notes: field("note").isEmpty ? nil : field("note"), metadata: metadata)
            } catch {
                result.problems.append(ImportProblem(entry: label, reason: error.description))
                continue
            }
            if let images {
                let photos = try self.photos(of: field("_id"), in: images, label: label, problems: &result.problems)
                if !photos.isEmpty { result.photos[result.items.count] = photos }
            }
            result.items.append(.card(card))
        }
        return result
    }

    /// The front and back images of the card whose `_id` is `id`, each checked (PNG or JPEG, at most 2 MiB); an
    /// image that fails, and an icon, is reported in `problems` and left out.
    private static func photos(
        of id: String, in archive: ZipArchive, label: String, problems: inout [ImportProblem]
    ) throws(InteropError) -> [PhotoSide: Data] {
        var photos: [PhotoSide: Data] = [:]
        for side in PhotoSide.allCases {
            guard let entry = archive.entry(named: "card_\(id)_\(side.rawValue).png") else { continue }
            guard entry.uncompressedSize <= CardPhoto.maximumBytes else {
                problems.append(ImportProblem(entry: label, reason: "its \(side.rawValue) image is larger than 2 MiB and was left out"))
                continue
            }
            let image = try archive.contents(of: entry)
            do {
                _ = try CardPhoto.checkedType(of: image)
                photos[side] = Data(image)
            } catch {
                problems.append(ImportProblem(entry: label, reason: "its \(side.rawValue) image was left out: \(error.description)"))
            }
        }
        if archive.entry(named: "card_\(id)_icon.png") != nil {
            problems.append(ImportProblem(entry: label, reason: "its icon image was left out (Coffer keeps the front and back photos)"))
        }
        return photos
    }

    /// The payload's bytes in the card's charset. Text that ISO-8859-1 cannot hold is kept as UTF-8.
    private static func payloadBytes(_ text: String, encoding: String) -> ([UInt8], PayloadCharset) {
        if encoding.uppercased().replacingOccurrences(of: "_", with: "-") == "UTF-8" {
            return (Array(text.utf8), .utf8)
        }
        let scalars = text.unicodeScalars
        guard scalars.allSatisfy({ $0.value <= 0xFF }) else { return (Array(text.utf8), .utf8) }
        return (scalars.map { UInt8($0.value) }, .latin1)
    }

    /// Catima writes milliseconds, but some files hold seconds: a value below 10^11 (March 1973 in milliseconds) is
    /// read as seconds.
    /// A date as Catima reads it: milliseconds since 1970 (`new Date(long)`), whatever its size.
    private static func date(_ field: String) -> Date? {
        guard let value = Int64(field.trimmingCharacters(in: .whitespaces)), value > 0 else { return nil }
        return UnixTime.date(milliseconds: value)
    }
}

/// Writes cards as a Catima version-2 backup (an unencrypted zip holding `catima.csv`) that Catima imports.
public enum CatimaExporter {
    /// The backup's bytes. Tags become groups; binary payloads travel as ISO-8859-1 text, one character per byte;
    /// a card without a barcode has an empty barcode type, as in Catima. `photos[i]` are the images of `cards[i]`,
    /// written as `card_<id>_<side>.png` (Catima's names; it decodes JPEG under that name too).
    public static func export(_ cards: [Card], photos: [Int: [PhotoSide: Data]] = [:]) -> [UInt8] {
        var groups: [String] = []
        for card in cards { for tag in card.tags where !groups.contains(tag) { groups.append(tag) } }

        var lines = ["2", "", "_id"]
        lines += groups.map(field)
        lines.append("")
        lines.append(
            "_id,store,note,validfrom,expiry,balance,balancetype,cardid,barcodeid,barcodetype,barcodeencoding,"
                + "headercolor,starstatus,lastused,archive")
        for (index, card) in cards.enumerated() {
            let text =
                card.payloadCharset == .utf8
                ? String(decoding: card.payload, as: UTF8.self)
                : String(String.UnicodeScalarView(card.payload.map { Unicode.Scalar($0) }))
            let cardID = card.cardNumber ?? text
            let balance = card.metadata["balance"] ?? "0"
            let columns: [String] = [
                String(index + 1), card.name, card.notes ?? "",
                milliseconds(card.validFrom), milliseconds(card.validTo),
                balance, card.metadata["balance_currency"] ?? "", cardID, card.cardNumber == nil ? "" : text,
                card.symbology.map { CatimaBarcodeType.name(for: $0) } ?? "", card.payloadCharset == .utf8 ? "UTF-8" : "ISO-8859-1",
                card.metadata[CardMetadata.color].flatMap(CardMetadata.argb(hexColor:)).map(String.init) ?? "",
                card.metadata[CardMetadata.starred] == "true" ? "1" : "0",
                card.metadata[CardMetadata.lastUsedAt].flatMap { Int64($0) }.map { String($0 / 1000) } ?? "0",
                card.archivedAt == nil ? "0" : "1",
            ]
            lines.append(columns.map(field).joined(separator: ","))
        }
        lines.append("")
        lines.append("cardId,groupId")
        for (index, card) in cards.enumerated() {
            for tag in card.tags { lines.append("\(index + 1),\(field(tag))") }
        }
        let csv = lines.joined(separator: "\r\n") + "\r\n"
        var writer = ZipWriter()
        writer.add("catima.csv", Array(csv.utf8))
        for index in cards.indices {
            for side in PhotoSide.allCases {
                if let image = photos[index]?[side] { writer.add("card_\(index + 1)_\(side.rawValue).png", [UInt8](image)) }
            }
        }
        return writer.finish()
    }

    private static func milliseconds(_ date: Date?) -> String {
        guard let date else { return "" }
        return String(UnixTime.milliseconds(date))
    }

    /// RFC 4180 quoting, only where needed (as Catima's writer does).
    private static func field(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: { ",\"\n\r".unicodeScalars.contains($0) }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
