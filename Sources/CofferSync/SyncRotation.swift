import CofferCrypto
@_spi(Sync) import CofferKit
import CofferSyncAPI
import CofferVault
import Crypto
import Foundation

/// What rotating a synced vault's master key did.
public struct SyncRotationReport: Sendable, Equatable {
    /// Items re-encrypted, and the new recovery code when the vault has a recovery slot.
    public var rotation: Vault.RotationResult
    /// The manifest of the rotated state: the one other devices verify once they have the new key.
    public var head: Manifest
}

extension SyncSession {
    // MARK: Rotating here

    /// Rotates the master key of a synced vault (docs/FORMAT.md §8.8): after a sync, a new key and every item
    /// re-sealed under it are prepared here, the rows are staged on the server, and one commit there replaces the rows,
    /// the account slot (re-wrapped under the same passphrase, parameters and salt) and the head; then the vault here
    /// takes the new key in one transaction. Other devices find a head made under a key they do not hold and log in
    /// again once (`login`, which takes the new key).
    ///
    /// `accountPassphrase` is the sync account's (checked by the server and by opening the account slot);
    /// `vaultPassphrase` opens this vault's own passphrase slot, when it has one. A crash at any point loses nothing:
    /// before the server's commit the old key stays in use everywhere; after it, the next sync or rotation here finds
    /// the rotation's manifest on the server and finishes (`resumeRotation`). Other devices that change the vault
    /// meanwhile make the commit fail; the rotation is then prepared again, a bounded number of times.
    public func rotateMasterKey(
        accountPassphrase: String, vaultPassphrase: String?, progress: @Sendable (Int, Int) -> Void = { _, _ in }
    ) async throws -> SyncRotationReport {
        guard let linked = try coffer.vault.syncAccount() else { throw SyncError.notLinked }
        var access = try await freshAccessToken()
        _ = try await resumeRotation(access: access)
        let limits = coffer.location.options.limits
        let parameters = try await client.prelogin(email: linked.account)
        let kdf = try Self.serverKDF(parameters.kdf, limits: limits)
        guard let salt = Data(base64Encoded: parameters.salt) else { throw SyncClientError.malformedResponse }
        let commitment = AccountCommitment.of(kdf: kdf, salt: Array(salt))
        if let known = linked.accountCommitment, known != commitment { throw SyncError.accountParametersChanged }
        let keys = try SyncKeys(passphrase: accountPassphrase, kdf: kdf, salt: Array(salt), limits: limits)
        // A login checks the passphrase with the server before anything is prepared, and hands out the account slot,
        // which must hold this vault's key: the new slot is wrapped under the same key-encryption key.
        let answer = try await client.login(LoginRequest(email: linked.account, authKey: keys.authKeyBase64))
        try storeRefreshToken(answer.refreshToken)
        access = answer.accessToken
        guard let slot = answer.slot else { throw SyncClientError.malformedResponse }
        let header = try slot.header(limits: limits)
        guard header.kdf == kdf, header.salt == Array(salt), let wrapped = Data(base64Encoded: slot.wrappedKey) else {
            throw SyncError.wrongPassphrase
        }
        let current: SecretBytes
        do {
            current = try header.unwrap(wrapped, vaultID: coffer.vault.vaultID.bytes, kek: keys.keyEncryptionKey)
        } catch {
            throw SyncError.wrongPassphrase
        }
        for _ in 0..<5 {
            var report = SyncReport()
            try await pull(access: access, expect: nil, into: &report)
            try await pushPending(access: access, restoring: nil, progress: { _, _ in }, into: &report)
            // After the pull: a slot holding another key than this vault's is another device's rotation.
            guard coffer.vault.hasMasterKey(current) else { throw SyncError.verification(.slotReverted) }
            guard let account = try coffer.vault.syncAccount() else { throw SyncError.notLinked }
            let verified = try account.head.map(Self.manifest)
            let accountKeyEpoch = verified.map { Int64($0.keyEpoch) } ?? coffer.vault.keyEpoch
            let prepared = try coffer.prepareSyncedRotation(passphrase: vaultPassphrase, accountKeyEpoch: accountKeyEpoch)
            let rows = try coffer.vault.preparedRotationRows()
            let known = try coffer.vault.syncedRows()
            var staged = 0
            for batch in Self.batches(rows) {
                let request = RotationItemsRequest(items: batch.map { PushItem(item: $0, baseRevision: known.revisions[$0.id] ?? 0) })
                _ = try await client.stageRotation(prepared.id, request, accessToken: access)
                staged += batch.count
                progress(staged, rows.count)
            }
            var leaves = known.leaves
            for row in rows { leaves[row.id] = row.leaf }
            var manifest = Manifest(
                vaultID: coffer.vault.vaultID, epoch: (verified?.epoch ?? 0) + 1, previous: verified?.hash ?? Manifest.noPrevious,
                root: StateRoot.root(leaves), count: UInt32(leaves.count), device: account.device,
                madeAt: UnixTime.milliseconds(Date()), keyEpoch: UInt32(clamping: prepared.keyEpoch), account: commitment)
            let epoch = manifest.epoch
            let newKeys = try coffer.vault.preparedManifestKeys(rotationEpoch: epoch)
            manifest.tag = newKeys.tags(body: manifest.body, epoch: manifest.epoch)[0]
            let made = manifest
            try coffer.vault.recordPreparedManifest(epoch: made.epoch, bytes: made.bytes)
            let newHeader = SlotHeader(
                slotID: coffer.location.options.random.bytes(16), type: .passphrase, kdf: kdf, salt: Array(salt))
            let newWrapped = try coffer.vault.wrapPreparedMasterKey(for: newHeader, kek: keys.keyEncryptionKey)
            let request = RotationCommitRequest(
                authKey: keys.authKeyBase64,
                slot: WrappedSlot(
                    id: UUID(bytes: newHeader.slotID), kdf: parameters.kdf, salt: parameters.salt,
                    wrappedKey: newWrapped.base64EncodedString()),
                baseEpoch: verified?.epoch ?? 0, manifest: manifest.base64, items: rows.count)
            let outcome: Result<PushResponse, SyncClientError>
            do {
                outcome = .success(try await client.commitRotation(prepared.id, request, accessToken: access))
            } catch {
                outcome = .failure(error)
            }
            switch outcome {
            case .success(let answer):
                let result = try coffer.commitPreparedRotation(cursor: answer.cursor)
                return SyncRotationReport(rotation: result, head: manifest)
            case .failure(.staleHead), .failure(.conflict):
                // Another device changed the vault meanwhile, or this very commit landed and its answer was lost (a
                // server that died after committing, a request sent again): the server's history says which. Only a
                // rotation the server does not hold is dropped and prepared again.
                if let result = try await resumeRotation(access: access) {
                    return SyncRotationReport(rotation: result, head: manifest)
                }
            case .failure(let error):
                // The server may or may not have taken it: the next sync or rotation here finds out.
                throw error
            }
        }
        throw SyncError.tooManyConflicts
    }

    /// Finishes or forgets a rotation prepared here by a run that did not end: when the server holds the rotation's
    /// manifest, the rotation committed there and is put in use here (its result is returned, with the new recovery
    /// code); otherwise it never landed, and is dropped on both sides.
    func resumeRotation(access: String) async throws -> Vault.RotationResult? {
        guard let prepared = try coffer.vault.preparedRotation() else { return nil }
        if let manifest = prepared.manifest {
            if try await serverHolds(manifest, access: access) { return try commitPreparedHere() }
            // A commit sent by a run that was killed may still be on its way, or running on the server: the discard
            // settles it (the server takes one of the two for the rotation's staged rows, and a commit without them
            // is refused), so only after it is the server asked again, and its answer is final.
            try await client.discardRotation(prepared.id, accessToken: access)
            if try await serverHolds(manifest, access: access) { return try commitPreparedHere() }
        } else {
            try? await client.discardRotation(prepared.id, accessToken: access)
        }
        try coffer.discardPreparedRotation()
        return nil
    }

    /// Whether the server's history holds `manifest` at its epoch: the rotation it ends committed there.
    private func serverHolds(_ manifest: (epoch: Int64, bytes: [UInt8]), access: String) async throws -> Bool {
        let page = try await client.manifests(after: manifest.epoch - 1, limit: 1, accessToken: access)
        guard let first = page.manifests.first else { return false }
        return Data(base64Encoded: first).map(Array.init) == manifest.bytes
    }

    /// Puts the rotation the server committed in use here. The feed is read again from where this device was: the
    /// rotation's rows are among the changes.
    private func commitPreparedHere() throws -> Vault.RotationResult {
        guard let account = try coffer.vault.syncAccount() else { throw SyncError.notLinked }
        return try coffer.commitPreparedRotation(cursor: account.cursor)
    }

    // MARK: Taking another device's rotation

    /// Takes the master key that another device rotated the vault to (once or several times), unwrapped from the
    /// account slot at login. The server's head must be made under that key, commit to the account slot, and extend
    /// the history this device verified: manifests under the old key up to the first rotation and none after it (a
    /// holder of the old key cannot extend the history). Then every item here is re-sealed under the new key
    /// (`Coffer.rekey`).
    static func takeRotatedKey(
        coffer: Coffer, client: SyncClient, accessToken: String, masterKey: SecretBytes, accountCommitment: [UInt8],
        accountPassphrase: String, vaultPassphrase: String?
    ) async throws -> Vault.RotationResult? {
        let session = SyncSession(coffer: coffer, client: client)
        if try coffer.vault.preparedRotation() != nil {
            // This device's own rotation, which the server took before the device could finish it.
            _ = try await session.resumeRotation(access: accessToken)
            if coffer.vault.hasMasterKey(masterKey) { return nil }
        }
        let vaultID = coffer.vault.vaultID
        let account = try coffer.vault.syncAccount()
        let verified = try account?.head.map(manifest)
        let page = try await client.changes(since: Int64.max, limit: 1, accessToken: accessToken)
        guard let text = page.head else { throw SyncError.verification(.headMissing(verifiedEpoch: verified?.epoch ?? 0)) }
        let head = try manifest(Array(Data(base64Encoded: text) ?? Data()))
        let newKey = KeySchedule.hkdf(masterKey, salt: vaultID.bytes, label: KeySchedule.manifestKeyLabel)
        let madeByNewKey = { (manifest: Manifest) -> Bool in
            ConstantTime.equal(Array(HMAC<SHA256>.authenticationCode(for: manifest.body, using: newKey)), manifest.tag)
        }
        guard head.vaultID == vaultID else { throw SyncError.verification(.otherVault) }
        guard madeByNewKey(head) else { throw SyncError.verification(.forgedManifest(epoch: head.epoch)) }
        guard head.account == accountCommitment else { throw SyncError.verification(.slotReverted) }
        var rotationEpoch = head.epoch
        if let verified {
            if head.epoch < verified.epoch { throw SyncError.verification(.rolledBack(serverEpoch: head.epoch, verifiedEpoch: verified.epoch)) }
            if head.epoch == verified.epoch { throw SyncError.verification(.forked(epoch: verified.epoch)) }
            // The head, made under the new key, must extend what this device verified: manifests under the old key
            // up to the first rotation, then under keys this device never held (rotations it missed; the hash links
            // to the head prove them), then under the new key.
            let oldKeys = try coffer.vault.manifestKeys()
            let madeByOldKey = { (manifest: Manifest) -> Bool in
                oldKeys.tags(body: manifest.body, epoch: manifest.epoch).contains { ConstantTime.equal($0, manifest.tag) }
            }
            let verifier = StateVerifier(vaultID: vaultID, keyEpoch: Int64(verified.keyEpoch)) { manifest in
                [Array(HMAC<SHA256>.authenticationCode(for: manifest.body, using: newKey))]
                    + oldKeys.tags(body: manifest.body, epoch: manifest.epoch)
            }
            let chain = try await session.chain(after: verified, upTo: head, access: accessToken)
            do throws(VerificationFailure) {
                try verifier.checkHistory(verified: verified, head: head, chain: chain)
            } catch {
                throw SyncError.verification(error)
            }
            // The old key retired at the first manifest it did not make; no manifest after that one may be its.
            guard let retired = chain.firstIndex(where: { !madeByOldKey($0) }),
                !chain[retired...].contains(where: madeByOldKey)
            else { throw SyncError.verification(.forgedManifest(epoch: head.epoch)) }
            rotationEpoch = chain[retired].epoch
        }
        let hasPassphraseSlot = try coffer.vault.slots().contains { $0.type == .passphrase }
        do {
            return try coffer.rekey(
                to: masterKey, rotationEpoch: rotationEpoch, passphrase: hasPassphraseSlot ? vaultPassphrase ?? accountPassphrase : nil)
        } catch VaultError.wrongPassphrase {
            throw SyncError.vaultPassphraseNeeded
        }
    }
}

extension SyncSession {
    /// `rows` in batches a push may carry: at most `SyncLimits.maxPushItems` rows and `SyncLimits.maxPushBoxBytes`
    /// of boxes each (a batch holds at least one row).
    static func batches(_ rows: [ItemRow]) -> [ArraySlice<ItemRow>] {
        var batches: [ArraySlice<ItemRow>] = []
        var rest = rows[...]
        while !rest.isEmpty {
            let batch = rest.prefix(batchLength(rest.lazy.map { $0.box?.count ?? 0 }))
            batches.append(batch)
            rest = rest.dropFirst(batch.count)
        }
        return batches
    }

    /// How many of the rows whose boxes have these sizes, from the first, one push may carry (see `batches`).
    static func batchLength(_ sizes: some Sequence<Int>) -> Int {
        var count = 0
        var bytes = 0
        for size in sizes {
            if count > 0, count == SyncLimits.maxPushItems || bytes + size > SyncLimits.maxPushBoxBytes { break }
            count += 1
            bytes += size
        }
        return count
    }
}
