import CofferCrypto
import Foundation

// Accounts and sessions on the wire: pre-login, register, login, refresh, passphrase change, Sign in with Apple,
// and the account as the server describes it (docs/openapi.yaml, tag auth).

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

extension RegisterRequest {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(email, forKey: .email)
        try container.encode(authKey, forKey: .authKey)
        try container.encode(vaultID.lowercasedString, forKey: .vaultID)
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
        try container.encodeIfPresent(vaultID?.lowercasedString, forKey: .vaultID)
        try container.encodeIfPresent(slot, forKey: .slot)
    }
}

extension AccountResponse {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(user, forKey: .user)
        try container.encodeIfPresent(vaultID?.lowercasedString, forKey: .vaultID)
        try container.encode(itemCount, forKey: .itemCount)
        try container.encode(storedBytes, forKey: .storedBytes)
        try container.encode(cursor, forKey: .cursor)
        try container.encode(headEpoch, forKey: .headEpoch)
    }
}
