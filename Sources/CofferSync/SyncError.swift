@_spi(Sync) import CofferKit
import CofferCrypto
import CofferSyncAPI
import CofferVault
import Foundation

/// Failures of sync as a whole: the server's, the vault's, or the account's state.
public enum SyncError: Error, Sendable, CustomStringConvertible {
    /// The vault is not linked to a sync account.
    case notLinked
    /// The vault is linked already (to this account on this server).
    case alreadyLinked(server: String, account: String)
    /// The server's account belongs to a different vault than the one here.
    case differentVault
    /// The passphrase does not open the account's slot (or the server sent a slot that is not this account's).
    case wrongPassphrase
    /// Pushing kept meeting newer changes; nothing was lost, run sync again.
    case tooManyConflicts
    /// The server's view of the vault failed verification; nothing was applied.
    case verification(VerificationFailure)
    /// The server asks for passphrase-stretching parameters below Coffer's defaults (a downgrade), before anything
    /// was stretched or sent.
    case weakKDF(PassphraseKDF)
    /// The server asks for passphrase-stretching parameters no Coffer accepts (out of bounds, or an unknown KDF):
    /// refused as `weakKDF` is, before anything was stretched or sent.
    case unusableKDF(String)
    /// The account's stretching parameters are not the ones this device knows, and no verified head changed them.
    case accountParametersChanged
    /// Republish: the server holds this device's newest verified state already (or the device verified none).
    case nothingToRepublish
    /// Republish: this device does not hold the vault's history from this epoch on (it joined later).
    case historyIncomplete(from: Int64)
    /// Another device rotated the master key, and this vault's own passphrase (needed to re-wrap its passphrase slot
    /// under the new key) is not the account's: ask for it and log in again with it.
    case vaultPassphraseNeeded

    public var description: String {
        switch self {
        case .notLinked: return "this vault is not linked to a sync account"
        case .alreadyLinked(let server, let account): return "this vault is already linked to \(account) on \(server)"
        case .differentVault: return "that account syncs a different vault than the one here"
        case .wrongPassphrase: return "wrong passphrase for the sync account"
        case .tooManyConflicts: return "other devices kept changing the same items; run sync again"
        case .verification(let failure): return failure.description
        case .weakKDF(let kdf):
            return "the server asks for passphrase stretching Coffer refuses (\(kdf), weaker than Coffer's minimum of "
                + "\(PassphraseKDF.defaultPBKDF2) or \(PassphraseKDF.defaultScrypt)): a downgrade by the server, or an "
                + "account made with weaker settings; nothing was sent"
        case .unusableKDF(let detail):
            return "the server asks for passphrase stretching Coffer refuses (\(detail)): a downgrade or damage by the "
                + "server; nothing was sent"
        case .nothingToRepublish:
            return "the server already holds the newest state this device verified: nothing to republish"
        case .historyIncomplete(let epoch):
            return "this device does not hold the vault's history from epoch \(epoch) on (it joined later): republish "
                + "from a device that has synced longer"
        case .vaultPassphraseNeeded:
            return "another device changed the vault's master key, and this vault's own passphrase is needed to take it"
        case .accountParametersChanged:
            return "the account's passphrase stretching parameters changed without a change this device verified; "
                + "nothing was sent"
        }
    }
}

/// What one `coffer sync` did.
public struct SyncReport: Sendable, Equatable {
    public var pulled = 0
    public var pushed = 0
    public var merge = RemoteMergeReport()
    public var cursor: Int64 = 0
    /// The verified head after this sync (nil for an account no device has published a manifest for yet).
    public var head: Manifest?
    /// A master-key rotation this device had begun and the server had taken, finished by this sync.
    public var finishedRotation: Vault.RotationResult?

    public init() {}
}

/// What `coffer sync status` shows: the link, the server's view (nil when offline), local changes not yet pushed,
/// and conflict copies.
public struct SyncStatusReport: Sendable {
    public var account: SyncAccount
    public var server: AccountResponse?
    public var pending: Int
    public var conflicts: [SyncConflictCopy]
}

/// The newest vault state this device verified, as `coffer sync status` shows it.
public struct VerifiedHead: Sendable, Equatable {
    public var manifest: Manifest
    /// Whether this device made it.
    public var madeHere: Bool
}
