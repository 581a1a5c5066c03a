@_spi(Testing) import CofferCrypto
import CofferServer
import CofferServerStore
import CofferSyncAPI
import CofferTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOFoundationEssentialsCompat
import Synchronization
import Testing

/// The two storage backends every server test runs against. PostgreSQL needs a live cluster: `.ci/run` and
/// `scripts/test.sh` start one with `scripts/postgres.sh` and export its URLs; without them these tests fail.
package enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    package var testDescription: String { rawValue }

    /// Runs `body` with a fresh, migrated store of this backend; SQLite in memory unless `sqliteFile` names a file.
    /// PostgreSQL's driver logs through `logger`.
    package func withStore<T: Sendable>(
        sqliteFile: String? = nil, logger: Logger = Logger(label: "test.postgres"),
        _ body: @Sendable (any ServerStore) async throws -> T
    ) async throws -> T {
        switch self {
        case .sqlite:
            let store = try sqliteFile.map { path throws(ServerStoreError) in try SQLiteServerStore(path: path) } ?? SQLiteServerStore.inMemory()
            try await store.migrate()
            return try await body(store)
        case .postgres:
            let environment = ProcessInfo.processInfo.environment
            guard let url = environment["COFFER_TEST_POSTGRES_URL"], let admin = environment["COFFER_TEST_POSTGRES_ADMIN_URL"],
                let maintenance = environment["COFFER_TEST_POSTGRES_MAINTENANCE_URL"]
            else {
                Issue.record("PostgreSQL tests need COFFER_TEST_POSTGRES_URL, …_ADMIN_URL and …_MAINTENANCE_URL: run `export $(scripts/postgres.sh start DIR)`")
                throw TestSkip.noPostgres
            }
            let store = try PostgresServerStore(url: url, migrationURL: admin, maintenanceURL: maintenance, logger: logger)
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await store.run() }
                defer { group.cancelAll() }
                try await store.migrate()
                return try await body(store)
            }
        }
    }

    package enum TestSkip: Error { case noPostgres }
}

/// Runs `body` with the store for the work that spans users beside `store` (one of `withStore`'s): the SQLite store
/// itself, or on PostgreSQL a pool of the test cluster's maintenance role.
package func withMaintenance<T: Sendable>(
    of store: any ServerStore, _ body: @Sendable (any MaintenanceStore) async throws -> T
) async throws -> T {
    if let sqlite = store as? SQLiteServerStore { return try await body(sqlite) }
    let url = try #require(
        ProcessInfo.processInfo.environment["COFFER_TEST_POSTGRES_MAINTENANCE_URL"],
        "COFFER_TEST_POSTGRES_MAINTENANCE_URL is unset: run `export $(scripts/postgres.sh start DIR)`")
    // Errors only: the pool warns when `body` leases before the `run()` task has started, which is harmless.
    var logger = Logger(label: "test.postgres.maintenance")
    logger.logLevel = .error
    let maintenance = try PostgresMaintenanceStore(url: url, logger: logger)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await maintenance.run() }
        defer { group.cancelAll() }
        return try await body(maintenance)
    }
}

/// A clock tests move by hand.
package final class TestClock: Sendable {
    private let current: Mutex<Date>

    package init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(start)
    }

    package var now: Date { current.withLock { $0 } }

    package func advance(_ seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    package var function: @Sendable () -> Date { { [self] in now } }
}

/// Collects every log line the server writes, to scan for canaries.
package final class LogCollector: Sendable {
    private let lines = Mutex<[String]>([])

    package init() {}

    package var text: String { lines.withLock { $0.joined(separator: "\n") } }

    package func logger(_ label: String = "coffer-server") -> Logger {
        var logger = Logger(label: label) { _ in Handler(collector: self) }
        logger.logLevel = .trace
        return logger
    }

    package func append(_ line: String) { lines.withLock { $0.append(line) } }

    package struct Handler: LogHandler {
        package let collector: LogCollector
        package var metadata: Logger.Metadata = [:]
        package var logLevel: Logger.Level = .trace

        package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        package func log(event: LogEvent) {
            collector.append("\(event.level) \(event.message) \(metadata.merging(event.metadata ?? [:]) { $1 })")
        }
    }
}

/// Configuration for tests: cheap auth hashing, test KDF limits, an injected clock, a fresh data directory.
package func testConfiguration(clock: TestClock, requestsPerMinute: Int = 10_000) throws -> ServerConfiguration {
    ServerConfiguration(
        dataDirectory: try TestSupport.temporaryDirectory("server"), requestsPerMinute: requestsPerMinute,
        authHashIterations: 1_000, kdfLimits: .testing, clock: clock.function)
}

/// Runs `body` against the server's router in process (no sockets).
package func withServer(
    _ backend: Backend, clock: TestClock = TestClock(), requestsPerMinute: Int = 10_000, logs: LogCollector = LogCollector(),
    configure: (inout ServerConfiguration) -> Void = { _ in },
    _ body: @escaping @Sendable (APIClient, any ServerStore) async throws -> Void
) async throws {
    var configuration = try testConfiguration(clock: clock, requestsPerMinute: requestsPerMinute)
    configure(&configuration)
    let finalConfiguration = configuration
    try await backend.withStore { store in
        let router = try await CofferServerApplication.router(configuration: finalConfiguration, store: store, logger: logs.logger())
        let app = Application(router: router)
        try await app.test(.router) { client in
            try await body(APIClient(client: client, dataDirectory: finalConfiguration.dataDirectory), store)
        }
    }
}

/// JSON in, status and JSON out.
package struct APIClient: Sendable {
    package let client: any TestClientProtocol
    /// The server's data directory (its signing keys live there).
    package let dataDirectory: String

    package init(client: any TestClientProtocol, dataDirectory: String) {
        self.client = client
        self.dataDirectory = dataDirectory
    }

    package struct Answer: Sendable {
        package let status: HTTPResponse.Status
        package let headers: HTTPFields
        package let body: Data

        package func decode<T: Decodable>(_ type: T.Type) throws -> T { try WireJSON.decoder().decode(T.self, from: body) }
        package var error: ErrorBody? { try? decode(ErrorBody.self) }
        package var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] }
    }

    @discardableResult
    package func send(
        _ method: HTTPRequest.Method, _ path: String, token: String? = nil, json: (any Encodable)? = nil, raw: Data? = nil
    ) async throws -> Answer {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        var body: ByteBuffer?
        if let json {
            body = ByteBuffer(data: try WireJSON.encoder().encode(json))
            headers[.contentType] = "application/json"
        } else if let raw {
            body = ByteBuffer(data: raw)
            headers[.contentType] = "application/json"
        }
        return try await sendRaw(method, path, headers: headers, body: body)
    }

    package func sendRaw(_ method: HTTPRequest.Method, _ path: String, headers: HTTPFields, body: ByteBuffer?) async throws -> Answer {
        try await client.execute(uri: path, method: method, headers: headers, body: body) { response in
            Answer(status: response.status, headers: response.headers, body: Data(buffer: response.body))
        }
    }
}

/// A registered test account with its keys.
package struct TestAccount: Sendable {
    package let email: String
    package let passphrase: String
    package let authKey: String
    package let vaultID: UUID
    package let slot: WrappedSlot
    package var auth: AuthResponse

    package var access: String { auth.accessToken }
    package var refresh: String { auth.refreshToken }
    package var userID: UUID { UUID(uuidString: auth.user.id)! }

    /// A register body with a real slot (wrapping a random master key) under test KDF parameters.
    package static func registration(
        email: String = "user-\(UUID().uuidString.prefix(8).lowercased())@example.org", passphrase: String = "correct horse battery staple",
        kdf: PassphraseKDF = .pbkdf2SHA256(iterations: 1_000)
    ) throws -> (RegisterRequest, passphrase: String) {
        let header = SlotHeader.new(.passphrase, kdf: kdf)
        let keys = try SyncKeys(passphrase: passphrase, kdf: kdf, salt: header.salt, limits: .testing)
        let vaultID = UUID()
        let wrapped = try header.wrap(masterKey: SecretBytes(randomCount: 32), vaultID: vaultID.bytes, kek: keys.keyEncryptionKey)
        let slot = WrappedSlot(
            id: UUID(bytes: header.slotID), kdf: KDFParameters(kdf),
            salt: Data(header.salt).base64EncodedString(), wrappedKey: wrapped.base64EncodedString())
        return (RegisterRequest(email: email, authKey: keys.authKeyBase64, vaultID: vaultID, slot: slot), passphrase)
    }

    package static func register(_ api: APIClient, email: String? = nil) async throws -> TestAccount {
        let (request, passphrase) = try registration(email: email ?? "user-\(UUID().uuidString.prefix(8).lowercased())@example.org")
        let answer = try await api.send(.post, "/v1/auth/register", json: request)
        try #require(answer.status == .created, "register: \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        return TestAccount(
            email: request.email, passphrase: passphrase, authKey: request.authKey, vaultID: request.vaultID, slot: request.slot,
            auth: try answer.decode(AuthResponse.self))
    }

    package func login(_ api: APIClient) async throws -> AuthResponse {
        let answer = try await api.send(.post, "/v1/auth/login", json: LoginRequest(email: email, authKey: authKey))
        try #require(answer.status == .ok)
        return try answer.decode(AuthResponse.self)
    }
}

/// A push body of `count` fake boxes (random bytes: the server cannot tell).
package func fakeItems(_ count: Int, kind: String = "note", revision: Int64 = 1, base: Int64 = 0, ids: [UUID]? = nil) -> PushRequest {
    PushRequest(
        items: (0..<count).map { index in
            let box = Data((0..<64).map { _ in UInt8.random(in: 0...255) })
            return PushItem(
                item: ItemRow(id: ids?[index] ?? UUID(), kind: kind, revision: revision, updatedAt: 1_700_000_000_000 + Int64(index), deleted: false, box: box),
                baseRevision: base)
        })
}

/// The `coffer-server` executable built next to this test bundle.
package let serverBinary = TestSupport.builtExecutable("coffer-server")
