import CofferCrypto
import Foundation

// The JSON that crosses the wire between `coffer` and `coffer-server` (docs/SYNC.md). Field names are snake_case,
// binary fields are standard base64, item times are Unix milliseconds (they are bound into the item boxes' associated
// data), account times are ISO 8601.

/// Passphrase-stretching parameters as JSON: `{"algorithm": "pbkdf2-sha256", "iterations": 600000}` or
/// `{"algorithm": "scrypt", "log_n": 15, "r": 8, "p": 1}`.
public struct KDFParameters: Codable, Sendable, Equatable {
    public var algorithm: String
    public var iterations: UInt32?
    public var logN: UInt8?
    public var r: UInt32?
    public var p: UInt32?

    enum CodingKeys: String, CodingKey {
        case algorithm, iterations, r, p
        case logN = "log_n"
    }

    public init(_ kdf: PassphraseKDF) {
        switch kdf {
        case .pbkdf2SHA256(let iterations):
            self.algorithm = "pbkdf2-sha256"
            self.iterations = iterations
        case .scrypt(let logN, let r, let p):
            self.algorithm = "scrypt"
            self.logN = logN
            self.r = r
            self.p = p
        }
    }

    /// The parameters as a KDF, refused unless inside `limits`: a hostile server must not be able to downgrade or
    /// exhaust the client, nor a hostile client the server.
    public func kdf(limits: KDFLimits) throws(CofferCryptoError) -> PassphraseKDF {
        let kdf: PassphraseKDF
        switch (algorithm, iterations, logN, r, p) {
        case ("pbkdf2-sha256", let iterations?, nil, nil, nil):
            kdf = .pbkdf2SHA256(iterations: iterations)
        case ("scrypt", nil, let logN?, let r?, let p?):
            kdf = .scrypt(logN: logN, r: r, p: p)
        default:
            throw .kdfParametersOutOfBounds("unknown algorithm or parameters")
        }
        try kdf.validate(limits)
        return kdf
    }
}

/// `POST /v1/auth/prelogin`.
public struct PreloginRequest: Codable, Sendable {
    public var email: String
    public init(email: String) { self.email = email }
}

/// The stretching parameters of an account. An unknown account gets parameters that look the same and stay the same.
public struct PreloginResponse: Codable, Sendable, Equatable {
    public var kdf: KDFParameters
    /// Base64 of the salt (16 to 64 bytes).
    public var salt: String
    public init(kdf: KDFParameters, salt: String) {
        self.kdf = kdf
        self.salt = salt
    }
}

/// A passphrase slot as the server keeps it: the vault's master key wrapped under the key-encryption key that the
/// account passphrase yields (docs/FORMAT.md §2, slot type 2). The server can neither open nor check it.
public struct WrappedSlot: Codable, Sendable, Equatable {
    public var id: UUID
    public var kdf: KDFParameters
    /// Base64 of the salt.
    public var salt: String
    /// Base64 of the box holding the master key.
    public var wrappedKey: String

    enum CodingKeys: String, CodingKey {
        case id, kdf, salt
        case wrappedKey = "wrapped_key"
    }

    public init(id: UUID, kdf: KDFParameters, salt: String, wrappedKey: String) {
        self.id = id
        self.kdf = kdf
        self.salt = salt
        self.wrappedKey = wrappedKey
    }
}

/// `POST /v1/auth/register`.
public struct RegisterRequest: Codable, Sendable {
    public var email: String
    /// Base64 of the 32-byte auth key (`SyncKeys.authKey`); the server keeps only a slow hash of it.
    public var authKey: String
    public var vaultID: UUID
    public var slot: WrappedSlot

    enum CodingKeys: String, CodingKey {
        case email, slot
        case authKey = "auth_key"
        case vaultID = "vault_id"
    }

    public init(email: String, authKey: String, vaultID: UUID, slot: WrappedSlot) {
        self.email = email
        self.authKey = authKey
        self.vaultID = vaultID
        self.slot = slot
    }
}

/// `POST /v1/auth/login`.
public struct LoginRequest: Codable, Sendable {
    public var email: String
    public var authKey: String

    enum CodingKeys: String, CodingKey {
        case email
        case authKey = "auth_key"
    }

    public init(email: String, authKey: String) {
        self.email = email
        self.authKey = authKey
    }
}

/// `POST /v1/auth/refresh`. `retryKey` (unpadded base64url of a `RefreshRetryKey`) lets the device present the same
/// refresh token again after losing the answer (docs/FORMAT.md §8.2); clients without it (CardOnCue's) get plain
/// rotation, where any second presentation ends the session.
public struct RefreshRequest: Codable, Sendable {
    public var refreshToken: String
    public var retryKey: String?
    enum CodingKeys: String, CodingKey {
        case refreshToken = "refresh_token"
        case retryKey = "retry_key"
    }

    public init(refreshToken: String, retryKey: String? = nil) {
        self.refreshToken = refreshToken
        self.retryKey = retryKey
    }
}

/// `POST /v1/account/passphrase`: proves the current passphrase and replaces slot and auth hash in one step.
public struct PassphraseChangeRequest: Codable, Sendable {
    public var authKey: String
    public var newAuthKey: String
    public var slot: WrappedSlot
    /// The verified head's epoch and a manifest that commits to the new slot (`PushRequest`'s rules).
    public var baseEpoch: Int64?
    public var manifest: String?

    enum CodingKeys: String, CodingKey {
        case slot, manifest
        case authKey = "auth_key"
        case newAuthKey = "new_auth_key"
        case baseEpoch = "base_epoch"
    }

    public init(authKey: String, newAuthKey: String, slot: WrappedSlot, baseEpoch: Int64? = nil, manifest: String? = nil) {
        self.authKey = authKey
        self.newAuthKey = newAuthKey
        self.slot = slot
        self.baseEpoch = baseEpoch
        self.manifest = manifest
    }
}

/// `POST /v1/auth/apple` (CardOnCue contract).
public struct AppleAuthRequest: Codable, Sendable {
    public struct FullName: Codable, Sendable {
        public var givenName: String?
        public var familyName: String?
        enum CodingKeys: String, CodingKey {
            case givenName = "given_name"
            case familyName = "family_name"
        }
        public init(givenName: String?, familyName: String?) {
            self.givenName = givenName
            self.familyName = familyName
        }
    }

    public var identityToken: String
    public var userIdentifier: String?
    public var email: String?
    public var fullName: FullName?

    enum CodingKeys: String, CodingKey {
        case email
        case identityToken = "identity_token"
        case userIdentifier = "user_identifier"
        case fullName = "full_name"
    }

    public init(identityToken: String, userIdentifier: String? = nil, email: String? = nil, fullName: FullName? = nil) {
        self.identityToken = identityToken
        self.userIdentifier = userIdentifier
        self.email = email
        self.fullName = fullName
    }
}

/// A user as the API shows it.
public struct UserInfo: Codable, Sendable, Equatable {
    public struct Preferences: Codable, Sendable, Equatable {
        public var syncEnabled: Bool
        public var notificationRadiusMeters: Int
        enum CodingKeys: String, CodingKey {
            case syncEnabled = "sync_enabled"
            case notificationRadiusMeters = "notification_radius_meters"
        }
        public init(syncEnabled: Bool, notificationRadiusMeters: Int) {
            self.syncEnabled = syncEnabled
            self.notificationRadiusMeters = notificationRadiusMeters
        }
    }

    public var id: String
    public var email: String?
    public var fullName: String?
    public var createdAt: Date
    public var preferences: Preferences

    enum CodingKeys: String, CodingKey {
        case id, email, preferences
        case fullName = "full_name"
        case createdAt = "created_at"
    }

    public init(id: String, email: String?, fullName: String?, createdAt: Date, preferences: Preferences) {
        self.id = id
        self.email = email
        self.fullName = fullName
        self.createdAt = createdAt
        self.preferences = preferences
    }
}

/// The answer to register, login, refresh, passphrase change and Apple sign-in.
public struct AuthResponse: Codable, Sendable {
    public var accessToken: String
    public var refreshToken: String
    public var expiresIn: Int
    public var tokenType: String
    public var user: UserInfo
    /// The synced vault's id and passphrase slot, for a device that logs in with a passphrase.
    public var vaultID: UUID?
    public var slot: WrappedSlot?

    enum CodingKeys: String, CodingKey {
        case user, slot
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
        case expiresIn = "expires_in"
        case tokenType = "token_type"
        case vaultID = "vault_id"
    }

    public init(
        accessToken: String, refreshToken: String, expiresIn: Int, user: UserInfo, vaultID: UUID?, slot: WrappedSlot?
    ) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.tokenType = "Bearer"
        self.user = user
        self.vaultID = vaultID
        self.slot = slot
    }
}

/// `GET /v1/account`.
public struct AccountResponse: Codable, Sendable {
    public var user: UserInfo
    public var vaultID: UUID?
    public var itemCount: Int
    public var storedBytes: Int
    public var cursor: Int64
    /// The newest stored manifest's epoch (0: none). The server's word only: devices trust what they verified.
    public var headEpoch: Int64

    enum CodingKeys: String, CodingKey {
        case user, cursor
        case vaultID = "vault_id"
        case itemCount = "item_count"
        case storedBytes = "stored_bytes"
        case headEpoch = "head_epoch"
    }

    public init(user: UserInfo, vaultID: UUID?, itemCount: Int, storedBytes: Int, cursor: Int64, headEpoch: Int64 = 0) {
        self.user = user
        self.vaultID = vaultID
        self.itemCount = itemCount
        self.storedBytes = storedBytes
        self.cursor = cursor
        self.headEpoch = headEpoch
    }
}

/// One write of a push: the new row and the revision it replaces (0 for an item the server has never seen).
@dynamicMemberLookup
public struct PushItem: Codable, Sendable, Equatable {
    public var item: ItemRow
    public var baseRevision: Int64

    enum CodingKeys: String, CodingKey {
        case item
        case baseRevision = "base_revision"
    }

    public init(item: ItemRow, baseRevision: Int64) {
        self.item = item
        self.baseRevision = baseRevision
    }

    public subscript<Value>(dynamicMember field: KeyPath<ItemRow, Value>) -> Value { item[keyPath: field] }
}

/// `POST /v1/sync/push`: every write lands, or none does.
public struct PushRequest: Codable, Sendable {
    public var items: [PushItem]
    /// The epoch of the server head the device verified before pushing (0: none yet); with `manifest`.
    public var baseEpoch: Int64?
    /// Base64 of the manifest (docs/FORMAT.md §8.6) that commits to the state after this push, the epoch after the
    /// last of `chain` (or `baseEpoch + 1`). Required once the account has a manifest; without one, only the first
    /// push of an older client.
    public var manifest: String?
    /// Manifests the server lost (restored from a backup) that a device puts back before `manifest`: epochs
    /// `baseEpoch + 1`, … in order.
    public var chain: [String]?

    enum CodingKeys: String, CodingKey {
        case items, manifest, chain
        case baseEpoch = "base_epoch"
    }

    public init(items: [PushItem], baseEpoch: Int64? = nil, manifest: String? = nil, chain: [String]? = nil) {
        self.items = items
        self.baseEpoch = baseEpoch
        self.manifest = manifest
        self.chain = chain
    }
}

/// `POST /v1/sync/rotations/{rotation}/items`: re-sealed rows of a master-key rotation (docs/FORMAT.md §8.8), staged
/// until the rotation commits; at most `SyncLimits.maxPushItems` per request, checked as a push's.
public struct RotationItemsRequest: Codable, Sendable {
    public var items: [PushItem]

    public init(items: [PushItem]) {
        self.items = items
    }
}

/// The answer to staging rotation rows: how many the rotation holds now.
public struct RotationItemsResponse: Codable, Sendable, Equatable {
    public var staged: Int

    public init(staged: Int) {
        self.staged = staged
    }
}

/// `POST /v1/sync/rotations/{rotation}/commit`: the staged rows, the account slot wrapping the new master key and the
/// manifest of the new state land in one transaction (answered like a push). The slot keeps the account's KDF
/// parameters and salt, so the auth key does not change; `auth_key` proves the passphrase.
public struct RotationCommitRequest: Codable, Sendable {
    public var authKey: String
    public var slot: WrappedSlot
    public var baseEpoch: Int64
    /// Base64 of the manifest of epoch `base_epoch + 1`, made under the new master key.
    public var manifest: String
    /// How many rows the device staged: a commit of a rotation holding another number is refused.
    public var items: Int

    enum CodingKeys: String, CodingKey {
        case slot, manifest, items
        case authKey = "auth_key"
        case baseEpoch = "base_epoch"
    }

    public init(authKey: String, slot: WrappedSlot, baseEpoch: Int64, manifest: String, items: Int) {
        self.authKey = authKey
        self.slot = slot
        self.baseEpoch = baseEpoch
        self.manifest = manifest
        self.items = items
    }
}

/// The answer to an accepted push.
public struct PushResponse: Codable, Sendable, Equatable {
    /// The change cursor after this push.
    public var cursor: Int64
    public var accepted: Int
    public init(cursor: Int64, accepted: Int) {
        self.cursor = cursor
        self.accepted = accepted
    }
}

/// `GET /v1/sync/manifests?after=EPOCH&limit=N`: the chain of manifests after `after`, oldest first.
public struct ManifestsResponse: Codable, Sendable, Equatable {
    /// Base64 of each manifest.
    public var manifests: [String]
    public var hasMore: Bool

    enum CodingKeys: String, CodingKey {
        case manifests
        case hasMore = "has_more"
    }

    public init(manifests: [String], hasMore: Bool) {
        self.manifests = manifests
        self.hasMore = hasMore
    }
}

/// `GET /v1/sync/changes?since=CURSOR&limit=N`.
public struct ChangesResponse: Codable, Sendable {
    public var items: [ItemRow]
    /// Pass this as `since` next time.
    public var cursor: Int64
    public var hasMore: Bool
    /// On the last page (`has_more` false): base64 of the newest manifest stored at or before `cursor`, the one that
    /// describes the rows a client holds once it has read up to `cursor`; absent when the account has none.
    public var head: String?

    enum CodingKeys: String, CodingKey {
        case items, cursor, head
        case hasMore = "has_more"
    }

    public init(items: [ItemRow], cursor: Int64, hasMore: Bool, head: String? = nil) {
        self.items = items
        self.cursor = cursor
        self.hasMore = hasMore
        self.head = head
    }
}

/// Every error answer: `{"error": code, "message": text, "details": {…}}` (CardOnCue's error body).
public struct ErrorBody: Codable, Sendable, Equatable {
    public struct Details: Codable, Sendable, Equatable {
        /// The server's current copies of the items a push conflicted on.
        public var conflicts: [ItemRow]?
        /// The field or parameter at fault.
        public var field: String?
        /// The limit that was exceeded.
        public var limit: Int?
        /// The stored head's epoch, when a push's manifest did not extend it.
        public var headEpoch: Int64?
        /// How many rows a rotation holds, when its commit named another number.
        public var staged: Int?

        enum CodingKeys: String, CodingKey {
            case conflicts, field, limit, staged
            case headEpoch = "head_epoch"
        }

        public init(
            conflicts: [ItemRow]? = nil, field: String? = nil, limit: Int? = nil, headEpoch: Int64? = nil, staged: Int? = nil
        ) {
            self.conflicts = conflicts
            self.field = field
            self.limit = limit
            self.headEpoch = headEpoch
            self.staged = staged
        }
    }

    public var error: String
    public var message: String
    public var details: Details?

    public init(error: String, message: String, details: Details? = nil) {
        self.error = error
        self.message = message
        self.details = details
    }
}

/// Limits both sides agree on.
public enum SyncLimits {
    /// Largest item box accepted, in bytes.
    public static let maxBoxBytes = 64 * 1024
    /// Most items in one push.
    public static let maxPushItems = 500
    /// Largest request body, in bytes.
    public static let maxBodyBytes = 8 * 1024 * 1024
    /// Most box bytes a device sends in one push or rotation batch: 5 MiB is under 7 MiB in base64, leaving room in
    /// `maxBodyBytes` for the rest of the JSON (card photos fill boxes; other items are far smaller).
    public static let maxPushBoxBytes = 5 * 1024 * 1024
    /// Most items in one page of changes.
    public static let maxPageItems = 1000
    /// Default page size.
    public static let defaultPageItems = 500
    /// Most manifests in one page of the chain.
    public static let maxPageManifests = 1000
    /// Most rows an account may stage for master-key rotations at once (docs/FORMAT.md §8.8).
    public static let maxRotationItems = 200_000
}

/// JSON coders for the wire: ISO 8601 dates without fractional seconds.
public enum WireJSON {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

// Ids go on the wire in lower case, like every id the API prints; decoding accepts either case.

/// A row on the wire: `{"id", "kind", "revision", "updated_at", "deleted", "box"}`, the box in base64 and absent
/// for a tombstone (docs/FORMAT.md §8.2). Decoding refuses a box over `SyncLimits.maxBoxBytes` before decoding its
/// base64, and a row whose box and deleted flag disagree.
extension ItemRow: Codable {
    enum CodingKeys: String, CodingKey {
        case id, kind, revision, deleted, box
        case updatedAt = "updated_at"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(UUID.self, forKey: .id)
        let kind = try container.decode(String.self, forKey: .kind)
        let revision = try container.decode(Int64.self, forKey: .revision)
        let updatedAt = try container.decode(Int64.self, forKey: .updatedAt)
        let deleted = try container.decode(Bool.self, forKey: .deleted)
        var box: Data?
        if let text = try container.decodeIfPresent(String.self, forKey: .box) {
            // Base64 is 4/3 of the bytes: refuse oversize text before decoding it.
            guard text.utf8.count <= (SyncLimits.maxBoxBytes / 3 + 1) * 4 else { throw WireLimitError.boxTooLarge }
            guard let bytes = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(forKey: .box, in: container, debugDescription: "box must be base64")
            }
            guard bytes.count <= SyncLimits.maxBoxBytes else { throw WireLimitError.boxTooLarge }
            box = bytes
        }
        guard deleted == (box == nil) else {
            throw DecodingError.dataCorruptedError(
                forKey: .box, in: container, debugDescription: "a deleted item has no box and a live item has one")
        }
        self.init(id: id, kind: kind, revision: revision, updatedAt: updatedAt, deleted: deleted, box: box)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.uuidString.lowercased(), forKey: .id)
        try container.encode(kind, forKey: .kind)
        try container.encode(revision, forKey: .revision)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(deleted, forKey: .deleted)
        try container.encodeIfPresent(box?.base64EncodedString(), forKey: .box)
    }
}

/// A wire value over a limit both sides agree on (`SyncLimits`); the server answers it with 413.
public enum WireLimitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An item box over `SyncLimits.maxBoxBytes`.
    case boxTooLarge

    public var description: String {
        switch self {
        case .boxTooLarge: return "an item box holds at most \(SyncLimits.maxBoxBytes) bytes"
        }
    }
}

extension WrappedSlot {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.uuidString.lowercased(), forKey: .id)
        try container.encode(kdf, forKey: .kdf)
        try container.encode(salt, forKey: .salt)
        try container.encode(wrappedKey, forKey: .wrappedKey)
    }
}

extension RegisterRequest {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(email, forKey: .email)
        try container.encode(authKey, forKey: .authKey)
        try container.encode(vaultID.uuidString.lowercased(), forKey: .vaultID)
        try container.encode(slot, forKey: .slot)
    }
}

extension AuthResponse {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(accessToken, forKey: .accessToken)
        try container.encode(refreshToken, forKey: .refreshToken)
        try container.encode(expiresIn, forKey: .expiresIn)
        try container.encode(tokenType, forKey: .tokenType)
        try container.encode(user, forKey: .user)
        try container.encodeIfPresent(vaultID?.uuidString.lowercased(), forKey: .vaultID)
        try container.encodeIfPresent(slot, forKey: .slot)
    }
}

extension AccountResponse {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(user, forKey: .user)
        try container.encodeIfPresent(vaultID?.uuidString.lowercased(), forKey: .vaultID)
        try container.encode(itemCount, forKey: .itemCount)
        try container.encode(storedBytes, forKey: .storedBytes)
        try container.encode(cursor, forKey: .cursor)
        try container.encode(headEpoch, forKey: .headEpoch)
    }
}
