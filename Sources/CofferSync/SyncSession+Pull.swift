import CofferCrypto
@_spi(Sync) import CofferKit
import CofferSyncAPI
import CofferVault
import Foundation

extension SyncSession {
    // MARK: Pull

    /// Reads every change since the verified cursor (everything, on a device that verified nothing yet), verifies the
    /// server's head, its chain from the verified head and the rows against it, and applies all of it in one
    /// transaction, or nothing.
    ///
    /// With `readAll`, the whole feed is read even on a device with a verified head: a device whose incremental pull
    /// does not add up retries once that way, because a server restored from a backup numbers its feed anew (the
    /// device's cursor may lie past rows it has not seen). Only if the whole state does not verify either is the
    /// incremental pull's diagnosis reported.
    ///
    /// An incremental pull checks the rows it reads on top of the rows this device holds, so it cannot see a row the
    /// server lost or deleted without a change. So the whole set is read and checked against the head whenever the
    /// head moved by another device's push, and at least once every `fullCheckInterval` (docs/FORMAT.md §8.6).
    func pull(access: String, expect: String?, readAll: Bool = false, into report: inout SyncReport) async throws {
        guard let account = try coffer.vault.syncAccount() else { throw SyncError.notLinked }
        let verified = try account.head.map(Self.manifest)
        let fresh = verified == nil
        let due = try fullCheckDue(now: Date())
        let fullRead = fresh || readAll || due
        let feed = try await readFeed(since: fullRead ? 0 : account.cursor, access: access)
        report.pulled += feed.read
        let (rows, cursor, headText) = (feed.rows, feed.cursor, feed.head)
        guard let headText else {
            if let verified { throw SyncError.verification(.headMissing(verifiedEpoch: verified.epoch)) }
            // Rows without a manifest are accepted only from an account no device has published a manifest for yet,
            // by a device that synced it with an older coffer (and so trusted these rows before); a server that
            // withholds the head cannot make a new device take what it likes. The boxes are checked as they are
            // applied, and this device's next push publishes the first manifest.
            guard rows.isEmpty || account.legacyLink else { throw SyncError.verification(.headMissing(verifiedEpoch: 0)) }
            let applied = try coffer.vault.applyRemote(rows, head: nil, cursor: cursor, accountCommitment: nil, at: Date())
            // A whole feed that is empty has been checked whole: the pull after this device's first push (a new
            // account's) need not read back everything it just sent.
            if fullRead, rows.isEmpty {
                let checked = Self.fullCheckValue(Date())
                try coffer.vault.setLocalValue(Self.fullCheckName, checked)
            }
            report.merge.add(applied)
            report.cursor = cursor
            return
        }
        let head = try Self.manifest(Array(Data(base64Encoded: headText) ?? Data()))
        let verifier = try makeVerifier(verified: verified)
        let chain = try await chain(after: verified, upTo: head, access: access)
        do {
            try verifier.checkHistory(verified: verified, head: head, chain: chain)
        } catch .rolledBack(let serverEpoch, let verifiedEpoch) {
            // An older state this device verified itself is what a restore from a backup shows; any other is made up.
            if try coffer.vault.verifiedManifest(epoch: head.epoch) == head.bytes {
                throw SyncError.verification(.restored(serverEpoch: serverEpoch, verifiedEpoch: verifiedEpoch))
            }
            throw SyncError.verification(.rolledBack(serverEpoch: serverEpoch, verifiedEpoch: verifiedEpoch))
        } catch {
            throw SyncError.verification(error)
        }
        if fresh, let expect, !Self.matches(expect, head) {
            throw SyncError.verification(.unexpectedFingerprint(expected: expect, found: head.fingerprint))
        }
        // At a fresh link the account slot came from the server: it must be the one the vault's head commits to.
        if fresh, let commitment = account.accountCommitment, commitment != head.account {
            throw SyncError.verification(.slotReverted)
        }
        // An incremental pull that read nothing, under the head this device verified, has nothing to add up: the
        // rows it holds are the ones it checked against that head (reading them back cost a 10,000-item sync 10%).
        let unchanged = !fullRead && rows.isEmpty && head.bytes == verified?.bytes
        let known = fullRead || unchanged ? SyncedRows() : try coffer.vault.syncedRows()
        do throws(VerificationFailure) {
            if !unchanged { try verifier.checkState(known: known, staged: rows, head: head, fullRead: fullRead) }
        } catch {
            if let altered = coffer.vault.firstUnopenableRow(rows) { throw SyncError.verification(.alteredRow(altered)) }
            if !fullRead {
                do {
                    try await pull(access: access, expect: nil, readAll: true, into: &report)
                    return
                } catch SyncError.verification {
                    throw SyncError.verification(error)
                }
            }
            throw SyncError.verification(error)
        }
        // What was read adds up; now the whole set, once another device has moved the head.
        if !fullRead, chain.contains(where: { $0.device != account.device }) {
            try await pull(access: access, expect: nil, readAll: true, into: &report)
            return
        }
        var verifiedChain = chain.map { (epoch: $0.epoch, bytes: $0.bytes) }
        if verifiedChain.last?.epoch != head.epoch { verifiedChain.append((head.epoch, head.bytes)) }
        let recorded = verifiedChain
        let applied = try coffer.vault.applyRemote(
            rows, head: head.bytes, chain: recorded, cursor: cursor, accountCommitment: head.account,
            replacingServerRows: fullRead, forgettingHistory: fresh, at: Date())
        if fullRead {
            let checked = Self.fullCheckValue(Date())
            try coffer.vault.setLocalValue(Self.fullCheckName, checked)
        }
        report.merge.add(applied)
        report.cursor = cursor
        report.head = head
    }

    /// The local-state value (docs/FORMAT.md §4) holding when this device last checked the server's whole set: u64
    /// Unix milliseconds.
    static let fullCheckName = "sync/full-check"
    /// The longest an incremental pull goes on without the whole set checked, when the head does not move.
    static let fullCheckInterval: TimeInterval = 7 * 86_400

    /// `date` as the value of `fullCheckName`.
    static func fullCheckValue(_ date: Date) -> Data {
        let milliseconds = UInt64(max(0, UnixTime.milliseconds(date)))
        return Data((0..<8).map { UInt8(truncatingIfNeeded: milliseconds >> (56 - 8 * $0)) })
    }

    /// Whether the whole set is due for a check: never checked, checked `fullCheckInterval` ago or longer, or a
    /// check time in the future (a clock set back).
    func fullCheckDue(now: Date) throws -> Bool {
        guard let value = try coffer.vault.localValue(Self.fullCheckName), value.count == 8 else { return true }
        let checked = value.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let nowMS = UInt64(max(0, UnixTime.milliseconds(now)))
        return checked > nowMS || nowMS - checked >= UInt64(Self.fullCheckInterval * 1000)
    }

    /// The feed from `cursor` to its end: each item's newest row (the feed lists an item at its latest change, so a
    /// later page's row replaces an earlier one's), server-face rows left out, in id order; the cursor reached; the
    /// last page's head; and how many rows were read.
    func readFeed(
        since start: Int64, access: String
    ) async throws -> (rows: [ItemRow], cursor: Int64, head: String?, read: Int) {
        var staged: [UUID: ItemRow] = [:]
        var cursor = start
        var read = 0
        while true {
            let page = try await client.changes(since: cursor, limit: SyncLimits.defaultPageItems, accessToken: access)
            for row in page.items where !StateRoot.isServerFace(kind: row.kind) { staged[row.id] = row }
            read += page.items.count
            guard page.cursor >= cursor else { throw SyncClientError.malformedResponse }
            cursor = page.cursor
            if !page.hasMore {
                return (staged.values.sorted { $0.id.byteOrder < $1.id.byteOrder }, cursor, page.head, read)
            }
        }
    }

    /// The manifests after `verified` up to `head`, as the server lists them (checked by the caller).
    func chain(after verified: Manifest?, upTo head: Manifest, access: String) async throws -> [Manifest] {
        guard let verified, head.epoch > verified.epoch else { return [] }
        var chain: [Manifest] = []
        var after = verified.epoch
        while after < head.epoch {
            let page = try await client.manifests(after: after, limit: SyncLimits.maxPageManifests, accessToken: access)
            for text in page.manifests {
                let manifest = try Self.manifest(Array(Data(base64Encoded: text) ?? Data()))
                guard manifest.epoch <= head.epoch else { break }
                chain.append(manifest)
            }
            guard let last = chain.last, last.epoch > after else { break }
            after = last.epoch
            if !page.hasMore { break }
        }
        return chain
    }

    /// The checks for this device: the vault's manifest keys, and the account's key epoch as its verified head
    /// names it (the vault's own before it verified one).
    func makeVerifier(verified: Manifest?) throws -> StateVerifier {
        let keys = try coffer.vault.manifestKeys()
        return StateVerifier(
            vaultID: coffer.vault.vaultID, keyEpoch: verified.map { Int64($0.keyEpoch) } ?? coffer.vault.keyEpoch, keys: keys)
    }

    /// Whether `expect` names `head`: its whole fingerprint, or the part after the epoch.
    static func matches(_ expect: String, _ head: Manifest) -> Bool {
        let wanted = Fingerprint.normalised(expect)
        let full = Fingerprint.normalised(head.fingerprint)
        let words = Fingerprint.normalised(String(head.fingerprint.drop { $0 != ":" }.dropFirst()))
        return wanted == full || wanted == words
    }

    /// The verified head, as `coffer sync status` shows it.
    public func verifiedHead() throws -> VerifiedHead? {
        guard let account = try coffer.vault.syncAccount(), let bytes = account.head else { return nil }
        let manifest = try Self.manifest(bytes)
        return VerifiedHead(manifest: manifest, madeHere: manifest.device == account.device)
    }

    static func manifest(_ bytes: [UInt8]) throws -> Manifest {
        do {
            return try Manifest(bytes: bytes)
        } catch {
            throw SyncError.verification(.stateMismatch)
        }
    }
}
