import CofferCrypto
import CofferModel
import CofferPlatform
import Foundation

/// Everything that can go wrong with a vault, with cases a caller can act on. Descriptions never contain an item's
/// content, a key or a passphrase.
public enum VaultError: Error, Sendable, CustomStringConvertible {
    case notFound(path: String)
    /// The file is an SQLite database that Coffer did not create; it was left untouched.
    case notAVault
    case alreadyExists(path: String)
    case newerFormat(found: Int, supported: Int)
    case unknownMigrations
    /// No slot of the requested type exists (e.g. no device slot on a restored backup).
    case noSlot(SlotType)
    case wrongPassphrase
    case wrongRecoveryCode
    /// The device key store has a key, but it does not open this vault.
    case deviceKeyMismatch
    case slotNotFound
    case lastSlot
    case itemNotFound
    /// A write was based on an older revision than the stored one.
    case conflict(itemID: UUID, expected: UInt64, stored: UInt64)
    /// Another process rotated the master key since this one unlocked the vault.
    case keyRotatedElsewhere
    /// No rotation of the synced vault is prepared here (or it was prepared without its manifest).
    case noPreparedRotation
    /// A stored box, slot or header failed authentication or is malformed: the file was modified or damaged.
    case tampered(String)
    case storage(String)
    case crypto(CofferCryptoError)
    case model(ModelError)
    case file(PrivateFileError)

    public var description: String {
        switch self {
        case .notFound(let path): return "no vault at \(path)"
        case .notAVault: return "the file is not a Coffer vault (it was left unchanged)"
        case .alreadyExists(let path): return "a vault already exists at \(path)"
        case .newerFormat(let found, let supported):
            return "the vault is format version \(found), newer than this Coffer supports (\(supported)); upgrade Coffer"
        case .unknownMigrations: return "the vault was changed by a newer version of Coffer; upgrade Coffer"
        case .noSlot(let type): return "the vault has no \(type.name) slot"
        case .wrongPassphrase: return "wrong passphrase"
        case .wrongRecoveryCode: return "wrong recovery code"
        case .deviceKeyMismatch: return "this device's key does not open the vault"
        case .slotNotFound: return "no such slot"
        case .lastSlot: return "cannot remove the only slot that opens the vault"
        case .itemNotFound: return "no such item"
        case .conflict(let id, let expected, let stored):
            return "item \(id.lowercasedString) changed meanwhile (revision \(stored), expected \(expected)); try again"
        case .keyRotatedElsewhere: return "the vault key was rotated by another process; run the command again"
        case .noPreparedRotation: return "no master-key rotation is in progress for this vault"
        case .tampered(let what): return "\(what) failed authentication: the vault was modified or damaged"
        case .storage(let detail): return "vault storage error: \(detail)"
        case .crypto(let error): return error.description
        case .model(let error): return error.description
        case .file(let error): return error.description
        }
    }
}
