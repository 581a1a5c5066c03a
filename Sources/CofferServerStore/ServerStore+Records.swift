import CofferCrypto
import CofferSyncAPI
import Foundation

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
