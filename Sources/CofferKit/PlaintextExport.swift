import CofferCrypto
import CofferInterop
import CofferKeystore
import CofferVault
import Foundation

/// The plaintext JSON export: CardOnCue's `GET /v1/user/export` shape (`user`, `cards` with decrypted payloads)
/// extended with Coffer's other kinds. Signing keys appear with their public key only: a seed never leaves its PIN
/// box. Described in docs/FORMAT.md §7.
///
/// An export is the user's way out, so one item never blocks it: an item the format cannot hold (a token whose
/// account has a colon, which its `otpauth://` URI cannot carry) is left out and listed in ``leftOut``.
public struct PlaintextExport: Encodable {
    public struct User: Encodable {
        let id: String
        let email: String?
        let createdAt: Date

        enum CodingKeys: String, CodingKey {
            case id, email
            case createdAt = "created_at"
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(email, forKey: .email)
            try container.encode(createdAt, forKey: .createdAt)
        }
    }

    struct CardEntry: Encodable {
        let id: String
        let name: String
        /// Left out for a card without a barcode.
        let barcodeType: String?
        let payload: String
        let payloadEncoding: String
        let cardNumber: String?
        let tags: [String]
        let networkIDs: [String]
        let validFrom: Date?
        let validTo: Date?
        let oneTime: Bool
        let usedAt: Date?
        let archivedAt: Date?
        let metadata: [String: String]
        let notes: String?
        let createdAt: Date
        let updatedAt: Date
        /// Left out for a card without photos (since format 1.4).
        let photos: [PhotoEntry]?

        enum CodingKeys: String, CodingKey {
            case id, name, payload, tags, metadata, notes, photos
            case barcodeType = "barcode_type", payloadEncoding = "payload_encoding", cardNumber = "card_number"
            case networkIDs = "network_ids", validFrom = "valid_from", validTo = "valid_to", oneTime = "one_time"
            case usedAt = "used_at", archivedAt = "archived_at", createdAt = "created_at", updatedAt = "updated_at"
        }
    }

    /// A card photo: its side, type and the image in base64.
    struct PhotoEntry: Encodable {
        let side: String
        let type: String
        let data: String
    }

    struct OTPEntry: Encodable {
        let id: String
        let issuer: String
        let account: String
        let uri: String
        let tags: [String]
        let notes: String?
        let createdAt: Date

        enum CodingKeys: String, CodingKey {
            case id, issuer, account, uri, tags, notes
            case createdAt = "created_at"
        }
    }

    struct CredentialEntry: Encodable {
        let id: String
        let name: String
        let provider: String?
        let value: String
        let tags: [String]
        let notes: String?
        let username: String?
        let url: String?
        let createdAt: Date

        enum CodingKeys: String, CodingKey {
            case id, name, provider, value, tags, notes, username, url
            case createdAt = "created_at"
        }
    }

    struct SigningKeyEntry: Encodable {
        let id: String
        let name: String
        let algorithm = "ed25519"
        let flavor: String
        let publicKey: String

        enum CodingKeys: String, CodingKey {
            case id, name, algorithm, flavor
            case publicKey = "public_key"
        }
    }

    struct NoteEntry: Encodable {
        let id: String
        let name: String
        let template: String
        let fields: [Note.Field]
        let text: String?
        let tags: [String]
        let createdAt: Date

        enum CodingKeys: String, CodingKey {
            case id, name, template, fields, text, tags
            case createdAt = "created_at"
        }
    }

    let format = "coffer-export"
    let version = 1
    let user: User
    var cards: [CardEntry] = []
    var otp: [OTPEntry] = []
    var credentials: [CredentialEntry] = []
    var signingKeys: [SigningKeyEntry] = []
    var notes: [NoteEntry] = []
    /// The items this export could not hold, each with the reason (not part of the JSON).
    public private(set) var leftOut: [ExportProblem] = []

    enum CodingKeys: String, CodingKey {
        case format, version, user, cards, otp, credentials, notes
        case signingKeys = "signing_keys"
    }

    /// Builds the export of every live item (archived cards included) that the format can hold, with the cards'
    /// photos from `photos` (by item id: `Coffer.photos(of:)`).
    public init(items: [Item], vaultID: UUID, createdAt: Date, photos: [UUID: [PhotoSide: Data]] = [:]) {
        user = User(id: vaultID.lowercasedString, email: nil, createdAt: createdAt)
        for item in items {
            let id = item.id.lowercasedString
            switch item.content {
            case .card(let card):
                let binary = card.payloadCharset == .binary
                cards.append(
                    CardEntry(
                        id: id, name: card.name, barcodeType: card.symbology?.rawValue,
                        payload: binary ? Data(card.payload).base64EncodedString() : card.payloadText,
                        payloadEncoding: binary ? "base64" : card.payloadCharset.rawValue, cardNumber: card.cardNumber,
                        tags: card.tags, networkIDs: card.networkIDs, validFrom: card.validFrom, validTo: card.validTo,
                        oneTime: card.oneTime, usedAt: card.usedAt, archivedAt: card.archivedAt, metadata: card.metadata,
                        notes: card.notes, createdAt: item.createdAt, updatedAt: item.updatedAt,
                        photos: Self.photoEntries(card, photos[item.id] ?? [:])))
            case .otp(let token):
                do {
                    otp.append(
                        OTPEntry(
                            id: id, issuer: token.issuer, account: token.account, uri: try token.token().uri, tags: token.tags,
                            notes: token.notes, createdAt: item.createdAt))
                } catch {
                    leftOut.append(ExportProblem(entry: token.displayName, reason: error.description))
                }
            case .credential(let credential):
                credentials.append(
                    CredentialEntry(
                        id: id, name: credential.name, provider: credential.provider, value: credential.value,
                        tags: credential.tags, notes: credential.notes, username: credential.username, url: credential.url,
                        createdAt: item.createdAt))
            case .signingKey(let key):
                signingKeys.append(SigningKeyEntry(id: id, name: key.name, flavor: key.flavor.rawValue, publicKey: key.publicKeyText))
            case .note(let note):
                notes.append(
                    NoteEntry(
                        id: id, name: note.name, template: note.template.rawValue, fields: note.fields, text: note.text,
                        tags: note.tags, createdAt: item.createdAt))
            }
        }
    }

    /// The entries of `card`'s photos whose images are in `images`; nil when there are none.
    static func photoEntries(_ card: Card, _ images: [PhotoSide: Data]) -> [PhotoEntry]? {
        let entries = card.photos.compactMap { photo in
            images[photo.side].map { PhotoEntry(side: photo.side.rawValue, type: photo.type.rawValue, data: $0.base64EncodedString()) }
        }
        return entries.isEmpty ? nil : entries
    }

    /// The export as pretty-printed JSON with ISO 8601 dates.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }
}
