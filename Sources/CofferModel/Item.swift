import CofferCrypto
import Foundation

/// The kinds of item a vault holds. Raw values are stored in the clear (the `kind` column) and bound into each
/// box's associated data.
public enum ItemKind: String, Codable, Sendable, CaseIterable {
    case card
    case otp
    case credential
    case signingKey = "signing_key"
    case note
}

/// What an item is. Everything here is sealed in the item's box.
public enum ItemContent: Sendable, Equatable {
    case card(Card)
    case otp(OTPItem)
    case credential(Credential)
    case signingKey(SigningKey)
    case note(Note)

    public var kind: ItemKind {
        switch self {
        case .card: return .card
        case .otp: return .otp
        case .credential: return .credential
        case .signingKey: return .signingKey
        case .note: return .note
        }
    }

    /// The name shown in lists and used to find the item.
    public var name: String {
        switch self {
        case .card(let card): return card.name
        case .otp(let otp): return otp.displayName
        case .credential(let credential): return credential.name
        case .signingKey(let key): return key.name
        case .note(let note): return note.name
        }
    }

    public var tags: [String] {
        switch self {
        case .card(let card): return card.tags
        case .otp(let otp): return otp.tags
        case .credential(let credential): return credential.tags
        case .signingKey(let key): return key.tags
        case .note(let note): return note.tags
        }
    }

    /// Whether `query` names this item: its name, or for tokens the issuer or account alone (case-insensitive).
    public func matches(name query: String) -> Bool {
        let candidates: [String]
        if case .otp(let otp) = self {
            candidates = otp.lookupNames
        } else {
            candidates = [name]
        }
        return candidates.contains { $0.caseInsensitiveCompare(query) == .orderedSame }
    }
}

/// An item as the vault returns it: identity and bookkeeping in the clear, content from its box.
public struct Item: Sendable, Equatable, Identifiable {
    public let id: UUID
    /// Starts at 1, grows by one on every write.
    public var revision: UInt64
    public var createdAt: Date
    public var updatedAt: Date
    public var content: ItemContent

    public init(id: UUID, revision: UInt64, createdAt: Date, updatedAt: Date, content: ItemContent) {
        self.id = id
        self.revision = revision
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.content = content
    }

    public var kind: ItemKind { content.kind }
}

/// The plaintext inside an item box (docs/FORMAT.md §5): a version byte, then tag–length–value fields: tag 1 is
/// the creation time, tags from 16 are the kind's fields. Compact and fast to read (listing a large vault decodes
/// every item), and open to new fields: readers skip tags they do not know.
public enum ItemContentCoding {
    /// Content version written by this build.
    public static let currentVersion: UInt8 = 1

    /// Serialises content for sealing.
    public static func encode(_ content: ItemContent, createdAt: Date) throws(ModelError) -> Data {
        var fields = FieldWriter(version: currentVersion)
        fields.integer(1, UInt64(bitPattern: UnixTime.milliseconds(createdAt)))
        switch content {
        case .card(let card): card.write(to: &fields)
        case .otp(let otp): otp.write(to: &fields)
        case .credential(let credential): credential.write(to: &fields)
        case .signingKey(let key): key.write(to: &fields)
        case .note(let note): note.write(to: &fields)
        }
        return Data(fields.bytes)
    }

    /// Parses opened box contents; `kind` is the kind bound in the box's associated data. Content from an
    /// authenticated box was validated when it was sealed, so only its structure is checked here.
    public static func decode(_ data: Data, kind: ItemKind) throws(ModelError) -> (content: ItemContent, createdAt: Date) {
        let bytes = [UInt8](data)
        guard let version = bytes.first else { throw .malformedContent("empty") }
        guard version <= currentVersion else { throw .unsupportedContentVersion(Int(version)) }
        guard version == currentVersion else { throw .malformedContent("unknown content version") }
        let fields = try FieldReader(bytes[1...])
        let createdAt = try fields.integer(1, "creation time")
        let content: ItemContent
        switch kind {
        case .card: content = .card(try Card(fields: fields))
        case .otp: content = .otp(try OTPItem(fields: fields))
        case .credential: content = .credential(try Credential(fields: fields))
        case .signingKey: content = .signingKey(try SigningKey(fields: fields))
        case .note: content = .note(try Note(fields: fields))
        }
        return (content, UnixTime.date(milliseconds: Int64(bitPattern: createdAt)))
    }

}
