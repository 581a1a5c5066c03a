import Crypto
import Foundation

/// The extra layer around PIN-held secrets (signing keys).
///
/// The key comes from the PIN *and* a per-device secret that lives only in the device key store:
/// `HKDF-SHA256(ikm: PBKDF2-HMAC-SHA256(PIN, salt, 210,000) ‖ deviceSecret, salt, "coffer/v1/pin")`.
/// A copied vault file (even with its passphrase) therefore gives an attacker nothing to guess PINs against offline;
/// on the device, the vault counts wrong PINs and locks the item. With a TPM, each key's device secret is sealed by
/// the TPM behind `chipAuthorisation(pin:salt:)` instead, and the TPM checks and counts the PIN.
public enum PINProtection {
    /// Stretching applied to the PIN before the device secret is mixed in.
    public static let kdf = PassphraseKDF.pbkdf2SHA256(iterations: 210_000)
    /// Shortest PIN accepted.
    public static let minimumLength = 6
    /// Longest PIN accepted.
    public static let maximumLength = 64
    /// Wrong PINs allowed before the item locks.
    public static let attemptLimit = 10

    /// Checks that `pin` is 6 to 64 ASCII digits and returns its bytes.
    public static func pinBytes(_ pin: String) throws(CofferCryptoError) -> SecretBytes {
        let utf8 = Array(pin.utf8)
        guard utf8.count >= minimumLength, utf8.count <= maximumLength,
            utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else {
            throw .unacceptablePassphrase("a PIN is \(minimumLength) to \(maximumLength) digits")
        }
        return SecretBytes(utf8)
    }

    /// The sealing key for one PIN-held item.
    public static func key(pin: SecretBytes, deviceSecret: SecretBytes, salt: [UInt8]) throws(CofferCryptoError) -> SymmetricKey {
        let stretched = try kdf.derive(pin, salt: salt, limits: .production)
        let combined = stretched.withUnsafeBytes { first in deviceSecret.withUnsafeBytes { second in SecretBytes(Array(first) + Array(second)) } }
        return KeySchedule.hkdf(combined, salt: salt, label: KeySchedule.pinKeyLabel)
    }

    /// HKDF info of the value a TPM checks for a PIN.
    public static let chipAuthorisationLabel = "coffer/v1/pin-tpm-auth"

    /// The authorisation value of a key's TPM-sealed device secret: 32 bytes of HKDF-SHA256 over the PIN's digits,
    /// salted with the key's PIN salt (label `coffer/v1/pin-tpm-auth`). Not stretched: the TPM counts every wrong
    /// one, and the value opens nothing without that TPM. It is not the PIN itself, so the PIN is not what crosses to
    /// the TPM.
    public static func chipAuthorisation(pin: SecretBytes, salt: [UInt8]) -> SecretBytes {
        KeySchedule.derive(pin, salt: salt, info: Array(chipAuthorisationLabel.utf8), outputByteCount: 32)
            .withUnsafeBytes { SecretBytes($0) }
    }

    /// HKDF info of a device secret's identifier.
    public static let secretIdentifierLabel = "coffer/v1/pin-secret-id"

    /// A 16-byte identifier of a device secret (HKDF with no salt, label `coffer/v1/pin-secret-id`): tells which
    /// device a PIN box needs without revealing anything about the secret.
    public static func secretIdentifier(_ deviceSecret: SecretBytes) -> [UInt8] {
        KeySchedule.derive(deviceSecret, salt: [], info: Array(secretIdentifierLabel.utf8), outputByteCount: 16)
            .withUnsafeBytes { Array($0) }
    }

    /// Associated data of a PIN box: the vault and item it belongs to.
    public static func associatedData(vaultID: [UInt8], itemID: [UInt8]) -> [UInt8] {
        KeySchedule.associatedData(label: KeySchedule.pinAssociatedDataLabel, fields: [vaultID, itemID])
    }

    /// Seals `secret` under the PIN and device secret with a fresh salt; returns the salt and the box.
    public static func seal(
        _ secret: SecretBytes, pin: SecretBytes, deviceSecret: SecretBytes, vaultID: [UInt8], itemID: [UInt8],
        random: some RandomSource = SystemRandom()
    ) throws(CofferCryptoError) -> (salt: [UInt8], box: Data) {
        let salt = random.bytes(32)
        return (salt, try seal(secret, pin: pin, salt: salt, deviceSecret: deviceSecret, vaultID: vaultID, itemID: itemID))
    }

    /// Seals `secret` under the PIN and device secret with `salt` (16 to 64 bytes), chosen by the caller when the
    /// same salt also derives the TPM's authorisation value.
    public static func seal(
        _ secret: SecretBytes, pin: SecretBytes, salt: [UInt8], deviceSecret: SecretBytes, vaultID: [UInt8], itemID: [UInt8]
    ) throws(CofferCryptoError) -> Data {
        guard salt.count >= 16 && salt.count <= 64 else { throw .malformedBox }
        let key = try key(pin: pin, deviceSecret: deviceSecret, salt: salt)
        return try secret.withUnsafeBytes { raw throws(CofferCryptoError) in
            try Box.seal(Data(raw), key: key, associatedData: associatedData(vaultID: vaultID, itemID: itemID))
        }
    }

    /// Opens a PIN box; `.authenticationFailed` for a wrong PIN (or another device's secret).
    public static func open(
        _ box: Data, salt: [UInt8], pin: SecretBytes, deviceSecret: SecretBytes, vaultID: [UInt8], itemID: [UInt8]
    ) throws(CofferCryptoError) -> SecretBytes {
        guard salt.count >= 16 && salt.count <= 64 else { throw .malformedBox }
        let key = try key(pin: pin, deviceSecret: deviceSecret, salt: salt)
        var plain = try Box.open(box, key: key, associatedData: associatedData(vaultID: vaultID, itemID: itemID))
        defer { plain.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        return SecretBytes(plain)
    }
}

/// Ed25519 (RFC 8032) over a 32-byte seed.
public enum Ed25519 {
    /// The 32-byte public key of `seed`.
    public static func publicKey(seed: SecretBytes) throws(CofferCryptoError) -> [UInt8] {
        try privateKey(seed).publicKey.rawRepresentation.map { $0 }
    }

    /// A 64-byte signature of `message`.
    public static func sign(_ message: some DataProtocol, seed: SecretBytes) throws(CofferCryptoError) -> [UInt8] {
        do {
            return Array(try privateKey(seed).signature(for: message))
        } catch let error as CofferCryptoError {
            throw error
        } catch {
            throw .primitiveFailure("Ed25519 sign")
        }
    }

    /// Whether `signature` is valid for `message` under `publicKey`.
    public static func verify(_ signature: [UInt8], message: some DataProtocol, publicKey: [UInt8]) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    private static func privateKey(_ seed: SecretBytes) throws(CofferCryptoError) -> Curve25519.Signing.PrivateKey {
        guard seed.count == 32 else { throw .primitiveFailure("Ed25519 seed must be 32 bytes") }
        do {
            return try seed.withUnsafeBytes { try Curve25519.Signing.PrivateKey(rawRepresentation: $0) }
        } catch {
            throw .primitiveFailure("Ed25519 seed")
        }
    }
}
