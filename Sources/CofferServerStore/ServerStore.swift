import CofferCrypto
import CofferSyncAPI
import Foundation

/// Everything the server keeps, behind one protocol with an SQLite and a PostgreSQL implementation (the same
/// conformance suite runs against both). Every per-user call takes the user id: on PostgreSQL it becomes the
/// row-level-security identity of the transaction, so a query that forgot its filter still sees one user's rows.
///
/// Item boxes and slots are opaque bytes here; the store never learns what they hold.
public protocol ServerStore: PlaceStore {
    /// Creates or upgrades the schema (append-only migrations).
    func migrate() async throws(ServerStoreError)
    /// Whether the database takes writes now; answers within a few seconds, whatever the database does.
    func health() async -> DatabaseHealth

    // MARK: Accounts

    /// Inserts a user; `.duplicate` when the email or Apple subject is taken.
    func createUser(_ user: NewUser) async throws(ServerStoreError)
    /// A user by id, also when soft-deleted (callers check `deletedAt`).
    func user(id: UUID) async throws(ServerStoreError) -> UserRecord?
    /// The id of the live account with this normalised email. The one lookup that crosses users, by design: login
    /// has no user yet.
    func userID(email: String) async throws(ServerStoreError) -> UUID?
    /// The id of the live account signed in with Apple under this subject.
    func userID(appleSubject: String) async throws(ServerStoreError) -> UUID?
    /// Replaces the auth hash and passphrase slot together (passphrase change), with the manifest that commits to the
    /// new slot when the account keeps verified state: `.staleHead` (nothing changed) when another device pushed first.
    func replaceCredentials(
        userID: UUID, authHash: String, slot: WrappedSlot, manifest: ManifestWrite?
    ) async throws(ServerStoreError) -> PushOutcome
    /// Marks the account deleted; it disappears from logins at once and is purged later (`MaintenanceStore`).
    func softDeleteUser(id: UUID, at date: Date) async throws(ServerStoreError)

    // MARK: Sessions (refresh-token families)

    /// Starts a session family with its first refresh token.
    func createSession(userID: UUID, family: UUID, tokenID: UUID, now: Date, expiresAt: Date) async throws(ServerStoreError)
    /// The account's live sessions: neither revoked nor expired at `now`.
    func liveSessionCount(userID: UUID, now: Date) async throws(ServerStoreError) -> Int
    /// Exchanges refresh token `tokenID` of `family` for `newTokenID`, atomically, and keeps `retryKeyDigest` (the
    /// SHA-256 of the device's `RefreshRetryKey`, when it sent one) with the spent token. A spent token presented again
    /// with the same digest, while the token it was exchanged for is unused and unexpired and the family live, answers
    /// `.retried` with that token, whose expiry (and the family's) becomes `expiresAt`: its holder lost the first
    /// answer. Any other second presentation (no digest, another one, the successor already exchanged itself, an
    /// expired successor) revokes the whole family (`.reused`). Digests are compared in constant time.
    func rotateRefreshToken(
        userID: UUID, family: UUID, tokenID: UUID, newTokenID: UUID, retryKeyDigest: [UInt8]?, now: Date, expiresAt: Date
    ) async throws(ServerStoreError) -> RefreshOutcome
    /// The check of authenticated requests: counts `requests` requests (at least one) against counter `key` (as
    /// `increment` counts one) and tells whether the family exists, is not revoked, has not expired and belongs to a
    /// live account. One round trip to the database. The server makes it for a request, or for the requests it
    /// admitted from memory since the last check (`SessionGate`).
    func authorize(
        userID: UUID, family: UUID, counter key: String, requests: Int, window: Int, now: Date
    ) async throws(ServerStoreError) -> Authorization
    /// Revokes one family (logout).
    func revokeSession(userID: UUID, family: UUID) async throws(ServerStoreError)
    /// Revokes every family of the user except `keeping` (passphrase change).
    func revokeSessions(userID: UUID, keeping: UUID?) async throws(ServerStoreError)

    // MARK: Items

    /// Applies every write and stores the manifest, or does nothing: a manifest whose base epoch is not the stored
    /// head's makes the push answer `.staleHead`; a push without a manifest to an account that has one answers
    /// `.manifestRequired` (unless it writes only server-face rows, `StateRoot.isServerFace`); a write whose
    /// `baseRevision` differs from the stored row's revision makes the whole push answer `.conflicts` with the stored
    /// copies. A write with a base revision above 0 to a row the server does not hold is a conflict too (with no stored
    /// copy to list) when the push extends a verified head: that head names a row the server lost. Without a head (an
    /// account synced only by older versions, or after a revoke) such a write is accepted, as the server has nothing
    /// to lose. The manifest is stored at the push's last feed position. A write without `meta` (a sync
    /// push) that names a row stored with `meta` (a CardOnCue card) fails the whole push with `.protectedItem`.
    ///
    /// With `maxStoredBytes`, a push that would leave the account's live boxes larger than that answers
    /// `.quotaExceeded` (a push that does not grow them always lands, so an account over a lowered quota can still
    /// delete).
    func push(
        userID: UUID, writes: [ItemWrite], manifest: ManifestWrite?, maxStoredBytes: Int64?, now: Date
    ) async throws(ServerStoreError) -> PushOutcome
    /// Rows changed after `cursor`, oldest change first, at most `limit`.
    func changes(userID: UUID, since cursor: Int64, limit: Int) async throws(ServerStoreError) -> ChangePage
    /// Manifests after `epoch`, oldest first, at most `limit`.
    func manifests(userID: UUID, after epoch: Int64, limit: Int) async throws(ServerStoreError) -> [StoredManifest]
    /// The newest manifest stored at or before feed position `cursor`: the one that describes the rows a client holds
    /// once it has read the feed up to `cursor`.
    func head(userID: UUID, atOrBefore cursor: Int64) async throws(ServerStoreError) -> StoredManifest?
    /// One row, tombstones included.
    func item(userID: UUID, id: UUID) async throws(ServerStoreError) -> StoredItem?
    /// Every live row of a kind (the CardOnCue face, exports).
    func items(userID: UUID, kind: String) async throws(ServerStoreError) -> [StoredItem]
    /// Stages re-sealed rows of master-key rotation `rotation` (docs/FORMAT.md §8.8), replacing a staged row of the
    /// same item; returns how many rows the rotation holds. Staged rows are seen by no read until the rotation commits.
    /// An account holds at most `SyncLimits.maxRotationItems` staged rows in all (`.stagingFull`).
    func stageRotation(userID: UUID, rotation: UUID, writes: [ItemWrite], now: Date) async throws(ServerStoreError) -> Int
    /// Commits rotation `rotation` in one transaction, or nothing: its staged rows are applied as one push with
    /// `manifest` (`push`'s rules and answers), and the account slot is replaced by `slot`; then every row the account
    /// staged is dropped. `.incompleteRotation` (nothing changed) when the rotation holds another number of rows than
    /// `expectedRows`.
    func commitRotation(
        userID: UUID, rotation: UUID, expectedRows: Int, slot: WrappedSlot, manifest: ManifestWrite, now: Date
    ) async throws(ServerStoreError) -> PushOutcome
    /// Drops the rows staged for `rotation`.
    func discardRotation(userID: UUID, rotation: UUID) async throws(ServerStoreError)
    /// Deletes every server copy of the user's items, its manifests and staged rows (revoke sync); returns how many
    /// items.
    func deleteAllItems(userID: UUID) async throws(ServerStoreError) -> Int
    /// Counts for `GET /v1/account`.
    func usage(userID: UUID) async throws(ServerStoreError) -> StoreUsage

    // MARK: Protection

    /// Adds one to counter `key` in the fixed window of `window` seconds that holds `now`; returns the new count
    /// and when the window ends. Counters live in the database so that every server instance shares them.
    func increment(counter key: String, window: Int, now: Date) async throws(ServerStoreError) -> CounterState
    /// Reads counter `key` without changing it.
    func counter(_ key: String, window: Int, now: Date) async throws(ServerStoreError) -> CounterState
    /// Appends to the audit log.
    func audit(_ event: AuditEvent) async throws(ServerStoreError)
    /// The user's newest audit events; the whole log is read through `MaintenanceStore`.
    func auditEvents(userID: UUID, limit: Int) async throws(ServerStoreError) -> [AuditEvent]
}

/// The work that spans users: purging soft-deleted accounts and reading the whole audit log. It is kept apart from
/// `ServerStore`, which serves requests, so that on PostgreSQL it runs under its own role (`PostgresMaintenanceStore`),
/// one the request path never holds; the SQLite store, which has no roles, is both.
public protocol MaintenanceStore: Sendable {
    /// Hard-deletes every account soft-deleted before `cutoff`, with all its rows; returns how many.
    func purgeUsers(deletedBefore cutoff: Date) async throws(ServerStoreError) -> Int
    /// Appends to the audit log (the purge records itself).
    func audit(_ event: AuditEvent) async throws(ServerStoreError)
    /// The newest audit events of every user and of none, newest first.
    func auditEvents(limit: Int) async throws(ServerStoreError) -> [AuditEvent]
}

extension ServerStore {
    /// A rotation without a retry key (CardOnCue's clients): a second presentation of the token is always a replay.
    public func rotateRefreshToken(
        userID: UUID, family: UUID, tokenID: UUID, newTokenID: UUID, now: Date, expiresAt: Date
    ) async throws(ServerStoreError) -> RefreshOutcome {
        try await rotateRefreshToken(
            userID: userID, family: family, tokenID: tokenID, newTokenID: newTokenID, retryKeyDigest: nil, now: now,
            expiresAt: expiresAt)
    }

    /// A push without a manifest: the CardOnCue face's writes and accounts that keep no verified state.
    public func push(userID: UUID, writes: [ItemWrite], now: Date) async throws(ServerStoreError) -> PushOutcome {
        try await push(userID: userID, writes: writes, manifest: nil, maxStoredBytes: nil, now: now)
    }

    /// A push with no quota.
    public func push(userID: UUID, writes: [ItemWrite], manifest: ManifestWrite?, now: Date) async throws(ServerStoreError) -> PushOutcome {
        try await push(userID: userID, writes: writes, manifest: manifest, maxStoredBytes: nil, now: now)
    }

    /// Whether a push of `writes` replacing rows of `storedSizes` bytes (the live boxes it replaces) would take the
    /// account's live boxes, `storedBytes` now, past `limit`.
    public static func exceeds(_ limit: Int64?, storedBytes: Int64, writes: [ItemWrite], replacing storedSizes: Int64) -> Bool {
        guard let limit else { return false }
        let growth = writes.reduce(Int64(0)) { $0 + Int64($1.box?.count ?? 0) } - storedSizes
        return growth > 0 && storedBytes + growth > limit
    }
}

/// Failures of a store. Descriptions name the rule, never a value.
public enum ServerStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A unique account field (email, Apple subject) is taken.
    case duplicate
    /// The row to change does not exist (or belongs to someone else, which looks the same).
    case notFound
    /// The database could not be reached or answered with an error; the text is for logs and never reaches clients.
    case unavailable(String)
    /// A write without server-visible metadata named a row stored with it: a card of the CardOnCue face, which a
    /// sync push may neither replace nor delete (the card would vanish from `/v1/cards`).
    case protectedItem
    /// The database holds a schema newer than this server.
    case schemaTooNew
    /// Places that break a rule of the store (a location of a network nobody imported).
    case invalidPlaces(String)
    /// The account's staged rotation rows would exceed `SyncLimits.maxRotationItems`.
    case stagingFull

    public var description: String {
        switch self {
        case .duplicate: return "an account with that identity already exists"
        case .notFound: return "not found"
        case .protectedItem: return "a sync push named a card of the card face"
        case .unavailable(let detail): return "database unavailable: \(detail)"
        case .schemaTooNew: return "the database was written by a newer coffer-server"
        case .invalidPlaces(let rule): return "places: \(rule)"
        case .stagingFull: return "too many staged rotation rows"
        }
    }
}

/// What `ServerStore.health()` found.
public enum DatabaseHealth: String, Sendable, Equatable {
    /// The database answered and takes writes.
    case writable
    /// The database answered as a standby (during a failover, before the new primary is promoted or reached).
    case readOnly = "read_only"
    /// The database did not answer in time, or refused the connection.
    case unreachable
}
