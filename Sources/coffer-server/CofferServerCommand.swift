import ArgumentParser
import CofferCrypto
import CofferLogging
import CofferPlatform
import CofferReporting
import CofferServer
import CofferServerStore
import Foundation
import Hummingbird
import Logging

/// `coffer-server`: the zero-knowledge sync server. Flags override environment variables (`COFFER_SERVER_*`).
@main
struct CofferServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer-server",
        abstract: "Coffer's zero-knowledge sync server.",
        discussion: """
            With no flags it listens on 127.0.0.1:8443 (plain HTTP: put it behind TLS or pass --tls-cert/--tls-key) \
            and keeps everything in an SQLite file under $XDG_DATA_HOME/coffer-server.
            """,
        version: CofferVersion.current,
        subcommands: [Serve.self, RotateSigningKey.self, Places.self, OperatorTokenCommand.self, Purge.self, Audit.self],
        defaultSubcommand: Serve.self)

    /// Failures are reported as `coffer` reports them, one line `coffer-server: error: …` with the exit code of the
    /// README's table: set-up 78 (EX_CONFIG), storage 69, places files 65, usage 64 (followed by ArgumentParser's
    /// usage line).
    static func main() async {
        AllocatorTuning.reuseLargeBlocks()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            ErrorReporter(program: "coffer-server").exit(reporting: error, of: Self.self)
        }
    }
}

extension ServerSetupError: ReportableError {
    package var status: ExitStatus { .configuration }
}

extension PostgresURLError: ReportableError {
    package var status: ExitStatus { .configuration }
}

extension ServerStoreError: ReportableError {
    package var status: ExitStatus { .unavailable }
}

extension PlacesCommandError: ReportableError {
    package var status: ExitStatus { .badData }
}

struct CommonOptions: ParsableArguments {
    @Option(help: "Data directory: signing keys, server secret and the default SQLite store (env COFFER_SERVER_DATA).")
    var data: String?

    @Option(help: "postgres://user@host:port/db for the server's role; default: SQLite in the data directory (env COFFER_SERVER_DATABASE_URL).")
    var databaseURL: String?

    @Option(help: "postgres:// URL of the role that owns the tables, used for migrations (env COFFER_SERVER_ADMIN_DATABASE_URL).")
    var adminDatabaseURL: String?

    @Option(help: "postgres:// URL of the maintenance role, for the purge and the audit log across users (env COFFER_SERVER_MAINTENANCE_DATABASE_URL).")
    var maintenanceDatabaseURL: String?

    @Option(help: "Most PostgreSQL connections to keep open, 1 to 1000; default 20 (env COFFER_SERVER_DATABASE_CONNECTIONS).")
    var databaseConnections: Int?

    @Option(
        help: "Seconds a request waits for PostgreSQL before it is answered 503 with Retry-After, 1 to 600; default 10 (env COFFER_SERVER_DATABASE_TIMEOUT).")
    var databaseTimeout: Int?

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    var dataDirectory: String {
        data ?? environment["COFFER_SERVER_DATA"]
            ?? DataLocations.dataDirectory(environment: environment).replacingOccurrences(of: "/coffer", with: "/coffer-server", options: .backwards)
    }

    var postgresURL: String? {
        (databaseURL ?? environment["COFFER_SERVER_DATABASE_URL"]).flatMap { $0.isEmpty ? nil : $0 }
    }

    var maintenanceURL: String? {
        (maintenanceDatabaseURL ?? environment["COFFER_SERVER_MAINTENANCE_DATABASE_URL"]).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The store. `serving`: each call waits at most `--database-timeout` for PostgreSQL (a request is then answered
    /// 503); the commands run by hand (imports, purge, audit) wait as long as their work takes.
    func makeStore(logger: Logger, serving: Bool = false) throws -> any ServerStore {
        if let url = postgresURL {
            let timeout = databaseTimeout ?? environment["COFFER_SERVER_DATABASE_TIMEOUT"].map { Int($0) ?? 0 } ?? 10
            guard (1...600).contains(timeout) else {
                throw ServerSetupError.configuration("the database timeout must be a number of seconds from 1 to 600")
            }
            let connections =
                databaseConnections ?? environment["COFFER_SERVER_DATABASE_CONNECTIONS"].map { Int($0) ?? 0 }
                ?? PostgresServerStore.defaultConnections
            guard (1...1000).contains(connections) else {
                throw ServerSetupError.configuration("database connections must be a number from 1 to 1000")
            }
            if let maintenanceURL, try PostgresURL(maintenanceURL).user == PostgresURL(url).user {
                throw ServerSetupError.configuration("the maintenance database role must not be the server's role")
            }
            return try PostgresServerStore(
                url: url, migrationURL: adminDatabaseURL ?? environment["COFFER_SERVER_ADMIN_DATABASE_URL"],
                maintenanceURL: maintenanceURL, connections: connections,
                operationTimeout: serving ? .seconds(timeout) : nil, logger: logger)
        }
        try PrivateFiles.createDirectory(dataDirectory)
        return try SQLiteServerStore(path: "\(dataDirectory)/server.sqlite")
    }

    /// The store for work that spans users: the SQLite store itself, or on PostgreSQL the maintenance role's own
    /// pool when a maintenance URL is given (nil otherwise).
    func makeMaintenance(for store: any ServerStore, logger: Logger) throws -> (any MaintenanceStore)? {
        if let sqlite = store as? SQLiteServerStore { return sqlite }
        return try maintenanceURL.map { url throws(PostgresURLError) in try PostgresMaintenanceStore(url: url, logger: logger) }
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server (the default).")

    @OptionGroup var common: CommonOptions
    @Option(help: "Address to listen on (env COFFER_SERVER_HOST).") var host: String?
    @Option(help: "Port to listen on (env COFFER_SERVER_PORT).") var port: Int?
    @Option(help: "PEM certificate chain for TLS.") var tlsCert: String?
    @Option(help: "PEM private key for TLS.") var tlsKey: String?
    @Option(help: "Apple's JWKS file, for Sign in with Apple.") var appleJWKS: String?
    @Option(help: "The app's client id, the audience of Apple identity tokens.") var appleAudience: String?
    @Option(help: "Origin allowed by CORS (`*` for any); none by default.") var corsOrigin: String?
    @Flag(help: "Serve Prometheus metrics (requests and latency per route and status) at /metrics, to the operator token.")
    var metrics = false
    @Option(help: "Requests per minute per token (and per address, unless --address-requests-per-minute).")
    var requestsPerMinute: Int = 100
    @Option(help: "Requests per minute per client address on the endpoints before login (default: --requests-per-minute).")
    var addressRequestsPerMinute: Int?
    @Flag(help: "Serve the web vault at /app: the browser decrypts, so use it on a server you run or trust. Needs TLS unless on loopback.")
    var webVault = false
    @Option(
        help:
            "The web vault's files (default: env COFFER_SERVER_WEB_VAULT_DIR, else share/coffer/web-vault beside the executable's bin, else the source tree's Web/app)."
    )
    var webVaultDir: String?
    @Option(
        help:
            "Threads serving the sockets, 1 to \(ServerConfiguration.maxEventLoops); the routes run on one thread per core beside them (default: half the cores, \(ServerConfiguration.defaultEventLoops) here; env COFFER_SERVER_EVENT_LOOPS)."
    )
    var eventLoops: Int?
    @Option(
        help:
            "Connections held at once; beyond it new ones are closed at once (default: \(ServerConfiguration.defaultMaxConnections) here: 10,000, fewer under a low open-file limit)."
    )
    var maxConnections: Int?
    @Option(help: "Connections held at once from one client address.")
    var maxConnectionsPerAddress: Int = 512
    @Option(help: "Seconds a connection may sit without a request part or an answer (an unfinished head, an idle keep-alive) before it is closed.")
    var idleTimeout: Int = 30
    @Option(help: "Seconds a request's body may take to arrive after its head.")
    var requestTimeout: Int = 120
    @Option(help: "Most bytes of items (boxes: cards, photos, keys, notes) one account may store; a push past it is refused (413).")
    var maxAccountBytes: Int64 = ServerConfiguration.defaultMaxAccountBytes
    @Option(help: "Most signed-in sessions (devices) one account may hold; a login past it is refused (429) until one signs out or expires.")
    var maxSessionsPerAccount: Int = ServerConfiguration.defaultMaxSessionsPerAccount
    @Option(help: "Seconds an access token lasts before the client refreshes it, 60 to 3600.")
    var accessTokenLifetime: Int = 15 * 60
    @Option(
        help: ArgumentHelp(
            "A load balancer (address or network, e.g. 10.0.0.0/8) whose X-Forwarded-For names the client; repeatable (env COFFER_SERVER_TRUSTED_PROXIES, comma-separated).",
            valueName: "address[/bits]"))
    var trustedProxy: [String] = []

    /// `--trusted-proxy`, or the environment's list when none is given.
    var trustedProxies: [IPNetwork] {
        get throws {
            let given =
                trustedProxy.isEmpty
                ? (common.environment["COFFER_SERVER_TRUSTED_PROXIES"] ?? "").split(separator: ",").map(String.init)
                : trustedProxy
            return try given.map { text in
                let trimmed = text.trimmingCharacters(in: .whitespaces)
                guard let network = IPNetwork(trimmed) else {
                    throw ServerSetupError.configuration("a trusted proxy must be an IP address or network (address/bits)")
                }
                return network
            }
        }
    }

    func validate() throws {
        if let eventLoops, !(1...ServerConfiguration.maxEventLoops).contains(eventLoops) {
            throw ValidationError("--event-loops must be 1 to \(ServerConfiguration.maxEventLoops)")
        }
        if let maxConnections, !(1...1_000_000).contains(maxConnections) {
            throw ValidationError("--max-connections must be 1 to 1000000")
        }
        guard (1...1_000_000).contains(maxConnectionsPerAddress) else {
            throw ValidationError("--max-connections-per-address must be 1 to 1000000")
        }
        guard (1...3600).contains(idleTimeout), (1...3600).contains(requestTimeout) else {
            throw ValidationError("--idle-timeout and --request-timeout must be 1 to 3600 seconds")
        }
        guard (1_048_576...(1 << 50)).contains(maxAccountBytes) else {
            throw ValidationError("--max-account-bytes must be 1048576 (1 MiB) to 2^50")
        }
        guard (1...100_000).contains(maxSessionsPerAccount) else {
            throw ValidationError("--max-sessions-per-account must be 1 to 100000")
        }
        guard (60...3600).contains(accessTokenLifetime) else {
            throw ValidationError("--access-token-lifetime must be 60 to 3600 seconds")
        }
    }

    func run() async throws {
        CofferLog.bootstrap(environment: common.environment)
        let logger = Logger(label: "coffer-server")
        let environment = common.environment
        var settings = ServerConfiguration(
            host: host ?? environment["COFFER_SERVER_HOST"] ?? "127.0.0.1",
            port: port ?? environment["COFFER_SERVER_PORT"].flatMap(Int.init) ?? 8443,
            dataDirectory: common.dataDirectory,
            appleJWKSPath: appleJWKS, appleAudience: appleAudience, tlsCertificatePath: tlsCert, tlsKeyPath: tlsKey,
            corsOrigin: corsOrigin, requestsPerMinute: requestsPerMinute,
            metrics: metrics || environment["COFFER_SERVER_METRICS"] == "1")
        settings.addressRequestsPerMinute = addressRequestsPerMinute
        if let maxConnections { settings.maxConnections = maxConnections }
        settings.maxConnectionsPerAddress = maxConnectionsPerAddress
        settings.idleTimeout = TimeInterval(idleTimeout)
        settings.requestTimeout = TimeInterval(requestTimeout)
        settings.maxAccountBytes = maxAccountBytes
        settings.maxSessionsPerAccount = maxSessionsPerAccount
        settings.trustedProxies = try trustedProxies
        settings.accessTokenLifetime = accessTokenLifetime
        if let loops = eventLoops ?? environment["COFFER_SERVER_EVENT_LOOPS"].map({ Int($0) ?? 0 }) {
            guard (1...ServerConfiguration.maxEventLoops).contains(loops) else {
                throw ServerSetupError.configuration("COFFER_SERVER_EVENT_LOOPS must be 1 to \(ServerConfiguration.maxEventLoops)")
            }
            settings.eventLoops = loops
        }
        if webVault || webVaultDir != nil {
            settings.webVaultDirectory = WebVaultFiles.locate(explicit: webVaultDir, environment: environment)
        }
        let configuration = settings
        let store = try common.makeStore(logger: logger, serving: true)
        let maintenance = try common.makeMaintenance(for: store, logger: logger)
        if maintenance == nil {
            logger.notice("no maintenance database URL: deleted accounts are purged only by `coffer-server purge`")
        }
        try await withStoreRunning(store, maintenance) {
            let app = try await CofferServerApplication.build(
                configuration: configuration, store: store, maintenance: maintenance, logger: logger)
            try await app.runService()
        }
    }
}

struct RotateSigningKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-signing-key",
        abstract: "Add a new token-signing key; keys retired more than 7 days ago are deleted. Restart servers to load it.")

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = Logger(label: "coffer-server")
        let store = try common.makeStore(logger: logger)
        let id = try SigningKeyStore.rotate(dataDirectory: common.dataDirectory, now: Date(), retireAfter: 7 * 24 * 3600)
        try await withStoreRunning(store) {
            try await store.migrate()
            try await store.audit(AuditEvent(at: Date(), kind: .signingKeyRotated, userID: nil, address: nil, detail: "admin"))
        }
        print(id)
    }
}

struct Purge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Purge accounts deleted more than 30 days ago, with all their data (for a timer).",
        discussion: """
            On PostgreSQL this runs as the maintenance role (--maintenance-database-url), the only role allowed to \
            purge; run it from a timer to keep that role's credentials out of the long-running server.
            """)

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let logger = Logger(label: "coffer-server")
        let store = try common.makeStore(logger: logger)
        guard let maintenance = try common.makeMaintenance(for: store, logger: logger) else {
            throw ServerSetupError.configuration("purging on PostgreSQL needs --maintenance-database-url")
        }
        let retention = ServerConfiguration(dataDirectory: common.dataDirectory).accountRetention
        try await withStoreRunning(store, maintenance) {
            try await store.migrate()
            print(try await AccountPurge.run(store: maintenance, now: Date(), retention: retention))
        }
    }
}

struct Audit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the newest audit events of every account, newest first (time, event, account, address, detail).",
        discussion: """
            On PostgreSQL this reads as the maintenance role (--maintenance-database-url).
            --alerts prints only the login alerts (login_alert: more than 5 failed logins of one account in 5 minutes) \
            found among the newest events read, and a count of them on standard error.
            """)

    @OptionGroup var common: CommonOptions
    @Option(help: "How many of the newest events to read, 1 to 100000 (default 50; 10000 with --alerts).") var limit: Int?
    @Flag(help: "Only the login alerts, with a count on standard error.") var alerts = false

    func run() async throws {
        let limit = limit ?? (alerts ? 10_000 : 50)
        guard (1...100_000).contains(limit) else {
            throw ServerSetupError.configuration("--limit must be a number from 1 to 100000")
        }
        let logger = Logger(label: "coffer-server")
        let store = try common.makeStore(logger: logger)
        guard let maintenance = try common.makeMaintenance(for: store, logger: logger) else {
            throw ServerSetupError.configuration("reading the audit log on PostgreSQL needs --maintenance-database-url")
        }
        let alerts = alerts
        try await withStoreRunning(store, maintenance) {
            try await store.migrate()
            let time = ISO8601DateFormatter()
            let events = try await maintenance.auditEvents(limit: limit).filter { !alerts || $0.kind == .loginAlert }
            for event in events {
                let fields = [
                    time.string(from: event.at), event.kind.rawValue, event.userID?.lowercasedString ?? "-",
                    event.address ?? "-", event.detail ?? "-",
                ]
                print(fields.joined(separator: "\t"))
            }
            if alerts {
                FileHandle.standardError.write(Data("login alerts: \(events.count) among the newest \(limit) events\n".utf8))
            }
        }
    }
}

/// Where the web vault's files are: given, or installed beside the executable (`<prefix>/share/coffer/web-vault` for
/// `<prefix>/bin/coffer-server`), or — for `swift run` and `.build/*/coffer-server` — the source tree's `Web/app`.
enum WebVaultFiles {
    static func locate(explicit: String?, environment: [String: String]) -> String {
        if let explicit = explicit ?? environment["COFFER_SERVER_WEB_VAULT_DIR"] { return explicit }
        let executable = (Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0]))
            .resolvingSymlinksInPath().deletingLastPathComponent()
        let installed = executable.appendingPathComponent("../share/coffer/web-vault").standardized.path
        if FileManager.default.fileExists(atPath: installed + "/index.html") { return installed }
        // .build/<triple>/<configuration>/coffer-server: the package root is three folders up.
        return executable.appendingPathComponent("../../../Web/app").standardized.path
    }
}

/// Runs `body` while the stores' connection pools (PostgreSQL) run beside it.
func withStoreRunning(
    _ store: any ServerStore, _ maintenance: (any MaintenanceStore)? = nil,
    _ body: @escaping @Sendable () async throws -> Void
) async throws {
    let postgres = store as? PostgresServerStore
    let postgresMaintenance = maintenance as? PostgresMaintenanceStore
    guard postgres != nil || postgresMaintenance != nil else {
        try await body()
        return
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
        if let postgres { group.addTask { await postgres.run() } }
        if let postgresMaintenance { group.addTask { await postgresMaintenance.run() } }
        defer { group.cancelAll() }
        try await body()
    }
}
