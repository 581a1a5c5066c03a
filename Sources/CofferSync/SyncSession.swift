import CofferCrypto
@_spi(Sync) import CofferKit
import CofferKeystore
import CofferPlatform
import CofferSyncAPI
import CofferVault
import Crypto
import Foundation
import Logging

/// Failures of sync as a whole: the server's, the vault's, or the account's state.
public enum SyncError: Error, Sendable, CustomStringConvertible {
    case client(SyncClientError)
    case coffer(CofferError)
    case crypto(CofferCryptoError)
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
        case .client(let error): return error.description
        case .coffer(let error): return error.description
        case .crypto(let error): return error.description
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

/// Sync between a local vault and a `coffer-server` account (docs/SYNC.md). The refresh token lives in the device key
/// store; every run exchanges it for a fresh pair.
public struct SyncSession: Sendable {
    public let coffer: Coffer
    public let client: SyncClient
    /// When the login that made this session found the master key rotated by another device and took it: what that
    /// did (with the vault's new recovery code, when it has a recovery slot).
    public private(set) var keyChange: Vault.RotationResult?
    private let logger = Logger(label: "coffer.sync")

    public init(coffer: Coffer, client: SyncClient) {
        self.coffer = coffer
        self.client = client
    }

    // MARK: Linking

    /// Creates an account for this vault: a new passphrase slot wrapping the master key goes to the server with the
    /// auth key derived from the same stretch. The server never sees the passphrase or the wrapping key.
    public func register(email: String, passphrase: String, kdf: PassphraseKDF = .defaultPBKDF2) async throws(SyncError) {
        if let linked = try vault({ try $0.syncAccount() }) {
            throw .alreadyLinked(server: linked.server, account: linked.account)
        }
        let header = SlotHeader.new(.passphrase, kdf: kdf, random: coffer.location.options.random)
        let keys = try crypto { () throws(CofferCryptoError) in
            try SyncKeys(passphrase: passphrase, kdf: kdf, salt: header.salt, limits: coffer.location.options.limits)
        }
        let wrapped = try vault { try $0.wrapMasterKey(for: header, kek: keys.keyEncryptionKey) }
        let slot = WrappedSlot(
            id: UUID(bytes: header.slotID), kdf: KDFParameters(kdf), salt: Data(header.salt).base64EncodedString(),
            wrappedKey: wrapped.base64EncodedString())
        let answer = try await client { () throws(SyncClientError) in
            try await client.register(
                RegisterRequest(email: email, authKey: keys.authKeyBase64, vaultID: coffer.vault.vaultID, slot: slot))
        }
        try link(answer, email: email, accountCommitment: AccountCommitment.of(kdf: kdf, salt: header.salt))
    }

    /// Logs this device in. With no vault here yet, the account's slot is unwrapped with the passphrase and a local
    /// copy of the vault is created (`localPassphrase` becomes its passphrase slot); with the same vault here already,
    /// it is linked again, keeping the state it verified. When another device rotated the master key, the vault here
    /// takes the new one (`keyChange`; its own passphrase slot is re-wrapped with `localPassphrase`, else with the
    /// account's passphrase, else `.vaultPassphraseNeeded`).
    ///
    /// Before stretching anything, the prelogin parameters must be at least Coffer's defaults (unless
    /// `allowWeakKDF`), and a device that knows the account's parameters refuses others (unless
    /// `acceptParameterChange`): a server must not be able to cheapen guessing by asking for a weak stretch.
    ///
    /// A new device checks the server's head before it creates anything here: it must be authentic, commit to the slot
    /// the server handed out, and carry the fingerprint in `expect` when one is given.
    public static func login(
        location: CofferLocation, client: SyncClient, email: String, passphrase: String, localPassphrase: String?,
        allowWeakKDF: Bool = false, acceptParameterChange: Bool = false, expect: String? = nil
    ) async throws(SyncError) -> SyncSession {
        let limits = location.options.limits
        let existing: Coffer?
        do {
            existing = Vault.exists(in: location.vaultDirectory) ? try Coffer.open(at: location) : nil
        } catch {
            throw .coffer(error)
        }
        let parameters = try await clientCall { () throws(SyncClientError) in try await client.prelogin(email: email) }
        let kdf = try Self.serverKDF(parameters.kdf, limits: limits)
        guard let salt = Data(base64Encoded: parameters.salt) else { throw .client(.malformedResponse) }
        if !allowWeakKDF, !kdf.meetsDefaults { throw .weakKDF(kdf) }
        let commitment = AccountCommitment.of(kdf: kdf, salt: Array(salt))
        if let known = try existing.flatMap({ coffer throws(SyncError) in
            try vaultCall(coffer) { try $0.syncAccount() }
        }), known.server == client.server, known.account == email, let remembered = known.accountCommitment,
           remembered != commitment, !acceptParameterChange
        {
            throw .accountParametersChanged
        }
        let keys = try cryptoCall { () throws(CofferCryptoError) in
            try SyncKeys(passphrase: passphrase, kdf: kdf, salt: Array(salt), limits: limits)
        }
        let answer = try await clientCall { () throws(SyncClientError) in
            try await client.login(LoginRequest(email: email, authKey: keys.authKeyBase64))
        }
        guard let vaultID = answer.vaultID, let slot = answer.slot else { throw .client(.malformedResponse) }
        // The slot must be the one whose parameters were used; its AD binds vault id, slot id, KDF and salt.
        let header = try cryptoCall { () throws(CofferCryptoError) in try slot.header(limits: limits) }
        guard header.kdf == kdf, header.salt == Array(salt), let wrapped = Data(base64Encoded: slot.wrappedKey) else {
            throw .wrongPassphrase
        }
        let masterKey: SecretBytes
        do {
            masterKey = try header.unwrap(wrapped, vaultID: vaultID.bytes, kek: keys.keyEncryptionKey)
        } catch {
            throw .wrongPassphrase
        }
        let coffer: Coffer
        var keyChange: Vault.RotationResult?
        if let existing {
            guard existing.vault.vaultID == vaultID else { throw .differentVault }
            coffer = existing
            if !existing.vault.hasMasterKey(masterKey) {
                keyChange = try await takeRotatedKey(
                    coffer: existing, client: client, accessToken: answer.accessToken, masterKey: masterKey,
                    accountCommitment: commitment, accountPassphrase: passphrase, vaultPassphrase: localPassphrase)
            }
        } else {
            try await checkHeadBeforeJoining(
                client: client, accessToken: answer.accessToken, vaultID: vaultID, masterKey: masterKey,
                accountCommitment: commitment, expect: expect)
            do {
                coffer = try Coffer.join(at: location, vaultID: vaultID, masterKey: masterKey, passphrase: localPassphrase)
            } catch {
                throw .coffer(error)
            }
        }
        var session = SyncSession(coffer: coffer, client: client)
        session.keyChange = keyChange
        try session.link(answer, email: email, accountCommitment: commitment)
        return session
    }

    /// The server's newest head, checked with the master key alone: nothing is created for a server whose head is
    /// forged, of another vault, commits to another slot, or is not the one the user expects.
    static func checkHeadBeforeJoining(
        client: SyncClient, accessToken: String, vaultID: UUID, masterKey: SecretBytes, accountCommitment: [UInt8],
        expect: String?
    ) async throws(SyncError) {
        // The feed read past its end: no rows, and the newest head.
        let page = try await clientCall { () throws(SyncClientError) in
            try await client.changes(since: Int64.max, limit: 1, accessToken: accessToken)
        }
        guard let text = page.head else {
            if let expect { throw .verification(.unexpectedFingerprint(expected: expect, found: "no state")) }
            return
        }
        let head = try manifest(Array(Data(base64Encoded: text) ?? Data()))
        let key = KeySchedule.hkdf(masterKey, salt: vaultID.bytes, label: KeySchedule.manifestKeyLabel)
        let verifier = StateVerifier(vaultID: vaultID, keyEpoch: Int64(head.keyEpoch)) { body in
            Array(HMAC<SHA256>.authenticationCode(for: body, using: key))
        }
        do {
            try verifier.authenticate(head)
        } catch {
            throw .verification(error)
        }
        if let expect, !matches(expect, head) {
            throw .verification(.unexpectedFingerprint(expected: expect, found: head.fingerprint))
        }
        guard head.account == accountCommitment else { throw .verification(.slotReverted) }
    }

    /// Stores the session and links the vault. Logging in again to the same account keeps the device's id and the
    /// state it verified: a new login must not let a server roll the device back.
    func link(_ answer: AuthResponse, email: String, accountCommitment: [UInt8]) throws(SyncError) {
        try storeRefreshToken(answer.refreshToken)
        let current = try vault { try $0.syncAccount() }
        if var current, current.server == client.server, current.account == email, current.userID == answer.user.id {
            // The slot handed out at this login is checked against the head at the next pull (`slotReverted`).
            current.accountCommitment = accountCommitment
            let relinked = current
            try vault { try $0.setSyncAccount(relinked, keepingVerifiedState: true) }
            return
        }
        try vault {
            try $0.setSyncAccount(
                SyncAccount(server: client.server, account: email, userID: answer.user.id, accountCommitment: accountCommitment))
        }
    }

    /// Forgets the state this device verified, so that the next sync accepts the server's current state as a new
    /// device would (after a revoke, or a server restored from a backup); with `expect`, only that state.
    public func adopt() throws(SyncError) {
        guard try vault({ try $0.syncAccount() }) != nil else { throw .notLinked }
        try vault { try $0.resetVerifiedState() }
    }

    // MARK: Sync

    /// Pulls and verifies remote changes, merges them, pushes local ones with a manifest of the new state; repeats a
    /// push that met newer changes after pulling them, a bounded number of times. `expect` is the fingerprint
    /// (`Manifest.fingerprint`, or its part after the epoch) that the server's head must have when this device has
    /// verified none yet.
    public func sync(
        expect: String? = nil, progress: @Sendable (Int, Int) -> Void = { _, _ in }
    ) async throws(SyncError) -> SyncReport {
        guard try vault({ try $0.syncAccount() }) != nil else { throw .notLinked }
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
    ) async throws(SyncError) {
        var restoring = restoring
        var attempts = 0
        while true {
            let pending = try vault { try $0.pendingChanges(limit: SyncLimits.maxPushItems, maxBytes: SyncLimits.maxPushBoxBytes) }
            guard let account = try vault({ try $0.syncAccount() }) else { throw .notLinked }
            // An account no device has published a manifest for yet (made by an older coffer) gets its first one.
            if pending.isEmpty, account.head != nil, restoring == nil { break }
            let verified = try account.head.map(Self.manifest)
            let manifest = try await nextManifest(after: verified, account: account, adding: pending.map(\.row))
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
                try vault {
                    try $0.recordPush(
                        pending.map(\.row), head: (manifest.epoch, manifest.bytes), cursor: answer.cursor, device: account.device,
                        at: Date())
                }
                restoring = nil
                report.pushed += pending.count
                report.head = manifest
                let remaining = try vault { try $0.pendingCount() }
                progress(report.pushed, report.pushed + remaining)
            case .failure(.conflict(let claimed)) where restoring == nil:
                attempts += 1
                guard attempts <= 5 else { throw .tooManyConflicts }
                // The rows of a 409 are the server's word: nothing of them is applied. The verified pull brings the
                // real state, and each claimed row must be in it. It reads the whole set: a conflict without a row
                // (a write based on a row the server no longer holds) is a lost row, which only a full read shows.
                try await pull(access: access, expect: nil, readAll: true, into: &report)
                let known = try vault { try $0.syncedRows() }
                for row in claimed where !StateRoot.isServerFace(kind: row.kind) {
                    guard let revision = known.revisions[row.id], revision >= row.revision else {
                        throw .verification(.unverifiedConflict(row.id))
                    }
                }
            case .failure(.staleHead) where restoring == nil:
                attempts += 1
                guard attempts <= 5 else { throw .tooManyConflicts }
                try await pull(access: access, expect: nil, into: &report)
            case .failure(.conflict), .failure(.staleHead):
                // Another device wrote to the restored server meanwhile: its state is no longer the one checked.
                throw .tooManyConflicts
            case .failure(let error):
                throw .client(error)
            }
        }
    }

    /// Puts this device's verified history and state back on a server that was restored from a backup: the server's
    /// state must be one this device verified earlier (anything else is refused as an attack). The manifests the
    /// server lost go back from this device's record, followed by a manifest of this device's current state and the
    /// rows that differ. Devices that were up to date continue as before; the others report what they need.
    public func republish(progress: @Sendable (Int, Int) -> Void = { _, _ in }) async throws(SyncError) -> SyncReport {
        guard let account = try vault({ try $0.syncAccount() }) else { throw .notLinked }
        guard let verifiedBytes = account.head else { throw .nothingToRepublish }
        let verified = try Self.manifest(verifiedBytes)
        let access = try await freshAccessToken()
        let feed = try await readFeed(since: 0, access: access)
        let (serverRows, cursor, headText) = (feed.rows, feed.cursor, feed.head)
        let verifier = try makeVerifier(verified: verified)
        var base: Int64 = 0
        if let headText {
            let head = try Self.manifest(Array(Data(base64Encoded: headText) ?? Data()))
            try verification { () throws(VerificationFailure) in try verifier.authenticate(head) }
            guard head.epoch < verified.epoch else { throw .nothingToRepublish }
            // Only onto a state this device verified before: a restore, not a state the server made up.
            guard try vault({ try $0.verifiedManifest(epoch: head.epoch) }) == head.bytes else {
                throw .verification(.rolledBack(serverEpoch: head.epoch, verifiedEpoch: verified.epoch))
            }
            try verification { () throws(VerificationFailure) in
                try verifier.checkState(known: SyncedRows(), staged: serverRows, head: head, fullRead: true)
            }
            base = head.epoch
        } else if !serverRows.isEmpty {
            throw .verification(.headMissing(verifiedEpoch: verified.epoch))
        }
        let lost = try vault { try $0.verifiedManifests(after: base) }.map { bytes throws(SyncError) in try Self.manifest(bytes) }
        guard lost.map(\.epoch) == Array((base + 1)...verified.epoch) else { throw .historyIncomplete(from: base + 1) }
        // The server's rows are now the ones it holds; every local row that differs becomes a change to push.
        try vault { try $0.replaceServerRows(serverRows, cursor: cursor) }
        var report = SyncReport()
        try await pushPending(access: access, restoring: (base, lost), progress: progress, into: &report)
        return report
    }

    /// Replaces the account passphrase: a new slot wrapping the master key, a new auth key, and a manifest committing
    /// to the new slot, which the server stores in one step (so no device can be handed the old slot as current). The
    /// current passphrase is checked by the server; the vault's own local slots do not change.
    public func changePassphrase(current: String, new: String, kdf: PassphraseKDF = .defaultPBKDF2) async throws(SyncError) {
        guard let linked = try vault({ try $0.syncAccount() }) else { throw .notLinked }
        let limits = coffer.location.options.limits
        let parameters = try await client { () throws(SyncClientError) in try await client.prelogin(email: linked.account) }
        let currentKDF = try Self.serverKDF(parameters.kdf, limits: limits)
        guard let currentSalt = Data(base64Encoded: parameters.salt) else { throw .client(.malformedResponse) }
        if let known = linked.accountCommitment, known != AccountCommitment.of(kdf: currentKDF, salt: Array(currentSalt)) {
            throw .accountParametersChanged
        }
        let currentKeys = try crypto { () throws(CofferCryptoError) in
            try SyncKeys(passphrase: current, kdf: currentKDF, salt: Array(currentSalt), limits: limits)
        }
        let header = SlotHeader.new(.passphrase, kdf: kdf, random: coffer.location.options.random)
        let newKeys = try crypto { () throws(CofferCryptoError) in
            try SyncKeys(passphrase: new, kdf: kdf, salt: header.salt, limits: limits)
        }
        let wrapped = try vault { try $0.wrapMasterKey(for: header, kek: newKeys.keyEncryptionKey) }
        let slot = WrappedSlot(
            id: UUID(bytes: header.slotID), kdf: KDFParameters(kdf), salt: Data(header.salt).base64EncodedString(),
            wrappedKey: wrapped.base64EncodedString())
        let commitment = AccountCommitment.of(kdf: kdf, salt: header.salt)
        let access = try await freshAccessToken()
        var report = SyncReport()
        for _ in 0..<5 {
            try await pull(access: access, expect: nil, into: &report)
            guard let account = try vault({ try $0.syncAccount() }) else { throw .notLinked }
            let verified = try account.head.map(Self.manifest)
            let manifest = try await nextManifest(after: verified, account: account, adding: [], commitment: commitment)
            let request = PassphraseChangeRequest(
                authKey: currentKeys.authKeyBase64, newAuthKey: newKeys.authKeyBase64, slot: slot,
                baseEpoch: verified?.epoch ?? 0, manifest: manifest.base64)
            let answer: AuthResponse
            do {
                answer = try await client.changePassphrase(request, accessToken: access)
            } catch .staleHead {
                continue
            } catch {
                throw .client(error)
            }
            try storeRefreshToken(answer.refreshToken)
            try vault {
                try $0.recordPush(
                    [], head: (manifest.epoch, manifest.bytes), cursor: account.cursor, device: account.device,
                    accountCommitment: commitment, at: Date())
            }
            return
        }
        throw .tooManyConflicts
    }

    /// The manifest of the state after `rows` land on the server rows this device verified; `commitment` replaces the
    /// account slot's (a passphrase change).
    func nextManifest(
        after verified: Manifest?, account: SyncAccount, adding rows: [ItemRow], commitment replacement: [UInt8]? = nil
    ) async throws(SyncError) -> Manifest {
        var leaves = try vault { try $0.syncedRows() }.leaves
        for row in rows { leaves[row.id] = row.leaf }
        var commitment = replacement ?? account.accountCommitment ?? verified?.account
        if commitment == nil {
            // Linked by a version that did not record the account's parameters: take them as a new login would.
            let parameters = try await client { () throws(SyncClientError) in try await client.prelogin(email: account.account) }
            let limits = coffer.location.options.limits
            let kdf = try Self.serverKDF(parameters.kdf, limits: limits)
            guard let salt = Data(base64Encoded: parameters.salt) else { throw .client(.malformedResponse) }
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
    func pull(access: String, expect: String?, readAll: Bool = false, into report: inout SyncReport) async throws(SyncError) {
        guard let account = try vault({ try $0.syncAccount() }) else { throw .notLinked }
        let verified = try account.head.map(Self.manifest)
        let fresh = verified == nil
        let due = try fullCheckDue(now: Date())
        let fullRead = fresh || readAll || due
        let feed = try await readFeed(since: fullRead ? 0 : account.cursor, access: access)
        report.pulled += feed.read
        let (rows, cursor, headText) = (feed.rows, feed.cursor, feed.head)
        guard let headText else {
            if let verified { throw .verification(.headMissing(verifiedEpoch: verified.epoch)) }
            // Rows without a manifest are accepted only from an account no device has published a manifest for yet,
            // by a device that synced it with an older coffer (and so trusted these rows before); a server that
            // withholds the head cannot make a new device take what it likes. The boxes are checked as they are
            // applied, and this device's next push publishes the first manifest.
            guard rows.isEmpty || account.legacyLink else { throw .verification(.headMissing(verifiedEpoch: 0)) }
            let applied = try vault { vault throws(VaultError) in
                try vault.applyRemote(rows, head: nil, cursor: cursor, accountCommitment: nil, at: Date())
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
            if try vault({ try $0.verifiedManifest(epoch: head.epoch) }) == head.bytes {
                throw .verification(.restored(serverEpoch: serverEpoch, verifiedEpoch: verifiedEpoch))
            }
            throw .verification(.rolledBack(serverEpoch: serverEpoch, verifiedEpoch: verifiedEpoch))
        } catch {
            throw .verification(error)
        }
        if fresh, let expect, !Self.matches(expect, head) {
            throw .verification(.unexpectedFingerprint(expected: expect, found: head.fingerprint))
        }
        // At a fresh link the account slot came from the server: it must be the one the vault's head commits to.
        if fresh, let commitment = account.accountCommitment, commitment != head.account {
            throw .verification(.slotReverted)
        }
        let known = fullRead ? SyncedRows() : try vault { try $0.syncedRows() }
        do {
            try verifier.checkState(known: known, staged: rows, head: head, fullRead: fullRead)
        } catch {
            if let altered = coffer.vault.firstUnopenableRow(rows) { throw .verification(.alteredRow(altered)) }
            if !fullRead {
                do {
                    try await pull(access: access, expect: nil, readAll: true, into: &report)
                    return
                } catch .verification {
                    throw .verification(error)
                }
            }
            throw .verification(error)
        }
        // What was read adds up; now the whole set, once another device has moved the head.
        if !fullRead, chain.contains(where: { $0.device != account.device }) {
            try await pull(access: access, expect: nil, readAll: true, into: &report)
            return
        }
        var verifiedChain = chain.map { (epoch: $0.epoch, bytes: $0.bytes) }
        if verifiedChain.last?.epoch != head.epoch { verifiedChain.append((head.epoch, head.bytes)) }
        let recorded = verifiedChain
        let applied = try vault { vault throws(VaultError) in
            try vault.applyRemote(
                rows, head: head.bytes, chain: recorded, cursor: cursor, accountCommitment: head.account,
                replacingServerRows: fullRead, forgettingHistory: fresh, at: Date())
        }
        if fullRead {
            let checked = Self.fullCheckValue(Date())
            try vault { try $0.setLocalValue(Self.fullCheckName, checked) }
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
    func fullCheckDue(now: Date) throws(SyncError) -> Bool {
        guard let value = try vault({ try $0.localValue(Self.fullCheckName) }), value.count == 8 else { return true }
        let checked = value.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let nowMS = UInt64(max(0, UnixTime.milliseconds(now)))
        return checked > nowMS || nowMS - checked >= UInt64(Self.fullCheckInterval * 1000)
    }

    /// The feed from `cursor` to its end: each item's newest row (the feed lists an item at its latest change, so a
    /// later page's row replaces an earlier one's), server-face rows left out, in id order; the cursor reached; the
    /// last page's head; and how many rows were read.
    func readFeed(
        since start: Int64, access: String
    ) async throws(SyncError) -> (rows: [ItemRow], cursor: Int64, head: String?, read: Int) {
        var staged: [UUID: ItemRow] = [:]
        var cursor = start
        var read = 0
        while true {
            let page = try await client { () throws(SyncClientError) in
                try await client.changes(since: cursor, limit: SyncLimits.defaultPageItems, accessToken: access)
            }
            for row in page.items where !StateRoot.isServerFace(kind: row.kind) { staged[row.id] = row }
            read += page.items.count
            guard page.cursor >= cursor else { throw .client(.malformedResponse) }
            cursor = page.cursor
            if !page.hasMore {
                return (staged.values.sorted { $0.id.byteOrder < $1.id.byteOrder }, cursor, page.head, read)
            }
        }
    }

    /// The manifests after `verified` up to `head`, as the server lists them (checked by the caller).
    func chain(after verified: Manifest?, upTo head: Manifest, access: String) async throws(SyncError) -> [Manifest] {
        guard let verified, head.epoch > verified.epoch else { return [] }
        var chain: [Manifest] = []
        var after = verified.epoch
        while after < head.epoch {
            let page = try await client { () throws(SyncClientError) in
                try await client.manifests(after: after, limit: SyncLimits.maxPageManifests, accessToken: access)
            }
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
    func makeVerifier(verified: Manifest?) throws(SyncError) -> StateVerifier {
        let keys = try vault { try $0.manifestKeys() }
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
    public func verifiedHead() throws(SyncError) -> VerifiedHead? {
        guard let account = try vault({ try $0.syncAccount() }), let bytes = account.head else { return nil }
        let manifest = try Self.manifest(bytes)
        return VerifiedHead(manifest: manifest, madeHere: manifest.device == account.device)
    }

    static func manifest(_ bytes: [UInt8]) throws(SyncError) -> Manifest {
        do {
            return try Manifest(bytes: bytes)
        } catch {
            throw .verification(.stateMismatch)
        }
    }

    // MARK: Status, logout, revoke

    /// The account, the server's view of it (nil when offline), local changes not yet pushed, and conflict copies.
    public func status() async throws(SyncError) -> SyncStatusReport {
        guard let account = try vault({ try $0.syncAccount() }) else { throw .notLinked }
        let pending = try vault { try $0.pendingCount() }
        let conflicts = try vault { try $0.syncConflicts() }
        var server: AccountResponse?
        do {
            let access = try await freshAccessToken()
            server = try await client.account(accessToken: access)
        } catch {
            logger.info("sync server unreachable for status")
        }
        return SyncStatusReport(account: account, server: server, pending: pending, conflicts: conflicts)
    }

    /// Ends the session on the server (when reachable) and unlinks the vault here; the items stay.
    public func logout() async throws(SyncError) {
        guard try vault({ try $0.syncAccount() }) != nil else { throw .notLinked }
        if let access = try? await freshAccessToken() {
            try? await client.logout(accessToken: access)
        }
        try keystore { () throws(KeystoreError) in try coffer.keystore.deleteSecret(for: coffer.syncTokenAccount) }
        try vault { try $0.setSyncAccount(nil) }
    }

    /// Deletes every server copy of this account's items; the account and the items here stay. Returns how many.
    public func revoke() async throws(SyncError) -> Int {
        guard let account = try vault({ try $0.syncAccount() }) else { throw .notLinked }
        let access = try await freshAccessToken()
        let deleted = try await client { () throws(SyncClientError) in try await client.revoke(accessToken: access) }
        // Nothing is on the server now: forget what it had, so a later sync pushes everything again.
        try vault {
            try $0.setSyncAccount(SyncAccount(
                server: account.server, account: account.account, userID: account.userID, device: account.device,
                accountCommitment: account.accountCommitment))
        }
        return deleted
    }

    // MARK: Tokens

    /// Refreshes the session. The retry key goes into the key store with the token before the request, so that a
    /// process killed, or a connection dropped, after the server rotated the token but before its answer was stored
    /// presents the token again with the same key and gets the same successor instead of ending the session; a key
    /// found stored is such a refresh's, and is sent again. Reading the entry and storing a new key happen under the
    /// vault's refresh lock (docs/FORMAT.md §1), so that two processes of this device refreshing at once send one
    /// token with one key: the second gets the successor the first did, where it would otherwise end the session.
    func freshAccessToken() async throws(SyncError) -> String {
        let pending = try FileLock.withLock(coffer.location.vaultDirectory + "/" + Self.refreshLockName) { () throws(SyncError) in
            guard let stored = try keystore({ () throws(KeystoreError) in try coffer.keystore.secret(for: coffer.syncTokenAccount) }),
                  var entry = SyncTokenEntry(stored)
            else { throw .client(.server(status: 401, code: "unauthorized", message: "log in again: coffer sync login")) }
            if entry.retryKey == nil {
                entry.retryKey = RefreshRetryKey(random: coffer.location.options.random)
                try store(entry)
            }
            return entry
        }
        let answer = try await client { () throws(SyncClientError) in
            try await client.refresh(pending.refreshToken, retryKey: pending.retryKey)
        }
        try storeRefreshToken(answer.refreshToken)
        return answer.accessToken
    }

    /// The empty file in the vault directory whose `flock` serialises this device's refresh preparations.
    static let refreshLockName = "sync-refresh.lock"

    /// Stores a new refresh token, which clears a retry key stored with the one before.
    func storeRefreshToken(_ token: String) throws(SyncError) {
        try store(SyncTokenEntry(refreshToken: token))
    }

    private func store(_ entry: SyncTokenEntry) throws(SyncError) {
        try keystore { () throws(KeystoreError) in
            try coffer.keystore.replaceSecret(entry.secret, for: coffer.syncTokenAccount)
        }
    }

    // MARK: Plumbing

    func vault<T>(_ body: (Vault) throws -> T) throws(SyncError) -> T {
        try Self.vaultCall(coffer, body)
    }

    static func vaultCall<T>(_ coffer: Coffer, _ body: (Vault) throws -> T) throws(SyncError) -> T {
        do {
            return try body(coffer.vault)
        } catch let error as VaultError {
            throw .coffer(.vault(error))
        } catch {
            throw .coffer(.vault(.storage("unexpected failure")))
        }
    }

    func verification<T>(_ body: () throws(VerificationFailure) -> T) throws(SyncError) -> T {
        do {
            return try body()
        } catch {
            throw .verification(error)
        }
    }

    func keystore<T>(_ body: () throws(KeystoreError) -> T) throws(SyncError) -> T {
        do {
            return try body()
        } catch {
            throw .coffer(.keystore(error))
        }
    }

    func crypto<T>(_ body: () throws(CofferCryptoError) -> T) throws(SyncError) -> T {
        try Self.cryptoCall(body)
    }

    /// The stretching parameters the server names for an account, or `unusableKDF` when no Coffer would use them:
    /// one refusal, with `weakKDF`'s exit status, whatever is wrong with them.
    static func serverKDF(_ parameters: KDFParameters, limits: KDFLimits) throws(SyncError) -> PassphraseKDF {
        do {
            return try parameters.kdf(limits: limits)
        } catch {
            throw .unusableKDF(error.description)
        }
    }

    static func cryptoCall<T>(_ body: () throws(CofferCryptoError) -> T) throws(SyncError) -> T {
        do {
            return try body()
        } catch {
            throw .crypto(error)
        }
    }

    func client<T>(_ body: () async throws(SyncClientError) -> T) async throws(SyncError) -> T {
        try await Self.clientCall(body)
    }

    static func clientCall<T>(_ body: () async throws(SyncClientError) -> T) async throws(SyncError) -> T {
        do {
            return try await body()
        } catch {
            throw .client(error)
        }
    }

}
