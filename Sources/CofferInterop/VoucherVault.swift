import CofferBarcode
import CofferCrypto
import CofferModel
import Foundation

/// Reads Voucher Vault's JSON export (as Catima imports it): an array of vouchers, each with `description` (the
/// name), `code` (the payload), `codeType` (`CODE128`, `CODE39`, `EAN13`, `PDF417`, `QR`, or `TEXT` for a voucher shown
/// by its number), `expires` (`yyyy-MM-dd'T'HH:mm:ss.SSS` in UTC, or null), `balanceMilliunits` (thousandths) or
/// `balance`, and `color` (`GREY`, `BLUE`, `GREEN`, `ORANGE`, `PURPLE`, `RED`, `YELLOW`). Balances are in US dollars,
/// as Catima takes them.
public enum VoucherVaultImporter: Importer {
    public static let formatName = "vouchervault"

    static let symbologies: [String: Symbology?] = [
        "CODE128": .code128, "CODE39": .code39, "EAN13": .ean13, "PDF417": .pdf417, "QR": .qr, "TEXT": .none,
    ]
    static let colors = [
        "GREY": "#888888", "BLUE": "#0000FF", "GREEN": "#00FF00", "ORANGE": "#FFA500", "PURPLE": "#800080", "RED": "#FF0000",
        "YELLOW": "#FFFF00",
    ]

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        guard data.count <= importSizeLimit else { throw .tooLarge(limit: importSizeLimit) }
        guard let vouchers = JSONValue.parse(data)?.arrayValue else {
            throw .malformedFile("a Voucher Vault export is a JSON array of vouchers")
        }
        var result = ImportResult()
        for (index, voucher) in vouchers.enumerated() {
            let name = voucher["description"]?.stringValue
            do throws(ImportEntryError) {
                result.items.append(.card(try card(voucher)))
            } catch {
                result.problems.append(ImportProblem(entry: OTPImport.nonEmpty(name) ?? "voucher \(index + 1)", reason: error.reason))
            }
        }
        return result
    }

    private static func card(_ voucher: JSONValue) throws(ImportEntryError) -> Card {
        guard case .object = voucher else { throw ImportEntryError("the voucher is not a JSON object") }
        guard let name = OTPImport.nonEmpty(try voucher.string("description")) else { throw ImportEntryError("the voucher has no description") }
        guard let code = try voucher.string("code"), !code.isEmpty else { throw ImportEntryError("the voucher has no code") }
        let type = try voucher.string("codeType") ?? "TEXT"
        guard let symbology = symbologies[type] else { throw ImportEntryError("code type \(type) is not supported") }
        var metadata: [String: String] = [:]
        if let color = try voucher.string("color") {
            guard let hex = colors[color] else { throw ImportEntryError("colour \(color) is not one Voucher Vault has") }
            metadata[CardMetadata.color] = hex
        }
        if let balance = try self.balance(voucher), balance != 0 {
            metadata["balance"] = "\(balance)"
            metadata["balance_currency"] = "USD"
        }
        var expires: Date?
        if let text = try voucher.string("expires") {
            guard let date = expiryFormat.date(from: text) else { throw ImportEntryError("expires is not a date of the form 2021-03-26T00:00:00.000") }
            expires = date
        }
        do {
            return try Card(name: name, symbology: symbology, payload: Array(code.utf8), validTo: expires, metadata: metadata)
        } catch {
            throw ImportEntryError(error.description)
        }
    }

    /// The balance: `balanceMilliunits` in thousandths when the key is there, else `balance`.
    private static func balance(_ voucher: JSONValue) throws(ImportEntryError) -> Decimal? {
        if let milliunits = voucher["balanceMilliunits"], milliunits != .null {
            guard let value = milliunits.intValue else { throw ImportEntryError("balanceMilliunits is not a whole number") }
            return Decimal(value) / 1000
        }
        guard let value = voucher["balance"], value != .null else { return nil }
        switch value {
        case .integer(let number): return Decimal(number)
        case .unsignedInteger(let number): return Decimal(number)
        case .fraction(let number): return Decimal(string: String(number))
        default: throw ImportEntryError("balance is not a number")
        }
    }

    private static let expiryFormat: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS"
        return formatter
    }()
}
