import CofferCrypto
import CofferLogging
import CofferSyncAPI
import Crypto
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The PostgreSQL store, for more users and several server instances sharing one database.
///
/// Three roles: the *owner* runs `migrate()` and owns every table and function; the *app* role serves requests and
/// owns nothing, so the forced row-level security of every per-user table applies to it; the *maintenance* role
/// (`PostgresMaintenanceStore`) may only run the work that spans users. Each per-user call runs in one transaction
/// that first proves whom it acts for (`coffer_act`): the user, with an HMAC under the server key of the
/// transaction's binding and the claim, which the database checks (docs/FORMAT.md §8.5). The key is read as the owner
/// by `migrate()`; the app role cannot read it, so holding that role's password alone acts for nobody. The policies
/// show a transaction its proven user's rows only, even if a query here forgot its filter; the functions it calls
/// (`coffer_authorize`, `coffer_feed`, `coffer_audit`) take the user from the proof too, never from a parameter. The
/// lookups by email or Apple subject, the rate counters and writes of places need the server's proof for nobody.
///
/// The driver logs through `logger` with every value it attaches withheld (`driverLogger`): at trace level
/// postgres-nio prints result rows and statement parameters, which hold account data.
///
/// Running it: `client` is a `PostgresClient`, which must be running before the first call. Either add `store.client`
/// to the application's `ServiceGroup` (it is a ServiceLifecycle `Service`), or call `run()` in a long-lived task and
/// cancel that task to stop. `migrate()` opens its own short-lived pool as the owner and works before either.
///
/// Times are kept to the millisecond, as in the SQLite store, so both return the same values.
public final class PostgresServerStore: ServerStore {
    /// The app role's connection pool; run it (see above).
    public let client: PostgresClient
    private let appConfiguration: PostgresClient.Configuration
    private let migrationConfiguration: PostgresClient.Configuration?
    private let appRole: String
    private let maintenanceRole: String?
    /// The server key, read by `migrate()`; nil until then.
    private let serverKey = Mutex<SymmetricKey?>(nil)
    let logger: Logger

    /// A store serving as the role of `configuration` and migrating as the role of `migrationConfiguration`;
    /// `migrate()` grants the maintenance functions to `maintenanceRole` when one is named.
    ///
    /// Without `migrationConfiguration` the app role migrates and so owns the tables: row-level security then no
    /// longer separates users (the owner policy applies to it). That is only for development; `migrate()` warns.
    public init(
        configuration: PostgresClient.Configuration, migrationConfiguration: PostgresClient.Configuration?,
        maintenanceRole: String? = nil, logger: Logger
    ) {
        let logger = Self.driverLogger(logger)
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.appConfiguration = configuration
        self.migrationConfiguration = migrationConfiguration
        self.appRole = configuration.username
        self.maintenanceRole = maintenanceRole
        self.logger = logger
    }

    /// The metadata keys of postgres-nio's log lines that hold no data: which connection, the error of a failed
    /// connection (its server message, never a row), how many rows. Every other key (`psql_message`,
    /// `psql_connection_action`, `psql_query`, `psql_binds`, …) can hold row bytes or parameters, in hex or as text.
    static let driverMetadataKeys: Set<String> = ["psql_connection_id", "psql_error", "row_count"]

    /// `logger` as the driver gets it: only `driverMetadataKeys` pass.
    static func driverLogger(_ logger: Logger) -> Logger {
        logger.keepingMetadata(only: driverMetadataKeys)
    }

    /// postgres-nio's default pool size.
    public static let defaultConnections = 20

    /// A store from `postgres://user[:password]@host[:port]/database[?sslmode=…]` URLs (see `PostgresURL`), keeping
    /// up to `connections` connections open as the app role.
    public convenience init(
        url: String, migrationURL: String?, maintenanceURL: String? = nil, connections: Int = defaultConnections,
        logger: Logger
    ) throws(PostgresURLError) {
        var app = try PostgresURL(url).configuration
        app.options.maximumConnections = connections
        let owner = try migrationURL.map { text throws(PostgresURLError) in try PostgresURL(text) }
        let maintenance = try maintenanceURL.map { text throws(PostgresURLError) in try PostgresURL(text) }
        self.init(
            configuration: app, migrationConfiguration: owner?.configuration, maintenanceRole: maintenance?.user,
            logger: logger)
    }

    /// Runs the connection pool until the calling task is cancelled.
    public func run() async {
        await client.run()
    }

    // MARK: Schema

    public func migrate() async throws(ServerStoreError) {
        if migrationConfiguration == nil {
            logger.warning("postgres: migrating as the app role; row-level security does not separate users this way")
        }
        // The maintenance role's functions reach every user: the app role must never hold them.
        if maintenanceRole == appRole { throw .unavailable("the maintenance role must not be the app role") }
        let configuration = migrationConfiguration ?? appConfiguration
        // The pool logs a warning when it is leased from before `run()` has started, which this task group cannot
        // order; connection failures still surface as errors of the migration itself.
        var quiet = logger
        quiet.logLevel = .error
        let owner = PostgresClient(configuration: configuration, backgroundLogger: quiet)
        let grantee = configuration.username == appRole ? nil : appRole
        let maintenanceGrantee = maintenanceRole == configuration.username ? nil : maintenanceRole
        let outcome = await withTaskGroup(of: Void.self) { group -> Result<SymmetricKey, ServerStoreError> in
            group.addTask { await owner.run() }
            defer { group.cancelAll() }
            do throws(ServerStoreError) {
                return .success(try await migrate(through: owner, grantTo: grantee, maintenance: maintenanceGrantee))
            } catch {
                return .failure(error)
            }
        }
        let key = try outcome.get()
        serverKey.withLock { $0 = key }
    }

    /// Migrates and grants; returns the server key.
    private func migrate(
        through owner: PostgresClient, grantTo grantee: String?, maintenance: String?
    ) async throws(ServerStoreError) -> SymmetricKey {
        let known = Set(PostgresSchema.migrations.map(\.version))
        do {
            return try await owner.withTransaction(logger: logger) { connection in
                try await connection.rows(
                    "SELECT pg_advisory_xact_lock(\(PostgresSchema.migrationLockKey))", logger: logger)
                try await connection.rows(
                    """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version integer PRIMARY KEY,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """, logger: logger)
                let applied = Set(
                    try await connection.rows("SELECT version FROM schema_migrations", logger: logger)
                        .map { try $0.decode(Int.self) })
                guard applied.isSubset(of: known) else { throw ServerStoreError.schemaTooNew }
                let schema = try await connection.rows("SELECT current_schema()", logger: logger)
                    .first?.decode(String?.self) ?? nil
                guard let schema else { throw ServerStoreError.unavailable("no schema to migrate into") }
                for migration in PostgresSchema.migrations where !applied.contains(migration.version) {
                    for statement in migration.statements {
                        let sql = statement.replacingOccurrences(of: "{schema}", with: PostgresSchema.quoted(schema))
                        try await connection.rows(PostgresQuery(unsafeSQL: sql), logger: logger)
                    }
                    try await connection.rows(
                        "INSERT INTO schema_migrations (version) VALUES (\(migration.version))", logger: logger)
                }
                var grants: [String] = []
                if let grantee { grants += PostgresSchema.grants(appRole: PostgresSchema.quoted(grantee)) }
                if let maintenance { grants += PostgresSchema.grants(maintenanceRole: PostgresSchema.quoted(maintenance)) }
                for statement in grants {
                    try await connection.rows(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                guard let key = try await connection.rows("SELECT key FROM coffer_server_key", logger: logger)
                    .first?.decode(Data.self), key.count == 32
                else { throw ServerStoreError.unavailable("the server key is missing") }
                return SymmetricKey(data: key)
            }
        } catch {
            throw Self.mapped(error, context: "migration failed")
        }
    }

    // MARK: Accounts

    public func createUser(_ user: NewUser) async throws(ServerStoreError) {
        let slot = try user.slot.map(Self.encodeSlot)
        try await transaction(acting: .user(user.id)) { connection in
            try await connection.rows(
                """
                INSERT INTO users (id, email, apple_subject, full_name, created_at, auth_hash, vault_id, slot)
                VALUES (\(user.id), \(user.email), \(user.appleSubject), \(user.fullName),
                        \(unescaped: Self.timestamp(UnixTime.milliseconds(user.createdAt))), \(user.authHash), \(user.vaultID), \(slot))
                """, logger: logger)
        }
    }

    public func user(id: UUID) async throws(ServerStoreError) -> UserRecord? {
        let row = try await transaction(acting: .user(id)) { connection in
            try await connection.rows(
                """
                SELECT id, email, apple_subject, full_name, \(unescaped: Self.milliseconds("created_at")),
                       \(unescaped: Self.milliseconds("deleted_at")), auth_hash, vault_id, slot
                FROM users WHERE id = \(id)
                """, logger: logger
            ).first?.decode((UUID, String?, String?, String?, Int64, Int64?, String?, UUID?, String?).self)
        }
        guard case let (id, email, appleSubject, fullName, createdAt, deletedAt, authHash, vaultID, slotText)? = row else {
            return nil
        }
        var slot: WrappedSlot?
        if let slotText {
            do {
                slot = try WireJSON.decoder().decode(WrappedSlot.self, from: Data(slotText.utf8))
            } catch {
                throw .unavailable("malformed slot")
            }
        }
        return UserRecord(
            id: id, email: email, appleSubject: appleSubject, fullName: fullName, createdAt: UnixTime.date(milliseconds: createdAt),
            deletedAt: deletedAt.map { UnixTime.date(milliseconds: $0) }, authHash: authHash, vaultID: vaultID, slot: slot)
    }

    public func userID(email: String) async throws(ServerStoreError) -> UUID? {
        try await transaction(acting: .server) { connection in
            try await connection.rows("SELECT coffer_user_id_by_email(\(email))", logger: logger).first?.decode(UUID?.self) ?? nil
        }
    }

    public func userID(appleSubject: String) async throws(ServerStoreError) -> UUID? {
        try await transaction(acting: .server) { connection in
            try await connection.rows("SELECT coffer_user_id_by_apple_subject(\(appleSubject))", logger: logger)
                .first?.decode(UUID?.self) ?? nil
        }
    }

    public func replaceCredentials(
        userID: UUID, authHash: String, slot: WrappedSlot, manifest: ManifestWrite?
    ) async throws(ServerStoreError) -> PushOutcome {
        let encoded = try Self.encodeSlot(slot)
        do {
            return try await rawTransaction(acting: .user(userID)) { connection -> PushOutcome in
                // Locks the user's row, as a push does, so a push and a passphrase change cannot both extend one head.
                guard let cursor = try await connection.rows(
                    "SELECT change_seq FROM users WHERE id = \(userID) AND deleted_at IS NULL FOR UPDATE", logger: logger
                ).first?.decode(Int64.self)
                else { throw ServerStoreError.notFound }
                // The slot is part of the verified state: the head commits to its parameters.
                if let refusal = try await checkHead(connection, userID: userID, manifest: manifest, writesStateRows: true) {
                    return refusal
                }
                try await connection.rows(
                    "UPDATE users SET auth_hash = \(authHash), slot = \(encoded) WHERE id = \(userID)", logger: logger)
                try await insert(connection, userID: userID, manifest: manifest, sequence: cursor)
                return .accepted(cursor: cursor)
            }
        } catch let error as PostgresTransactionError {
            if let refusal = error.closureError as? ServerStoreError { throw refusal }
            throw Self.mapped(error, context: "passphrase change failed")
        } catch {
            throw Self.mapped(error, context: "passphrase change failed")
        }
    }

    /// Refuses a manifest that does not extend the stored head, and a state change without one once a head exists.
    private func checkHead(
        _ connection: PostgresConnection, userID: UUID, manifest: ManifestWrite?, writesStateRows: Bool
    ) async throws -> PushOutcome? {
        let head = try await connection.rows(
            "SELECT coalesce(max(epoch), 0) FROM manifests WHERE user_id = \(userID)", logger: logger
        ).first?.decode(Int64.self) ?? 0
        if let manifest {
            return manifest.baseEpoch == head ? nil : .staleHead(epoch: head)
        }
        return head > 0 && writesStateRows ? .manifestRequired : nil
    }

    private func insert(_ connection: PostgresConnection, userID: UUID, manifest: ManifestWrite?, sequence: Int64) async throws {
        for entry in manifest?.manifests ?? [] {
            try await connection.rows(
                """
                INSERT INTO manifests (user_id, epoch, body, seq)
                VALUES (\(userID), \(entry.epoch), \(entry.bytes), \(sequence))
                """, logger: logger)
        }
    }

    public func softDeleteUser(id: UUID, at date: Date) async throws(ServerStoreError) {
        let changed = try await transaction(acting: .user(id)) { connection in
            let changed = try await connection.rows(
                """
                UPDATE users SET deleted_at = \(unescaped: Self.timestamp(UnixTime.milliseconds(date)))
                WHERE id = \(id) AND deleted_at IS NULL RETURNING 1
                """, logger: logger).count
            try await connection.rows("UPDATE sessions SET revoked = true WHERE user_id = \(id)", logger: logger)
            return changed
        }
        guard changed == 1 else { throw .notFound }
    }

    // MARK: Sessions

    public func createSession(
        userID: UUID, family: UUID, tokenID: UUID, now: Date, expiresAt: Date
    ) async throws(ServerStoreError) {
        try await transaction(acting: .user(userID)) { connection in
            try await connection.rows(
                """
                INSERT INTO sessions (family, user_id, created_at, expires_at)
                VALUES (\(family), \(userID), \(unescaped: Self.timestamp(UnixTime.milliseconds(now))),
                        \(unescaped: Self.timestamp(UnixTime.milliseconds(expiresAt))))
                """, logger: logger)
            try await connection.rows(
                """
                INSERT INTO refresh_tokens (id, family, user_id, expires_at)
                VALUES (\(tokenID), \(family), \(userID), \(unescaped: Self.timestamp(UnixTime.milliseconds(expiresAt))))
                """, logger: logger)
        }
    }

    public func liveSessionCount(userID: UUID, now: Date) async throws(ServerStoreError) -> Int {
        try await transaction(acting: .user(userID)) { connection in
            try await connection.rows(
                """
                SELECT count(*) FROM sessions
                WHERE user_id = \(userID) AND NOT revoked AND expires_at > \(unescaped: Self.timestamp(UnixTime.milliseconds(now)))
                """, logger: logger
            ).first?.decode(Int.self) ?? 0
        }
    }

    public func rotateRefreshToken(
        userID: UUID, family: UUID, tokenID: UUID, newTokenID: UUID, retryKeyDigest: [UInt8]?, now: Date, expiresAt: Date
    ) async throws(ServerStoreError) -> RefreshOutcome {
        let nowMS = UnixTime.milliseconds(now)
        let expiresMS = UnixTime.milliseconds(expiresAt)
        let digest = retryKeyDigest.map { Data($0) }
        return try await transaction(acting: .user(userID)) { connection -> RefreshOutcome in
            // Locking the family first serialises every presentation of its tokens: of two concurrent rotations
            // with the same token, the second sees `used_at` set and revokes the family, or retries.
            guard case let (sessionExpires, revoked)? = try await connection.rows(
                """
                SELECT \(unescaped: Self.milliseconds("expires_at")), revoked FROM sessions
                WHERE family = \(family) AND user_id = \(userID) FOR UPDATE
                """, logger: logger
            ).first?.decode((Int64, Bool).self)
            else { return .lost }
            guard case let (used, tokenExpires, successor, stored)? = try await connection.rows(
                """
                SELECT used_at IS NOT NULL, \(unescaped: Self.milliseconds("expires_at")), successor, retry_key_hash
                FROM refresh_tokens
                WHERE id = \(tokenID) AND family = \(family) AND user_id = \(userID) FOR UPDATE
                """, logger: logger
            ).first?.decode((Bool, Int64, UUID?, Data?).self)
            else { return revoked ? .invalid : .lost }
            if revoked { return .invalid }
            if used {
                if let retryKeyDigest, let stored, RefreshRetryKey.sameDigest(Array(stored), retryKeyDigest), let successor,
                   sessionExpires > nowMS,
                   try await !connection.rows(
                       """
                       SELECT 1 FROM refresh_tokens
                       WHERE id = \(successor) AND family = \(family) AND used_at IS NULL
                         AND expires_at > \(unescaped: Self.timestamp(nowMS))
                       """, logger: logger
                   ).isEmpty
                {
                    try await connection.rows(
                        """
                        UPDATE refresh_tokens SET expires_at = \(unescaped: Self.timestamp(expiresMS)) WHERE id = \(successor)
                        """, logger: logger)
                    try await connection.rows(
                        """
                        UPDATE sessions SET expires_at = \(unescaped: Self.timestamp(expiresMS)) WHERE family = \(family)
                        """, logger: logger)
                    return .retried(successor: successor)
                }
                try await connection.rows("UPDATE sessions SET revoked = true WHERE family = \(family)", logger: logger)
                return .reused
            }
            guard tokenExpires > nowMS, sessionExpires > nowMS else { return .invalid }
            try await connection.rows(
                """
                UPDATE refresh_tokens
                SET used_at = \(unescaped: Self.timestamp(nowMS)), successor = \(newTokenID), retry_key_hash = \(digest)
                WHERE id = \(tokenID)
                """, logger: logger)
            try await connection.rows(
                """
                INSERT INTO refresh_tokens (id, family, user_id, expires_at)
                VALUES (\(newTokenID), \(family), \(userID), \(unescaped: Self.timestamp(expiresMS)))
                """, logger: logger)
            try await connection.rows(
                """
                UPDATE sessions SET expires_at = \(unescaped: Self.timestamp(expiresMS)) WHERE family = \(family)
                """, logger: logger)
            return .rotated
        }
    }

    public func authorize(
        userID: UUID, family: UUID, counter key: String, requests: Int, window: Int, now: Date
    ) async throws(ServerStoreError) -> Authorization {
        let start = CounterWindow.start(now, window: window)
        let requests = Int32(clamping: max(requests, 1))
        let row = try await transaction(acting: .user(userID)) { connection in
            try await connection.rows(
                "SELECT * FROM coffer_authorize(\(family), \(key), \(start), \(UnixTime.milliseconds(now)), \(requests))",
                logger: logger
            ).first?.decode((Int, Bool).self)
        }
        guard let (count, active) = row else { throw .unavailable("authorize returned no row") }
        return Authorization(
            counter: CounterState(count: count, windowEnds: Self.windowEnd(start: start, window: window)), sessionActive: active)
    }

    public func revokeSession(userID: UUID, family: UUID) async throws(ServerStoreError) {
        try await transaction(acting: .user(userID)) { connection in
            try await connection.rows(
                "UPDATE sessions SET revoked = true WHERE family = \(family) AND user_id = \(userID)", logger: logger)
        }
    }

    public func revokeSessions(userID: UUID, keeping: UUID?) async throws(ServerStoreError) {
        try await transaction(acting: .user(userID)) { connection in
            try await connection.rows(
                """
                UPDATE sessions SET revoked = true
                WHERE user_id = \(userID) AND family IS DISTINCT FROM \(keeping)::uuid
                """, logger: logger)
        }
    }

    // MARK: Items

    public func push(
        userID: UUID, writes: [ItemWrite], manifest: ManifestWrite?, maxStoredBytes: Int64?, now: Date
    ) async throws(ServerStoreError) -> PushOutcome {
        let storedAt = UnixTime.milliseconds(now)
        do {
            return try await rawTransaction(acting: .user(userID)) { connection -> PushOutcome in
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
    private func applyPush(
        _ connection: PostgresConnection, userID: UUID, writes: [ItemWrite], manifest: ManifestWrite?,
        maxStoredBytes: Int64? = nil, storedAt: Int64
    ) async throws -> PushOutcome {
        // Allocating the feed positions first takes the user's row lock, which serialises this user's pushes:
        // positions then become visible in order, so a reader's cursor never passes one still uncommitted,
        // and two pushes creating the same new item cannot both pass the revision check.
        guard let last = try await connection.rows(
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
            """, logger: logger).map(Self.storedItem)
        {
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
            let storedBytes = try await connection.rows(
                "SELECT coalesce(sum(size), 0)::bigint FROM items WHERE user_id = \(userID) AND NOT deleted", logger: logger
            ).first?.decode(Int64.self) ?? 0
            let replaced = stored.values.reduce(Int64(0)) { $0 + Int64($1.box?.count ?? 0) }
            if Self.exceeds(maxStoredBytes, storedBytes: storedBytes, writes: writes, replacing: replaced) {
                throw PushRefusal(outcome: .quotaExceeded(limit: maxStoredBytes))
            }
        }

        var sequence = last - Int64(writes.count)
        for write in writes {
            sequence += 1
            try await connection.rows(
                """
                INSERT INTO items (user_id, id, kind, revision, updated_at, deleted, box, size, meta, seq, stored_at)
                VALUES (\(userID), \(write.id), \(write.kind), \(write.revision), \(write.updatedAt),
                        \(write.deleted), \(write.box), \(write.box?.count ?? 0), \(write.meta), \(sequence),
                        \(unescaped: Self.timestamp(storedAt)))
                ON CONFLICT (user_id, id) DO UPDATE SET kind = EXCLUDED.kind, revision = EXCLUDED.revision,
                    updated_at = EXCLUDED.updated_at, deleted = EXCLUDED.deleted, box = EXCLUDED.box,
                    size = EXCLUDED.size, meta = EXCLUDED.meta, seq = EXCLUDED.seq,
                    stored_at = EXCLUDED.stored_at
                """, logger: logger)
        }
        try await insert(connection, userID: userID, manifest: manifest, sequence: last)
        return .accepted(cursor: last)
    }

    public func stageRotation(userID: UUID, rotation: UUID, writes: [ItemWrite], now: Date) async throws(ServerStoreError) -> Int {
        let stagedAt = UnixTime.milliseconds(now)
        return try await transaction(acting: .user(userID)) { connection -> Int in
            // The user's row lock serialises one account's staging, so the cap holds under concurrent requests.
            guard try await connection.rows(
                "SELECT 1 FROM users WHERE id = \(userID) AND deleted_at IS NULL FOR UPDATE", logger: logger
            ).first != nil
            else { throw ServerStoreError.notFound }
            let held = try await connection.rows(
                "SELECT count(*) FROM rotation_items WHERE user_id = \(userID)", logger: logger
            ).first?.decode(Int64.self) ?? 0
            guard held + Int64(writes.count) <= SyncLimits.maxRotationItems else { throw ServerStoreError.stagingFull }
            for write in writes {
                try await connection.rows(
                    """
                    INSERT INTO rotation_items
                        (user_id, rotation_id, id, kind, revision, updated_at, deleted, box, base_revision, staged_at)
                    VALUES (\(userID), \(rotation), \(write.id), \(write.kind), \(write.revision), \(write.updatedAt),
                            \(write.deleted), \(write.box), \(write.baseRevision), \(unescaped: Self.timestamp(stagedAt)))
                    ON CONFLICT (user_id, rotation_id, id) DO UPDATE SET kind = EXCLUDED.kind,
                        revision = EXCLUDED.revision, updated_at = EXCLUDED.updated_at, deleted = EXCLUDED.deleted,
                        box = EXCLUDED.box, base_revision = EXCLUDED.base_revision, staged_at = EXCLUDED.staged_at
                    """, logger: logger)
            }
            return Int(try await connection.rows(
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
            return try await rawTransaction(acting: .user(userID)) { connection -> PushOutcome in
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

    public func discardRotation(userID: UUID, rotation: UUID) async throws(ServerStoreError) {
        try await transaction(acting: .user(userID)) { connection in
            try await connection.rows(
                "DELETE FROM rotation_items WHERE user_id = \(userID) AND rotation_id = \(rotation)", logger: logger)
        }
    }

    public func changes(userID: UUID, since cursor: Int64, limit: Int) async throws(ServerStoreError) -> ChangePage {
        let fetch = Int32(clamping: max(limit, 0) + 1)
        let rows = try await transaction(acting: .user(userID)) { connection in
            try await connection.rows("SELECT * FROM coffer_feed(\(cursor), \(fetch))", logger: logger)
                .map(Self.feedItem)
        }
        let items = Array(rows.prefix(max(limit, 0)))
        return ChangePage(items: items, cursor: items.last?.sequence ?? cursor, hasMore: rows.count > items.count)
    }

    public func manifests(userID: UUID, after epoch: Int64, limit: Int) async throws(ServerStoreError) -> [StoredManifest] {
        try await transaction(acting: .user(userID)) { connection in
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
        try await transaction(acting: .user(userID)) { connection in
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
        try await transaction(acting: .user(userID)) { connection in
            try await connection.rows(
                "SELECT \(unescaped: Self.itemColumns) FROM items WHERE user_id = \(userID) AND id = \(id)", logger: logger
            ).first.map(Self.storedItem)
        }
    }

    public func items(userID: UUID, kind: String) async throws(ServerStoreError) -> [StoredItem] {
        try await transaction(acting: .user(userID)) { connection in
            try await connection.rows(
                """
                SELECT \(unescaped: Self.itemColumns) FROM items
                WHERE user_id = \(userID) AND kind = \(kind) AND NOT deleted ORDER BY seq
                """, logger: logger).map(Self.storedItem)
        }
    }

    public func deleteAllItems(userID: UUID) async throws(ServerStoreError) -> Int {
        try await transaction(acting: .user(userID)) { connection in
            let count = try await connection.rows("DELETE FROM items WHERE user_id = \(userID) RETURNING 1", logger: logger).count
            try await connection.rows("DELETE FROM manifests WHERE user_id = \(userID)", logger: logger)
            try await connection.rows("DELETE FROM rotation_items WHERE user_id = \(userID)", logger: logger)
            return count
        }
    }

    public func usage(userID: UUID) async throws(ServerStoreError) -> StoreUsage {
        try await transaction(acting: .user(userID)) { connection in
            let (count, bytes) = try await connection.rows(
                """
                SELECT count(*), coalesce(sum(size), 0)::bigint FROM items
                WHERE user_id = \(userID) AND NOT deleted
                """, logger: logger
            ).first?.decode((Int, Int).self) ?? (0, 0)
            let cursor = try await connection.rows("SELECT change_seq FROM users WHERE id = \(userID)", logger: logger)
                .first?.decode(Int64.self) ?? 0
            let head = try await connection.rows(
                "SELECT coalesce(max(epoch), 0) FROM manifests WHERE user_id = \(userID)", logger: logger
            ).first?.decode(Int64.self) ?? 0
            return StoreUsage(items: count, bytes: bytes, cursor: cursor, headEpoch: head)
        }
    }

    // MARK: Protection

    public func increment(counter key: String, window: Int, now: Date) async throws(ServerStoreError) -> CounterState {
        let start = CounterWindow.start(now, window: window)
        let count = try await transaction(acting: .server) { connection in
            try await connection.rows(
                """
                INSERT INTO rate_counters (key, window_start, count) VALUES (\(key), \(start), 1)
                ON CONFLICT (key) DO UPDATE SET
                    count = CASE WHEN rate_counters.window_start = EXCLUDED.window_start
                                 THEN rate_counters.count + 1 ELSE 1 END,
                    window_start = EXCLUDED.window_start
                RETURNING count
                """, logger: logger
            ).first?.decode(Int.self) ?? 1
        }
        return CounterState(count: count, windowEnds: Self.windowEnd(start: start, window: window))
    }

    public func counter(_ key: String, window: Int, now: Date) async throws(ServerStoreError) -> CounterState {
        let start = CounterWindow.start(now, window: window)
        let count = try await transaction(acting: .server) { connection in
            try await connection.rows(
                "SELECT count FROM rate_counters WHERE key = \(key) AND window_start = \(start)", logger: logger
            ).first?.decode(Int.self) ?? 0
        }
        return CounterState(count: count, windowEnds: Self.windowEnd(start: start, window: window))
    }

    /// An event of a user is written in a transaction acting for that user (`coffer_audit` takes the user from it).
    public func audit(_ event: AuditEvent) async throws(ServerStoreError) {
        if let userID = event.userID {
            try await transaction(acting: .user(userID)) { connection in
                try await connection.rows(Self.auditStatement(event), logger: logger)
            }
        } else {
            try await shared { client in try await client.rows(Self.auditStatement(event), logger: logger) }
        }
    }

    public func auditEvents(userID: UUID, limit: Int) async throws(ServerStoreError) -> [AuditEvent] {
        let rows = try await transaction(acting: .user(userID)) { connection in
            try await connection.rows(
                """
                SELECT \(unescaped: Self.milliseconds("at")), kind, user_id, address, detail FROM audit_log
                WHERE user_id = \(userID) ORDER BY id DESC LIMIT \(max(limit, 0))
                """, logger: logger
            ).map { try $0.decode(AuditRow.self) }
        }
        return Self.auditEvents(rows)
    }

    // MARK: Plumbing

    typealias AuditRow = (Int64, String, UUID?, String?, String?)

    static func auditStatement(_ event: AuditEvent) -> PostgresQuery {
        """
        SELECT coffer_audit(\(unescaped: timestamp(UnixTime.milliseconds(event.at))), \(event.kind.rawValue), \(event.address)::text,
                            \(event.detail)::text)
        """
    }

    /// Rows of `AuditRow`'s columns as events; a kind this version does not know is left out.
    static func auditEvents(_ rows: [AuditRow]) -> [AuditEvent] {
        rows.compactMap { at, kind, user, address, detail in
            guard let kind = AuditEvent.Kind(rawValue: kind) else { return nil }
            return AuditEvent(at: UnixTime.date(milliseconds: at), kind: kind, userID: user, address: address, detail: detail)
        }
    }

    /// The columns `storedItem` decodes, in its order.
    private static let itemColumns =
        "id, kind, revision, updated_at, deleted, box, meta, seq, \(milliseconds("stored_at"))"

    /// Thrown inside a push to roll it back; carries the answer (the stored rows the push disagreed with, or the head).
    private struct PushRefusal: Error {
        var outcome: PushOutcome
    }

    /// Whom a transaction acts for.
    package enum Acting: Sendable {
        /// One user: the per-user tables show that user's rows.
        case user(UUID)
        /// The server for nobody: the lookups by email and Apple subject, the rate counters, writing places.
        case server

        /// The claim the proof covers (docs/FORMAT.md §8.5).
        var claim: String {
            switch self {
            case .user(let id): "user:" + id.uuidString.lowercased()
            case .server: "server"
            }
        }

        var user: UUID? {
            if case .user(let id) = self { return id }
            return nil
        }
    }

    /// The proof that a transaction acts as `acting`: HMAC-SHA256 under the server key of
    /// `"coffer/v1/postgres-act" ‖ LF ‖ binding ‖ LF ‖ claim`, where the binding is `coffer_binding()` of that transaction.
    package static func proof(key: SymmetricKey, binding: String, acting: Acting) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Array("coffer/v1/postgres-act\n\(binding)\n\(acting.claim)".utf8), using: key))
    }

    /// Runs `body` in a transaction acting as `acting`.
    @discardableResult
    private func transaction<T>(
        acting: Acting, _ body: (PostgresConnection) async throws -> sending T
    ) async throws(ServerStoreError) -> sending T {
        do {
            return try await rawTransaction(acting: acting, body)
        } catch {
            throw Self.mapped(error, context: "query failed")
        }
    }

    /// `transaction(acting:)` with the driver's errors as they came; for tests that act as the server does.
    package func rawTransaction<T>(
        acting: Acting, _ body: (PostgresConnection) async throws -> sending T
    ) async throws -> sending T {
        guard let key = serverKey.withLock({ $0 }) else {
            throw ServerStoreError.unavailable("the store acts for users only after migrate() has read the server key")
        }
        return try await client.withTransaction(logger: logger) { connection in
            let binding = try await connection.rows("SELECT coffer_binding()", logger: logger).first?.decode(String.self)
            guard let binding else { throw ServerStoreError.unavailable("coffer_binding returned no row") }
            let proof = Self.proof(key: key, binding: binding, acting: acting)
            let accepted = try await connection.rows(
                "SELECT coffer_act(\(acting.user), \(proof))", logger: logger
            ).first?.decode(Bool.self)
            guard accepted == true else {
                throw ServerStoreError.unavailable("the database refused this server's key; restart the server to read it again")
            }
            return try await body(connection)
        }
    }

    /// Runs `body` outside a transaction of this store's, acting for nobody: reading places, and audit events of no
    /// account.
    @discardableResult
    func shared<T>(_ body: (PostgresClient) async throws -> sending T) async throws(ServerStoreError) -> sending T {
        do {
            return try await body(client)
        } catch {
            throw Self.mapped(error, context: "query failed")
        }
    }

    /// A row of `itemColumns`.
    private static func storedItem(_ row: PostgresRow) throws -> StoredItem {
        var cells = Cells(row)
        return StoredItem(
            row: try itemRow(&cells), meta: try cells.next(String?.self), sequence: try cells.next(Int64.self),
            storedAt: UnixTime.date(milliseconds: try cells.next(Int64.self)))
    }

    /// A row of `coffer_feed`.
    private static func feedItem(_ row: PostgresRow) throws -> FeedItem {
        var cells = Cells(row)
        return FeedItem(row: try itemRow(&cells), sequence: try cells.next(Int64.self))
    }

    /// The row's six columns, in `ItemRow`'s order.
    private static func itemRow(_ cells: inout Cells) throws -> ItemRow {
        ItemRow(
            id: try cells.next(UUID.self), kind: try cells.next(String.self), revision: try cells.next(Int64.self),
            updatedAt: try cells.next(Int64.self), deleted: try cells.next(Bool.self), box: try cells.next(Data?.self))
    }

    /// A row's cells read in order. Decoding the whole row as one tuple type costs a runtime lookup of the tuple's
    /// metadata per row, which was most of the decoding time of a page.
    struct Cells {
        private var iterator: PostgresRow.Iterator

        init(_ row: PostgresRow) { iterator = row.makeIterator() }

        mutating func next<Value: PostgresDecodable>(_: Value.Type) throws -> Value {
            guard let cell = iterator.next() else { throw ServerStoreError.unavailable("a row lacks a column") }
            return try cell.decode(Value.self)
        }
    }

    /// Maps a database failure to the store's errors. The text names the kind of failure (and at most an SQLSTATE
    /// code), never a row value or a statement's parameters.
    static func mapped(_ error: any Error, context: String) -> ServerStoreError {
        switch error {
        case let error as ServerStoreError:
            return error
        case let error as PostgresTransactionError:
            if let inner = error.closureError ?? error.beginError ?? error.commitError {
                return mapped(inner, context: context)
            }
            return .unavailable("\(context): transaction failed")
        case let error as PSQLError:
            guard error.code == .server, let state = error.serverInfo?[.sqlState] else {
                return .unavailable("\(context): cannot reach the database")
            }
            switch state {
            case "23505": return .duplicate
            case _ where state.hasPrefix("23"): return .notFound
            case "42501": return .unavailable("\(context): permission denied (privilege or row-level security)")
            case "42P01", "42883": return .unavailable("\(context): schema missing or out of date; run migrate()")
            case "40001", "40P01": return .unavailable("\(context): concurrent update, retry")
            default: return .unavailable("\(context): database error \(state)")
            }
        case is PostgresDecodingError:
            return .unavailable("\(context): unexpected column type")
        case is CancellationError:
            return .unavailable("\(context): cancelled")
        default:
            return .unavailable(context)
        }
    }

    /// SQL for the timestamptz of `milliseconds` since 1970. The value is an integer formatted here, not text from
    /// outside, so inlining it cannot inject anything.
    static func timestamp(_ milliseconds: Int64) -> String {
        "(TIMESTAMPTZ 'epoch' + \(milliseconds) * INTERVAL '1 millisecond')"
    }

    /// SQL reading timestamptz `column` back as milliseconds since 1970.
    private static func milliseconds(_ column: String) -> String {
        "(extract(epoch FROM \(column)) * 1000)::bigint"
    }

    private static func windowEnd(start: Int64, window: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(start + Int64(window)))
    }

    private static func encodeSlot(_ slot: WrappedSlot) throws(ServerStoreError) -> String {
        do {
            return String(decoding: try WireJSON.encoder().encode(slot), as: UTF8.self)
        } catch {
            throw .unavailable("cannot encode a slot")
        }
    }
}

extension PostgresConnection {
    /// Every row of `query`, collected on the connection's event loop.
    ///
    /// The store's results never reach past one user's rows, and the hot ones are small (a page is at most
    /// `SyncLimits.maxPageItems + 1` rows), so they are taken whole: postgres-nio's async row sequence hands rows over
    /// one at a time through a back-pressured stream, which costs more CPU per row than collecting them here.
    @discardableResult
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        let result: EventLoopFuture<PostgresQueryResult> = self.query(query, logger: logger)
        return try await result.get().rows
    }
}

extension PostgresClient {
    /// `query`'s rows (see `PostgresConnection.rows`), on a connection leased for this one statement.
    @discardableResult
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await withConnection { connection in try await connection.rows(query, logger: logger) }
    }
}
