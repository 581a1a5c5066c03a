import CofferCrypto
import CofferBarcode
import CofferModel
import Foundation

/// Reads an Apple Wallet pass (`.pkpass`: a zip holding `pass.json`) as one card, or a `.pkpasses` bundle (a zip of
/// `.pkpass` files) as one card per pass. The signature and images are not
/// checked or kept: the pass is imported for its barcode, not trusted as coming from its issuer. A pass without a
/// barcode becomes a card without one, shown by its `serialNumber`.
public enum PKPassImporter: Importer {
    public static let formatName = "pkpass"

    static let formats: [String: Symbology] = [
        "PKBarcodeFormatQR": .qr, "PKBarcodeFormatPDF417": .pdf417, "PKBarcodeFormatAztec": .aztec,
        "PKBarcodeFormatCode128": .code128,
    ]

    /// Enough locations for any real pass (Wallet itself uses at most ten), well within the card's metadata cap.
    static let locationLimit = 10

    /// The most passes read from one `.pkpasses` bundle (Wallet shares at most ten at a time; apps bundle more).
    static let bundleLimit = 1000

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        guard data.count <= importSizeLimit else { throw .tooLarge(limit: importSizeLimit) }
        let archive = try ZipArchive(data)
        if archive.entries.contains(where: { $0.name == "pass.json" }) {
            return try read(pass: archive)
        }
        // A `.pkpasses` bundle: a zip of `.pkpass` files, each read as one pass; a damaged pass is a problem, not
        // the end of the bundle. Passes do not nest, so an inner file is only ever read as a pass.
        let passes = archive.entries.filter { $0.name.lowercased().hasSuffix(".pkpass") }
        guard !passes.isEmpty else { throw .malformedFile("the pass has no pass.json") }
        guard passes.count <= bundleLimit else { throw .malformedFile("more than \(bundleLimit) passes in the bundle") }
        var result = ImportResult()
        for entry in passes {
            do {
                let pass = try read(pass: ZipArchive(archive.contents(of: entry)))
                result.items += pass.items
                result.problems += pass.problems
            } catch {
                result.problems.append(ImportProblem(entry: entry.baseName, reason: error.description))
            }
        }
        return result
    }

    /// One pass: the card its `pass.json` describes.
    private static func read(pass archive: ZipArchive) throws(InteropError) -> ImportResult {
        guard let entry = archive.entries.first(where: { $0.name == "pass.json" }) else {
            throw .malformedFile("the pass has no pass.json")
        }
        let json = try archive.contents(of: entry)
        guard json.count <= importSizeLimit else { throw .tooLarge(limit: importSizeLimit) }
        guard let pass = JSONValue.parse(json) else { throw .malformedFile("pass.json is not valid JSON") }
        guard case .object = pass else { throw .malformedFile("pass.json is not a JSON object") }

        let organization = nonEmpty(pass["organizationName"])
        let description = nonEmpty(pass["description"])
        guard let name = organization ?? description else {
            throw .malformedFile("the pass has neither organizationName nor description")
        }
        var result = ImportResult()
        // Like Wallet and Catima: the first barcode in a format this reader knows, then the legacy dictionary.
        let candidates = (pass["barcodes"]?.arrayValue ?? []) + [pass["barcode"] ?? .null]
        let barcode = candidates.first(where: {
            $0["format"]?.stringValue.flatMap { formats[$0] } != nil && $0["message"]?.stringValue != nil
        })
        let symbology = barcode?["format"]?.stringValue.flatMap { formats[$0] }
        // A pass without a barcode becomes a card without one, shown by the pass's serial number.
        guard let message = symbology != nil ? barcode?["message"]?.stringValue : nonEmpty(pass["serialNumber"]) else {
            result.problems.append(ImportProblem(entry: name, reason: "neither a barcode nor a serial number"))
            return result
        }

        let encoding = barcode?["messageEncoding"]?.stringValue?.lowercased() ?? (symbology == nil ? "utf-8" : "iso-8859-1")
        let payload: [UInt8]
        let charset: PayloadCharset
        if ["iso-8859-1", "latin1", "iso_8859-1"].contains(encoding), message.unicodeScalars.allSatisfy({ $0.value <= 0xFF }) {
            payload = message.unicodeScalars.map { UInt8($0.value) }
            charset = .latin1
        } else {
            payload = Array(message.utf8)
            charset = .utf8
        }

        var metadata: [String: String] = [:]
        if let locations = pass["locations"]?.arrayValue {
            if locations.count > locationLimit {
                result.problems.append(
                    ImportProblem(
                        entry: name, reason: "only the first \(locationLimit) of the pass's locations are kept"))
            }
            for (index, location) in locations.prefix(locationLimit).enumerated() {
                guard let latitude = location["latitude"]?.doubleValue, let longitude = location["longitude"]?.doubleValue,
                    (-90...90).contains(latitude), (-180...180).contains(longitude)
                else {
                    result.problems.append(
                        ImportProblem(entry: name, reason: "location \(index + 1) is not a valid position"))
                    continue
                }
                metadata["location_\(index + 1)"] = "\(latitude),\(longitude)"
            }
        }

        let validTo: Date?
        if let expiration = pass["expirationDate"]?.stringValue {
            validTo = w3cDate(expiration)
            if validTo == nil {
                result.problems.append(ImportProblem(entry: name, reason: "expirationDate is not a W3C date; ignored"))
            }
        } else {
            validTo = nil
        }
        let altText = nonEmpty(barcode?["altText"])
        do {
            let card = try Card(
                name: name, symbology: symbology, payload: payload, payloadCharset: charset,
                cardNumber: altText == message ? nil : altText, validTo: validTo,
                notes: organization != nil ? description : nil, metadata: metadata)
            result.items.append(.card(card))
        } catch {
            result.problems.append(ImportProblem(entry: name, reason: error.description))
        }
        return result
    }

    private static func nonEmpty(_ value: JSONValue?) -> String? {
        guard let text = value?.stringValue?.trimmingWhitespace(), !text.isEmpty else {
            return nil
        }
        return text
    }

    /// Wallet dates are W3C (ISO 8601) timestamps with a zone, seconds and fractions optional.
    private static func w3cDate(_ text: String) -> Date? {
        let full = ISO8601DateFormatter()
        if let date = full.date(from: text) { return date }
        full.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = full.date(from: text) { return date }
        // Minutes precision ("2026-12-31T23:59Z"): add the seconds the formatter needs.
        if let zoneStart = text.lastIndex(where: { $0 == "Z" || $0 == "+" || $0 == "-" }), text[..<zoneStart].filter({ $0 == ":" }).count == 1 {
            full.formatOptions = [.withInternetDateTime]
            return full.date(from: text[..<zoneStart] + ":00" + text[zoneStart...])
        }
        return nil
    }
}
