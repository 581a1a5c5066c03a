import CofferCrypto
import CofferSyncAPI
import Foundation
import PostgresNIO

extension PostgresServerStore {
    // MARK: Items

    public func push(
        userID: UUID, writes: [ItemWrite], manifest: ManifestWrite?, maxStoredBytes: Int64?, now: Date
    ) async throws(ServerStoreError) -> PushOutcome {
        let storedAt = UnixTime.milliseconds(now)
        do {
            return try await rawTransaction(acting: .user(userID)) { [self] connection -> PushOutcome in
                try await applyPush(
                    connection, userID: userID, writes: writes, manifest: manifest, maxStoredBytes: maxStoredBytes,
                    storedAt: storedAt)
            }
        } catch let error as PostgresTransactionError {
            // The refusal was thrown to roll the position allocation back; nothing of this push was committed.
            if let refusal = error.closureError as? PushRefusal { return refusal.outcome }
            throw Self.mapped(error, context: "push failed")
        } catch {
            throw Self.mapped(error, context: "push failed")
        }
    }

    /// A push inside the caller's transaction; a refusal is thrown (`PushRefusal`) to roll back what it began.
    func applyPush(
        _ connection: PostgresConnection, userID: UUID, writes: [ItemWrite], manifest: ManifestWrite?,
        maxStoredBytes: Int64? = nil, storedAt: Int64
    ) async throws -> PushOutcome {
        // Allocating the feed positions first takes the user's row lock, which serialises this user's pushes:
        // positions then become visible in order, so a reader's cursor never passes one still uncommitted,
        // and two pushes creating the same new item cannot both pass the revision check.
        guard
            let last = try await connection.rows(
                """
                UPDATE users SET change_seq = change_seq + \(writes.count)
                WHERE id = \(userID) AND deleted_at IS NULL RETURNING change_seq
                """, logger: logger
            ).first?.decode(Int64.self)
        else { throw ServerStoreError.notFound }
        let writesStateRows = writes.contains { !StateRoot.isServerFace(kind: $0.kind) }
        if let refusal = try await checkHead(connection, userID: userID, manifest: manifest, writesStateRows: writesStateRows) {
            throw PushRefusal(outcome: refusal)
        }
        if writes.isEmpty {
            try await insert(connection, userID: userID, manifest: manifest, sequence: last)
            return .accepted(cursor: last)
        }

        var stored: [UUID: StoredItem] = [:]
        for item in try await connection.rows(
            """
            SELECT \(unescaped: Self.itemColumns) FROM items
            WHERE user_id = \(userID) AND id = ANY(\(writes.map(\.id))) FOR UPDATE
            """, logger: logger
        ).map(Self.storedItem) {
            stored[item.id] = item
        }
        if writes.contains(where: { $0.meta == nil && stored[$0.id]?.meta != nil }) {
            throw ServerStoreError.protectedItem
        }
        let conflicts = writes.compactMap { write -> StoredItem? in
            guard let item = stored[write.id], item.revision != write.baseRevision else { return nil }
            return item
        }
        let missing = writes.contains { stored[$0.id] == nil && Self.basedOnMissingRow($0, manifest: manifest) }
        if !conflicts.isEmpty || missing { throw PushRefusal(outcome: .conflicts(conflicts)) }
        if let maxStoredBytes {
            let storedBytes =
                try await connection.rows(
                    "SELECT coalesce(sum(size), 0)::bigint FROM items WHERE user_id = \(userID) AND NOT deleted", logger: logger
                ).first?.decode(Int64.self) ?? 0
            let replaced = stored.values.reduce(Int64(0)) { $0 + Int64($1.box?.count ?? 0) }
            if Self.exceeds(maxStoredBytes, storedBytes: storedBytes, writes: writes, replacing: replaced) {
                throw PushRefusal(outcome: .quotaExceeded(limit: maxStoredBytes))
            }
        }

        // One statement for the whole batch (a round trip per row made a 10,000-item first push take seconds); the
        // rows take the positions allocated above, in the order they came.
        let columns = WriteColumns(writes)
        try await connection.rows(
            """
            INSERT INTO items (user_id, id, kind, revision, updated_at, deleted, box, size, meta, seq, stored_at)
            SELECT \(userID), w.id, w.kind, w.revision, w.updated_at, w.deleted, CASE WHEN w.has_box THEN w.box END,
                   w.size, CASE WHEN w.has_meta THEN w.meta END, \(last - Int64(writes.count)) + w.position,
                   \(unescaped: Self.timestamp(storedAt))
            FROM unnest(\(columns.ids)::uuid[], \(columns.kinds)::text[], \(columns.revisions)::bigint[],
                        \(columns.updatedAt)::bigint[], \(columns.deleted)::boolean[], \(columns.hasBox)::boolean[],
                        \(columns.boxes)::bytea[], \(columns.sizes)::bigint[], \(columns.hasMeta)::boolean[],
                        \(columns.metas)::text[])
                 WITH ORDINALITY AS w(id, kind, revision, updated_at, deleted, has_box, box, size, has_meta, meta, position)
            ON CONFLICT (user_id, id) DO UPDATE SET kind = EXCLUDED.kind, revision = EXCLUDED.revision,
                updated_at = EXCLUDED.updated_at, deleted = EXCLUDED.deleted, box = EXCLUDED.box,
                size = EXCLUDED.size, meta = EXCLUDED.meta, seq = EXCLUDED.seq,
                stored_at = EXCLUDED.stored_at
            """, logger: logger)
        try await insert(connection, userID: userID, manifest: manifest, sequence: last)
        return .accepted(cursor: last)
    }

    public func stageRotation(userID: UUID, rotation: UUID, writes: [ItemWrite], now: Date) async throws(ServerStoreError) -> Int {
        let stagedAt = UnixTime.milliseconds(now)
        return try await transaction(acting: .user(userID)) { [self] connection -> Int in
            // The user's row lock serialises one account's staging, so the cap holds under concurrent requests.
            guard
                try await connection.rows(
                    "SELECT 1 FROM users WHERE id = \(userID) AND deleted_at IS NULL FOR UPDATE", logger: logger
                ).first != nil
            else { throw ServerStoreError.notFound }
            let held =
                try await connection.rows(
                    "SELECT count(*) FROM rotation_items WHERE user_id = \(userID)", logger: logger
                ).first?.decode(Int64.self) ?? 0
            guard held + Int64(writes.count) <= SyncLimits.maxRotationItems else { throw ServerStoreError.stagingFull }
            let columns = WriteColumns(writes)
            try await connection.rows(
                """
                INSERT INTO rotation_items
                    (user_id, rotation_id, id, kind, revision, updated_at, deleted, box, base_revision, staged_at)
                SELECT \(userID), \(rotation), w.id, w.kind, w.revision, w.updated_at, w.deleted,
                       CASE WHEN w.has_box THEN w.box END, w.base_revision, \(unescaped: Self.timestamp(stagedAt))
                FROM unnest(\(columns.ids)::uuid[], \(columns.kinds)::text[], \(columns.revisions)::bigint[],
                            \(columns.updatedAt)::bigint[], \(columns.deleted)::boolean[], \(columns.hasBox)::boolean[],
                            \(columns.boxes)::bytea[], \(columns.baseRevisions)::bigint[])
                     AS w(id, kind, revision, updated_at, deleted, has_box, box, base_revision)
                ON CONFLICT (user_id, rotation_id, id) DO UPDATE SET kind = EXCLUDED.kind,
                    revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at, deleted = EXCLUDED.deleted,
                    box = EXCLUDED.box, base_revision = EXCLUDED.base_revision, staged_at = EXCLUDED.staged_at
                """, logger: logger)
            return Int(
                try await connection.rows(
                    "SELECT count(*) FROM rotation_items WHERE user_id = \(userID) AND rotation_id = \(rotation)", logger: logger
                ).first?.decode(Int64.self) ?? 0)
        }
    }

    public func commitRotation(
        userID: UUID, rotation: UUID, expectedRows: Int, slot: WrappedSlot, manifest: ManifestWrite, now: Date
    ) async throws(ServerStoreError) -> PushOutcome {
        let encoded = try Self.encodeSlot(slot)
        let storedAt = UnixTime.milliseconds(now)
        do {
            return try await rawTransaction(acting: .user(userID)) { [self] connection -> PushOutcome in
                // The user's row lock first, as a discard takes it: of a commit and a discard of one rotation, one
                // runs whole before the other sees the staged rows (see `discardRotation`).
                try await connection.rows("SELECT 1 FROM users WHERE id = \(userID) FOR UPDATE", logger: logger)
                var writes: [ItemWrite] = []
                for row in try await connection.rows(
                    """
                    SELECT id, kind, revision, updated_at, deleted, box, base_revision FROM rotation_items
                    WHERE user_id = \(userID) AND rotation_id = \(rotation) ORDER BY id
                    """, logger: logger)
                {
                    var cells = Cells(row)
                    let item = try Self.itemRow(&cells)
                    writes.append(ItemWrite(row: item, baseRevision: try cells.next(Int64.self)))
                }
                guard writes.count == expectedRows else { throw PushRefusal(outcome: .incompleteRotation(staged: writes.count)) }
                let outcome = try await applyPush(connection, userID: userID, writes: writes, manifest: manifest, storedAt: storedAt)
                try await connection.rows("UPDATE users SET slot = \(encoded) WHERE id = \(userID)", logger: logger)
                try await connection.rows("DELETE FROM rotation_items WHERE user_id = \(userID)", logger: logger)
                return outcome
            }
        } catch let error as PostgresTransactionError {
            if let refusal = error.closureError as? PushRefusal { return refusal.outcome }
            throw Self.mapped(error, context: "rotation failed")
        } catch {
            throw Self.mapped(error, context: "rotation failed")
        }
    }

    /// Waits for a commit of the same account under way (the user's row lock), so that when it returns the rotation
    /// either committed or can no longer: a device deciding whether its killed run's rotation landed asks after this.
    public func discardRotation(userID: UUID, rotation: UUID) async throws(ServerStoreError) {
        try await transaction(acting: .user(userID)) { [self] connection in
            try await connection.rows("SELECT 1 FROM users WHERE id = \(userID) FOR UPDATE", logger: logger)
            try await connection.rows(
                "DELETE FROM rotation_items WHERE user_id = \(userID) AND rotation_id = \(rotation)", logger: logger)
        }
    }

    public func changes(userID: UUID, since cursor: Int64, limit: Int) async throws(ServerStoreError) -> ChangePage {
        let fetch = Int32(clamping: max(limit, 0) + 1)
        let rows = try await transaction(acting: .user(userID)) { [self] connection in
            try await connection.rows("SELECT * FROM coffer_feed(\(cursor), \(fetch))", logger: logger)
                .map(Self.feedItem)
        }
        let items = Array(rows.prefix(max(limit, 0)))
        return ChangePage(items: items, cursor: items.last?.sequence ?? cursor, hasMore: rows.count > items.count)
    }

    public func manifests(userID: UUID, after epoch: Int64, limit: Int) async throws(ServerStoreError) -> [StoredManifest] {
        try await transaction(acting: .user(userID)) { [self] connection in
            try await connection.rows(
                """
                SELECT epoch, body, seq FROM manifests WHERE user_id = \(userID) AND epoch > \(epoch)
                ORDER BY epoch LIMIT \(Int64(max(limit, 0)))
                """, logger: logger
            ).map { row in
                let (epoch, body, sequence) = try row.decode((Int64, Data, Int64).self)
                return StoredManifest(epoch: epoch, bytes: body, sequence: sequence)
            }
        }
    }

    public func head(userID: UUID, atOrBefore cursor: Int64) async throws(ServerStoreError) -> StoredManifest? {
        try await transaction(acting: .user(userID)) { [self] connection in
            try await connection.rows(
                """
                SELECT epoch, body, seq FROM manifests WHERE user_id = \(userID) AND seq <= \(cursor)
                ORDER BY epoch DESC LIMIT 1
                """, logger: logger
            ).first.map { row in
                let (epoch, body, sequence) = try row.decode((Int64, Data, Int64).self)
                return StoredManifest(epoch: epoch, bytes: body, sequence: sequence)
            }
        }
    }

    public func item(userID: UUID, id: UUID) async throws(ServerStoreError) -> StoredItem? {
        try await transaction(acting: .user(userID)) { [self] connection in
            try await connection.rows(
                "SELECT \(unescaped: Self.itemColumns) FROM items WHERE user_id = \(userID) AND id = \(id)", logger: logger
            ).first.map(Self.storedItem)
        }
    }

    public func items(userID: UUID, kind: String) async throws(ServerStoreError) -> [StoredItem] {
        try await transaction(acting: .user(userID)) { [self] connection in
            try await connection.rows(
                """
                SELECT \(unescaped: Self.itemColumns) FROM items
                WHERE user_id = \(userID) AND kind = \(kind) AND NOT deleted ORDER BY seq
                """, logger: logger
            ).map(Self.storedItem)
        }
    }

    public func deleteAllItems(userID: UUID) async throws(ServerStoreError) -> Int {
        try await transaction(acting: .user(userID)) { [self] connection in
            let count = try await connection.rows("DELETE FROM items WHERE user_id = \(userID) RETURNING 1", logger: logger).count
            try await connection.rows("DELETE FROM manifests WHERE user_id = \(userID)", logger: logger)
            try await connection.rows("DELETE FROM rotation_items WHERE user_id = \(userID)", logger: logger)
            return count
        }
    }

    public func usage(userID: UUID) async throws(ServerStoreError) -> StoreUsage {
        try await transaction(acting: .user(userID)) { [self] connection in
            let (count, bytes) =
                try await connection.rows(
                    """
                    SELECT count(*), coalesce(sum(size), 0)::bigint FROM items
                    WHERE user_id = \(userID) AND NOT deleted
                    """, logger: logger
                ).first?.decode((Int, Int).self) ?? (0, 0)
            let cursor =
                try await connection.rows("SELECT change_seq FROM users WHERE id = \(userID)", logger: logger)
                .first?.decode(Int64.self) ?? 0
            let head =
                try await connection.rows(
                    "SELECT coalesce(max(epoch), 0) FROM manifests WHERE user_id = \(userID)", logger: logger
                ).first?.decode(Int64.self) ?? 0
            return StoreUsage(items: count, bytes: bytes, cursor: cursor, headEpoch: head)
        }
    }
}

/// A batch of writes as one array per column, for an `INSERT … SELECT FROM unnest(…)` that stores them in one
/// statement. PostgreSQL arrays here carry no NULLs, so an absent box or meta is a flag beside a placeholder.
struct WriteColumns {
    let ids: [UUID]
    let kinds: [String]
    let revisions: [Int64]
    let updatedAt: [Int64]
    let deleted: [Bool]
    let hasBox: [Bool]
    let boxes: [ByteBuffer]
    let sizes: [Int64]
    let hasMeta: [Bool]
    let metas: [String]
    let baseRevisions: [Int64]

    init(_ writes: [ItemWrite]) {
        ids = writes.map(\.id)
        kinds = writes.map(\.kind)
        revisions = writes.map(\.revision)
        updatedAt = writes.map(\.updatedAt)
        deleted = writes.map(\.deleted)
        hasBox = writes.map { $0.box != nil }
        boxes = writes.map { ByteBuffer(bytes: $0.box ?? Data()) }
        sizes = writes.map { Int64($0.box?.count ?? 0) }
        hasMeta = writes.map { $0.meta != nil }
        metas = writes.map { $0.meta ?? "" }
        baseRevisions = writes.map(\.baseRevision)
    }
}
