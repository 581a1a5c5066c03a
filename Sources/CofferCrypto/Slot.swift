import Crypto
import Foundation

/// How a slot's key-encryption key is obtained.
public enum SlotType: UInt8, Sendable, CaseIterable, Codable {
    /// A random key kept in the device's key store: opens without a prompt, never leaves the device.
    case device = 1
    /// A passphrase stretched by a `PassphraseKDF`.
    case passphrase = 2
    /// A random recovery code shown once.
    case recovery = 3

    /// The name used in labels, the CLI and JSON.
    public var name: String {
        switch self {
        case .device: return "device"
        case .passphrase: return "passphrase"
        case .recovery: return "recovery"
        }
    }
}

/// The public part of a slot: everything needed to derive its key-encryption key except the secret itself.
/// All of it is bound as associated data of the wrapped master key.
public struct SlotHeader: Sendable, Equatable {
    /// Random 16-byte identifier.
    public var slotID: [UInt8]
    public var type: SlotType
    /// The passphrase KDF; nil for device and recovery slots.
    public var kdf: PassphraseKDF?
    /// Random salt, 32 bytes for new slots (at least 16 accepted).
    public var salt: [UInt8]

    public init(slotID: [UInt8], type: SlotType, kdf: PassphraseKDF?, salt: [UInt8]) {
        self.slotID = slotID
        self.type = type
        self.kdf = kdf
        self.salt = salt
    }

    /// A fresh header with random id and salt.
    public static func new(_ type: SlotType, kdf: PassphraseKDF? = nil, random: some RandomSource = SystemRandom()) -> SlotHeader {
        SlotHeader(slotID: random.bytes(16), type: type, kdf: type == .passphrase ? kdf ?? .defaultPBKDF2 : nil, salt: random.bytes(32))
    }

    /// Associated data of this slot's wrapped key in vault `vaultID`.
    public func associatedData(vaultID: [UInt8]) -> [UInt8] {
        KeySchedule.associatedData(
            label: KeySchedule.slotAssociatedDataLabel,
            fields: [vaultID, slotID, [type.rawValue], kdf?.encoded ?? [], salt])
    }

    /// Checks the shape of a header read from disk.
    public func validate(limits: KDFLimits) throws(CofferCryptoError) {
        guard slotID.count == 16 else { throw .malformedBox }
        guard salt.count >= 16 && salt.count <= 64 else { throw .kdfParametersOutOfBounds("salt length") }
        switch type {
        case .passphrase:
            guard let kdf else { throw .kdfParametersOutOfBounds("passphrase slot without KDF") }
            try kdf.validate(limits)
        case .device, .recovery:
            guard kdf == nil else { throw .kdfParametersOutOfBounds("KDF on a slot that takes none") }
        }
    }

    /// The key-encryption key from the slot's secret: a device key, a normalised passphrase, or recovery-code bytes.
    public func keyEncryptionKey(secret: SecretBytes, limits: KDFLimits) throws(CofferCryptoError) -> SymmetricKey {
        try validate(limits: limits)
        let label = KeySchedule.keyEncryptionLabel(type)
        if type == .passphrase, let kdf {
            let stretched = try kdf.derive(secret, salt: salt, limits: limits)
            return KeySchedule.hkdf(stretched, salt: salt, label: label)
        }
        return KeySchedule.hkdf(secret, salt: salt, label: label)
    }

    /// Wraps the master key under `kek`.
    public func wrap(masterKey: SecretBytes, vaultID: [UInt8], kek: SymmetricKey) throws(CofferCryptoError) -> Data {
        try masterKey.withUnsafeBytes { raw throws(CofferCryptoError) in
            try Box.seal(Data(raw), key: kek, associatedData: associatedData(vaultID: vaultID))
        }
    }

    /// Unwraps the master key; `.authenticationFailed` for a wrong secret or any change to the slot.
    public func unwrap(_ wrapped: Data, vaultID: [UInt8], kek: SymmetricKey) throws(CofferCryptoError) -> SecretBytes {
        var plain = try Box.open(wrapped, key: kek, associatedData: associatedData(vaultID: vaultID))
        defer { plain.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        guard plain.count == 32 else { throw .malformedBox }
        return SecretBytes(plain)
    }
}
