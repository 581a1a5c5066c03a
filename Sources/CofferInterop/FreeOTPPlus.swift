import CofferCrypto
import CofferModel
import CofferOTP
import Foundation

/// Reads FreeOTP+ JSON exports (`freeotp-backup.json`, written by Settings → Export), which are never encrypted.
///
/// The file is `{"tokens": [...], "tokenOrder": [...]}`. Each token has `type` (`TOTP` or `HOTP`), `algo`
/// (`SHA1`, `SHA256`, `SHA512`), `digits`, `period`, `counter`, `issuerExt` (the issuer), `label` (the account)
/// and `secret`, the raw key as an array of signed Java bytes (−128…127). `tokenOrder` only orders the list and
/// is not needed. The HOTP `counter` is the value FreeOTP+ computes the shown code from, as Coffer does. A TOTP
/// token whose issuer is exactly `Steam` is a Steam Guard token, as FreeOTP+ displays it.
public enum FreeOTPPlusImporter: Importer {
    public static let formatName = "freeotp-plus"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        guard let document = JSONValue.parse(data), case .object = document else {
            throw .malformedFile("a FreeOTP+ export is a JSON object")
        }
        guard let tokens = document["tokens"]?.arrayValue else {
            throw .malformedFile("tokens is missing or not an array")
        }
        var result = ImportResult()
        for (index, token) in tokens.enumerated() {
            do {
                result.items.append(.otp(try item(token)))
            } catch {
                result.problems.append(
                    ImportProblem(
                        entry: OTPImport.entryName(
                            issuer: token["issuerExt"]?.stringValue, account: token["label"]?.stringValue, index: index),
                        reason: error.reason))
            }
        }
        return result
    }

    static func item(_ token: JSONValue) throws(ImportEntryError) -> OTPItem {
        guard case .object = token else { throw ImportEntryError("the entry is not a JSON object") }
        let secret = try secretBytes(token["secret"])
        let issuer = try token.string("issuerExt")
        var kind = try OTPImport.kind(type: try token.string("type"), in: token)
        // FreeOTP+ has no Steam type: it shows Steam Guard characters for a TOTP token whose issuer is exactly
        // "Steam" (TokenCodeUtil), so that token is a Steam token here too.
        if case .totp = kind, issuer == "Steam" { kind = .steam }
        let parameters = try OTPImport.parameters(
            secret: Base32.encode(secret), algorithm: try token.string("algo"), digits: try token.int("digits"),
            kind: kind)
        return try OTPImport.item(
            issuer: issuer, account: try token.string("label"), parameters: parameters, tags: [])
    }

    /// The key from its signed-byte array; every element must be a whole number in −128…127.
    static func secretBytes(_ value: JSONValue?) throws(ImportEntryError) -> [UInt8] {
        guard let value, value != .null else { throw ImportEntryError("the secret is missing") }
        guard let list = value.arrayValue else { throw ImportEntryError("the secret is not an array of bytes") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(list.count)
        for element in list {
            guard let number = element.intValue, let byte = Int8(exactly: number) else {
                throw ImportEntryError("the secret holds a value that is not a signed byte")
            }
            bytes.append(UInt8(bitPattern: byte))
        }
        return bytes
    }
}
