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
    /// The key `migrate()` read, for coffer-bench's pgbench script, which proves whom each transaction acts for as
    /// this store does; nil before `migrate()`.
    package var actingKey: SymmetricKey? { serverKey.withLock { $0 } }
    /// How long one call waits for the database before it is answered `.unavailable` (nil: as long as it takes).
    let operationTimeout: Duration?
    let logger: Logger

    /// A store serving as the role of `configuration` and migrating as the role of `migrationConfiguration`;
    /// `migrate()` grants the maintenance functions to `maintenanceRole` when one is named.
    ///
    /// Without `migrationConfiguration` the app role migrates and so owns the tables: row-level security then no
    /// longer separates users (the owner policy applies to it). That is only for development; `migrate()` warns.
    public init(
        configuration: PostgresClient.Configuration, migrationConfiguration: PostgresClient.Configuration?,
        maintenanceRole: String? = nil, operationTimeout: Duration? = nil, logger: Logger
    ) {
        let logger = Self.driverLogger(logger)
        self.operationTimeout = operationTimeout
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
    /// up to `connections` connections open as the app role; each call waits at most `operationTimeout` for the
    /// database (`OperationDeadline`).
    public convenience init(
        url: String, migrationURL: String?, maintenanceURL: String? = nil, connections: Int = defaultConnections,
        operationTimeout: Duration? = nil, logger: Logger
    ) throws(PostgresURLError) {
        var app = try PostgresURL(url).configuration
        app.options.maximumConnections = connections
        let owner = try migrationURL.map { text throws(PostgresURLError) in try PostgresURL(text) }
        let maintenance = try maintenanceURL.map { text throws(PostgresURLError) in try PostgresURL(text) }
        self.init(
            configuration: app, migrationConfiguration: owner?.configuration, maintenanceRole: maintenance?.user,
            operationTimeout: operationTimeout, logger: logger)
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
                let schema =
                    try await connection.rows("SELECT current_schema()", logger: logger)
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
                guard
                    let key = try await connection.rows("SELECT key FROM coffer_server_key", logger: logger)
                        .first?.decode(Data.self), key.count == 32
                else { throw ServerStoreError.unavailable("the server key is missing") }
                return SymmetricKey(data: key)
            }
        } catch {
            throw Self.mapped(error, context: "migration failed")
        }
    }

    /// Asks the database whether it is a standby (`pg_is_in_recovery()`), on one of the pool's connections, within
    /// `healthTimeout`.
    public func health() async -> DatabaseHealth {
        let (client, logger) = (client, logger)
        do {
            let standby = try await OperationDeadline.run(Self.healthTimeout) {
                try await client.rows("SELECT pg_is_in_recovery()", logger: logger).first?.decode(Bool.self)
            }
            switch standby {
            case false?: return .writable
            case true?: return .readOnly
            case nil: return .unreachable
            }
        } catch {
            return .unreachable
        }
    }

    /// How long `health()` waits for the database.
    static let healthTimeout: Duration = .seconds(2)

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
    static let itemColumns =
        "id, kind, revision, updated_at, deleted, box, meta, seq, \(milliseconds("stored_at"))"

    /// Thrown inside a push to roll it back; carries the answer (the stored rows the push disagreed with, or the head).
    struct PushRefusal: Error {
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
            case .user(let id): "user:" + id.lowercasedString
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

    /// Runs `body` in a transaction acting as `acting`, within `operationTimeout`.
    @discardableResult
    func transaction<T: Sendable>(
        acting: Acting, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(ServerStoreError) -> T {
        do {
            return try await rawTransaction(acting: acting, body)
        } catch {
            throw Self.mapped(error, context: "query failed")
        }
    }

    /// `transaction(acting:)` with the driver's errors as they came; for tests that act as the server does.
    package func rawTransaction<T: Sendable>(
        acting: Acting, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        guard let key = serverKey.withLock({ $0 }) else {
            throw ServerStoreError.unavailable("the store acts for users only after migrate() has read the server key")
        }
        let (client, logger) = (client, logger)
        return try await OperationDeadline.run(operationTimeout) {
            try await client.withTransaction(logger: logger) { connection in
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
    }

    /// Runs `body` outside a transaction of this store's, acting for nobody: reading places, and audit events of no
    /// account; within `operationTimeout`.
    @discardableResult
    func shared<T: Sendable>(_ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws(ServerStoreError) -> T {
        let client = client
        do {
            return try await OperationDeadline.run(operationTimeout) { try await body(client) }
        } catch {
            throw Self.mapped(error, context: "query failed")
        }
    }

    /// A row of `itemColumns`.
    static func storedItem(_ row: PostgresRow) throws -> StoredItem {
        var cells = Cells(row)
        return StoredItem(
            row: try itemRow(&cells), meta: try cells.next(String?.self), sequence: try cells.next(Int64.self),
            storedAt: UnixTime.date(milliseconds: try cells.next(Int64.self)))
    }

    /// A row of `coffer_feed`.
    static func feedItem(_ row: PostgresRow) throws -> FeedItem {
        var cells = Cells(row)
        return FeedItem(row: try itemRow(&cells), sequence: try cells.next(Int64.self))
    }

    /// The row's six columns, in `ItemRow`'s order.
    static func itemRow(_ cells: inout Cells) throws -> ItemRow {
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
    static func milliseconds(_ column: String) -> String {
        "(extract(epoch FROM \(column)) * 1000)::bigint"
    }

    static func windowEnd(start: Int64, window: Int) -> Date {
        UnixTime.date(seconds: start + Int64(window))
    }

    static func encodeSlot(_ slot: WrappedSlot) throws(ServerStoreError) -> String {
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
