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

/// A new account: either a passphrase account (email, auth hash, vault id, slot) or an Apple account (subject).
public struct NewUser: Sendable, Equatable {
    public var id: UUID
    public var email: String?
    public var appleSubject: String?
    public var fullName: String?
    public var createdAt: Date
    public var authHash: String?
    public var vaultID: UUID?
    public var slot: WrappedSlot?

    public init(
        id: UUID, email: String?, appleSubject: String? = nil, fullName: String? = nil, createdAt: Date,
        authHash: String? = nil, vaultID: UUID? = nil, slot: WrappedSlot? = nil
    ) {
        self.id = id
        self.email = email
        self.appleSubject = appleSubject
        self.fullName = fullName
        self.createdAt = createdAt
        self.authHash = authHash
        self.vaultID = vaultID
        self.slot = slot
    }
}

/// A stored account.
public struct UserRecord: Sendable, Equatable {
    public var id: UUID
    public var email: String?
    public var appleSubject: String?
    public var fullName: String?
    public var createdAt: Date
    public var deletedAt: Date?
    public var authHash: String?
    public var vaultID: UUID?
    public var slot: WrappedSlot?

    public init(
        id: UUID, email: String?, appleSubject: String?, fullName: String?, createdAt: Date, deletedAt: Date?,
        authHash: String?, vaultID: UUID?, slot: WrappedSlot?
    ) {
        self.id = id
        self.email = email
        self.appleSubject = appleSubject
        self.fullName = fullName
        self.createdAt = createdAt
        self.deletedAt = deletedAt
        self.authHash = authHash
        self.vaultID = vaultID
        self.slot = slot
    }
}

/// What presenting a refresh token led to.
public enum RefreshOutcome: Sendable, Equatable {
    /// The token was current; it is now spent and `newTokenID` is the family's current token.
    case rotated
    /// The token had been spent with the retry key presented again, and the token it was exchanged for is still the
    /// family's current one: that token, `successor`, is issued again.
    case retried(successor: UUID)
    /// The token had been spent before: the family is now revoked.
    case reused
    /// Revoked or expired family, or a spent token of a family ended before.
    case invalid
    /// A token the server issued (its signature verified) whose family, or the token itself in a live family, the
    /// store has no record of: the database was restored from a backup or rolled back since (tokens are recorded before
    /// they are signed, and never deleted while their account lives).
    case lost
}

/// One item row as the server stores it: the row itself and what only the server adds.
@dynamicMemberLookup
public struct StoredItem: Sendable, Equatable {
    public var row: ItemRow
    /// Server-visible metadata (JSON text), only for items whose client chose to send it (the CardOnCue face).
    public var meta: String?
    /// Position in the user's change feed.
    public var sequence: Int64
    /// When the server stored this revision.
    public var storedAt: Date

    public init(row: ItemRow, meta: String?, sequence: Int64, storedAt: Date) {
        self.row = row
        self.meta = meta
        self.sequence = sequence
        self.storedAt = storedAt
    }

    public subscript<Value>(dynamicMember field: KeyPath<ItemRow, Value>) -> Value { row[keyPath: field] }
}

/// One entry of a user's change feed: the row a syncing client receives, and its position.
@dynamicMemberLookup
public struct FeedItem: Sendable, Equatable {
    public var row: ItemRow
    /// Position in the user's change feed.
    public var sequence: Int64

    public init(row: ItemRow, sequence: Int64) {
        self.row = row
        self.sequence = sequence
    }

    /// The feed's view of a stored row.
    public init(_ stored: StoredItem) {
        self.init(row: stored.row, sequence: stored.sequence)
    }

    public subscript<Value>(dynamicMember field: KeyPath<ItemRow, Value>) -> Value { row[keyPath: field] }
}

/// One write of a push: the new row and the stored revision it replaces (0 for a new item).
@dynamicMemberLookup
public struct ItemWrite: Sendable, Equatable {
    public var row: ItemRow
    public var meta: String?
    /// The stored revision this write replaces; 0 for a new item.
    public var baseRevision: Int64

    public init(row: ItemRow, meta: String? = nil, baseRevision: Int64) {
        self.row = row
        self.meta = meta
        self.baseRevision = baseRevision
    }

    public subscript<Value>(dynamicMember field: KeyPath<ItemRow, Value>) -> Value { row[keyPath: field] }
}

/// Manifests to store (docs/FORMAT.md §8.6): opaque bytes to the store, with the epochs they claim and the stored
/// head they extend. Usually one; a device that puts its history back on a server restored from a backup sends the
/// manifests the server lost before the new one.
public struct ManifestWrite: Sendable, Equatable {
    /// One manifest and the epoch it claims.
    public struct Entry: Sendable, Equatable {
        public var epoch: Int64
        public var bytes: Data

        public init(epoch: Int64, bytes: Data) {
            self.epoch = epoch
            self.bytes = bytes
        }
    }

    /// The stored head's epoch the client saw (0: none).
    public var baseEpoch: Int64
    /// Epochs `baseEpoch + 1`, `+ 2`, …, oldest first; the last is the new head.
    public var manifests: [Entry]

    public init(baseEpoch: Int64, manifests: [Entry]) {
        self.baseEpoch = baseEpoch
        self.manifests = manifests
    }

    /// One manifest of epoch `baseEpoch + 1`.
    public init(baseEpoch: Int64, epoch: Int64, bytes: Data) {
        self.init(baseEpoch: baseEpoch, manifests: [Entry(epoch: epoch, bytes: bytes)])
    }
}

/// A stored manifest and the feed position it was stored at.
public struct StoredManifest: Sendable, Equatable {
    public var epoch: Int64
    public var bytes: Data
    public var sequence: Int64

    public init(epoch: Int64, bytes: Data, sequence: Int64) {
        self.epoch = epoch
        self.bytes = bytes
        self.sequence = sequence
    }
}

extension ServerStore {
    /// Whether `write` is based on a row the server should hold and does not (see `push`): a base revision above 0, in
    /// a push extending a verified head.
    public static func basedOnMissingRow(_ write: ItemWrite, manifest: ManifestWrite?) -> Bool {
        write.baseRevision > 0 && (manifest?.baseEpoch ?? 0) > 0
    }
}

/// The answer to a push.
public enum PushOutcome: Sendable, Equatable {
    /// Every write landed; the change feed is now at `cursor`.
    case accepted(cursor: Int64)
    /// Nothing was written; these are the stored rows the push disagreed with (none for a write based on a row the
    /// server does not hold).
    case conflicts([StoredItem])
    /// Nothing was written: the manifest did not extend the stored head, whose epoch is `epoch`.
    case staleHead(epoch: Int64)
    /// Nothing was written: the account keeps verified state and the push carried no manifest.
    case manifestRequired
    /// Nothing was written: the account's live boxes would pass `limit` bytes.
    case quotaExceeded(limit: Int64)
    /// Nothing was written: the rotation to commit holds `staged` rows, not the number its device sent.
    case incompleteRotation(staged: Int)
}

/// One page of the change feed.
public struct ChangePage: Sendable, Equatable {
    public var items: [FeedItem]
    public var cursor: Int64
    public var hasMore: Bool

    public init(items: [FeedItem], cursor: Int64, hasMore: Bool) {
        self.items = items
        self.cursor = cursor
        self.hasMore = hasMore
    }
}

/// Item count, stored bytes, cursor and head epoch of one user.
public struct StoreUsage: Sendable, Equatable {
    public var items: Int
    public var bytes: Int
    public var cursor: Int64
    /// The newest manifest's epoch; 0 when none is stored.
    public var headEpoch: Int64

    public init(items: Int, bytes: Int, cursor: Int64, headEpoch: Int64 = 0) {
        self.items = items
        self.bytes = bytes
        self.cursor = cursor
        self.headEpoch = headEpoch
    }
}

/// What `authorize` found: the request counter after this request, and whether the session may go on.
public struct Authorization: Sendable, Equatable {
    public var counter: CounterState
    public var sessionActive: Bool

    public init(counter: CounterState, sessionActive: Bool) {
        self.counter = counter
        self.sessionActive = sessionActive
    }
}

/// A rate-limit counter in its current window.
public struct CounterState: Sendable, Equatable {
    public var count: Int
    public var windowEnds: Date

    public init(count: Int, windowEnds: Date) {
        self.count = count
        self.windowEnds = windowEnds
    }
}

/// A security event. It never holds item content, a secret or a position; `address` is the client's IP address.
public struct AuditEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case accountCreated = "account_created"
        case loginSucceeded = "login_succeeded"
        case loginFailed = "login_failed"
        case loginRateLimited = "login_rate_limited"
        /// More than 5 failed logins of one account within 5 minutes (seed 000): written once per window, for the
        /// operator, by the request that crossed the line.
        case loginAlert = "login_alert"
        case refreshReused = "refresh_reused"
        /// A spent refresh token presented again with its retry key: the device lost the answer, the session goes on.
        case refreshRetried = "refresh_retried"
        case passphraseChanged = "passphrase_changed"
        case masterKeyRotated = "master_key_rotated"
        case logout
        case accountDeleted = "account_deleted"
        case accountPurged = "account_purged"
        case syncRevoked = "sync_revoked"
        case signingKeyRotated = "signing_key_rotated"
        case appleSignIn = "apple_sign_in"
        case appleTokenRejected = "apple_token_rejected"
        case placesImported = "places_imported"
        case operatorRefused = "operator_refused"
    }

    public var at: Date
    public var kind: Kind
    public var userID: UUID?
    public var address: String?
    /// A short fixed phrase or a count; never user data.
    public var detail: String?

    public init(at: Date, kind: Kind, userID: UUID?, address: String?, detail: String? = nil) {
        self.at = at
        self.kind = kind
        self.userID = userID
        self.address = address
        self.detail = detail
    }
}

/// Fixed-window arithmetic shared by both stores.
public enum CounterWindow {
    /// Start of the `window`-second window holding `now`, in Unix seconds.
    public static func start(_ now: Date, window: Int) -> Int64 {
        let seconds = UnixTime.seconds(now)
        let size = Int64(max(window, 1))
        return seconds - seconds % size
    }
}
