import CofferCrypto
import CofferModel
import CofferOTP
import Crypto
import Foundation

/// Reads andOTP backups: the plaintext JSON array (`otp_accounts.json`) and the password-encrypted file
/// (`otp_accounts.json.aes`).
///
/// The encrypted layout (andOTP `BackupHelper`, `EncryptionHelper`) is a 4-byte big-endian PBKDF2 iteration count,
/// a 12-byte salt, a 12-byte IV, then AES-256-GCM ciphertext with its 16-byte tag; the key is
/// PBKDF2-HMAC-SHA1(password, salt, iterations, 32 bytes). The iteration count comes from the file, so a count
/// outside 1…10,000,000 is never derived with. Backups from older andOTP versions use IV, ciphertext and tag under
/// SHA-256(password); those are tried when the current layout does not open. Their first four bytes are random IV,
/// which is why an out-of-range count is not itself an error: a file that opens under neither reading gives
/// ``InteropError/wrongPassword``.
///
/// Entries carry `type` TOTP, HOTP or STEAM, `algorithm`, `digits`, `period` or `counter`, `issuer`, `label`
/// (the account) and `tags`. Entries without `issuer` are from old versions whose label reads "Issuer - account".
public enum AndOTPImporter: Importer {
    public static let formatName = "andotp"

    private static let headerByteCount = 4 + saltByteCount
    private static let saltByteCount = 12

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        // andOTP marks nothing as encrypted: a file that parses as JSON is plaintext.
        if let document = JSONValue.parse(data) {
            guard let entries = document.arrayValue else { throw .malformedFile("an andOTP backup is a JSON array") }
            return convert(entries)
        }
        // Ciphertext is never valid UTF-8 text opening with '[': such a file is damaged JSON, not encrypted.
        if data.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "["),
            String(validating: data, as: UTF8.self) != nil
        {
            throw .malformedFile("the file starts like JSON but is not valid JSON")
        }
        guard let password else { throw .passwordRequired }
        return convert(try decrypt(data, password: password))
    }

    private static func decrypt(_ data: [UInt8], password: String) throws(InteropError) -> [JSONValue] {
        let minimumOld = OTPImport.gcmNonceByteCount + OTPImport.gcmTagByteCount
        guard data.count >= minimumOld else {
            throw .malformedFile("the file is neither JSON nor long enough to be an encrypted andOTP backup")
        }
        let iterations = data.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let iterationsInBounds = OTPImport.pbkdf2IterationRange.contains(Int(iterations))
        var damaged = false
        if iterationsInBounds, data.count >= headerByteCount + minimumOld {
            let salt = Array(data[4..<headerByteCount])
            let key = try OTPImport.pbkdf2(password, salt: salt, hash: .sha1, iterations: Int(iterations))
            if let entries = try open(data[headerByteCount...], key: key) {
                return entries
            }
            damaged = startsLikeJSON(data[headerByteCount...], key: key)
        }
        // The old layout has no header: its first four bytes are IV, so any "iteration count" is possible.
        let oldKey = SecretBytes(Array(SHA256.hash(data: Array(password.utf8))))
        if let entries = try open(data[...], key: oldKey) {
            return entries
        }
        // A file cut short (or altered) fails its tag under the right password too; its start tells the two apart.
        if damaged || startsLikeJSON(data[...], key: oldKey) { throw OTPImport.damagedBackup }
        // An out-of-range count cannot be told apart from an old-format IV, so after both readings fail the
        // answer is the same as for any other password that opens neither.
        throw .wrongPassword
    }

    /// Whether `IV || ciphertext…`, which did not authenticate, starts like JSON under `key` (``OTPImport/startsLikeJSON(_:)``).
    private static func startsLikeJSON(_ body: ArraySlice<UInt8>, key: SecretBytes) -> Bool {
        let nonceEnd = body.startIndex + OTPImport.gcmNonceByteCount
        guard body.count >= OTPImport.gcmNonceByteCount + 16 else { return false }
        return OTPImport.startsLikeJSON(OTPImport.gcmFirstBlock(body[nonceEnd...], key: key, nonce: Array(body[..<nonceEnd])))
    }

    /// Opens `IV || ciphertext || tag`; `nil` when it does not authenticate under `key`.
    private static func open(_ body: ArraySlice<UInt8>, key: SecretBytes) throws(InteropError) -> [JSONValue]? {
        let nonceEnd = body.startIndex + OTPImport.gcmNonceByteCount
        guard body.count >= OTPImport.gcmNonceByteCount + OTPImport.gcmTagByteCount else { return nil }
        guard let plaintext = OTPImport.openAESGCM(Array(body[nonceEnd...]), key: key, nonce: Array(body[..<nonceEnd]))
        else { return nil }
        guard let entries = JSONValue.parse(plaintext)?.arrayValue else {
            throw .malformedFile("the decrypted backup is not a JSON array")
        }
        return entries
    }

    private static func convert(_ entries: [JSONValue]) -> ImportResult {
        var result = ImportResult()
        for (index, entry) in entries.enumerated() {
            do {
                result.items.append(.otp(try item(entry)))
            } catch {
                result.problems.append(
                    ImportProblem(
                        entry: OTPImport.entryName(
                            issuer: entry["issuer"]?.stringValue, account: entry["label"]?.stringValue, index: index),
                        reason: error.reason))
            }
        }
        return result
    }

    private static func item(_ entry: JSONValue) throws(ImportEntryError) -> OTPItem {
        guard case .object = entry else { throw ImportEntryError("the entry is not a JSON object") }
        guard let secret = try entry.string("secret") else { throw ImportEntryError("the secret is missing") }
        let kind = try OTPImport.kind(type: try entry.string("type"), in: entry)
        let algorithm = try entry.string("algorithm")
        let digits = try entry.int("digits")
        let parameters = try OTPImport.parameters(secret: secret, algorithm: algorithm, digits: digits, kind: kind)

        var issuer = try entry.string("issuer")
        var account = try entry.string("label")
        if issuer == nil, let label = account, let separator = label.range(of: " - ") {
            issuer = String(label[..<separator.lowerBound])
            account = String(label[separator.upperBound...])
        }
        let tags = try entry.strings("tags")
        return try OTPImport.item(issuer: issuer, account: account, parameters: parameters, tags: tags)
    }
}
