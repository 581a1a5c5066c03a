import CofferCrypto
import CofferKit
import CofferKeystore
import CofferSyncAPI
import CofferVault
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
        }
    }
}

/// What one `coffer sync` did.
public struct SyncReport: Sendable, Equatable {
    public var pulled = 0
    public var pushed = 0
    public var merge = RemoteMergeReport()
    public var cursor: Int64 = 0

    public init() {}
}

/// Sync between a local vault and a `coffer-server` account (docs/SYNC.md). The refresh token lives in the device key
/// store; every run exchanges it for a fresh pair.
public struct SyncSession: Sendable {
    public let coffer: Coffer
    public let client: SyncClient
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
        try link(answer, email: email)
    }

    /// Logs this device in. With no vault here yet, the account's slot is unwrapped with the passphrase and a local
    /// copy of the vault is created (`localPassphrase` becomes its passphrase slot); with the same vault here already,
    /// it is linked again.
    public static func login(
        location: CofferLocation, client: SyncClient, email: String, passphrase: String, localPassphrase: String?
    ) async throws(SyncError) -> SyncSession {
        let limits = location.options.limits
        let parameters = try await clientCall { () throws(SyncClientError) in try await client.prelogin(email: email) }
        let kdf = try cryptoCall { () throws(CofferCryptoError) in try parameters.kdf.kdf(limits: limits) }
        guard let salt = Data(base64Encoded: parameters.salt) else { throw .client(.malformedResponse) }
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
        do {
            if Vault.exists(in: location.vaultDirectory) {
                coffer = try Coffer.open(at: location)
                guard coffer.vault.vaultID == vaultID else { throw SyncError.differentVault }
            } else {
                coffer = try Coffer.join(at: location, vaultID: vaultID, masterKey: masterKey, passphrase: localPassphrase)
            }
        } catch let error as SyncError {
            throw error
        } catch let error as CofferError {
            throw .coffer(error)
        } catch {
            throw .wrongPassphrase
        }
        let session = SyncSession(coffer: coffer, client: client)
        try session.link(answer, email: email)
        return session
    }

    private func link(_ answer: AuthResponse, email: String) throws(SyncError) {
        try storeRefreshToken(answer.refreshToken)
        try vault { try $0.setSyncAccount(SyncAccount(server: client.server, account: email, userID: answer.user.id)) }
    }

    // MARK: Sync

    /// Pulls remote changes, merges them, pushes local ones; repeats a push that met newer changes after merging
    /// them, a bounded number of times.
    public func sync(progress: @Sendable (Int, Int) -> Void = { _, _ in }) async throws(SyncError) -> SyncReport {
        guard try vault({ try $0.syncAccount() }) != nil else { throw .notLinked }
        let access = try await freshAccessToken()
        var report = SyncReport()
        try await pull(access: access, into: &report)
        var attempts = 0
        while true {
            let pending = try vault { try $0.pendingChanges(limit: SyncLimits.maxPushItems) }
            if pending.isEmpty { break }
            let request = PushRequest(items: pending.map { change in
                PushItem(
                    item: SyncItem(
                        id: change.row.id, kind: change.row.kind, revision: change.row.revision, updatedAt: change.row.updatedAt,
                        deleted: change.row.deleted, box: change.row.box?.base64EncodedString()),
                    baseRevision: change.baseRevision)
            })
            let outcome: Result<PushResponse, SyncClientError>
            do {
                outcome = .success(try await client.push(request, accessToken: access))
            } catch {
                outcome = .failure(error)
            }
            switch outcome {
            case .success:
                try vault { try $0.markSynced(pending.map { ($0.row.id, $0.row.revision) }) }
                report.pushed += pending.count
                let remaining = try vault { try $0.pendingChanges().count }
                progress(report.pushed, report.pushed + remaining)
            case .failure(.conflict(let items)):
                attempts += 1
                guard attempts <= 5 else { throw .tooManyConflicts }
                report.merge.add(try vault { try $0.mergeRemote(items.compactMap(Self.row)) })
            case .failure(let error):
                throw .client(error)
            }
        }
        try await pull(access: access, into: &report)
        return report
    }

    private func pull(access: String, into report: inout SyncReport) async throws(SyncError) {
        guard var cursor = try vault({ try $0.syncAccount() })?.cursor else { throw .notLinked }
        while true {
            let page = try await client { () throws(SyncClientError) in
                try await client.changes(since: cursor, limit: SyncLimits.defaultPageItems, accessToken: access)
            }
            let rows = page.items.compactMap(Self.row)
            report.merge.add(try vault { try $0.mergeRemote(rows) })
            report.merge.unreadable += page.items.count - rows.count
            report.pulled += page.items.count
            cursor = page.cursor
            try vault { try $0.setSyncCursor(cursor, at: Date()) }
            if !page.hasMore { break }
        }
        report.cursor = cursor
    }

    // MARK: Status, logout, revoke

    /// The account, the server's view of it (nil when offline), local changes not yet pushed, and conflict copies.
    public func status() async throws(SyncError) -> (account: SyncAccount, server: AccountResponse?, pending: Int, conflicts: [SyncConflictCopy]) {
        guard let account = try vault({ try $0.syncAccount() }) else { throw .notLinked }
        let pending = try vault { try $0.pendingChanges().count }
        let conflicts = try vault { try $0.syncConflicts() }
        var server: AccountResponse?
        do {
            let access = try await freshAccessToken()
            server = try await client.account(accessToken: access)
        } catch {
            logger.info("sync server unreachable for status")
        }
        return (account, server, pending, conflicts)
    }

    /// Ends the session on the server (when reachable) and unlinks the vault here; the items stay.
    public func logout() async throws(SyncError) {
        guard try vault({ try $0.syncAccount() }) != nil else { throw .notLinked }
        if let access = try? await freshAccessToken() {
            try? await client.logout(accessToken: access)
        }
        try keystore { () throws(KeystoreError) in try coffer.location.keystore.deleteSecret(for: coffer.syncTokenAccount) }
        try vault { try $0.setSyncAccount(nil) }
    }

    /// Deletes every server copy of this account's items; the account and the items here stay. Returns how many.
    public func revoke() async throws(SyncError) -> Int {
        guard let account = try vault({ try $0.syncAccount() }) else { throw .notLinked }
        let access = try await freshAccessToken()
        let deleted = try await client { () throws(SyncClientError) in try await client.revoke(accessToken: access) }
        // Nothing is on the server now: forget what it had, so a later sync pushes everything again.
        try vault { try $0.setSyncAccount(SyncAccount(server: account.server, account: account.account, userID: account.userID)) }
        return deleted
    }

    // MARK: Tokens

    private func freshAccessToken() async throws(SyncError) -> String {
        guard let stored = try keystore({ () throws(KeystoreError) in try coffer.location.keystore.secret(for: coffer.syncTokenAccount) })
        else { throw .client(.server(status: 401, code: "unauthorized", message: "log in again: coffer sync login")) }
        let refreshToken = String(decoding: stored.bytes, as: UTF8.self)
        let answer = try await client { () throws(SyncClientError) in try await client.refresh(refreshToken) }
        try storeRefreshToken(answer.refreshToken)
        return answer.accessToken
    }

    private func storeRefreshToken(_ token: String) throws(SyncError) {
        try keystore { () throws(KeystoreError) in
            try coffer.location.keystore.replaceSecret(SecretBytes(utf8: token), for: coffer.syncTokenAccount)
        }
    }

    // MARK: Plumbing

    static func row(_ item: SyncItem) -> SyncRow? {
        var box: Data?
        if let text = item.box {
            guard let data = Data(base64Encoded: text) else { return nil }
            box = data
        }
        guard item.deleted == (box == nil) else { return nil }
        return SyncRow(id: item.id, kind: item.kind, revision: item.revision, updatedAt: item.updatedAt, deleted: item.deleted, box: box)
    }

    private func vault<T>(_ body: (Vault) throws -> T) throws(SyncError) -> T {
        do {
            return try body(coffer.vault)
        } catch let error as VaultError {
            throw .coffer(.vault(error))
        } catch {
            throw .coffer(.vault(.storage("unexpected failure")))
        }
    }

    private func keystore<T>(_ body: () throws(KeystoreError) -> T) throws(SyncError) -> T {
        do {
            return try body()
        } catch {
            throw .coffer(.keystore(error))
        }
    }

    private func crypto<T>(_ body: () throws(CofferCryptoError) -> T) throws(SyncError) -> T {
        try Self.cryptoCall(body)
    }

    private static func cryptoCall<T>(_ body: () throws(CofferCryptoError) -> T) throws(SyncError) -> T {
        do {
            return try body()
        } catch {
            throw .crypto(error)
        }
    }

    private func client<T>(_ body: () async throws(SyncClientError) -> T) async throws(SyncError) -> T {
        try await Self.clientCall(body)
    }

    private static func clientCall<T>(_ body: () async throws(SyncClientError) -> T) async throws(SyncError) -> T {
        do {
            return try await body()
        } catch {
            throw .client(error)
        }
    }

}

extension RemoteMergeReport {
    mutating func add(_ other: RemoteMergeReport) {
        applied += other.applied
        unchanged += other.unchanged
        mergedCounters += other.mergedCounters
        conflictCopies += other.conflictCopies
        unreadable += other.unreadable
    }
}
