import CofferCrypto
import Crypto
import CryptoExtras
import Foundation

/// Opens Bitwarden's password-protected JSON export (the clients' `getPasswordProtectedExport`):
/// `{"encrypted": true, "passwordProtected": true, "salt", "kdfType", "kdfIterations", "kdfMemory",
/// "kdfParallelism", "encKeyValidation_DO_NOT_EDIT", "data"}`.
///
/// The key is derived from the password's UTF-8 bytes with the file's KDF: `kdfType` 0 is PBKDF2-HMAC-SHA256 over
/// the `salt` string's UTF-8 bytes; 1 is Argon2id over SHA-256 of those bytes, with `kdfMemory` in MiB and
/// `kdfParallelism` lanes. Both give 32 bytes, stretched by HKDF-Expand (SHA-256) into an encryption key (info
/// `enc`) and a MAC key (info `mac`). `encKeyValidation_DO_NOT_EDIT` and `data` are type-2 encrypted strings,
/// `2.<iv>|<ciphertext>|<mac>` (base64): AES-256-CBC with PKCS#7 padding, and HMAC-SHA256 over IV ‖ ciphertext.
/// The validation string's MAC tells a wrong password; `data` holds the unencrypted export.
///
/// The KDF parameters come from the file and are bounded before any work: PBKDF2 1 to 10,000,000 iterations;
/// Argon2id within ``Argon2/Limits/importing``.
enum BitwardenEncryptedExport {
    static func decrypt(_ document: JSONValue, password: String) throws(InteropError) -> [UInt8] {
        guard let salt = document["salt"]?.stringValue, !salt.isEmpty, salt.utf8.count <= 1024 else {
            throw .malformedFile("salt is missing, empty or too long")
        }
        guard let validation = document["encKeyValidation_DO_NOT_EDIT"]?.stringValue,
            let data = document["data"]?.stringValue
        else {
            throw .malformedFile("encKeyValidation_DO_NOT_EDIT or data is missing")
        }
        let validationString = try EncryptedString(validation)
        let dataString = try EncryptedString(data)
        let master = try masterKey(document, password: password, salt: Array(salt.utf8))
        let keys = master.withUnsafeBytes { raw in
            let key = SymmetricKey(data: raw)
            return (
                encryption: HKDF<SHA256>.expand(pseudoRandomKey: key, info: Array("enc".utf8), outputByteCount: 32),
                mac: HKDF<SHA256>.expand(pseudoRandomKey: key, info: Array("mac".utf8), outputByteCount: 32)
            )
        }
        guard validationString.authenticates(with: keys.mac) else { throw .wrongPassword }
        guard dataString.authenticates(with: keys.mac) else {
            throw .malformedFile("data does not authenticate under the key that opens the validation string")
        }
        return try dataString.decrypt(with: keys.encryption)
    }

    /// The 32-byte key the file's KDF derives, after its parameters are checked.
    private static func masterKey(_ document: JSONValue, password: String, salt: [UInt8]) throws(InteropError) -> SecretBytes {
        guard let type = document["kdfType"]?.intValue else { throw .malformedFile("kdfType is missing or not a number") }
        guard let iterations = document["kdfIterations"]?.intValue else {
            throw .malformedFile("kdfIterations is missing or not a number")
        }
        switch type {
        case 0:
            guard OTPImport.pbkdf2IterationRange.contains(iterations) else {
                throw .kdfParametersOutOfBounds(
                    "PBKDF2 iterations must be \(OTPImport.pbkdf2IterationRange.lowerBound)...\(OTPImport.pbkdf2IterationRange.upperBound)")
            }
            return try OTPImport.pbkdf2(password, salt: salt, hash: .sha256, iterations: iterations)
        case 1:
            guard let memory = document["kdfMemory"]?.intValue, let lanes = document["kdfParallelism"]?.intValue else {
                throw .malformedFile("kdfMemory or kdfParallelism is missing or not a number")
            }
            // MiB in the file; checked in MiB first so the conversion to KiB cannot overflow.
            guard (1...(Argon2.Limits.importing.memoryKiB.upperBound >> 10)).contains(memory) else {
                throw .kdfParametersOutOfBounds("Argon2 memory must be 1...\(Argon2.Limits.importing.memoryKiB.upperBound >> 10) MiB")
            }
            let parameters = Argon2.Parameters(iterations: iterations, memoryKiB: memory << 10, lanes: lanes)
            do {
                return try Argon2.derive(
                    SecretBytes(password.utf8), salt: Array(SHA256.hash(data: salt)), parameters: parameters)
            } catch .kdfParametersOutOfBounds(let detail) {
                throw .kdfParametersOutOfBounds(detail)
            } catch {
                throw .kdfParametersOutOfBounds("Argon2id could not run (\(error.description))")
            }
        default:
            throw .unsupportedVersion("Bitwarden KDF type \(type)")
        }
    }

    /// A type-2 encrypted string: `2.<iv>|<ciphertext>|<mac>`.
    struct EncryptedString {
        let iv: [UInt8]
        let ciphertext: [UInt8]
        let mac: [UInt8]

        init(_ text: String) throws(InteropError) {
            guard text.hasPrefix("2.") else { throw .malformedFile("an encrypted string is not of type 2 (AES-CBC with HMAC)") }
            let parts = text.dropFirst(2).split(separator: "|", omittingEmptySubsequences: false)
            guard parts.count == 3, let iv = Data(base64Encoded: String(parts[0])),
                let ciphertext = Data(base64Encoded: String(parts[1])), let mac = Data(base64Encoded: String(parts[2])),
                iv.count == 16, mac.count == 32, !ciphertext.isEmpty, ciphertext.count % 16 == 0
            else {
                throw .malformedFile("an encrypted string is not base64 IV, ciphertext and MAC of the right lengths")
            }
            self.iv = Array(iv)
            self.ciphertext = Array(ciphertext)
            self.mac = Array(mac)
        }

        func authenticates(with key: SymmetricKey) -> Bool {
            HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: iv + ciphertext, using: key)
        }

        /// The plaintext; call only once the MAC verified.
        func decrypt(with key: SymmetricKey) throws(InteropError) -> [UInt8] {
            do {
                return Array(try AES._CBC.decrypt(ciphertext, using: key, iv: AES._CBC.IV(ivBytes: iv)))
            } catch {
                throw .malformedFile("the encrypted data does not decrypt (bad padding)")
            }
        }
    }
}
