import CofferCrypto
@_spi(Sync) import CofferKit
import CofferKeystore
import CofferPlatform
import CofferSyncAPI
import CofferVault
import Crypto
import Foundation
import Logging

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
    public func register(email: String, passphrase: String, kdf: PassphraseKDF = .defaultPBKDF2) async throws {
        if let linked = try coffer.vault.syncAccount() {
            throw SyncError.alreadyLinked(server: linked.server, account: linked.account)
        }
        let header = SlotHeader.new(.passphrase, kdf: kdf, random: coffer.location.options.random)
        let keys = try SyncKeys(passphrase: passphrase, kdf: kdf, salt: header.salt, limits: coffer.location.options.limits)
        let wrapped = try coffer.vault.wrapMasterKey(for: header, kek: keys.keyEncryptionKey)
        let slot = WrappedSlot(
            id: UUID(bytes: header.slotID), kdf: KDFParameters(kdf), salt: Data(header.salt).base64EncodedString(),
            wrappedKey: wrapped.base64EncodedString())
        let answer = try await client.register(
            RegisterRequest(email: email, authKey: keys.authKeyBase64, vaultID: coffer.vault.vaultID, slot: slot))
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
    ) async throws -> SyncSession {
        let limits = location.options.limits
        let existing = Vault.exists(in: location.vaultDirectory) ? try Coffer.open(at: location) : nil
        let parameters = try await client.prelogin(email: email)
        let kdf = try Self.serverKDF(parameters.kdf, limits: limits)
        guard let salt = Data(base64Encoded: parameters.salt) else { throw SyncClientError.malformedResponse }
        if !allowWeakKDF, !kdf.meetsDefaults { throw SyncError.weakKDF(kdf) }
        let commitment = AccountCommitment.of(kdf: kdf, salt: Array(salt))
        if let known = try existing?.vault.syncAccount(), known.server == client.server, known.account == email,
            let remembered = known.accountCommitment, remembered != commitment, !acceptParameterChange
        {
            throw SyncError.accountParametersChanged
        }
        let keys = try SyncKeys(passphrase: passphrase, kdf: kdf, salt: Array(salt), limits: limits)
        let answer = try await client.login(LoginRequest(email: email, authKey: keys.authKeyBase64))
        guard let vaultID = answer.vaultID, let slot = answer.slot else { throw SyncClientError.malformedResponse }
        // The slot must be the one whose parameters were used; its AD binds vault id, slot id, KDF and salt.
        let header = try slot.header(limits: limits)
        guard header.kdf == kdf, header.salt == Array(salt), let wrapped = Data(base64Encoded: slot.wrappedKey) else {
            throw SyncError.wrongPassphrase
        }
        let masterKey: SecretBytes
        do {
            masterKey = try header.unwrap(wrapped, vaultID: vaultID.bytes, kek: keys.keyEncryptionKey)
        } catch {
            throw SyncError.wrongPassphrase
        }
        let coffer: Coffer
        var keyChange: Vault.RotationResult?
        if let existing {
            guard existing.vault.vaultID == vaultID else { throw SyncError.differentVault }
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
            coffer = try Coffer.join(at: location, vaultID: vaultID, masterKey: masterKey, passphrase: localPassphrase)
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
    ) async throws {
        // The feed read past its end: no rows, and the newest head.
        let page = try await client.changes(since: Int64.max, limit: 1, accessToken: accessToken)
        guard let text = page.head else {
            if let expect { throw SyncError.verification(.unexpectedFingerprint(expected: expect, found: "no state")) }
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
            throw SyncError.verification(error)
        }
        if let expect, !matches(expect, head) {
            throw SyncError.verification(.unexpectedFingerprint(expected: expect, found: head.fingerprint))
        }
        guard head.account == accountCommitment else { throw SyncError.verification(.slotReverted) }
    }

    /// Stores the session and links the vault. Logging in again to the same account keeps the device's id and the
    /// state it verified: a new login must not let a server roll the device back.
    func link(_ answer: AuthResponse, email: String, accountCommitment: [UInt8]) throws {
        try storeRefreshToken(answer.refreshToken)
        let current = try coffer.vault.syncAccount()
        if var current, current.server == client.server, current.account == email, current.userID == answer.user.id {
            // The slot handed out at this login is checked against the head at the next pull (`slotReverted`).
            current.accountCommitment = accountCommitment
            let relinked = current
            try coffer.vault.setSyncAccount(relinked, keepingVerifiedState: true)
            return
        }
        try coffer.vault.setSyncAccount(
            SyncAccount(server: client.server, account: email, userID: answer.user.id, accountCommitment: accountCommitment))
    }

    /// Forgets the state this device verified, so that the next sync accepts the server's current state as a new
    /// device would (after a revoke, or a server restored from a backup); with `expect`, only that state.
    public func adopt() throws {
        guard try coffer.vault.syncAccount() != nil else { throw SyncError.notLinked }
        try coffer.vault.resetVerifiedState()
    }

    // MARK: Status, logout, revoke

    /// The account, the server's view of it (nil when offline), local changes not yet pushed, and conflict copies.
    public func status() async throws -> SyncStatusReport {
        guard let account = try coffer.vault.syncAccount() else { throw SyncError.notLinked }
        let pending = try coffer.vault.pendingCount()
        let conflicts = try coffer.vault.syncConflicts()
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
    public func logout() async throws {
        guard try coffer.vault.syncAccount() != nil else { throw SyncError.notLinked }
        if let access = try? await freshAccessToken() {
            try? await client.logout(accessToken: access)
        }
        try coffer.keystore.deleteSecret(for: coffer.syncTokenAccount)
        try coffer.vault.setSyncAccount(nil)
    }

    /// Deletes every server copy of this account's items; the account and the items here stay. Returns how many.
    public func revoke() async throws -> Int {
        guard let account = try coffer.vault.syncAccount() else { throw SyncError.notLinked }
        let access = try await freshAccessToken()
        let deleted = try await client.revoke(accessToken: access)
        // Nothing is on the server now: forget what it had, so a later sync pushes everything again.
        try coffer.vault.setSyncAccount(
            SyncAccount(
                server: account.server, account: account.account, userID: account.userID, device: account.device,
                accountCommitment: account.accountCommitment))
        return deleted
    }

    // MARK: Tokens

    /// Refreshes the session. The retry key goes into the key store with the token before the request, so that a
    /// process killed, or a connection dropped, after the server rotated the token but before its answer was stored
    /// presents the token again with the same key and gets the same successor instead of ending the session; a key
    /// found stored is such a refresh's, and is sent again. Reading the entry and storing a new key happen under the
    /// vault's refresh lock (docs/FORMAT.md §1), so that two processes of this device refreshing at once send one
    /// token with one key: the second gets the successor the first did, where it would otherwise end the session.
    func freshAccessToken() async throws -> String {
        let pending = try FileLock.withLock(coffer.location.vaultDirectory + "/" + Self.refreshLockName) { () throws in
            guard let stored = try coffer.keystore.secret(for: coffer.syncTokenAccount),
                var entry = SyncTokenEntry(stored)
            else { throw SyncClientError.server(status: 401, code: "unauthorized", message: "log in again: coffer sync login") }
            if entry.retryKey == nil {
                entry.retryKey = RefreshRetryKey(random: coffer.location.options.random)
                try store(entry)
            }
            return entry
        }
        let answer = try await client.refresh(pending.refreshToken, retryKey: pending.retryKey)
        try storeRefreshToken(answer.refreshToken)
        return answer.accessToken
    }

    /// The empty file in the vault directory whose `flock` serialises this device's refresh preparations.
    static let refreshLockName = "sync-refresh.lock"

    /// Stores a new refresh token, which clears a retry key stored with the one before.
    func storeRefreshToken(_ token: String) throws {
        try store(SyncTokenEntry(refreshToken: token))
    }

    private func store(_ entry: SyncTokenEntry) throws {
        try coffer.keystore.replaceSecret(entry.secret, for: coffer.syncTokenAccount)
    }

    // MARK: Plumbing

    /// `body`'s verification failure, as the sync failure callers act on (refused state: nothing was applied).
    func verification<T>(_ body: () throws(VerificationFailure) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw SyncError.verification(error)
        }
    }

    /// The stretching parameters the server names for an account, or `unusableKDF` when no Coffer would use them:
    /// one refusal, with `weakKDF`'s exit status, whatever is wrong with them.
    static func serverKDF(_ parameters: KDFParameters, limits: KDFLimits) throws -> PassphraseKDF {
        do {
            return try parameters.kdf(limits: limits)
        } catch {
            throw SyncError.unusableKDF(error.description)
        }
    }
}
