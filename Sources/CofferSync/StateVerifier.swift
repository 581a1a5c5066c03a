import CofferCrypto
import CofferSyncAPI
import CofferVault
import Foundation

/// Why a server's view of the vault was refused (docs/FORMAT.md §8.6). Nothing of it was applied. Descriptions say
/// what a person can do about it, and name at most an item id and epochs.
public enum VerificationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// A manifest's tag does not verify under this vault's key: the server made or changed it.
    case forgedManifest(epoch: Int64)
    /// A manifest names another vault.
    case otherVault
    /// The server's head is older than the one this device verified, and not one it verified before: made up.
    case rolledBack(serverEpoch: Int64, verifiedEpoch: Int64)
    /// The server's head is an older state this device verified before: what a server restored from a backup shows.
    case restored(serverEpoch: Int64, verifiedEpoch: Int64)
    /// The server's history does not extend this device's: it shows devices different histories.
    case forked(epoch: Int64)
    /// A manifest of the chain is missing, repeated or out of order.
    case brokenChain(epoch: Int64)
    /// The server shows no head although this device verified one.
    case headMissing(verifiedEpoch: Int64)
    /// The server sent fewer rows than the head commits to.
    case withheldRows(expected: Int, received: Int)
    /// The server sent an older revision of an item than this device verified.
    case replayedRevision(UUID)
    /// The server sent a deletion that no device made.
    case forgedDeletion(UUID)
    /// A row's box does not open with its associated data: altered, swapped or forged.
    case alteredRow(UUID)
    /// The rows do not add up to the head's state, in no way the checks above name.
    case stateMismatch
    /// A push was answered with a conflicting revision that the vault's verified state does not hold.
    case unverifiedConflict(UUID)
    /// The account slot the server handed out is not the one the vault's head commits to.
    case slotReverted
    /// The head is not the one the user said to expect.
    case unexpectedFingerprint(expected: String, found: String)
    /// The head was made under another master key than this device's (another device rotated it).
    case newerKeyEpoch(Int64)

    public var description: String {
        switch self {
        case .forgedManifest(let epoch):
            return "the server's record of the vault's state (epoch \(epoch)) was not made with this vault's key: "
                + "the server forged or changed it; nothing was applied"
        case .otherVault:
            return "the server's record of the vault's state belongs to another vault; nothing was applied"
        case .rolledBack(let server, let verified):
            return "the server shows an older state of the vault (epoch \(server)) than this device verified "
                + "(epoch \(verified)), and not one this device ever saw: not a restore from a backup; nothing was "
                + "applied (only if sync was revoked and restarted on another device: compare fingerprints there and "
                + "run `coffer sync adopt --expect FINGERPRINT`)"
        case .restored(let server, let verified):
            return "the server shows the vault as it was at epoch \(server), a state this device verified before, "
                + "instead of the newer epoch \(verified): most likely the server was restored from a backup (or it is "
                + "holding back newer changes); nothing was applied; to put this device's newer state back on it, run "
                + "`coffer sync republish`"
        case .forked(let epoch):
            return "the server shows this device a history of the vault that does not continue the one it verified "
                + "(from epoch \(epoch)): the server is showing your devices different vaults; compare "
                + "`coffer sync status` on each device; nothing was applied (only if sync was revoked and restarted "
                + "on another device: run `coffer sync adopt --expect FINGERPRINT` with that device's fingerprint)"
        case .brokenChain(let epoch):
            return "the server's history of the vault has a missing or out-of-order step at epoch \(epoch); nothing was applied"
        case .headMissing(0):
            return "the server shows items but no verified record of the vault's state: only a device that synced this "
                + "vault with an older coffer may publish the first one (run `coffer sync` there); nothing was applied"
        case .headMissing(let verified):
            return "the server holds no record of the vault's state although this device verified epoch \(verified): "
                + "sync was revoked or the server lost its data; nothing was applied (see `coffer sync adopt --help`)"
        case .withheldRows(let expected, let received):
            return "the server withheld items: the vault's verified state holds \(expected) rows, the server's answer "
                + "adds up to \(received); nothing was applied"
        case .replayedRevision(let id):
            return "the server sent an old revision of item \(id.lowercasedString); nothing was applied"
        case .forgedDeletion(let id):
            return "the server sent a deletion of item \(id.lowercasedString) that no device made; nothing was applied"
        case .alteredRow(let id):
            return "item \(id.lowercasedString) from the server does not open with this vault's key: it was "
                + "altered or swapped; nothing was applied"
        case .stateMismatch:
            return "the items the server sent do not add up to the vault's authenticated state: it withheld or "
                + "changed some; nothing was applied"
        case .unverifiedConflict(let id):
            return "the server refused a push with a revision of item \(id.lowercasedString) that no device "
                + "made; nothing was applied"
        case .slotReverted:
            return "the server handed out an account passphrase slot other than the vault's current one (an old "
                + "passphrase's?); nothing was applied"
        case .unexpectedFingerprint(let expected, let found):
            return "the server's vault state is \(found), not the \(expected) you expected; nothing was applied"
        case .newerKeyEpoch(let epoch):
            return "another device changed the vault's master key (key epoch \(epoch)): log in again with "
                + "`coffer sync login` to continue"
        }
    }
}

/// The checks a device runs on what a server shows it before applying anything (docs/FORMAT.md §8.6): the head's
/// tag, its link to the newest head this device verified, and that the rows add up to the head's root.
struct StateVerifier {
    let vaultID: UUID
    /// The account's key epoch as this device knows it (its verified head's): a manifest that no key of this device
    /// made and that names a higher one was made under a newer master key.
    let keyEpoch: Int64
    /// The tags a manifest may carry: one per key of this device that may have made it (`ManifestKeys`).
    let tags: (Manifest) -> [[UInt8]]

    init(vaultID: UUID, keyEpoch: Int64, keys: ManifestKeys) {
        self.vaultID = vaultID
        self.keyEpoch = keyEpoch
        self.tags = { keys.tags(body: $0.body, epoch: $0.epoch) }
    }

    /// A verifier whose candidate tags `tags` computes.
    init(vaultID: UUID, keyEpoch: Int64, tags: @escaping (Manifest) -> [[UInt8]]) {
        self.vaultID = vaultID
        self.keyEpoch = keyEpoch
        self.tags = tags
    }

    /// A verifier with one key: HMAC-SHA256 under it is `tag`.
    init(vaultID: UUID, keyEpoch: Int64, tag: @escaping ([UInt8]) -> [UInt8]) {
        self.vaultID = vaultID
        self.keyEpoch = keyEpoch
        self.tags = { [tag($0.body)] }
    }

    /// A manifest made with this vault's key for this vault. The tag decides; when no key of this device made it and
    /// it names a newer key epoch than the account's this device knows, another device rotated the master key.
    func authenticate(_ manifest: Manifest) throws(VerificationFailure) {
        guard manifest.vaultID == vaultID else { throw .otherVault }
        guard tags(manifest).contains(where: { ConstantTime.equal($0, manifest.tag) }) else {
            if Int64(manifest.keyEpoch) > keyEpoch { throw .newerKeyEpoch(Int64(manifest.keyEpoch)) }
            throw .forgedManifest(epoch: manifest.epoch)
        }
    }

    /// `head` extends `verified` through `chain` (the manifests after `verified`, ending with `head`); every one of
    /// them is authentic. Without a verified head, any authentic head is accepted (a new device trusts the first state
    /// it sees unless the user gives a fingerprint to expect).
    func checkHistory(verified: Manifest?, head: Manifest, chain: [Manifest]) throws(VerificationFailure) {
        try authenticate(head)
        guard let verified else { return }
        if head.epoch < verified.epoch { throw .rolledBack(serverEpoch: head.epoch, verifiedEpoch: verified.epoch) }
        if head.epoch == verified.epoch {
            guard head.bytes == verified.bytes else { throw .forked(epoch: verified.epoch) }
            return
        }
        var previous = verified.hash
        var epoch = verified.epoch
        for manifest in chain where manifest.bytes != head.bytes {
            try authenticateLink(manifest)
        }
        for manifest in chain {
            guard manifest.epoch == epoch + 1 else { throw .brokenChain(epoch: epoch + 1) }
            guard manifest.previous == previous else {
                throw epoch == verified.epoch ? .forked(epoch: verified.epoch) : .brokenChain(epoch: manifest.epoch)
            }
            previous = manifest.hash
            epoch = manifest.epoch
        }
        guard epoch == head.epoch, chain.last?.bytes == head.bytes else { throw .brokenChain(epoch: epoch + 1) }
    }

    /// A manifest between the verified head and the (authenticated) head. One made under a master key this device
    /// never held — the account's key epoch moved on through rotations it missed — cannot be checked by its tag, and
    /// need not be: the hash links from the authentic head down to the verified one pin its bytes, since each device
    /// links a manifest only to one it verified.
    private func authenticateLink(_ manifest: Manifest) throws(VerificationFailure) {
        do {
            try authenticate(manifest)
        } catch .newerKeyEpoch {
            return
        }
    }

    /// The leaves of the state after `staged` lands on `known` (or, for a full read, of `staged` alone) add up to the
    /// head's count and root. Returns nothing: the caller applies the rows. On a mismatch, names the likeliest cause.
    func checkState(known: SyncedRows, staged: [ItemRow], head: Manifest, fullRead: Bool) throws(VerificationFailure) {
        var leaves = fullRead ? [:] : known.leaves
        for row in staged { leaves[row.id] = row.leaf }
        if leaves.count == Int(head.count), StateRoot.root(leaves) == head.root { return }
        if leaves.count < Int(head.count) { throw .withheldRows(expected: Int(head.count), received: leaves.count) }
        if !fullRead {
            for row in staged {
                if let revision = known.revisions[row.id], row.revision < revision { throw .replayedRevision(row.id) }
            }
        }
        if !fullRead, let deletion = staged.first(where: { $0.deleted && known.revisions[$0.id] != nil }) {
            throw .forgedDeletion(deletion.id)
        }
        throw .stateMismatch
    }
}
