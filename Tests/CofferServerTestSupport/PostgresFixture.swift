import CofferCrypto
import CofferServerStore
import CofferSyncAPI
import Crypto
import Foundation
import Logging
import PostgresNIO
import Testing

package enum PostgresFixtureError: Error {
    case noServerKey
}

/// A migrated store on the cluster named by the environment, with its pool running for the test's duration.
package struct PostgresFixture {
    /// Errors only: the pool warns when a test leases before its `run()` task has started, which is harmless.
    package static let logger: Logger = {
        var logger = Logger(label: "coffer.tests.postgres")
        logger.logLevel = .error
        return logger
    }()
    package let store: PostgresServerStore

    package init(store: PostgresServerStore) {
        self.store = store
    }

    /// The app and owner URLs; the test fails (never skips) when they are not set.
    package static func urls() throws -> (app: String, admin: String) {
        (try required("COFFER_TEST_POSTGRES_URL"), try required("COFFER_TEST_POSTGRES_ADMIN_URL"))
    }

    /// The maintenance role's URL.
    package static func maintenanceURL() throws -> String {
        try required("COFFER_TEST_POSTGRES_MAINTENANCE_URL")
    }

    private static func required(_ name: String) throws -> String {
        let hint = "start a test cluster with `export $(scripts/postgres.sh start DIR)` (needs the postgresql package)"
        return try #require(ProcessInfo.processInfo.environment[name], "\(name) is unset: \(hint)")
    }

    package static func with(_ body: (PostgresFixture) async throws -> Void) async throws {
        let (url, adminURL) = try urls()
        let store = try PostgresServerStore(url: url, migrationURL: adminURL, maintenanceURL: try maintenanceURL(), logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await store.run() }
            defer { group.cancelAll() }
            try await store.migrate()
            try await body(PostgresFixture(store: store))
        }
    }

    /// A new user with a session whose first token was rotated once, `items` items and one audit event.
    package func seedUser(items: Int) async throws -> UUID {
        let id = UUID()
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        try await store.createUser(NewUser(id: id, email: "\(id.uuidString.lowercased())@example.com", createdAt: now))
        let family = UUID(), token = UUID()
        try await store.createSession(
            userID: id, family: family, tokenID: token, now: now, expiresAt: now.addingTimeInterval(86_400))
        let outcome = try await store.rotateRefreshToken(
            userID: id, family: family, tokenID: token, newTokenID: UUID(), now: now,
            expiresAt: now.addingTimeInterval(86_400))
        #expect(outcome == .rotated)
        if items > 0 {
            let writes = (0..<items).map { index in
                ItemWrite(
                    row: ItemRow(
                        id: UUID(), kind: "note", revision: 1, updatedAt: Int64(index), deleted: false,
                        box: Data(repeating: UInt8(index), count: 8)), baseRevision: 0)
            }
            #expect(try await store.push(userID: id, writes: writes, now: now) == .accepted(cursor: Int64(items)))
        }
        try await store.audit(AuditEvent(at: now, kind: .accountCreated, userID: id, address: "192.0.2.1"))
        return id
    }

    /// Runs `body` through the app role in a transaction acting as `user` as the store does (proved); when nil, in a
    /// transaction that proves nothing, as anyone holding the app role can open.
    package func inTransaction<T: Sendable>(
        as user: UUID?, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        guard let user else {
            return try await store.client.withTransaction(logger: Self.logger) { connection in try await body(connection) }
        }
        return try await store.rawTransaction(acting: .user(user)) { connection in try await body(connection) }
    }

    /// Runs `body` in a transaction the store opens as the server for nobody (proved).
    package func asServer<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await store.rawTransaction(acting: .server) { connection in try await body(connection) }
    }

    /// The server key, read as the owner.
    package static func serverKey() async throws -> SymmetricKey {
        let admin = PostgresClient(configuration: try PostgresURL(try urls().admin).configuration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await admin.run() }
            defer { group.cancelAll() }
            for try await key in try await admin.query("SELECT key FROM coffer_server_key", logger: logger).decode(Data.self) {
                return SymmetricKey(data: key)
            }
            throw PostgresFixtureError.noServerKey
        }
    }

    /// Sets the claim of `acting` on `connection` with a proof made under `key` for `binding` (this transaction's, or
    /// another's to try a replay); returns whether the database accepted it.
    package static func act(
        _ connection: PostgresConnection, as acting: PostgresServerStore.Acting, key: SymmetricKey, binding: String? = nil
    ) async throws -> Bool {
        var own = ""
        for try await value in try await connection.query("SELECT coffer_binding()", logger: logger).decode(String.self) {
            own = value
        }
        let proof = PostgresServerStore.proof(key: key, binding: binding ?? own, acting: acting)
        var accepted = false
        if case .user(let id) = acting {
            for try await value in try await connection.query("SELECT coffer_act(\(id), \(proof))", logger: logger).decode(Bool.self) {
                accepted = value
            }
        } else {
            for try await value in try await connection.query("SELECT coffer_act(NULL, \(proof))", logger: logger).decode(Bool.self) {
                accepted = value
            }
        }
        return accepted
    }

    /// `SELECT count(*) FROM table` with no filter at all.
    package func count(_ table: String, as user: UUID?) async throws -> Int {
        try await inTransaction(as: user) { connection in
            var count = 0
            for try await value in try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"), logger: Self.logger
            ).decode(Int.self) {
                count = value
            }
            return count
        }
    }

    /// The count on one connection right after a transaction on it set `app.user_id` (which leaves it '').
    package func countAfterReset(_ table: String) async throws -> Int {
        try await store.client.withConnection { connection in
            try await connection.query("BEGIN", logger: Self.logger)
            try await connection.query(
                "SELECT set_config('app.user_id', \(UUID().uuidString.lowercased()), true)", logger: Self.logger)
            try await connection.query("COMMIT", logger: Self.logger)
            var count = -1
            for try await value in try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"), logger: Self.logger
            ).decode(Int.self) {
                count = value
            }
            return count
        }
    }

    /// The SQLSTATE `body` failed with, or nil when it succeeded.
    package func sqlState(as user: UUID?, _ body: @escaping @Sendable (PostgresConnection) async throws -> Void) async -> String? {
        do {
            try await inTransaction(as: user, body)
            return nil
        } catch let error as PostgresTransactionError {
            return (error.closureError as? PSQLError)?.serverInfo?[.sqlState] ?? "not a server error"
        } catch {
            return (error as? PSQLError)?.serverInfo?[.sqlState] ?? "not a server error"
        }
    }

    /// Every row of `query`.
    package func all<each Column: PostgresDecodable & Sendable>(
        _ query: PostgresQuery, as type: (repeat each Column).Type
    ) async throws -> [(repeat each Column)] {
        var rows: [(repeat each Column)] = []
        for try await row in try await store.client.query(query, logger: Self.logger).decode(type) {
            rows.append(row)
        }
        return rows
    }

    package func first<Column: PostgresDecodable & Sendable>(_ query: PostgresQuery, as type: Column.Type) async throws -> Column? {
        for try await value in try await store.client.query(query, logger: Self.logger).decode(type) {
            return value
        }
        return nil
    }

    package static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    package func first<each Column: PostgresDecodable & Sendable>(
        _ query: PostgresQuery, as type: (repeat each Column).Type
    ) async throws -> (repeat each Column)? {
        for try await row in try await store.client.query(query, logger: Self.logger).decode(type) {
            return row
        }
        return nil
    }
}

extension PostgresFixture {
    /// The first column of every row of `query`, as text, run through the app role acting as `user`.
    package func strings(_ query: PostgresQuery, as user: UUID?) async throws -> [String] {
        try await inTransaction(as: user) { connection in
            var values: [String] = []
            for try await value in try await connection.query(query, logger: Self.logger).decode(String?.self) {
                values.append(value ?? "")
            }
            return values
        }
    }
}
