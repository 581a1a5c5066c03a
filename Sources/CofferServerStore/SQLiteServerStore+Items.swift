import CofferCrypto
import CofferSyncAPI
import Foundation
import GRDB

extension SQLiteServerStore {
    // MARK: Items

    public func push(
        userID: UUID, writes: [ItemWrite], manifest: ManifestWrite?, maxStoredBytes: Int64?, now: Date
    ) async throws(ServerStoreError) -> PushOutcome {
        try await write { db -> PushOutcome in
            try Self.applyPush(db, user: Self.key(userID), writes: writes, manifest: manifest, maxStoredBytes: maxStoredBytes, now: now)
        }
    }

    /// A push inside the caller's transaction: checks everything before the first write, so a refusal wrote nothing.
    static func applyPush(
        _ db: Database, user: String, writes: [ItemWrite], manifest: ManifestWrite?, maxStoredBytes: Int64? = nil, now: Date
    ) throws -> PushOutcome {
        let writesStateRows = writes.contains { !StateRoot.isServerFace(kind: $0.kind) }
        if let refusal = try Self.checkHead(db, user: user, manifest: manifest, writesStateRows: writesStateRows) {
            return refusal
        }
        var conflicts: [StoredItem] = []
        var missing = false
        var replacedBytes: Int64 = 0
        // Statements run once per row go through the connection's statement cache: preparing them anew took half
        // of a push's CPU time.
        let lookup = try db.cachedStatement(sql: "SELECT * FROM items WHERE user_id = ? AND id = ?")
        for write in writes {
            let stored = try Row.fetchOne(lookup, arguments: [user, Self.key(write.id)])
            guard let stored else {
                missing = missing || Self.basedOnMissingRow(write, manifest: manifest)
                continue
            }
            if write.meta == nil, (stored["meta"] as String?) != nil { throw ServerStoreError.protectedItem }
            if (stored["revision"] as Int64) != write.baseRevision { conflicts.append(try Self.storedItem(stored)) }
            replacedBytes += stored["size"] as Int64
        }
        if !conflicts.isEmpty || missing { return .conflicts(conflicts) }
        if let maxStoredBytes {
            let storedBytes =
                try Int64.fetchOne(
                    db, sql: "SELECT coalesce(sum(size), 0) FROM items WHERE user_id = ? AND deleted = 0", arguments: [user]) ?? 0
            if Self.exceeds(maxStoredBytes, storedBytes: storedBytes, writes: writes, replacing: replacedBytes) {
                return .quotaExceeded(limit: maxStoredBytes)
            }
        }
        guard
            let sequence = try Int64.fetchOne(
                db, sql: "UPDATE users SET change_seq = change_seq + ? WHERE id = ? AND deleted_at IS NULL RETURNING change_seq",
                arguments: [writes.count, user])
        else { throw ServerStoreError.notFound }
        var next = sequence - Int64(writes.count)
        let stored = UnixTime.milliseconds(now)
        let upsert = try db.cachedStatement(
            sql: """
                INSERT INTO items (user_id, id, kind, revision, updated_at, deleted, box, size, meta, seq, stored_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (user_id, id) DO UPDATE SET kind = excluded.kind, revision = excluded.revision,
                    updated_at = excluded.updated_at, deleted = excluded.deleted, box = excluded.box,
                    size = excluded.size, meta = excluded.meta, seq = excluded.seq, stored_at = excluded.stored_at
                """)
        for write in writes {
            next += 1
            try upsert.execute(
                arguments: [
                    user, Self.key(write.id), write.kind, write.revision, write.updatedAt, write.deleted,
                    write.box, write.box?.count ?? 0, write.meta, next, stored,
                ])
        }
        try Self.insert(db, user: user, manifest: manifest, sequence: sequence)
        return .accepted(cursor: sequence)
    }

    public func stageRotation(userID: UUID, rotation: UUID, writes: [ItemWrite], now: Date) async throws(ServerStoreError) -> Int {
        try await write { db -> Int in
            let user = Self.key(userID)
            let held = try Int.fetchOne(db, sql: "SELECT count(*) FROM rotation_items WHERE user_id = ?", arguments: [user]) ?? 0
            guard held + writes.count <= SyncLimits.maxRotationItems else { throw ServerStoreError.stagingFull }
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT INTO rotation_items
                        (user_id, rotation_id, id, kind, revision, updated_at, deleted, box, base_revision, staged_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (user_id, rotation_id, id) DO UPDATE SET kind = excluded.kind,
                        revision = excluded.revision, updated_at = excluded.updated_at, deleted = excluded.deleted,
                        box = excluded.box, base_revision = excluded.base_revision, staged_at = excluded.staged_at
                    """)
            for write in writes {
                try upsert.execute(
                    arguments: [
                        user, Self.key(rotation), Self.key(write.id), write.kind, write.revision, write.updatedAt,
                        write.deleted, write.box, write.baseRevision, UnixTime.milliseconds(now),
                    ])
            }
            return try Int.fetchOne(
                db, sql: "SELECT count(*) FROM rotation_items WHERE user_id = ? AND rotation_id = ?",
                arguments: [user, Self.key(rotation)]) ?? 0
        }
    }

    public func commitRotation(
        userID: UUID, rotation: UUID, expectedRows: Int, slot: WrappedSlot, manifest: ManifestWrite, now: Date
    ) async throws(ServerStoreError) -> PushOutcome {
        let encoded = try Self.encodeSlot(slot)
        return try await write { db -> PushOutcome in
            let user = Self.key(userID)
            let staged = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, kind, revision, updated_at, deleted, box, base_revision FROM rotation_items
                    WHERE user_id = ? AND rotation_id = ? ORDER BY id
                    """,
                arguments: [user, Self.key(rotation)])
            guard staged.count == expectedRows else { return .incompleteRotation(staged: staged.count) }
            let writes = try staged.map { row in
                guard let id = UUID(uuidString: row["id"]) else { throw ServerStoreError.unavailable("a staged row lacks its id") }
                return ItemWrite(
                    row: ItemRow(
                        id: id, kind: row["kind"], revision: row["revision"], updatedAt: row["updated_at"],
                        deleted: row["deleted"], box: row["box"]),
                    baseRevision: row["base_revision"])
            }
            let outcome = try Self.applyPush(db, user: user, writes: writes, manifest: manifest, now: now)
            guard case .accepted = outcome else { return outcome }
            try db.execute(sql: "UPDATE users SET slot = ? WHERE id = ?", arguments: [encoded, user])
            try db.execute(sql: "DELETE FROM rotation_items WHERE user_id = ?", arguments: [user])
            return outcome
        }
    }

    public func discardRotation(userID: UUID, rotation: UUID) async throws(ServerStoreError) {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM rotation_items WHERE user_id = ? AND rotation_id = ?", arguments: [Self.key(userID), Self.key(rotation)])
        }
    }

    public func changes(userID: UUID, since cursor: Int64, limit: Int) async throws(ServerStoreError) -> ChangePage {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, kind, revision, updated_at, deleted, box, seq FROM items
                    WHERE user_id = ? AND seq > ? ORDER BY seq LIMIT ?
                    """,
                arguments: [Self.key(userID), cursor, limit + 1])
            let items = try rows.prefix(limit).map(Self.feedItem)
            let last = items.last?.sequence ?? cursor
            return ChangePage(items: items, cursor: last, hasMore: rows.count > limit)
        }
    }

    public func manifests(userID: UUID, after epoch: Int64, limit: Int) async throws(ServerStoreError) -> [StoredManifest] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT epoch, body, seq FROM manifests WHERE user_id = ? AND epoch > ? ORDER BY epoch LIMIT ?",
                arguments: [Self.key(userID), epoch, max(limit, 0)]
            ).map { StoredManifest(epoch: $0["epoch"], bytes: $0["body"], sequence: $0["seq"]) }
        }
    }

    public func head(userID: UUID, atOrBefore cursor: Int64) async throws(ServerStoreError) -> StoredManifest? {
        try await read { db in
            try Row.fetchOne(
                db, sql: "SELECT epoch, body, seq FROM manifests WHERE user_id = ? AND seq <= ? ORDER BY epoch DESC LIMIT 1",
                arguments: [Self.key(userID), cursor]
            ).map { StoredManifest(epoch: $0["epoch"], bytes: $0["body"], sequence: $0["seq"]) }
        }
    }

    public func item(userID: UUID, id: UUID) async throws(ServerStoreError) -> StoredItem? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM items WHERE user_id = ? AND id = ?", arguments: [Self.key(userID), Self.key(id)])
                .map(Self.storedItem)
        }
    }

    public func items(userID: UUID, kind: String) async throws(ServerStoreError) -> [StoredItem] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM items WHERE user_id = ? AND kind = ? AND deleted = 0 ORDER BY seq",
                arguments: [Self.key(userID), kind]
            )
            .map(Self.storedItem)
        }
    }

    public func deleteAllItems(userID: UUID) async throws(ServerStoreError) -> Int {
        try await write { db in
            try db.execute(sql: "DELETE FROM items WHERE user_id = ?", arguments: [Self.key(userID)])
            let count = db.changesCount
            try db.execute(sql: "DELETE FROM manifests WHERE user_id = ?", arguments: [Self.key(userID)])
            try db.execute(sql: "DELETE FROM rotation_items WHERE user_id = ?", arguments: [Self.key(userID)])
            return count
        }
    }

    public func usage(userID: UUID) async throws(ServerStoreError) -> StoreUsage {
        try await read { db in
            let user = Self.key(userID)
            let row = try Row.fetchOne(
                db, sql: "SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM items WHERE user_id = ? AND deleted = 0",
                arguments: [user])
            let cursor = try Int64.fetchOne(db, sql: "SELECT change_seq FROM users WHERE id = ?", arguments: [user]) ?? 0
            let head = try Int64.fetchOne(db, sql: "SELECT max(epoch) FROM manifests WHERE user_id = ?", arguments: [user]) ?? 0
            return StoreUsage(items: row?["n"] ?? 0, bytes: row?["bytes"] ?? 0, cursor: cursor, headEpoch: head)
        }
    }
}
