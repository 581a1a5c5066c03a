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
        guard let id = UUID(text: try container.decode(String.self, forKey: .id)) else {
            throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "id must be a UUID")
        }
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
        try container.encode(id.lowercasedString, forKey: .id)
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
        try container.encode(id.lowercasedString, forKey: .id)
        try container.encode(kdf, forKey: .kdf)
        try container.encode(salt, forKey: .salt)
        try container.encode(wrappedKey, forKey: .wrappedKey)
    }
}
