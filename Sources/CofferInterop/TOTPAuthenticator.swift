import CofferCrypto
import CofferModel
import CofferOTP
import Crypto
import CryptoExtras
import Foundation

/// Reads TOTP Authenticator's (Binary Boxes) backups and its preferences file.
///
/// A backup is base64 text of AES-256-CBC (zero IV, PKCS#7) under the SHA-256 of the backup password (the app uses
/// `TotpAuthenticator` when the user set none, so that is tried first). The plaintext is a JSON object of one member
/// whose name is the token list as JSON text (and whose value is the backup's time). The preferences file
/// (`TOTP_Authenticator_Preferences.xml`) holds the same list unencrypted as `STATIC_TOTP_CODES_LIST`.
///
/// An entry has `issuer`, `name`, `key` and `base` (the key's encoding: 16 hex, 32 base32, 64 base64), and `digits`
/// and `period` as strings; codes are HMAC-SHA1.
public enum TOTPAuthenticatorImporter: Importer {
    public static let formatName = "totp-authenticator"

    static let defaultPassword = "TotpAuthenticator"
    static let preferenceKey = "STATIC_TOTP_CODES_LIST"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        if AndroidPreferences.looksLikeXML(data) {
            guard let list = try AndroidPreferences.strings(data, format: "TOTP Authenticator").first(where: { $0.name == preferenceKey }) else {
                throw .malformedFile("the preferences hold no token list (\(preferenceKey))")
            }
            return try entries(Array(list.value.utf8))
        }
        guard let text = String(validating: data, as: UTF8.self),
            let sealed = Data(base64Encoded: text.trimmingWhitespace()), !sealed.isEmpty, sealed.count % 16 == 0
        else { throw .malformedFile("a TOTP Authenticator backup is base64 text of whole AES blocks") }
        if let plain = open(sealed, password: defaultPassword) { return try backup(plain) }
        guard let password else { throw .passwordRequired }
        guard let plain = open(sealed, password: password) else { throw .wrongPassword }
        return try backup(plain)
    }

    /// The backup's plaintext, or nil when the password does not open it (bad padding, or not a JSON object).
    private static func open(_ sealed: Data, password: String) -> [UInt8]? {
        let key = SymmetricKey(data: SHA256.hash(data: Array(password.utf8)))
        guard let plain = try? AES._CBC.decrypt(sealed, using: key, iv: AES._CBC.IV(ivBytes: [UInt8](repeating: 0, count: 16))),
            plain.first == UInt8(ascii: "{")
        else { return nil }
        return Array(plain)
    }

    private static func backup(_ plain: [UInt8]) throws(InteropError) -> ImportResult {
        guard case .object(let members) = JSONValue.parse(plain), members.count == 1, let listText = members.keys.first else {
            throw .malformedFile("the backup does not hold a token list")
        }
        return try entries(Array(listText.utf8))
    }

    private static func entries(_ listJSON: [UInt8]) throws(InteropError) -> ImportResult {
        guard let list = JSONValue.parse(listJSON)?.arrayValue else { throw .malformedFile("the token list is not a JSON array") }
        var result = ImportResult()
        for (index, entry) in list.enumerated() {
            do throws(ImportEntryError) {
                guard case .object = entry else { throw ImportEntryError("the entry is not a JSON object") }
                guard let key = try entry.string("key") else { throw ImportEntryError("the entry has no key") }
                let secret: [UInt8]?
                switch try number(entry, "base") {
                case 16: secret = Hex.decode(key.trimmingCharacters(in: .whitespaces))
                case 32: secret = try? Base32.decode(key)
                case 64: secret = Data(base64Encoded: key.trimmingCharacters(in: .whitespaces)).map(Array.init)
                default: throw ImportEntryError("the key's base is not 16, 32 or 64")
                }
                guard let secret, !secret.isEmpty else { throw ImportEntryError("the key does not decode in its base") }
                let period = try number(entry, "period") ?? OTPParameters.defaultPeriod
                let parameters = try OTPImport.parameters(
                    secret: Base32.encode(secret), algorithm: "SHA1", digits: try number(entry, "digits"), kind: .totp(period: period))
                result.items.append(
                    .otp(
                        try OTPImport.item(
                            issuer: try entry.string("issuer"), account: try entry.string("name"), parameters: parameters, tags: [])))
            } catch {
                result.problems.append(
                    ImportProblem(
                        entry: OTPImport.entryName(issuer: entry["issuer"]?.stringValue, account: entry["name"]?.stringValue, index: index),
                        reason: error.reason))
            }
        }
        return result
    }

    /// A number the app writes as a string ("6") or a number.
    private static func number(_ entry: JSONValue, _ key: String) throws(ImportEntryError) -> Int? {
        guard let value = entry[key], value != .null else { return nil }
        if let number = value.intValue { return number }
        guard let text = value.stringValue, let number = Int(text.trimmingCharacters(in: .whitespaces)) else {
            throw ImportEntryError("\(key) is not a whole number")
        }
        return number
    }
}
