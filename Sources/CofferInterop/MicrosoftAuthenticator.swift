import CofferCrypto
import CofferModel
import CofferOTP
import Foundation

/// Reads Microsoft Authenticator's database (`databases/PhoneFactor` of `com.azure.authenticator`, SQLite). Its
/// `accounts` table has `name` (the issuer), `username` (the account), `oath_secret_key` and `account_type`: 0 is an
/// ordinary TOTP token (base32 secret, 6 digits), 1 a Microsoft personal account (base64 secret, 8 digits), both
/// HMAC-SHA1 every 30 seconds. Other types (work and school accounts) sign in by push, hold no code secret, and are
/// skipped.
public enum MicrosoftAuthenticatorImporter: Importer {
    public static let formatName = "microsoft"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        guard
            let rows = try SQLiteFile.rows(
                of: "accounts", requiring: ["name", "username", "oath_secret_key", "account_type"], in: data, format: "Microsoft Authenticator")
        else {
            throw .malformedFile("the database is not Microsoft Authenticator's (databases/PhoneFactor, with its accounts table)")
        }
        guard rows.count <= SQLiteFile.entryLimit else { throw .malformedFile("the database holds more than \(SQLiteFile.entryLimit) accounts") }
        var result = ImportResult()
        for (index, row) in rows.enumerated() {
            let issuer = row.text("name"), account = row.text("username")
            do throws(ImportEntryError) {
                let secret: String
                let digits: Int
                switch row.integer("account_type") {
                case 0:
                    secret = try cleaned(row.text("oath_secret_key"))
                    digits = 6
                case 1:
                    guard let text = row.text("oath_secret_key"),
                        let bytes = Data(base64Encoded: text.trimmingWhitespace()), !bytes.isEmpty
                    else { throw ImportEntryError("the secret is not base64") }
                    secret = Base32.encode(bytes)
                    digits = 8
                default:
                    continue
                }
                let parameters = try OTPImport.parameters(secret: secret, algorithm: "SHA1", digits: digits, kind: .totp(period: 30))
                result.items.append(.otp(try OTPImport.item(issuer: issuer, account: account, parameters: parameters, tags: [])))
            } catch {
                result.problems.append(ImportProblem(entry: OTPImport.entryName(issuer: issuer, account: account, index: index), reason: error.reason))
            }
        }
        return result
    }

    /// A base32 secret as the apps store it: spaces and dashes between groups, any case.
    static func cleaned(_ secret: String?) throws(ImportEntryError) -> String {
        guard let secret else { throw ImportEntryError("the entry has no secret") }
        return secret.filter { $0 != " " && $0 != "-" }.uppercased()
    }
}
