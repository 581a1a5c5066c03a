import CofferCrypto
import Crypto
import Foundation

/// The account key schedule (docs/SYNC.md §2). One passphrase stretch yields two unrelated keys:
///
/// ```
/// S    = KDF(passphrase, salt)                                  (the slot's KDF and salt)
/// KEK  = HKDF(S, salt, "coffer/v1/kek/passphrase")              (wraps the master key, as a vault passphrase slot)
/// auth = HKDF(S, salt, "coffer/v1/sync/auth")                   (sent to the server, which keeps a slow hash)
/// ```
///
/// HKDF with different labels makes the auth key useless for unwrapping: the server learns nothing that opens the
/// slot it stores.
public struct SyncKeys: Sendable {
    /// HKDF info of the auth key.
    public static let authKeyLabel = "coffer/v1/sync/auth"

    /// Sent to the server on register, login and passphrase change.
    public let authKey: SecretBytes
    /// Wraps and unwraps the master key in the account's slot.
    public let keyEncryptionKey: SymmetricKey

    /// Stretches `passphrase` with the slot's parameters (checked against `limits` first) and derives both keys.
    public init(passphrase: String, kdf: PassphraseKDF, salt: [UInt8], limits: KDFLimits) throws(CofferCryptoError) {
        guard (16...64).contains(salt.count) else { throw .kdfParametersOutOfBounds("salt length") }
        let stretched = try kdf.derive(try Passphrase.bytes(passphrase), salt: salt, limits: limits)
        keyEncryptionKey = KeySchedule.hkdf(stretched, salt: salt, label: KeySchedule.keyEncryptionLabel(.passphrase))
        authKey = KeySchedule.hkdf(stretched, salt: salt, label: Self.authKeyLabel).withUnsafeBytes { SecretBytes($0) }
    }

    /// The auth key as the wire carries it.
    public var authKeyBase64: String { authKey.withUnsafeBytes { Data($0).base64EncodedString() } }
}

extension WrappedSlot {
    /// The slot header this wire slot describes, checked against `limits`.
    public func header(limits: KDFLimits) throws(CofferCryptoError) -> SlotHeader {
        guard let salt = Data(base64Encoded: salt) else { throw .kdfParametersOutOfBounds("salt encoding") }
        let header = SlotHeader(slotID: id.bytes, type: .passphrase, kdf: try kdf.kdf(limits: limits), salt: Array(salt))
        try header.validate(limits: limits)
        return header
    }
}
