import CofferCrypto
import CofferModel
import CofferOTP
import Crypto
import CryptoExtras
import Foundation

/// Reads Stratum (formerly Authenticator Pro) backups: plain JSON, the encrypted backup, and the legacy encrypted
/// one (Stratum's `StrongBackupEncryption` and `LegacyBackupEncryption`; Aegis reads them the same way).
///
/// - Encrypted: `AUTHENTICATORPRO` (16 ASCII bytes), a 16-byte salt, a 12-byte IV, then AES-256-GCM ciphertext and
///   16-byte tag (no associated data); the key is Argon2id v0x13 (3 passes, 64 MiB, 4 lanes, 32 bytes) of the
///   password's UTF-8 bytes. The cost is fixed by the format, not read from the file.
/// - Legacy: `AuthenticatorPro`, a 20-byte salt, a 16-byte IV, then AES-256-CBC (PKCS#7); the key is
///   PBKDF2-HMAC-SHA1, 64,000 iterations, 32 bytes.
///
/// The JSON is `{"Authenticators": [{"Type", "Issuer", "Username", "Secret", "Algorithm", "Digits", "Period",
/// "Counter", …}], "Categories": [{"Id", "Name"}], "AuthenticatorCategories": [{"CategoryId",
/// "AuthenticatorSecret"}]}`. `Type` is 1 HOTP, 2 TOTP, 4 Steam (3 mOTP and 5 Yandex are reported as unsupported);
/// `Algorithm` is 0 SHA-1, 1 SHA-256, 2 SHA-512. Categories become tags.
public enum StratumImporter: Importer {
    public static let formatName = "stratum"

    static let header = Array("AUTHENTICATORPRO".utf8)
    static let legacyHeader = Array("AuthenticatorPro".utf8)
    static let argonParameters = FuzzingFloor.argon2(Argon2.Parameters(iterations: 3, memoryKiB: 64 * 1024, lanes: 4))
    static let legacyIterations = FuzzingFloor.iterations(64_000)

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        let prefix = Array(data.prefix(header.count))
        if prefix == header || prefix == legacyHeader {
            guard let password else { throw .passwordRequired }
            let plain = prefix == header ? try open(data, password: password) : try openLegacy(data, password: password)
            guard let document = JSONValue.parse(plain), case .object = document else {
                // The legacy format has no tag: a wrong key that happens to give valid padding gives noise.
                if prefix == legacyHeader { throw .wrongPassword }
                throw .malformedFile("the decrypted backup is not a Stratum JSON backup")
            }
            return try convert(document)
        }
        guard let document = JSONValue.parse(data), case .object = document else {
            throw .malformedFile("a Stratum backup is a JSON object, or starts with AUTHENTICATORPRO")
        }
        return try convert(document)
    }

    private static func open(_ data: [UInt8], password: String) throws(InteropError) -> [UInt8] {
        let saltEnd = header.count + 16, ivEnd = saltEnd + OTPImport.gcmNonceByteCount
        guard data.count >= ivEnd + OTPImport.gcmTagByteCount else { throw .malformedFile("the backup is cut short") }
        let key: SecretBytes
        do {
            key = try Argon2.derive(SecretBytes(password.utf8), salt: Array(data[header.count..<saltEnd]), parameters: argonParameters)
        } catch {
            throw .kdfParametersOutOfBounds("Argon2id could not run (\(error.description))")
        }
        guard let plain = OTPImport.openAESGCM(Array(data[ivEnd...]), key: key, nonce: Array(data[saltEnd..<ivEnd])) else {
            // A file cut short fails its tag under the right password too; its start tells the two apart.
            if OTPImport.startsLikeJSON(OTPImport.gcmFirstBlock(data[ivEnd...], key: key, nonce: Array(data[saltEnd..<ivEnd]))) {
                throw OTPImport.damagedBackup
            }
            throw .wrongPassword
        }
        return plain
    }

    private static func openLegacy(_ data: [UInt8], password: String) throws(InteropError) -> [UInt8] {
        let saltEnd = legacyHeader.count + 20, ivEnd = saltEnd + 16
        let ciphertext = data.dropFirst(ivEnd)
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else { throw .malformedFile("the backup is cut short") }
        let key = try OTPImport.pbkdf2(
            password, salt: Array(data[legacyHeader.count..<saltEnd]), hash: .sha1, iterations: legacyIterations)
        do {
            return try key.withUnsafeBytes { raw in
                Array(try AES._CBC.decrypt(ciphertext, using: SymmetricKey(data: raw), iv: AES._CBC.IV(ivBytes: Array(data[saltEnd..<ivEnd]))))
            }
        } catch {
            // CBC has no tag: bad padding is how a wrong password shows, unless the start deciphers as the JSON a
            // right one gives (then the end was cut or altered).
            if OTPImport.startsLikeJSON(OTPImport.cbcFirstBlock(ciphertext, key: key, iv: Array(data[saltEnd..<ivEnd]))) {
                throw OTPImport.damagedBackup
            }
            throw .wrongPassword
        }
    }

    private static func convert(_ document: JSONValue) throws(InteropError) -> ImportResult {
        guard let authenticators = document["Authenticators"]?.arrayValue else {
            throw .malformedFile("Authenticators is missing or not an array")
        }
        var categoryNames: [String: String] = [:]
        for category in document["Categories"]?.arrayValue ?? [] {
            if let id = category["Id"]?.stringValue, let name = category["Name"]?.stringValue { categoryNames[id] = name }
        }
        var tagsBySecret: [String: [String]] = [:]
        for link in document["AuthenticatorCategories"]?.arrayValue ?? [] {
            if let secret = link["AuthenticatorSecret"]?.stringValue, let name = link["CategoryId"]?.stringValue.flatMap({ categoryNames[$0] }) {
                tagsBySecret[secret, default: []].append(name)
            }
        }
        var result = ImportResult()
        for (index, entry) in authenticators.enumerated() {
            do throws(ImportEntryError) {
                guard case .object = entry else { throw ImportEntryError("the entry is not a JSON object") }
                guard let secret = try entry.string("Secret") else { throw ImportEntryError("the secret is missing") }
                let kind: OTPParameters.Kind
                switch try entry.int("Type") {
                case 1: kind = .hotp(counter: try entry.uint64("Counter") ?? 0)
                case 2: kind = .totp(period: try entry.int("Period") ?? OTPParameters.defaultPeriod)
                case 4: kind = .steam
                default: throw ImportEntryError("the type is not TOTP, HOTP or Steam (mOTP and Yandex are not supported)")
                }
                let algorithms = ["SHA1", "SHA256", "SHA512"]
                let algorithm = try entry.int("Algorithm") ?? 0
                guard algorithms.indices.contains(algorithm) else { throw ImportEntryError("the algorithm is not 0, 1 or 2") }
                let parameters = try OTPImport.parameters(
                    secret: secret, algorithm: algorithms[algorithm], digits: try entry.int("Digits"), kind: kind)
                result.items.append(
                    .otp(
                        try OTPImport.item(
                            issuer: try entry.string("Issuer"), account: try entry.string("Username"), parameters: parameters,
                            tags: tagsBySecret[secret] ?? [])))
            } catch {
                result.problems.append(
                    ImportProblem(
                        entry: OTPImport.entryName(
                            issuer: entry["Issuer"]?.stringValue, account: entry["Username"]?.stringValue, index: index),
                        reason: error.reason))
            }
        }
        return result
    }
}
