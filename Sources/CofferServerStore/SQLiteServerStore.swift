import CofferCrypto
import CofferPlatform
import CofferSyncAPI
import Foundation
import GRDB

/// The embedded default store: one SQLite file (WAL, `synchronous = FULL`) through GRDB, whose async API keeps
/// SQLite's blocking calls off the server's event loops. `inMemory()` gives the same store without a file, for tests.
///
/// SQLite has no row-level security; isolation between users rests on every statement here filtering by the user id
/// it is given (the conformance suite's cross-user checks cover it). Having no roles, it is its own maintenance store.
public final class SQLiteServerStore: ServerStore, MaintenanceStore {
    private let writer: any DatabaseWriter

    /// Opens (creating if needed) the store at `path`; the file is created 0600 in an existing 0700 directory.
    public init(path: String) throws(ServerStoreError) {
        var configuration = Self.configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        // SQLite gives its -wal and -shm files the main file's mode, so creating it 0600 first keeps all three private.
        if !PrivateFiles.exists(path) {
            do {
                try PrivateFiles.write([], to: path, exclusive: true)
            } catch {
                if !PrivateFiles.exists(path) { throw .unavailable("cannot create the SQLite store file") }
            }
        }
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            writer = pool
        } catch {
            throw .unavailable("cannot open the SQLite store")
        }
    }

    private init(writer: any DatabaseWriter) {
        self.writer = writer
    }

    /// A store that lives in memory only.
    public static func inMemory() throws(ServerStoreError) -> SQLiteServerStore {
        do {
            return SQLiteServerStore(writer: try DatabaseQueue(configuration: configuration()))
        } catch {
            throw .unavailable("cannot open an in-memory store")
        }
    }

    private static func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(10)
        configuration.label = "coffer-server"
        return configuration
    }

    // MARK: Schema

    private static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("s1-initial") { db in
            try db.execute(sql: """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY NOT NULL,
                    email TEXT,
                    apple_subject TEXT,
                    full_name TEXT,
                    created_at INTEGER NOT NULL,
                    deleted_at INTEGER,
                    auth_hash TEXT,
                    vault_id TEXT,
                    slot TEXT,
                    change_seq INTEGER NOT NULL DEFAULT 0
                );
                CREATE UNIQUE INDEX users_live_email ON users(email) WHERE email IS NOT NULL AND deleted_at IS NULL;
                CREATE UNIQUE INDEX users_live_apple ON users(apple_subject)
                    WHERE apple_subject IS NOT NULL AND deleted_at IS NULL;
                CREATE INDEX users_deleted ON users(deleted_at) WHERE deleted_at IS NOT NULL;
                CREATE TABLE sessions (
                    family TEXT PRIMARY KEY NOT NULL,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL,
                    revoked INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX sessions_user ON sessions(user_id);
                CREATE TABLE refresh_tokens (
                    id TEXT PRIMARY KEY NOT NULL,
                    family TEXT NOT NULL REFERENCES sessions(family) ON DELETE CASCADE,
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    expires_at INTEGER NOT NULL,
                    used_at INTEGER
                );
                CREATE INDEX refresh_tokens_family ON refresh_tokens(family);
                CREATE TABLE items (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    revision INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    deleted INTEGER NOT NULL,
                    box BLOB,
                    size INTEGER NOT NULL,
                    meta TEXT,
                    seq INTEGER NOT NULL,
                    stored_at INTEGER NOT NULL,
                    PRIMARY KEY (user_id, id)
                ) WITHOUT ROWID;
                CREATE INDEX items_feed ON items(user_id, seq);
                CREATE TABLE rate_counters (
                    key TEXT PRIMARY KEY NOT NULL,
                    window_start INTEGER NOT NULL,
                    count INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE audit_log (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    at INTEGER NOT NULL,
                    kind TEXT NOT NULL,
                    user_id TEXT,
                    address TEXT,
                    detail TEXT
                );
                CREATE INDEX audit_log_user ON audit_log(user_id, id);
                """)
        }
        migrator.registerMigration("s2-places", migrate: SQLitePlaces.migration)
        // Regions read the places of the user's networks by network and latitude.
        migrator.registerMigration("s3-places-network-lat") { db in
            try db.execute(sql: "CREATE INDEX locations_network_lat ON locations(network_id, lat)")
        }
        // Vault-state manifests (docs/FORMAT.md §8.6), stored at the feed position of the push that brought them.
        migrator.registerMigration("s4-manifests") { db in
            try db.execute(sql: """
                CREATE TABLE manifests (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    epoch INTEGER NOT NULL CHECK (epoch >= 1),
                    body BLOB NOT NULL,
                    seq INTEGER NOT NULL,
                    PRIMARY KEY (user_id, epoch)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("s5-email-nfc", migrate: SQLiteServerStore.normalizeStoredEmails)
        // Rows of master-key rotations, staged until their commit (docs/FORMAT.md §8.8).
        migrator.registerMigration("s6-rotation-staging") { db in
            try db.execute(sql: """
                CREATE TABLE rotation_items (
                    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    rotation_id TEXT NOT NULL,
                    id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    revision INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    deleted INTEGER NOT NULL,
                    box BLOB,
                    base_revision INTEGER NOT NULL,
                    staged_at INTEGER NOT NULL,
                    PRIMARY KEY (user_id, rotation_id, id)
                ) WITHOUT ROWID;
                """)
        }
        // Refresh retries (docs/FORMAT.md §8.5): a spent token names the token it was exchanged for and keeps the
        // SHA-256 of the retry key its device sent.
        migrator.registerMigration("s7-refresh-retry") { db in
            try db.execute(sql: """
                ALTER TABLE refresh_tokens ADD COLUMN successor TEXT;
                ALTER TABLE refresh_tokens ADD COLUMN retry_key_hash BLOB CHECK (retry_key_hash IS NULL OR length(retry_key_hash) = 32);
                """)
        }
        return migrator
    }()

    /// Rewrites emails stored before they were kept in NFC (`AccountEmail`), which lookups now use: without it an
    /// account registered with a decomposed address could no longer log in. Only rows with non-ASCII text can change.
    /// When several live accounts share one canonical address (the duplicates this fixes), the one already holding
    /// it, else the oldest, gets it; the others keep their stored text (and no longer match a login), since two live
    /// accounts cannot share an email.
    private static func normalizeStoredEmails(_ db: Database) throws {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT id, email, deleted_at FROM users
                WHERE email IS NOT NULL AND length(email) <> length(CAST(email AS BLOB))
                ORDER BY created_at, id
                """)
        for row in rows {
            let stored: String = row["email"]
            let canonical = AccountEmail.canonical(stored)
            // Swift's `==` on strings is canonical equivalence; the stores compare bytes.
            if canonical.utf8.elementsEqual(stored.utf8) { continue }
            let live = (row["deleted_at"] as Int64?) == nil
            if live, try Bool.fetchOne(
                db, sql: "SELECT 1 FROM users WHERE email = ? AND deleted_at IS NULL", arguments: [canonical]) ?? false
            {
                continue
            }
            try db.execute(sql: "UPDATE users SET email = ? WHERE id = ?", arguments: [canonical, row["id"] as String])
        }
    }

    public func migrate() async throws(ServerStoreError) {
        do {
            try await writer.write { db in
                if try Self.migrator.hasBeenSuperseded(db) { throw ServerStoreError.schemaTooNew }
            }
            try Self.migrator.migrate(writer)
        } catch let error as ServerStoreError {
            throw error
        } catch {
            throw .unavailable("migration failed")
        }
    }

    // MARK: Accounts

    public func createUser(_ user: NewUser) async throws(ServerStoreError) {
        let slot = try user.slot.map(Self.encodeSlot)
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO users (id, email, apple_subject, full_name, created_at, auth_hash, vault_id, slot)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [Self.key(user.id), user.email, user.appleSubject, user.fullName, UnixTime.milliseconds(user.createdAt),
                            user.authHash, user.vaultID.map(Self.key), slot])
        }
    }

    public func user(id: UUID) async throws(ServerStoreError) -> UserRecord? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM users WHERE id = ?", arguments: [Self.key(id)]).map(Self.userRecord)
        }
    }

    public func userID(email: String) async throws(ServerStoreError) -> UUID? {
        let id = try await read { db in
            try String.fetchOne(db, sql: "SELECT id FROM users WHERE email = ? AND deleted_at IS NULL", arguments: [email])
        }
        return id.flatMap(UUID.init(uuidString:))
    }

    public func userID(appleSubject: String) async throws(ServerStoreError) -> UUID? {
        let id = try await read { db in
            try String.fetchOne(
                db, sql: "SELECT id FROM users WHERE apple_subject = ? AND deleted_at IS NULL", arguments: [appleSubject])
        }
        return id.flatMap(UUID.init(uuidString:))
    }

    public func replaceCredentials(
        userID: UUID, authHash: String, slot: WrappedSlot, manifest: ManifestWrite?
    ) async throws(ServerStoreError) -> PushOutcome {
        let encoded = try Self.encodeSlot(slot)
        return try await write { db -> PushOutcome in
            let user = Self.key(userID)
            guard let cursor = try Int64.fetchOne(
                db, sql: "SELECT change_seq FROM users WHERE id = ? AND deleted_at IS NULL", arguments: [user])
            else { throw ServerStoreError.notFound }
            // The slot is part of the verified state: the head commits to its parameters.
            if let refusal = try Self.checkHead(db, user: user, manifest: manifest, writesStateRows: true) { return refusal }
            try db.execute(sql: "UPDATE users SET auth_hash = ?, slot = ? WHERE id = ?", arguments: [authHash, encoded, user])
            try Self.insert(db, user: user, manifest: manifest, sequence: cursor)
            return .accepted(cursor: cursor)
        }
    }

    /// Refuses a manifest that does not extend the stored head, and a state change without one once a head exists.
    private static func checkHead(
        _ db: Database, user: String, manifest: ManifestWrite?, writesStateRows: Bool
    ) throws -> PushOutcome? {
        let head = try Int64.fetchOne(db, sql: "SELECT max(epoch) FROM manifests WHERE user_id = ?", arguments: [user]) ?? 0
        if let manifest {
            return manifest.baseEpoch == head ? nil : .staleHead(epoch: head)
        }
        return head > 0 && writesStateRows ? .manifestRequired : nil
    }

    private static func insert(_ db: Database, user: String, manifest: ManifestWrite?, sequence: Int64) throws {
        for entry in manifest?.manifests ?? [] {
            try db.execute(
                sql: "INSERT INTO manifests (user_id, epoch, body, seq) VALUES (?, ?, ?, ?)",
                arguments: [user, entry.epoch, entry.bytes, sequence])
        }
    }

    public func softDeleteUser(id: UUID, at date: Date) async throws(ServerStoreError) {
        let changed = try await write { db in
            try db.execute(
                sql: "UPDATE users SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL",
                arguments: [UnixTime.milliseconds(date), Self.key(id)])
            let changed = db.changesCount
            try db.execute(sql: "UPDATE sessions SET revoked = 1 WHERE user_id = ?", arguments: [Self.key(id)])
            return changed
        }
        guard changed == 1 else { throw .notFound }
    }

    public func purgeUsers(deletedBefore cutoff: Date) async throws(ServerStoreError) -> Int {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM users WHERE deleted_at IS NOT NULL AND deleted_at < ?", arguments: [UnixTime.milliseconds(cutoff)])
            return db.changesCount
        }
    }

    // MARK: Sessions

    public func createSession(userID: UUID, family: UUID, tokenID: UUID, now: Date, expiresAt: Date) async throws(ServerStoreError) {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO sessions (family, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [Self.key(family), Self.key(userID), UnixTime.milliseconds(now), UnixTime.milliseconds(expiresAt)])
            try db.execute(
                sql: "INSERT INTO refresh_tokens (id, family, user_id, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [Self.key(tokenID), Self.key(family), Self.key(userID), UnixTime.milliseconds(expiresAt)])
        }
    }

    public func liveSessionCount(userID: UUID, now: Date) async throws(ServerStoreError) -> Int {
        try await read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM sessions WHERE user_id = ? AND revoked = 0 AND expires_at > ?",
                arguments: [Self.key(userID), UnixTime.milliseconds(now)]) ?? 0
        }
    }

    public func rotateRefreshToken(
        userID: UUID, family: UUID, tokenID: UUID, newTokenID: UUID, retryKeyDigest: [UInt8]?, now: Date, expiresAt: Date
    ) async throws(ServerStoreError) -> RefreshOutcome {
        try await write { db -> RefreshOutcome in
            let user = Self.key(userID), familyKey = Self.key(family)
            guard let session = try Row.fetchOne(
                db, sql: "SELECT expires_at, revoked FROM sessions WHERE family = ? AND user_id = ?",
                arguments: [familyKey, user])
            else { return .lost }
            let revoked: Bool = session["revoked"]
            guard let token = try Row.fetchOne(
                db,
                sql: """
                    SELECT used_at, expires_at, successor, retry_key_hash FROM refresh_tokens
                    WHERE id = ? AND family = ? AND user_id = ?
                    """,
                arguments: [Self.key(tokenID), familyKey, user])
            else { return revoked ? .invalid : .lost }
            if revoked { return .invalid }
            let nowMS = UnixTime.milliseconds(now), expiresMS = UnixTime.milliseconds(expiresAt)
            if (token["used_at"] as Int64?) != nil {
                if let retryKeyDigest, let stored = token["retry_key_hash"] as Data?,
                   RefreshRetryKey.sameDigest(Array(stored), retryKeyDigest),
                   let successorKey = token["successor"] as String?, let successor = UUID(uuidString: successorKey),
                   (session["expires_at"] as Int64) > nowMS,
                   try Bool.fetchOne(
                       db,
                       sql: "SELECT 1 FROM refresh_tokens WHERE id = ? AND family = ? AND used_at IS NULL AND expires_at > ?",
                       arguments: [successorKey, familyKey, nowMS]) ?? false
                {
                    try db.execute(sql: "UPDATE refresh_tokens SET expires_at = ? WHERE id = ?", arguments: [expiresMS, successorKey])
                    try db.execute(sql: "UPDATE sessions SET expires_at = ? WHERE family = ?", arguments: [expiresMS, familyKey])
                    return .retried(successor: successor)
                }
                try db.execute(sql: "UPDATE sessions SET revoked = 1 WHERE family = ?", arguments: [familyKey])
                return .reused
            }
            guard (token["expires_at"] as Int64) > nowMS, (session["expires_at"] as Int64) > nowMS else { return .invalid }
            try db.execute(
                sql: "UPDATE refresh_tokens SET used_at = ?, successor = ?, retry_key_hash = ? WHERE id = ?",
                arguments: [nowMS, Self.key(newTokenID), retryKeyDigest.map { Data($0) }, Self.key(tokenID)])
            try db.execute(
                sql: "INSERT INTO refresh_tokens (id, family, user_id, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [Self.key(newTokenID), familyKey, user, expiresMS])
            try db.execute(sql: "UPDATE sessions SET expires_at = ? WHERE family = ?", arguments: [expiresMS, familyKey])
            return .rotated
        }
    }

    public func authorize(
        userID: UUID, family: UUID, counter key: String, requests: Int, window: Int, now: Date
    ) async throws(ServerStoreError) -> Authorization {
        let start = CounterWindow.start(now, window: window)
        let (count, active) = try await write { db in
            let count = try Self.increment(db, key: key, start: start, by: max(requests, 1))
            let active = try Bool.fetchOne(
                db,
                sql: """
                    SELECT 1 FROM sessions JOIN users ON users.id = sessions.user_id
                    WHERE sessions.family = ? AND sessions.user_id = ? AND sessions.revoked = 0
                      AND sessions.expires_at > ? AND users.deleted_at IS NULL
                    """,
                arguments: [Self.key(family), Self.key(userID), UnixTime.milliseconds(now)]) ?? false
            return (count, active)
        }
        return Authorization(counter: Self.counterState(count: count, start: start, window: window), sessionActive: active)
    }

    public func revokeSession(userID: UUID, family: UUID) async throws(ServerStoreError) {
        try await write { db in
            try db.execute(
                sql: "UPDATE sessions SET revoked = 1 WHERE family = ? AND user_id = ?",
                arguments: [Self.key(family), Self.key(userID)])
        }
    }

    public func revokeSessions(userID: UUID, keeping: UUID?) async throws(ServerStoreError) {
        try await write { db in
            try db.execute(
                sql: "UPDATE sessions SET revoked = 1 WHERE user_id = ? AND family IS NOT ?",
                arguments: [Self.key(userID), keeping.map(Self.key)])
        }
    }

    // MARK: Items

    public func push(
        userID: UUID, writes: [ItemWrite], manifest: ManifestWrite?, maxStoredBytes: Int64?, now: Date
    ) async throws(ServerStoreError) -> PushOutcome {
        try await write { db -> PushOutcome in
            try Self.applyPush(db, user: Self.key(userID), writes: writes, manifest: manifest, maxStoredBytes: maxStoredBytes, now: now)
        }
    }

    /// A push inside the caller's transaction: checks everything before the first write, so a refusal wrote nothing.
    private static func applyPush(
        _ db: Database, user: String, writes: [ItemWrite], manifest: ManifestWrite?, maxStoredBytes: Int64? = nil, now: Date
    ) throws -> PushOutcome {
        let writesStateRows = writes.contains { !StateRoot.isServerFace(kind: $0.kind) }
        if let refusal = try Self.checkHead(db, user: user, manifest: manifest, writesStateRows: writesStateRows) {
            return refusal
        }
        var conflicts: [StoredItem] = []
        var missing = false
        var replacedBytes: Int64 = 0
        for write in writes {
            let stored = try Row.fetchOne(
                db, sql: "SELECT * FROM items WHERE user_id = ? AND id = ?", arguments: [user, Self.key(write.id)])
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
            let storedBytes = try Int64.fetchOne(
                db, sql: "SELECT coalesce(sum(size), 0) FROM items WHERE user_id = ? AND deleted = 0", arguments: [user]) ?? 0
            if Self.exceeds(maxStoredBytes, storedBytes: storedBytes, writes: writes, replacing: replacedBytes) {
                return .quotaExceeded(limit: maxStoredBytes)
            }
        }
        guard let sequence = try Int64.fetchOne(
            db, sql: "UPDATE users SET change_seq = change_seq + ? WHERE id = ? AND deleted_at IS NULL RETURNING change_seq",
            arguments: [writes.count, user])
        else { throw ServerStoreError.notFound }
        var next = sequence - Int64(writes.count)
        let stored = UnixTime.milliseconds(now)
        for write in writes {
            next += 1
            try db.execute(
                sql: """
                    INSERT INTO items (user_id, id, kind, revision, updated_at, deleted, box, size, meta, seq, stored_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (user_id, id) DO UPDATE SET kind = excluded.kind, revision = excluded.revision,
                        updated_at = excluded.updated_at, deleted = excluded.deleted, box = excluded.box,
                        size = excluded.size, meta = excluded.meta, seq = excluded.seq, stored_at = excluded.stored_at
                    """,
                arguments: [user, Self.key(write.id), write.kind, write.revision, write.updatedAt, write.deleted,
                            write.box, write.box?.count ?? 0, write.meta, next, stored])
        }
        try Self.insert(db, user: user, manifest: manifest, sequence: sequence)
        return .accepted(cursor: sequence)
    }

    public func stageRotation(userID: UUID, rotation: UUID, writes: [ItemWrite], now: Date) async throws(ServerStoreError) -> Int {
        try await write { db -> Int in
            let user = Self.key(userID)
            let held = try Int.fetchOne(db, sql: "SELECT count(*) FROM rotation_items WHERE user_id = ?", arguments: [user]) ?? 0
            guard held + writes.count <= SyncLimits.maxRotationItems else { throw ServerStoreError.stagingFull }
            for write in writes {
                try db.execute(
                    sql: """
                        INSERT INTO rotation_items
                            (user_id, rotation_id, id, kind, revision, updated_at, deleted, box, base_revision, staged_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (user_id, rotation_id, id) DO UPDATE SET kind = excluded.kind,
                            revision = excluded.revision, updated_at = excluded.updated_at, deleted = excluded.deleted,
                            box = excluded.box, base_revision = excluded.base_revision, staged_at = excluded.staged_at
                        """,
                    arguments: [user, Self.key(rotation), Self.key(write.id), write.kind, write.revision, write.updatedAt,
                                write.deleted, write.box, write.baseRevision, UnixTime.milliseconds(now)])
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
                    row: ItemRow(id: id, kind: row["kind"], revision: row["revision"], updatedAt: row["updated_at"],
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
                arguments: [Self.key(userID), kind])
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

    // MARK: Protection

    public func increment(counter key: String, window: Int, now: Date) async throws(ServerStoreError) -> CounterState {
        let start = CounterWindow.start(now, window: window)
        let count = try await write { db in try Self.increment(db, key: key, start: start, by: 1) }
        return Self.counterState(count: count, start: start, window: window)
    }

    private static func increment(_ db: Database, key: String, start: Int64, by requests: Int) throws -> Int {
        try Int.fetchOne(
            db,
            sql: """
                INSERT INTO rate_counters (key, window_start, count) VALUES (?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET
                    count = CASE WHEN rate_counters.window_start = excluded.window_start
                                 THEN rate_counters.count + excluded.count ELSE excluded.count END,
                    window_start = excluded.window_start
                RETURNING count
                """,
            arguments: [key, start, requests]) ?? requests
    }

    private static func counterState(count: Int, start: Int64, window: Int) -> CounterState {
        CounterState(count: count, windowEnds: Date(timeIntervalSince1970: TimeInterval(start + Int64(window))))
    }

    public func counter(_ key: String, window: Int, now: Date) async throws(ServerStoreError) -> CounterState {
        let start = CounterWindow.start(now, window: window)
        let count = try await read { db in
            try Int.fetchOne(
                db, sql: "SELECT count FROM rate_counters WHERE key = ? AND window_start = ?", arguments: [key, start]) ?? 0
        }
        return Self.counterState(count: count, start: start, window: window)
    }

    public func audit(_ event: AuditEvent) async throws(ServerStoreError) {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO audit_log (at, kind, user_id, address, detail) VALUES (?, ?, ?, ?, ?)",
                arguments: [UnixTime.milliseconds(event.at), event.kind.rawValue, event.userID.map(Self.key), event.address, event.detail])
        }
    }

    public func auditEvents(userID: UUID, limit: Int) async throws(ServerStoreError) -> [AuditEvent] {
        try await auditEvents(of: userID, limit: limit)
    }

    public func auditEvents(limit: Int) async throws(ServerStoreError) -> [AuditEvent] {
        try await auditEvents(of: nil, limit: limit)
    }

    /// `userID`'s events, or everyone's when nil.
    private func auditEvents(of userID: UUID?, limit: Int) async throws(ServerStoreError) -> [AuditEvent] {
        try await read { db in
            let rows: [Row]
            if let userID {
                rows = try Row.fetchAll(
                    db, sql: "SELECT * FROM audit_log WHERE user_id = ? ORDER BY id DESC LIMIT ?",
                    arguments: [Self.key(userID), limit])
            } else {
                rows = try Row.fetchAll(db, sql: "SELECT * FROM audit_log ORDER BY id DESC LIMIT ?", arguments: [limit])
            }
            return rows.compactMap { row -> AuditEvent? in
                guard let kind = AuditEvent.Kind(rawValue: row["kind"]) else { return nil }
                return AuditEvent(
                    at: UnixTime.date(milliseconds: row["at"]), kind: kind, userID: (row["user_id"] as String?).flatMap(UUID.init(uuidString:)),
                    address: row["address"], detail: row["detail"])
            }
        }
    }

    // MARK: Plumbing

    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(ServerStoreError) -> T {
        do {
            return try await writer.write(body)
        } catch {
            throw Self.mapped(error)
        }
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(ServerStoreError) -> T {
        do {
            return try await writer.read(body)
        } catch {
            throw Self.mapped(error)
        }
    }

    private static func mapped(_ error: any Error) -> ServerStoreError {
        if let error = error as? ServerStoreError { return error }
        if let error = error as? DatabaseError {
            if error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE || error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY {
                return .duplicate
            }
            if error.resultCode == .SQLITE_CONSTRAINT { return .notFound }
            return .unavailable("SQLite error \(error.resultCode.rawValue)")
        }
        return .unavailable("storage error")
    }

    /// Ids are stored as lower-case hyphenated UUID text in both stores.
    private static func key(_ id: UUID) -> String { id.uuidString.lowercased() }

    private static func encodeSlot(_ slot: WrappedSlot) throws(ServerStoreError) -> String {
        do {
            return String(decoding: try WireJSON.encoder().encode(slot), as: UTF8.self)
        } catch {
            throw .unavailable("cannot encode a slot")
        }
    }

    private static func userRecord(_ row: Row) throws -> UserRecord {
        guard let id = UUID(uuidString: row["id"]) else { throw ServerStoreError.unavailable("malformed user row") }
        var slot: WrappedSlot?
        if let text: String = row["slot"] {
            do {
                slot = try WireJSON.decoder().decode(WrappedSlot.self, from: Data(text.utf8))
            } catch {
                throw ServerStoreError.unavailable("malformed slot")
            }
        }
        return UserRecord(
            id: id, email: row["email"], appleSubject: row["apple_subject"], fullName: row["full_name"],
            createdAt: UnixTime.date(milliseconds: row["created_at"]), deletedAt: (row["deleted_at"] as Int64?).map { UnixTime.date(milliseconds: $0) },
            authHash: row["auth_hash"], vaultID: (row["vault_id"] as String?).flatMap(UUID.init(uuidString:)), slot: slot)
    }

    private static func storedItem(_ row: Row) throws -> StoredItem {
        StoredItem(
            row: try itemRow(row), meta: row["meta"], sequence: row["seq"],
            storedAt: UnixTime.date(milliseconds: row["stored_at"]))
    }

    private static func feedItem(_ row: Row) throws -> FeedItem {
        FeedItem(row: try itemRow(row), sequence: row["seq"])
    }

    private static func itemRow(_ row: Row) throws -> ItemRow {
        guard let id = UUID(uuidString: row["id"]) else { throw ServerStoreError.unavailable("malformed item row") }
        return ItemRow(
            id: id, kind: row["kind"], revision: row["revision"], updatedAt: row["updated_at"], deleted: row["deleted"],
            box: row["box"])
    }
}
