import CofferCrypto
import CofferServerStore
import CofferSyncAPI
import Foundation
import HTTPTypes

/// A card as CardOnCue's API shows it.
struct CardResponse: Codable, Sendable, Equatable {
    var id: String
    var userID: String
    var name: String
    /// Left out for a card without a barcode.
    var barcodeType: String?
    var payloadEncrypted: String
    var tags: [String]
    var networkIDs: [String]
    var validFrom: Date?
    var validTo: Date?
    var oneTime: Bool
    var usedAt: Date?
    var metadata: [String: String]
    var createdAt: Date
    var updatedAt: Date
    var archivedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, name, tags, metadata
        case userID = "user_id"
        case barcodeType = "barcode_type"
        case payloadEncrypted = "payload_encrypted"
        case networkIDs = "network_ids"
        case validFrom = "valid_from"
        case validTo = "valid_to"
        case oneTime = "one_time"
        case usedAt = "used_at"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case archivedAt = "archived_at"
    }

    /// Nulls are written out, as CardOnCue's clients expect every key; only `barcode_type` is left out, for a card
    /// without a barcode (which those clients never made).
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(userID, forKey: .userID)
        try container.encode(name, forKey: .name)
        try container.encodeIfPresent(barcodeType, forKey: .barcodeType)
        try container.encode(payloadEncrypted, forKey: .payloadEncrypted)
        try container.encode(tags, forKey: .tags)
        try container.encode(networkIDs, forKey: .networkIDs)
        try container.encode(validFrom, forKey: .validFrom)
        try container.encode(validTo, forKey: .validTo)
        try container.encode(oneTime, forKey: .oneTime)
        try container.encode(usedAt, forKey: .usedAt)
        try container.encode(metadata, forKey: .metadata)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(archivedAt, forKey: .archivedAt)
    }
}

/// `GET /v1/cards`.
struct CardList: Codable, Sendable {
    var cards: [CardResponse]
    var count: Int
}

/// `POST /v1/cards`.
struct CardCreateRequest: Decodable, Sendable {
    var name: String
    /// Absent or null for a card without a barcode.
    var barcodeType: String?
    var payloadEncrypted: String
    var tags: [String]?
    var networkIDs: [String]?
    var validFrom: Date?
    var validTo: Date?
    var oneTime: Bool?
    var metadata: [String: String]?

    enum CodingKeys: String, CodingKey {
        case name, tags, metadata
        case barcodeType = "barcode_type"
        case payloadEncrypted = "payload_encrypted"
        case networkIDs = "network_ids"
        case validFrom = "valid_from"
        case validTo = "valid_to"
        case oneTime = "one_time"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        barcodeType = try container.decodeIfPresent(String.self, forKey: .barcodeType)
        payloadEncrypted = try container.decode(String.self, forKey: .payloadEncrypted)
        tags = try container.decodeIfPresent([String].self, forKey: .tags)
        networkIDs = try container.decodeIfPresent([String].self, forKey: .networkIDs)
        validFrom = try container.decodeIfPresent(CardDate.self, forKey: .validFrom)?.date
        validTo = try container.decodeIfPresent(CardDate.self, forKey: .validTo)?.date
        oneTime = try container.decodeIfPresent(Bool.self, forKey: .oneTime)
        metadata = try container.decodeIfPresent([String: String].self, forKey: .metadata)
    }
}

/// A date the card endpoints read, in either form CardOnCue's clients send: an ISO 8601 / RFC 3339 string (the
/// contract), or a number of seconds since 2001-01-01T00:00:00Z, which is what the iOS client's `JSONEncoder`
/// writes with its default date strategy. Fractional seconds are dropped in both forms (the server answers with
/// whole seconds, which is all that client's ISO 8601 decoder reads). Anything else, or a number outside the years
/// 1 to 9999 (a string's four-digit year bounds it already), is a 400 naming the field.
struct CardDate: Decodable, Sendable {
    var date: Date

    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z as seconds since 2001: the years an ISO 8601 answer can write.
    static let range: ClosedRange<TimeInterval> = -63_113_904_000...252_423_993_599

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let field = decoder.codingPath.last?.stringValue ?? "date"
        let invalid = APIError.invalidRequest(
            "\(field) must be an ISO 8601 date-time or a number of seconds since 2001-01-01T00:00:00Z", field: field)
        let seconds: TimeInterval
        if let number = try? container.decode(Double.self) {
            guard number.isFinite, Self.range.contains(number) else { throw invalid }
            seconds = number
        } else if let parsed = try? container.decode(Date.self) {
            // A string, read by the wire decoder's ISO 8601 strategy like every other date of the API.
            seconds = parsed.timeIntervalSinceReferenceDate
        } else {
            throw invalid
        }
        date = Date(timeIntervalSinceReferenceDate: seconds.rounded(.down))
    }
}

/// `PATCH /v1/cards/{id}`: only the keys present change; `null` clears a date. Keys the contract forbids patching
/// (`payload_encrypted`, `barcode_type`, `used_at`) are refused rather than ignored.
struct CardPatchRequest: Decodable, Sendable {
    enum Change<Value: Sendable>: Sendable {
        case unchanged
        case set(Value)
    }

    var name: Change<String> = .unchanged
    var tags: Change<[String]> = .unchanged
    var networkIDs: Change<[String]> = .unchanged
    var validFrom: Change<Date?> = .unchanged
    var validTo: Change<Date?> = .unchanged
    var oneTime: Change<Bool> = .unchanged
    var metadata: Change<[String: String]> = .unchanged

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    static let patchable: Set<String> = ["name", "tags", "network_ids", "valid_from", "valid_to", "one_time", "metadata"]

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        for key in container.allKeys where !Self.patchable.contains(key.stringValue) {
            throw APIError.invalidRequest("Field cannot be patched", field: key.stringValue)
        }
        func required<T: Decodable>(_ name: String, _ type: T.Type) throws -> Change<T> {
            let key = AnyKey(stringValue: name)
            guard container.contains(key) else { return .unchanged }
            return .set(try container.decode(T.self, forKey: key))
        }
        func nullable(_ name: String) throws -> Change<Date?> {
            let key = AnyKey(stringValue: name)
            guard container.contains(key) else { return .unchanged }
            if try container.decodeNil(forKey: key) { return .set(nil) }
            return .set(try container.decode(CardDate.self, forKey: key).date)
        }
        name = try required("name", String.self)
        tags = try required("tags", [String].self)
        networkIDs = try required("network_ids", [String].self)
        validFrom = try nullable("valid_from")
        validTo = try nullable("valid_to")
        oneTime = try required("one_time", Bool.self)
        metadata = try required("metadata", [String: String].self)
    }
}

/// CardOnCue's cards live in the same item store as Coffer's boxes, as items of kind `cardoncue.card` whose
/// server-visible fields are the item's `meta` and whose box is the client's encrypted payload, unchanged.
/// Coffer's own client never writes this kind: its cards are opaque boxes with no metadata.
enum CardFace {
    static let kind = "cardoncue.card"
    static let barcodeTypes = ["qr", "code128", "pdf417", "aztec", "ean13", "upc_a", "code39", "itf"]

    /// The server-visible fields of a card, stored as JSON in `meta`.
    struct Meta: Codable, Sendable {
        var name: String
        /// Absent for a card without a barcode.
        var barcodeType: String?
        var tags: [String]
        var networkIDs: [String]
        var validFrom: Date?
        var validTo: Date?
        var oneTime: Bool
        var usedAt: Date?
        var metadata: [String: String]
        var createdAt: Date
        var archivedAt: Date?

        enum CodingKeys: String, CodingKey {
            case name, tags, metadata
            case barcodeType = "barcode_type"
            case networkIDs = "network_ids"
            case validFrom = "valid_from"
            case validTo = "valid_to"
            case oneTime = "one_time"
            case usedAt = "used_at"
            case createdAt = "created_at"
            case archivedAt = "archived_at"
        }
    }

    static func card(from item: StoredItem, userID: UUID) -> CardResponse? {
        guard item.kind == kind, !item.deleted, let metaText = item.meta, let box = item.box,
            let meta = try? WireJSON.decoder().decode(Meta.self, from: Data(metaText.utf8))
        else { return nil }
        return CardResponse(
            id: item.id.lowercasedString, userID: userID.lowercasedString, name: meta.name,
            barcodeType: meta.barcodeType, payloadEncrypted: String(decoding: box, as: UTF8.self), tags: meta.tags,
            networkIDs: meta.networkIDs, validFrom: meta.validFrom, validTo: meta.validTo, oneTime: meta.oneTime,
            usedAt: meta.usedAt, metadata: meta.metadata, createdAt: meta.createdAt, updatedAt: item.storedAt,
            archivedAt: meta.archivedAt)
    }

    static func validate(name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.count <= 200 else {
            throw APIError.invalidRequest("name must be 1 to 200 characters", field: "name")
        }
        return trimmed
    }

    static func validate(list: [String], field: String) throws -> [String] {
        guard list.count <= 50, list.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 64 }) else {
            throw APIError.invalidRequest("\(field) holds at most 50 entries of 1 to 64 bytes", field: field)
        }
        return list
    }

    static func validate(metadata: [String: String]) throws -> [String: String] {
        guard metadata.count <= 50, metadata.allSatisfy({ $0.key.utf8.count <= 128 && $0.value.utf8.count <= 1024 }) else {
            throw APIError.invalidRequest("metadata holds at most 50 entries of bounded size", field: "metadata")
        }
        return metadata
    }

    static func validateDates(_ from: Date?, _ to: Date?) throws {
        if let from, let to, to < from { throw APIError.invalidRequest("valid_to is before valid_from", field: "valid_to") }
    }
}

extension ServerCore {
    func listCards(
        session: AuthenticatedSession, includeArchived: Bool, networkID: String?, tags: [String]
    ) async throws -> CardList {
        let cards = try await store.items(userID: session.userID, kind: CardFace.kind)
            .compactMap { CardFace.card(from: $0, userID: session.userID) }
            .filter { card in
                (includeArchived || card.archivedAt == nil)
                    && (networkID.map { card.networkIDs.contains($0) } ?? true)
                    && tags.allSatisfy { card.tags.contains($0) }
            }
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        return CardList(cards: cards, count: cards.count)
    }

    func createCard(_ request: CardCreateRequest, session: AuthenticatedSession) async throws -> CardResponse {
        let name = try CardFace.validate(name: request.name)
        if let barcodeType = request.barcodeType, !CardFace.barcodeTypes.contains(barcodeType) {
            throw APIError.invalidRequest(
                "Invalid barcode_type. Must be one of: \(CardFace.barcodeTypes.joined(separator: ", "))", field: "barcode_type")
        }
        guard !request.payloadEncrypted.isEmpty, request.payloadEncrypted.utf8.count <= SyncLimits.maxBoxBytes else {
            throw APIError.invalidRequest("payload_encrypted must be 1 to \(SyncLimits.maxBoxBytes) bytes", field: "payload_encrypted")
        }
        try CardFace.validateDates(request.validFrom, request.validTo)
        let meta = CardFace.Meta(
            name: name, barcodeType: request.barcodeType,
            tags: try CardFace.validate(list: request.tags ?? [], field: "tags"),
            networkIDs: try CardFace.validate(list: request.networkIDs ?? [], field: "network_ids"),
            validFrom: request.validFrom, validTo: request.validTo, oneTime: request.oneTime ?? false, usedAt: nil,
            metadata: try CardFace.validate(metadata: request.metadata ?? [:]), createdAt: now, archivedAt: nil)
        let id = UUID()
        try await writeCard(id: id, meta: meta, box: Data(request.payloadEncrypted.utf8), revision: 1, base: 0, session: session)
        return try await card(id: id, session: session)
    }

    func card(id: UUID, session: AuthenticatedSession) async throws -> CardResponse {
        guard let item = try await store.item(userID: session.userID, id: id),
            let card = CardFace.card(from: item, userID: session.userID)
        else { throw APIError.cardNotFound }
        return card
    }

    func patchCard(id: UUID, _ patch: CardPatchRequest, session: AuthenticatedSession) async throws -> CardResponse {
        try await modifyCard(id: id, session: session) { meta in
            if case .set(let name) = patch.name { meta.name = try CardFace.validate(name: name) }
            if case .set(let tags) = patch.tags { meta.tags = try CardFace.validate(list: tags, field: "tags") }
            if case .set(let ids) = patch.networkIDs { meta.networkIDs = try CardFace.validate(list: ids, field: "network_ids") }
            if case .set(let date) = patch.validFrom { meta.validFrom = date }
            if case .set(let date) = patch.validTo { meta.validTo = date }
            if case .set(let oneTime) = patch.oneTime { meta.oneTime = oneTime }
            if case .set(let metadata) = patch.metadata { meta.metadata = try CardFace.validate(metadata: metadata) }
            try CardFace.validateDates(meta.validFrom, meta.validTo)
        }
        return try await card(id: id, session: session)
    }

    /// `DELETE /v1/cards/{id}` archives (CardOnCue's soft delete).
    func archiveCard(id: UUID, session: AuthenticatedSession) async throws {
        let now = self.now
        try await modifyCard(id: id, session: session) { meta in
            if meta.archivedAt == nil { meta.archivedAt = now }
        }
    }

    private func modifyCard(id: UUID, session: AuthenticatedSession, _ change: (inout CardFace.Meta) throws -> Void) async throws {
        // A concurrent writer makes the push conflict; read again and retry a few times before giving up.
        for _ in 0..<3 {
            guard let item = try await store.item(userID: session.userID, id: id), item.kind == CardFace.kind, !item.deleted,
                let metaText = item.meta, let box = item.box,
                var meta = try? WireJSON.decoder().decode(CardFace.Meta.self, from: Data(metaText.utf8))
            else { throw APIError.cardNotFound }
            try change(&meta)
            do {
                try await writeCard(id: id, meta: meta, box: box, revision: item.revision + 1, base: item.revision, session: session)
                return
            } catch let error as APIError where error.code == "conflict" {
                continue
            }
        }
        throw APIError(.conflict, "conflict", "The card is being changed elsewhere; try again")
    }

    private func writeCard(id: UUID, meta: CardFace.Meta, box: Data, revision: Int64, base: Int64, session: AuthenticatedSession) async throws {
        let metaText = String(decoding: try WireJSON.encoder().encode(meta), as: UTF8.self)
        let write = ItemWrite(
            row: ItemRow(
                id: id, kind: CardFace.kind, revision: revision, updatedAt: UnixTime.milliseconds(now), deleted: false, box: box),
            meta: metaText, baseRevision: base)
        if case .conflicts = try await storePush([write], session: session) {
            throw APIError.conflict([])
        }
    }
}
