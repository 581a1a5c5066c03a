import CofferServerStore
import CofferSyncAPI
import Foundation

extension ServerCore {
    /// `POST /v1/sync/push`: every write is checked before any lands; a stale base revision answers 409 with the
    /// server's copies.
    func push(_ request: PushRequest, session: AuthenticatedSession) async throws -> PushResponse {
        guard !request.items.isEmpty else { throw APIError.invalidRequest("A push needs at least one item", field: "items") }
        guard request.items.count <= SyncLimits.maxPushItems else {
            throw APIError(
                .badRequest, "too_many_items", "A push holds at most \(SyncLimits.maxPushItems) items",
                details: ErrorBody.Details(field: "items", limit: SyncLimits.maxPushItems))
        }
        var seen = Set<UUID>()
        var writes: [ItemWrite] = []
        writes.reserveCapacity(request.items.count)
        for push in request.items {
            let item = push.item
            guard seen.insert(item.id).inserted else { throw APIError.invalidRequest("An item appears twice in one push", field: "items") }
            try Self.validateKind(item.kind)
            guard item.revision >= 1, push.baseRevision >= 0, item.revision > push.baseRevision else {
                throw APIError.invalidRequest("revision must be at least 1 and above base_revision", field: "revision")
            }
            guard item.updatedAt >= 0 else { throw APIError.invalidRequest("updated_at must not be negative", field: "updated_at") }
            let box = try Self.box(item)
            writes.append(
                ItemWrite(
                    id: item.id, kind: item.kind, revision: item.revision, updatedAt: item.updatedAt, deleted: item.deleted,
                    box: box, baseRevision: push.baseRevision))
        }
        // `authenticate` has checked the account is live; one deleted since then makes the store answer notFound.
        switch try await storePush(writes, session: session) {
        case .accepted(let cursor):
            return PushResponse(cursor: cursor, accepted: writes.count)
        case .conflicts(let stored):
            throw APIError.conflict(stored.map { Self.syncItem(FeedItem($0)) })
        }
    }

    /// The store's push, with an account deleted meanwhile answered like any ended session.
    func storePush(_ writes: [ItemWrite], session: AuthenticatedSession) async throws -> PushOutcome {
        let result: Result<PushOutcome, ServerStoreError>
        do {
            result = .success(try await store.push(userID: session.userID, writes: writes, now: now))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let outcome): return outcome
        case .failure(.notFound): throw APIError.invalidToken
        case .failure(let error): throw error
        }
    }

    /// `GET /v1/sync/changes`: the page, which `ChangesJSON` writes as a `ChangesResponse`.
    func changes(since: Int64, limit: Int, session: AuthenticatedSession) async throws -> ChangePage {
        guard since >= 0 else { throw APIError.invalidRequest("since must not be negative", field: "since") }
        guard (1...SyncLimits.maxPageItems).contains(limit) else {
            throw APIError.invalidRequest("limit must be between 1 and \(SyncLimits.maxPageItems)", field: "limit")
        }
        return try await store.changes(userID: session.userID, since: since, limit: limit)
    }

    /// `DELETE /v1/sync/items`: revoke sync, deleting every server copy.
    func revokeSync(session: AuthenticatedSession, address: String?) async throws -> Int {
        let count = try await store.deleteAllItems(userID: session.userID)
        try await store.audit(AuditEvent(at: now, kind: .syncRevoked, userID: session.userID, address: address, detail: "\(count) items"))
        return count
    }

    /// `GET /v1/user/export`: the account, its cards in CardOnCue's export shape, and every stored row as is.
    func export(session: AuthenticatedSession) async throws -> UserExport {
        let user = try await liveUser(session)
        var items: [SyncItem] = []
        var cursor: Int64 = 0
        while true {
            let page = try await store.changes(userID: user.id, since: cursor, limit: SyncLimits.maxPageItems)
            items += page.items.map(Self.syncItem)
            cursor = page.cursor
            if !page.hasMore { break }
        }
        let cards = try await store.items(userID: user.id, kind: CardFace.kind).compactMap { CardFace.card(from: $0, userID: user.id) }
        return UserExport(
            user: UserExport.User(id: user.id.uuidString.lowercased(), email: user.email, createdAt: user.createdAt),
            cards: cards.map(UserExport.Card.init), items: items)
    }

    static func syncItem(_ item: FeedItem) -> SyncItem {
        SyncItem(
            id: item.id, kind: item.kind, revision: item.revision, updatedAt: item.updatedAt, deleted: item.deleted,
            box: item.box?.base64EncodedString())
    }

    static func validateKind(_ kind: String) throws {
        guard (1...64).contains(kind.utf8.count),
              kind.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2E || $0 == 0x2D })
        else { throw APIError.invalidRequest("kind must be 1 to 64 of a-z 0-9 _ . -", field: "kind") }
    }

    private static func box(_ item: SyncItem) throws -> Data? {
        switch (item.deleted, item.box) {
        case (true, nil):
            return nil
        case (false, let text?):
            // Base64 is 4/3 of the bytes; refuse oversize text before decoding it.
            guard text.utf8.count <= (SyncLimits.maxBoxBytes / 3 + 1) * 4 else {
                throw APIError.tooLarge("An item box holds at most \(SyncLimits.maxBoxBytes) bytes", limit: SyncLimits.maxBoxBytes)
            }
            guard let box = Data(base64Encoded: text) else { throw APIError.invalidRequest("box must be base64", field: "box") }
            guard box.count <= SyncLimits.maxBoxBytes else {
                throw APIError.tooLarge("An item box holds at most \(SyncLimits.maxBoxBytes) bytes", limit: SyncLimits.maxBoxBytes)
            }
            guard box.count >= 28 else { throw APIError.invalidRequest("box is shorter than a nonce and a tag", field: "box") }
            return box
        default:
            throw APIError.invalidRequest("A deleted item has no box and a live item has one", field: "box")
        }
    }
}

/// `GET /v1/user/export`.
struct UserExport: Codable, Sendable {
    struct User: Codable, Sendable {
        var id: String
        var email: String?
        var createdAt: Date
        enum CodingKeys: String, CodingKey {
            case id, email
            case createdAt = "created_at"
        }
    }

    /// CardOnCue's export entry; `payload` is the stored (encrypted) payload: the server cannot decrypt it.
    struct Card: Codable, Sendable {
        var id: String
        var name: String
        var barcodeType: String
        var payload: String
        var tags: [String]
        var networkIDs: [String]
        var createdAt: Date

        enum CodingKeys: String, CodingKey {
            case id, name, payload, tags
            case barcodeType = "barcode_type"
            case networkIDs = "network_ids"
            case createdAt = "created_at"
        }

        init(_ card: CardResponse) {
            id = card.id
            name = card.name
            barcodeType = card.barcodeType
            payload = card.payloadEncrypted
            tags = card.tags
            networkIDs = card.networkIDs
            createdAt = card.createdAt
        }
    }

    var user: User
    var cards: [Card]
    var items: [SyncItem]
}
