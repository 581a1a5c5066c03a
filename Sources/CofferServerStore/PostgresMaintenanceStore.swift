import CofferCrypto
import Foundation
import Logging
import PostgresNIO

/// The work that spans users on PostgreSQL, under the *maintenance* role: purging soft-deleted accounts and reading
/// the whole audit log. The role may execute `PostgresSchema.maintenanceFunctions` and nothing else (no table); the
/// app role may execute none of them, so a request can neither purge accounts early nor read other users' audit rows.
/// `coffer-server purge` and the purge job of `coffer-server serve` (when given a maintenance URL) use it, each with
/// its own connection pool: no request handler ever holds one of its connections.
///
/// The grants come from `PostgresServerStore.migrate()` run with `maintenanceRole` naming this role. Run `client`
/// as for `PostgresServerStore`: in a `ServiceGroup` or through `run()`.
public final class PostgresMaintenanceStore: MaintenanceStore {
    /// The maintenance role's connection pool; run it before the first call.
    public let client: PostgresClient
    private let logger: Logger

    /// A store connecting as the role of `configuration`.
    public init(configuration: PostgresClient.Configuration, logger: Logger) {
        let logger = PostgresServerStore.driverLogger(logger)
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.logger = logger
    }

    /// A store from a `postgres://` URL (see `PostgresURL`); maintenance needs few connections.
    public convenience init(url: String, logger: Logger) throws(PostgresURLError) {
        var configuration = try PostgresURL(url).configuration
        configuration.options.maximumConnections = 2
        self.init(configuration: configuration, logger: logger)
    }

    /// Runs the connection pool until the calling task is cancelled.
    public func run() async {
        await client.run()
    }

    public func purgeUsers(deletedBefore cutoff: Date) async throws(ServerStoreError) -> Int {
        try await run("purge failed") { client, logger in
            try await client.rows(
                "SELECT coffer_purge_users(\(unescaped: PostgresServerStore.timestamp(UnixTime.milliseconds(cutoff))))",
                logger: logger
            ).first?.decode(Int.self) ?? 0
        }
    }

    /// Events of no account only: this role acts for no user.
    public func audit(_ event: AuditEvent) async throws(ServerStoreError) {
        guard event.userID == nil else { throw .unavailable("the maintenance role records events of no account") }
        try await run("audit failed") { client, logger in
            try await client.rows(PostgresServerStore.auditStatement(event), logger: logger)
        }
    }

    public func auditEvents(limit: Int) async throws(ServerStoreError) -> [AuditEvent] {
        let rows = try await run("reading the audit log failed") { client, logger in
            try await client.rows("SELECT * FROM coffer_audit_events(\(Int32(clamping: max(limit, 0))))", logger: logger)
                .map { try $0.decode(PostgresServerStore.AuditRow.self) }
        }
        return PostgresServerStore.auditEvents(rows)
    }

    @discardableResult
    private func run<T>(
        _ context: String, _ body: (PostgresClient, Logger) async throws -> sending T
    ) async throws(ServerStoreError) -> sending T {
        do {
            return try await body(client, logger)
        } catch {
            throw PostgresServerStore.mapped(error, context: context)
        }
    }
}
