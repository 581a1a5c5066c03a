import CofferCrypto
import CofferPlatform
import CofferSyncAPI
import Foundation
import GRDB
import Synchronization

/// The embedded default store: one SQLite file (WAL, `synchronous = FULL`) through GRDB, whose async API keeps
/// SQLite's blocking calls off the server's event loops. `inMemory()` gives the same store without a file, for tests.
///
/// SQLite has no row-level security; isolation between users rests on every statement here filtering by the user id
/// it is given (the conformance suite's cross-user checks cover it). Having no roles, it is its own maintenance store.
public final class SQLiteServerStore: ServerStore, MaintenanceStore {
    let writer: any DatabaseWriter

    /// Statements run on each new connection before the store's own settings: in tests, an SQLite built with another
    /// default (`synchronous = OFF`), so that `FULL` is shown to be the store's setting and not the build's.
    package static let connectionPreamble = Mutex<[String]>([])

    /// Opens (creating if needed) the store at `path`; the file is created 0600 in an existing 0700 directory.
    public init(path: String) throws(ServerStoreError) {
        var configuration = Self.configuration()
        configuration.prepareDatabase { db in
            for statement in SQLiteServerStore.connectionPreamble.withLock({ $0 }) { try db.execute(sql: statement) }
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
            // GRDB's pool puts its writer in WAL mode after `prepareDatabase` and lowers `synchronous` to NORMAL there,
            // which loses the last commits on power loss; the writer connection lives as long as the pool.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
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
            try db.execute(
                sql: """
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
            try db.execute(
                sql: """
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
            try db.execute(
                sql: """
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
            try db.execute(
                sql: """
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
            if live,
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM users WHERE email = ? AND deleted_at IS NULL", arguments: [canonical]) ?? false
            {
                continue
            }
            try db.execute(sql: "UPDATE users SET email = ? WHERE id = ?", arguments: [canonical, row["id"] as String])
        }
    }

    /// The embedded store is this process's own file: writable while it can be read (a disk that fails writes shows
    /// in the writes' own errors).
    public func health() async -> DatabaseHealth {
        do {
            _ = try await writer.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
            return .writable
        } catch {
            return .unreachable
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

    static func mapped(_ error: any Error) -> ServerStoreError {
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
    static func key(_ id: UUID) -> String { id.lowercasedString }

    static func encodeSlot(_ slot: WrappedSlot) throws(ServerStoreError) -> String {
        do {
            return String(decoding: try WireJSON.encoder().encode(slot), as: UTF8.self)
        } catch {
            throw .unavailable("cannot encode a slot")
        }
    }

    static func userRecord(_ row: Row) throws -> UserRecord {
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

    static func storedItem(_ row: Row) throws -> StoredItem {
        StoredItem(
            row: try itemRow(row), meta: row["meta"], sequence: row["seq"],
            storedAt: UnixTime.date(milliseconds: row["stored_at"]))
    }

    static func feedItem(_ row: Row) throws -> FeedItem {
        FeedItem(row: try itemRow(row), sequence: row["seq"])
    }

    static func itemRow(_ row: Row) throws -> ItemRow {
        guard let id = UUID(uuidString: row["id"]) else { throw ServerStoreError.unavailable("malformed item row") }
        return ItemRow(
            id: id, kind: row["kind"], revision: row["revision"], updatedAt: row["updated_at"], deleted: row["deleted"],
            box: row["box"])
    }
}
