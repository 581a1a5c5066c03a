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
            candidates = [otp.displayName, otp.issuer, otp.account, "\(otp.issuer):\(otp.account)"]
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

/// The plaintext inside an item box: a JSON object `{"v": 1, "createdAt": ms, "<kind>": {...}}` (docs/FORMAT.md §4).
public enum ItemContentCoding {
    /// Content version written by this build.
    public static let currentVersion = 1

    private struct Envelope: Codable {
        var v: Int
        var createdAt: Int64
        var card: Card?
        var otp: OTPItem?
        var credential: Credential?
        var signingKey: SigningKey?
        var note: Note?
    }

    private struct VersionProbe: Decodable { var v: Int }

    /// Serialises content for sealing.
    public static func encode(_ content: ItemContent, createdAt: Date) throws(ModelError) -> Data {
        var envelope = Envelope(v: currentVersion, createdAt: milliseconds(createdAt))
        switch content {
        case .card(let card): envelope.card = card
        case .otp(let otp): envelope.otp = otp
        case .credential(let credential): envelope.credential = credential
        case .signingKey(let key): envelope.signingKey = key
        case .note(let note): envelope.note = note
        }
        do {
            return try encoder.encode(envelope)
        } catch {
            throw .malformedContent("cannot serialise")
        }
    }

    /// Parses opened box contents; `kind` is the kind bound in the box's associated data.
    public static func decode(_ data: Data, kind: ItemKind) throws(ModelError) -> (content: ItemContent, createdAt: Date) {
        let envelope: Envelope
        do {
            envelope = try JSONDecoder.coffer.decode(Envelope.self, from: data)
        } catch let error as ModelError {
            throw error
        } catch {
            if let probe = try? JSONDecoder.coffer.decode(VersionProbe.self, from: data), probe.v > currentVersion {
                throw .unsupportedContentVersion(probe.v)
            }
            throw .malformedContent("not a valid \(kind.rawValue)")
        }
        guard envelope.v <= currentVersion else { throw .unsupportedContentVersion(envelope.v) }
        let content: ItemContent?
        switch kind {
        case .card: content = envelope.card.map(ItemContent.card)
        case .otp: content = envelope.otp.map(ItemContent.otp)
        case .credential: content = envelope.credential.map(ItemContent.credential)
        case .signingKey: content = envelope.signingKey.map(ItemContent.signingKey)
        case .note: content = envelope.note.map(ItemContent.note)
        }
        guard let content else { throw .malformedContent("missing \(kind.rawValue) object") }
        return (content, Date(timeIntervalSince1970: Double(envelope.createdAt) / 1000))
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Whole Unix milliseconds, as docs/FORMAT.md §5 says (the built-in strategy writes fractions).
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(milliseconds(date))
        }
        return encoder
    }()
}

extension CodingUserInfoKey {
    /// Set on decoders of content that was just opened from an authenticated box: it was validated when it was
    /// sealed under the vault's own key, so the (costly) normalising checks are not repeated on every read.
    static let authenticatedContent = CodingUserInfoKey(rawValue: "coffer.authenticatedContent")!
}

extension Decoder {
    var isAuthenticatedContent: Bool { userInfo[.authenticatedContent] as? Bool == true }
}

extension JSONDecoder {
    /// Coffer's decoder for content opened from an authenticated item box: dates as Unix milliseconds. Shared:
    /// decoding does not mutate it.
    static let coffer: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        decoder.userInfo[.authenticatedContent] = true
        return decoder
    }()
}
