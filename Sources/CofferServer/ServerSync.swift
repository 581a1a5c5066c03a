import CofferCrypto
import CofferServerStore
import CofferSyncAPI
import Foundation
import HTTPTypes

extension ServerCore {
    /// `POST /v1/sync/push`: every write is checked before any lands; a stale base revision answers 409 with the
    /// server's copies.
    func push(_ request: PushRequest, session: AuthenticatedSession) async throws -> PushResponse {
        try await requireSyncEnabled(session)
        let manifest = try Self.manifestWrite(request.manifest, baseEpoch: request.baseEpoch, chain: request.chain)
        guard !request.items.isEmpty || manifest != nil else {
            throw APIError.invalidRequest("A push needs at least one item", field: "items")
        }
        guard request.items.count <= SyncLimits.maxPushItems else {
            throw APIError(
                .badRequest, "too_many_items", "A push holds at most \(SyncLimits.maxPushItems) items",
                details: ErrorBody.Details(field: "items", limit: SyncLimits.maxPushItems))
        }
        let writes = try Self.writes(request.items)
        // `authenticate` has checked the account is live; one deleted since then makes the store answer notFound.
        switch try await storePush(writes, manifest: manifest, session: session) {
        case .accepted(let cursor):
            return PushResponse(cursor: cursor, accepted: writes.count)
        case let refused:
            throw APIError.refusedPush(refused)
        }
    }

    /// A push's items as writes, each checked: no item twice, a valid kind, revisions above their base, a box at least
    /// as long as a nonce and a tag.
    static func writes(_ items: [PushItem]) throws -> [ItemWrite] {
        var seen = Set<UUID>()
        var writes: [ItemWrite] = []
        writes.reserveCapacity(items.count)
        for push in items {
            let item = push.item
            guard seen.insert(item.id).inserted else { throw APIError.invalidRequest("An item appears twice in one push", field: "items") }
            try Self.validateKind(item.kind)
            guard item.revision >= 1, push.baseRevision >= 0, item.revision > push.baseRevision else {
                throw APIError.invalidRequest("revision must be at least 1 and above base_revision", field: "revision")
            }
            guard item.updatedAt >= 0 else { throw APIError.invalidRequest("updated_at must not be negative", field: "updated_at") }
            if let box = item.box, box.count < 28 {
                throw APIError.invalidRequest("box is shorter than a nonce and a tag", field: "box")
            }
            writes.append(ItemWrite(row: item, baseRevision: push.baseRevision))
        }
        return writes
    }

    // MARK: Master-key rotation (docs/FORMAT.md §8.8)

    /// `POST /v1/sync/rotations/{rotation}/items`: stages re-sealed rows, checked as a push's.
    func stageRotation(_ request: RotationItemsRequest, rotation: UUID, session: AuthenticatedSession) async throws -> RotationItemsResponse {
        try await requireSyncEnabled(session)
        guard !request.items.isEmpty else { throw APIError.invalidRequest("A rotation batch needs at least one item", field: "items") }
        guard request.items.count <= SyncLimits.maxPushItems else {
            throw APIError(
                .badRequest, "too_many_items", "A rotation batch holds at most \(SyncLimits.maxPushItems) items",
                details: ErrorBody.Details(field: "items", limit: SyncLimits.maxPushItems))
        }
        let writes = try Self.writes(request.items)
        guard !writes.contains(where: { StateRoot.isServerFace(kind: $0.kind) }) else {
            throw APIError.invalidRequest("A rotation re-seals the vault's items, not the card face's", field: "kind")
        }
        let result: Result<Int, ServerStoreError>
        do {
            result = .success(try await store.stageRotation(userID: session.userID, rotation: rotation, writes: writes, now: now))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let staged): return RotationItemsResponse(staged: staged)
        case .failure(.stagingFull):
            throw APIError.tooLarge(
                "An account stages at most \(SyncLimits.maxRotationItems) rotation rows", limit: SyncLimits.maxRotationItems)
        case .failure(.notFound): throw APIError.invalidToken
        case .failure(let error): throw error
        }
    }

    /// `POST /v1/sync/rotations/{rotation}/commit`: the staged rows, the new account slot and the manifest, in one
    /// transaction. The passphrase is proven as for a passphrase change; the slot must keep the account's KDF
    /// parameters and salt (the auth key, derived from them, stays the account's).
    func commitRotation(
        _ request: RotationCommitRequest, rotation: UUID, session: AuthenticatedSession, address: String?
    ) async throws -> PushResponse {
        let authKey = try Self.authKey(request.authKey, field: "auth_key")
        try validate(request.slot)
        guard request.items >= 0, request.items <= SyncLimits.maxRotationItems else {
            throw APIError.invalidRequest("items must be between 0 and \(SyncLimits.maxRotationItems)", field: "items")
        }
        let user = try await liveUser(session)
        guard let stored = user.authHash, let slot = user.slot else { throw APIError.syncDisabled }
        let keys = failedLoginKeys(email: user.email ?? session.userID.uuidString, address: address)
        try await checkFailedLogins(keys, userID: user.id, address: address)
        guard AuthHasher.verify(authKey, against: stored) else {
            try await recordFailedLogin(keys, userID: user.id, address: address)
            throw APIError.invalidCredentials
        }
        guard let manifest = try Self.manifestWrite(request.manifest, baseEpoch: request.baseEpoch) else {
            throw APIError.invalidRequest("A rotation needs a manifest", field: "manifest")
        }
        guard request.slot.kdf == slot.kdf, request.slot.salt == slot.salt else {
            throw APIError(
                .conflict, "slot_parameters", "A rotation keeps the account slot's KDF parameters and salt (see prelogin)",
                details: ErrorBody.Details(field: "slot"))
        }
        let result: Result<PushOutcome, ServerStoreError>
        do {
            result = .success(
                try await store.commitRotation(
                    userID: user.id, rotation: rotation, expectedRows: request.items, slot: request.slot, manifest: manifest, now: now))
        } catch {
            result = .failure(error)
        }
        let outcome: PushOutcome
        switch result {
        case .success(let answer): outcome = answer
        case .failure(.notFound): throw APIError.invalidToken
        case .failure(.protectedItem): throw APIError.protectedItem
        case .failure(let error): throw error
        }
        guard case .accepted(let cursor) = outcome else { throw APIError.refusedPush(outcome) }
        try await store.audit(AuditEvent(at: now, kind: .masterKeyRotated, userID: user.id, address: address, detail: "\(request.items) items"))
        return PushResponse(cursor: cursor, accepted: request.items)
    }

    /// `DELETE /v1/sync/rotations/{rotation}`: drops the rotation's staged rows.
    func discardRotation(_ rotation: UUID, session: AuthenticatedSession) async throws {
        try await store.discardRotation(userID: session.userID, rotation: rotation)
    }

    /// A request's manifests, checked as far as the server can: their shape, and that they claim the epochs after the
    /// base, one by one (`chain` first, then `manifest`). Only the vault's key can check their tags; devices do.
    static func manifestWrite(_ text: String?, baseEpoch: Int64?, chain: [String]? = nil) throws -> ManifestWrite? {
        guard let text else {
            guard baseEpoch == nil, chain == nil else {
                throw APIError.invalidRequest("base_epoch and chain come with a manifest", field: "manifest")
            }
            return nil
        }
        guard let baseEpoch, baseEpoch >= 0 else {
            throw APIError.invalidRequest("A manifest needs base_epoch, the head it extends", field: "base_epoch")
        }
        let texts = (chain ?? []) + [text]
        guard texts.count <= SyncLimits.maxPageManifests else {
            throw APIError(
                .badRequest, "invalid_request", "A push carries at most \(SyncLimits.maxPageManifests) manifests",
                details: ErrorBody.Details(field: "chain", limit: SyncLimits.maxPageManifests))
        }
        var entries: [ManifestWrite.Entry] = []
        for (index, text) in texts.enumerated() {
            let field = index == texts.count - 1 ? "manifest" : "chain"
            let manifest: Manifest
            do {
                manifest = try Manifest(base64: text)
            } catch {
                throw APIError.invalidRequest("\(field) must hold version-1 vault-state manifests in base64", field: field)
            }
            guard manifest.epoch == baseEpoch + 1 + Int64(index) else {
                throw APIError.invalidRequest("Manifests must claim the epochs after base_epoch, one by one", field: field)
            }
            entries.append(ManifestWrite.Entry(epoch: manifest.epoch, bytes: Data(manifest.bytes)))
        }
        return ManifestWrite(baseEpoch: baseEpoch, manifests: entries)
    }

    /// Sync is on for an account that holds a passphrase slot (`preferences.sync_enabled`). One made through Sign in
    /// with Apple has none: its items are the card face's, and a sync push would store boxes that no device of the
    /// account can open, or overwrite its cards.
    func requireSyncEnabled(_ session: AuthenticatedSession) async throws {
        guard try await liveUser(session).slot != nil else { throw APIError.syncDisabled }
    }

    /// The store's push, with an account deleted meanwhile answered like any ended session.
    func storePush(_ writes: [ItemWrite], manifest: ManifestWrite? = nil, session: AuthenticatedSession) async throws -> PushOutcome {
        let result: Result<PushOutcome, ServerStoreError>
        do {
            result = .success(
                try await store.push(
                    userID: session.userID, writes: writes, manifest: manifest, maxStoredBytes: configuration.maxAccountBytes, now: now))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let outcome): return outcome
        case .failure(.notFound): throw APIError.invalidToken
        case .failure(.protectedItem): throw APIError.protectedItem
        case .failure(let error): throw error
        }
    }

    /// `GET /v1/sync/changes`: the page and, on the last page, the head that describes the rows up to its cursor;
    /// `ChangesJSON` writes them as a `ChangesResponse`.
    func changes(since: Int64, limit: Int, session: AuthenticatedSession) async throws -> (page: ChangePage, head: Data?) {
        guard since >= 0 else { throw APIError.invalidRequest("since must not be negative", field: "since") }
        guard (1...SyncLimits.maxPageItems).contains(limit) else {
            throw APIError.invalidRequest("limit must be between 1 and \(SyncLimits.maxPageItems)", field: "limit")
        }
        let page = try await store.changes(userID: session.userID, since: since, limit: limit)
        guard !page.hasMore else { return (page, nil) }
        return (page, try await store.head(userID: session.userID, atOrBefore: page.cursor)?.bytes)
    }

    /// `GET /v1/sync/manifests`: the chain after `after`, oldest first.
    func manifests(after: Int64, limit: Int, session: AuthenticatedSession) async throws -> ManifestsResponse {
        guard after >= 0 else { throw APIError.invalidRequest("after must not be negative", field: "after") }
        guard (1...SyncLimits.maxPageManifests).contains(limit) else {
            throw APIError.invalidRequest("limit must be between 1 and \(SyncLimits.maxPageManifests)", field: "limit")
        }
        let stored = try await store.manifests(userID: session.userID, after: after, limit: limit + 1)
        return ManifestsResponse(
            manifests: stored.prefix(limit).map { $0.bytes.base64EncodedString() }, hasMore: stored.count > limit)
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
        var items: [ItemRow] = []
        var cursor: Int64 = 0
        while true {
            let page = try await store.changes(userID: user.id, since: cursor, limit: SyncLimits.maxPageItems)
            items += page.items.map(\.row)
            cursor = page.cursor
            if !page.hasMore { break }
        }
        let cards = try await store.items(userID: user.id, kind: CardFace.kind).compactMap { CardFace.card(from: $0, userID: user.id) }
        return UserExport(
            user: UserExport.User(id: user.id.lowercasedString, email: user.email, createdAt: user.createdAt),
            cards: cards.map(UserExport.Card.init), items: items)
    }

    static func validateKind(_ kind: String) throws {
        guard (1...64).contains(kind.utf8.count),
            kind.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2E || $0 == 0x2D })
        else { throw APIError.invalidRequest("kind must be 1 to 64 of a-z 0-9 _ . -", field: "kind") }
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
        /// Left out for a card without a barcode.
        var barcodeType: String?
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
    var items: [ItemRow]
}
