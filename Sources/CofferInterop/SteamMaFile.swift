import CofferCrypto
import CofferModel
import CofferOTP
import Crypto
import CryptoExtras
import Foundation

/// Reads Steam Desktop Authenticator's accounts: one plain `.maFile`, or a zip of SDA's `maFiles` folder
/// (`manifest.json` and one `.maFile` per account), which is how encrypted accounts are read; and the Steam app's own
/// `Steamguard-STEAMID` file, the same fields for one account, or for several under `accounts`.
///
/// A plain maFile is JSON: `shared_secret` (standard base64 of the 20-byte key) becomes a Steam token whose account
/// is `account_name`; `revocation_code` goes into the notes, since it is what removes the authenticator from the
/// Steam account. The other fields (sessions, identity secret, device id) are not needed for codes and are dropped.
///
/// When `manifest.json` says `"encrypted": true`, each maFile is standard base64 of AES-256-CBC (PKCS#7) ciphertext;
/// its manifest entry (`entries[]`, by `filename`) holds `encryption_salt` (8 bytes, base64) and `encryption_iv`
/// (16 bytes, base64); the key is PBKDF2-HMAC-SHA1 of the password's UTF-8 bytes and that salt, 50,000 iterations,
/// 32 bytes (SDA's `FileEncryptor`). The first file that does not decrypt to JSON means a wrong password. An encrypted
/// maFile on its own, without its manifest, cannot be opened and is refused with a clear message.
public enum SteamMaFileImporter: Importer {
    public static let formatName = "steam"

    static let iterations = FuzzingFloor.iterations(50_000)

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        if ZipArchive.looksLikeZip(data) {
            return try readFolder(ZipArchive(data), password: password)
        }
        guard let document = JSONValue.parse(data) else {
            if String(validating: data, as: UTF8.self).map({ Data(base64Encoded: $0.trimmingWhitespace()) != nil }) == true {
                throw .malformedFile(
                    "this maFile is encrypted: import the zipped maFiles folder, whose manifest.json holds its salt and IV")
            }
            throw .malformedFile("a maFile is a JSON object")
        }
        guard case .object(let members) = document else { throw .malformedFile("a maFile is a JSON object") }
        var result = ImportResult()
        if case .object(let accounts)? = members["accounts"], members["shared_secret"] == nil {
            // The Steam app's own Steamguard-STEAMID file with several accounts: {"accounts": {"id": {…}, …}}.
            for key in accounts.keys.sorted() { convert(accounts[key] ?? .null, name: "account \(key)", into: &result) }
        } else {
            convert(document, name: "maFile", into: &result)
        }
        return result
    }

    private static func readFolder(_ archive: ZipArchive, password: String?) throws(InteropError) -> ImportResult {
        guard let manifestEntry = archive.entry(named: "manifest.json") else {
            throw .malformedFile("the zip holds no manifest.json (zip SDA's maFiles folder)")
        }
        guard let manifest = JSONValue.parse(try archive.contents(of: manifestEntry)), case .object = manifest else {
            throw .malformedFile("manifest.json is not a JSON object")
        }
        let encrypted = manifest["encrypted"] == .bool(true)
        if encrypted, password == nil { throw .passwordRequired }
        var result = ImportResult()
        var opened = false
        for (index, entry) in (manifest["entries"]?.arrayValue ?? []).enumerated() {
            let fileName = entry["filename"]?.stringValue ?? ""
            let name = fileName.isEmpty ? "entry \(index + 1)" : fileName
            guard let file = archive.entry(named: fileName) else {
                result.problems.append(ImportProblem(entry: name, reason: "the maFile is missing from the zip"))
                continue
            }
            var bytes = try archive.contents(of: file)
            if encrypted, let password {
                guard let plain = try decrypt(bytes, entry: entry, password: password) else {
                    // The first file decides: if nothing opened yet, the password is wrong, not the file.
                    if !opened { throw .wrongPassword }
                    result.problems.append(ImportProblem(entry: name, reason: "does not decrypt with the password that opened the others"))
                    continue
                }
                bytes = plain
                opened = true
            }
            guard let document = JSONValue.parse(bytes) else {
                result.problems.append(ImportProblem(entry: name, reason: "not a JSON maFile"))
                continue
            }
            convert(document, name: name, into: &result)
        }
        return result
    }

    /// The maFile's JSON; `nil` when the key from `password` does not open it (bad padding, or not JSON).
    private static func decrypt(_ bytes: [UInt8], entry: JSONValue, password: String) throws(InteropError) -> [UInt8]? {
        guard let saltText = entry["encryption_salt"]?.stringValue, let salt = Data(base64Encoded: saltText), !salt.isEmpty,
            let ivText = entry["encryption_iv"]?.stringValue, let iv = Data(base64Encoded: ivText), iv.count == 16
        else {
            throw .malformedFile("a manifest entry lacks a base64 encryption_salt or a 16-byte encryption_iv")
        }
        let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
        guard let ciphertext = Data(base64Encoded: text), !ciphertext.isEmpty, ciphertext.count % 16 == 0 else {
            throw .malformedFile("an encrypted maFile is not base64 of whole AES blocks")
        }
        let key = try OTPImport.pbkdf2(password, salt: Array(salt), hash: .sha1, iterations: iterations)
        let plain: Data
        do {
            plain = try key.withUnsafeBytes { raw in
                try AES._CBC.decrypt(ciphertext, using: SymmetricKey(data: raw), iv: AES._CBC.IV(ivBytes: Array(iv)))
            }
        } catch {
            return nil
        }
        return JSONValue.parse(Array(plain)) == nil ? nil : Array(plain)
    }

    private static func convert(_ document: JSONValue, name: String, into result: inout ImportResult) {
        let account = OTPImport.nonEmpty(document["account_name"]?.stringValue)
        do throws(ImportEntryError) {
            guard case .object = document else { throw ImportEntryError("the maFile is not a JSON object") }
            guard let secretText = try document.string("shared_secret"), let secret = Data(base64Encoded: secretText),
                !secret.isEmpty
            else {
                throw ImportEntryError("shared_secret is missing or not base64")
            }
            let parameters: OTPParameters
            do {
                parameters = try OTPParameters(secret: Array(secret), kind: .steam)
            } catch {
                throw ImportEntryError(error.description)
            }
            let revocation = OTPImport.nonEmpty(try document.string("revocation_code"))
            do {
                result.items.append(
                    .otp(
                        try OTPItem(
                            issuer: "Steam", account: account ?? "Steam", parameters: parameters,
                            notes: revocation.map { "Revocation code: \($0)" })))
            } catch {
                throw ImportEntryError(error.description)
            }
        } catch {
            result.problems.append(ImportProblem(entry: account.map { "Steam (\($0))" } ?? name, reason: error.reason))
        }
    }
}
