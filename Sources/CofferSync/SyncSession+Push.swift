import CofferCrypto
@_spi(Sync) import CofferKit
import CofferSyncAPI
import CofferVault
import Foundation

extension SyncSession {
    // MARK: Sync

    /// Pulls and verifies remote changes, merges them, pushes local ones with a manifest of the new state; repeats a
    /// push that met newer changes after pulling them, a bounded number of times. `expect` is the fingerprint
    /// (`Manifest.fingerprint`, or its part after the epoch) that the server's head must have when this device has
    /// verified none yet.
    public func sync(
        expect: String? = nil, progress: @Sendable (Int, Int) -> Void = { _, _ in }
    ) async throws -> SyncReport {
        guard try coffer.vault.syncAccount() != nil else { throw SyncError.notLinked }
        let access = try await freshAccessToken()
        var report = SyncReport()
        report.finishedRotation = try await resumeRotation(access: access)
        try await pull(access: access, expect: expect, into: &report)
        try await pushPending(access: access, restoring: nil, progress: progress, into: &report)
        try await pull(access: access, expect: nil, into: &report)
        return report
    }

    /// Pushes the pending changes in batches, each with the manifest of the state it makes. With `restoring`, the
    /// first push extends the server's (older) head instead of this device's and carries the manifests the server
    /// lost (`republish`); it is sent even with nothing pending.
    func pushPending(
        access: String, restoring: (base: Int64, chain: [Manifest])?, progress: @Sendable (Int, Int) -> Void,
        into report: inout SyncReport
    ) async throws {
        var restoring = restoring
        var attempts = 0
        // The leaves of the rows the server holds, as this device recorded them: read once and brought up to date by
        // each accepted batch (a pull changes them, so it is read again after one). Reading them for every batch
        // made a first push of n items cost O(n²).
        var serverLeaves: [UUID: [UInt8]]?
        // What is to be pushed, in order: read again once it has all been sent, or after a pull.
        var queue: ArraySlice<(id: UUID, bytes: Int)> = []
        // For the progress bar: what was pushed and what was queued.
        var total = 0
        while true {
            if queue.isEmpty {
                queue = ArraySlice(try coffer.vault.pendingQueue())
                total = report.pushed + queue.count
            }
            let planned = queue.prefix(Self.batchLength(queue.lazy.map(\.bytes)))
            // The rows as they are now; one that grew since it was queued waits for the next batch.
            let current = try coffer.vault.pendingChanges(planned.map(\.id))
            let pending = Array(current.prefix(Self.batchLength(current.lazy.map { $0.row.box?.count ?? 0 })))
            guard let account = try coffer.vault.syncAccount() else { throw SyncError.notLinked }
            if pending.isEmpty, !planned.isEmpty {
                // Everything planned was pushed or synced meanwhile.
                queue.removeFirst(planned.count)
                continue
            }
            // An account no device has published a manifest for yet (made by an older coffer) gets its first one.
            if pending.isEmpty, account.head != nil, restoring == nil { break }
            let verified = try account.head.map(Self.manifest)
            var leaves: [UUID: [UInt8]]
            if let serverLeaves {
                leaves = serverLeaves
            } else {
                leaves = try coffer.vault.syncedRows().leaves
            }
            for change in pending { leaves[change.row.id] = change.row.leaf }
            let manifest = try await nextManifest(after: verified, account: account, leaves: leaves)
            let request = PushRequest(
                items: pending.map { PushItem(item: $0.row, baseRevision: $0.baseRevision) },
                baseEpoch: restoring?.base ?? verified?.epoch ?? 0, manifest: manifest.base64,
                chain: restoring.map { $0.chain.map(\.base64) })
            let outcome: Result<PushResponse, SyncClientError>
            do {
                outcome = .success(try await client.push(request, accessToken: access))
            } catch {
                outcome = .failure(error)
            }
            switch outcome {
            case .success(let answer):
                try coffer.vault.recordPush(
                    pending.map(\.row), head: (manifest.epoch, manifest.bytes), cursor: answer.cursor, device: account.device,
                    at: Date())
                restoring = nil
                serverLeaves = leaves
                queue.removeFirst(planned.count)
                report.pushed += pending.count
                report.head = manifest
                progress(report.pushed, max(total, report.pushed))
            case .failure(.conflict(let claimed)) where restoring == nil:
                serverLeaves = nil
                queue = []
                attempts += 1
                guard attempts <= 5 else { throw SyncError.tooManyConflicts }
                // The rows of a 409 are the server's word: nothing of them is applied. The verified pull brings the
                // real state, and each claimed row must be in it. It reads the whole set: a conflict without a row
                // (a write based on a row the server no longer holds) is a lost row, which only a full read shows.
                try await pull(access: access, expect: nil, readAll: true, into: &report)
                let known = try coffer.vault.syncedRows()
                for row in claimed where !StateRoot.isServerFace(kind: row.kind) {
                    guard let revision = known.revisions[row.id], revision >= row.revision else {
                        throw SyncError.verification(.unverifiedConflict(row.id))
                    }
                }
            case .failure(.staleHead) where restoring == nil:
                serverLeaves = nil
                queue = []
                attempts += 1
                guard attempts <= 5 else { throw SyncError.tooManyConflicts }
                try await pull(access: access, expect: nil, into: &report)
            case .failure(.conflict), .failure(.staleHead):
                // Another device wrote to the restored server meanwhile: its state is no longer the one checked.
                throw SyncError.tooManyConflicts
            case .failure(let error):
                throw error
            }
        }
    }

    /// Puts this device's verified history and state back on a server that was restored from a backup: the server's
    /// state must be one this device verified earlier (anything else is refused as an attack). The manifests the
    /// server lost go back from this device's record, followed by a manifest of this device's current state and the
    /// rows that differ. Devices that were up to date continue as before; the others report what they need.
    public func republish(progress: @Sendable (Int, Int) -> Void = { _, _ in }) async throws -> SyncReport {
        guard let account = try coffer.vault.syncAccount() else { throw SyncError.notLinked }
        guard let verifiedBytes = account.head else { throw SyncError.nothingToRepublish }
        let verified = try Self.manifest(verifiedBytes)
        let access = try await freshAccessToken()
        let feed = try await readFeed(since: 0, access: access)
        let (serverRows, cursor, headText) = (feed.rows, feed.cursor, feed.head)
        let verifier = try makeVerifier(verified: verified)
        var base: Int64 = 0
        if let headText {
            let head = try Self.manifest(Array(Data(base64Encoded: headText) ?? Data()))
            try verification { () throws(VerificationFailure) in try verifier.authenticate(head) }
            guard head.epoch < verified.epoch else { throw SyncError.nothingToRepublish }
            // Only onto a state this device verified before: a restore, not a state the server made up.
            guard try coffer.vault.verifiedManifest(epoch: head.epoch) == head.bytes else {
                throw SyncError.verification(.rolledBack(serverEpoch: head.epoch, verifiedEpoch: verified.epoch))
            }
            try verification { () throws(VerificationFailure) in
                try verifier.checkState(known: SyncedRows(), staged: serverRows, head: head, fullRead: true)
            }
            base = head.epoch
        } else if !serverRows.isEmpty {
            throw SyncError.verification(.headMissing(verifiedEpoch: verified.epoch))
        }
        let lost = try coffer.vault.verifiedManifests(after: base).map { bytes throws in try Self.manifest(bytes) }
        guard lost.map(\.epoch) == Array((base + 1)...verified.epoch) else { throw SyncError.historyIncomplete(from: base + 1) }
        // The server's rows are now the ones it holds; every local row that differs becomes a change to push.
        try coffer.vault.replaceServerRows(serverRows, cursor: cursor)
        var report = SyncReport()
        try await pushPending(access: access, restoring: (base, lost), progress: progress, into: &report)
        return report
    }

    /// Replaces the account passphrase: a new slot wrapping the master key, a new auth key, and a manifest committing
    /// to the new slot, which the server stores in one step (so no device can be handed the old slot as current). The
    /// current passphrase is checked by the server; the vault's own local slots do not change.
    public func changePassphrase(current: String, new: String, kdf: PassphraseKDF = .defaultPBKDF2) async throws {
        guard let linked = try coffer.vault.syncAccount() else { throw SyncError.notLinked }
        let limits = coffer.location.options.limits
        let parameters = try await client.prelogin(email: linked.account)
        let currentKDF = try Self.serverKDF(parameters.kdf, limits: limits)
        guard let currentSalt = Data(base64Encoded: parameters.salt) else { throw SyncClientError.malformedResponse }
        if let known = linked.accountCommitment, known != AccountCommitment.of(kdf: currentKDF, salt: Array(currentSalt)) {
            throw SyncError.accountParametersChanged
        }
        let currentKeys = try SyncKeys(passphrase: current, kdf: currentKDF, salt: Array(currentSalt), limits: limits)
        let header = SlotHeader.new(.passphrase, kdf: kdf, random: coffer.location.options.random)
        let newKeys = try SyncKeys(passphrase: new, kdf: kdf, salt: header.salt, limits: limits)
        let wrapped = try coffer.vault.wrapMasterKey(for: header, kek: newKeys.keyEncryptionKey)
        let slot = WrappedSlot(
            id: UUID(bytes: header.slotID), kdf: KDFParameters(kdf), salt: Data(header.salt).base64EncodedString(),
            wrappedKey: wrapped.base64EncodedString())
        let commitment = AccountCommitment.of(kdf: kdf, salt: header.salt)
        let access = try await freshAccessToken()
        var report = SyncReport()
        for _ in 0..<5 {
            try await pull(access: access, expect: nil, into: &report)
            guard let account = try coffer.vault.syncAccount() else { throw SyncError.notLinked }
            let verified = try account.head.map(Self.manifest)
            let leaves = try coffer.vault.syncedRows().leaves
            let manifest = try await nextManifest(after: verified, account: account, leaves: leaves, commitment: commitment)
            let request = PassphraseChangeRequest(
                authKey: currentKeys.authKeyBase64, newAuthKey: newKeys.authKeyBase64, slot: slot,
                baseEpoch: verified?.epoch ?? 0, manifest: manifest.base64)
            let answer: AuthResponse
            do {
                answer = try await client.changePassphrase(request, accessToken: access)
            } catch .staleHead {
                continue
            } catch {
                // Written out: leaving the rest of a typed catch to propagate crashes Swift 6.3's SILGen.
                throw error
            }
            try storeRefreshToken(answer.refreshToken)
            try coffer.vault.recordPush(
                [], head: (manifest.epoch, manifest.bytes), cursor: account.cursor, device: account.device,
                accountCommitment: commitment, at: Date())
            return
        }
        throw SyncError.tooManyConflicts
    }

    /// The manifest of the state whose rows have `leaves`, following `verified`; `commitment` replaces the account
    /// slot's (a passphrase change).
    func nextManifest(
        after verified: Manifest?, account: SyncAccount, leaves: [UUID: [UInt8]], commitment replacement: [UInt8]? = nil
    ) async throws -> Manifest {
        var commitment = replacement ?? account.accountCommitment ?? verified?.account
        if commitment == nil {
            // Linked by a version that did not record the account's parameters: take them as a new login would.
            let parameters = try await client.prelogin(email: account.account)
            let limits = coffer.location.options.limits
            let kdf = try Self.serverKDF(parameters.kdf, limits: limits)
            guard let salt = Data(base64Encoded: parameters.salt) else { throw SyncClientError.malformedResponse }
            commitment = AccountCommitment.of(kdf: kdf, salt: Array(salt))
        }
        var manifest = Manifest(
            vaultID: coffer.vault.vaultID, epoch: (verified?.epoch ?? 0) + 1, previous: verified?.hash ?? Manifest.noPrevious,
            root: StateRoot.root(leaves), count: UInt32(leaves.count), device: account.device,
            madeAt: UnixTime.milliseconds(Date()), keyEpoch: verified?.keyEpoch ?? UInt32(clamping: coffer.vault.keyEpoch),
            account: commitment ?? [])
        manifest.tag = coffer.vault.manifestTag(manifest.body)
        return manifest
    }
}
