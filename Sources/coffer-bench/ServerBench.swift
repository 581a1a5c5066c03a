import AsyncHTTPClient
import CofferCrypto
import CofferKit
import CofferServer
import CofferServerStore
import CofferSync
import CofferSyncAPI
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `coffer-bench server` was asked to measure (see `ServerCommand`).
struct ServerBenchOptions: Sendable {
    var seconds = 10
    var clients = 32
    var backends = ["sqlite", "postgres"]
    var rounds = 3
    var scenarios: Set<BenchScenario> = Set(BenchScenario.allCases)
}

/// The parts of `coffer-bench server`, which `--scenario` can pick one of.
enum BenchScenario: String, CaseIterable, Sendable {
    case push, pull, scaling
}

/// Requests completed inside the measured window, with their median and 99th-percentile latency (seconds).
struct LoadResult: Sendable {
    var count: Int
    var errors: Int
    var firstError: String?
    var seconds: Double
    var p50: Double
    var p99: Double

    var rate: Double { Double(count) / seconds }

    init(count: Int, errors: Int, firstError: String?, seconds: Double, p50: Double, p99: Double) {
        self.count = count
        self.errors = errors
        self.firstError = firstError
        self.seconds = seconds
        self.p50 = p50
        self.p99 = p99
    }

    /// From every request's latency, sorted.
    init(errors: Int, firstError: String?, seconds: Double, sortedLatencies latencies: [Double]) {
        func percentile(_ fraction: Double) -> Double {
            guard !latencies.isEmpty else { return .nan }
            return latencies[min(latencies.count - 1, Int(Double(latencies.count) * fraction))]
        }
        self.init(
            count: latencies.count, errors: errors, firstError: firstError, seconds: seconds, p50: percentile(0.5),
            p99: percentile(0.99))
    }

    /// CPU time of this process per request, when it is the one serving (wrk's runs) or sending (in-process loads).
    var processorSecondsPerRequest: Double?
    /// CPU time of the load driver per request, when it runs in its own process (wrk).
    var driverSecondsPerRequest: Double?

    var summary: String {
        var text = String(format: "%7.0f req/s   p50 %6.2f ms   p99 %6.2f ms", rate, p50 * 1000, p99 * 1000)
        if let processorSecondsPerRequest { text += String(format: "   CPU %.2f ms/req", processorSecondsPerRequest * 1000) }
        if errors > 0 { text += "   \(errors) errors (\(firstError ?? "?"))" }
        return text
    }
}

/// Which backend a section measures, and what it needs to do so.
struct BenchBackend: Sendable {
    let title: String
    let store: any ServerStore
    /// The app role's URL for pgbench; nil on SQLite.
    let postgresURL: String?
}

/// Accounts made directly in the store with ids pgbench can rebuild from its client number (see `PGBenchScript`).
struct RawAccount: Sendable {
    let userID: UUID
    let family: UUID
}

/// Accounts registered over HTTP.
struct HTTPAccount: Sendable {
    let userID: UUID
    let token: String
}

struct ServerBenchRun: Sendable {
    let options: ServerBenchOptions
    /// Pull accounts hold this many items; each pull asks for 100 of them starting at 0, 100 or 200.
    static let pullItems = 300
    static let boxBytes = 512
    let warmup = 1.0
    let logger: Logger = {
        var logger = Logger(label: "coffer-bench")
        logger.logLevel = .error
        return logger
    }()
    /// Distinguishes this run's rows from earlier runs' in a long-lived database.
    let runTag = String(UUID().uuidString.lowercased().prefix(8))

    func run() async throws {
        emit(
            "coffer-bench server: \(options.clients) clients, \(options.seconds) s per scenario after \(Int(warmup)) s warm-up, "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores")
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: options.clients * 2)
        configuration.timeout.connect = .seconds(5)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let registrar = try Registrar()
            for backend in options.backends {
                if backend == "sqlite" {
                    try await sqlite(http: http, registrar: registrar)
                } else {
                    try await postgres(http: http, registrar: registrar)
                }
            }
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    // MARK: Backends

    private func sqlite(http: HTTPClient, registrar: Registrar) async throws {
        let directory = try temporaryDirectory("sqlite")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store: SQLiteServerStore
        do {
            store = try SQLiteServerStore(path: directory + "/server.sqlite")
        } catch {
            throw BenchError("cannot open the SQLite store: \(error)")
        }
        let backend = BenchBackend(title: "SQLite (one file, WAL, synchronous = FULL)", store: store, postgresURL: nil)
        try await measure(backend, http: http, registrar: registrar)
    }

    private func postgres(http: HTTPClient, registrar: Registrar) async throws {
        try await withBenchPostgres(connections: options.clients, logger: logger) { store, appURL, throwaway in
            let backend = BenchBackend(
                title: "PostgreSQL (app role, forced row-level security, \(options.clients) connections\(throwaway ? ", throwaway cluster with fsync=off" : ""))",
                store: store, postgresURL: appURL)
            try await measure(backend, http: http, registrar: registrar)
        }
    }

    // MARK: Scenarios

    private func measure(_ backend: BenchBackend, http: HTTPClient, registrar: Registrar) async throws {
        emit(backend.title)
        let directory = try temporaryDirectory("server")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await withBenchServer(store: backend.store, dataDirectory: directory, http: http, logger: logger) { base in
            try await scenarios(backend, base: base, http: http, registrar: registrar)
        }
    }

    private func scenarios(_ backend: BenchBackend, base: String, http: HTTPClient, registrar: Registrar) async throws {
        let store = backend.store
        let client = try SyncClient(server: base, http: http)
        let clients = options.clients
        var accounts: [HTTPAccount] = []
        for index in 0..<(2 * clients) {
            let auth = try await client.register(try registrar.request(email: "bench-\(runTag)-\(index)@bench.invalid"))
            guard let userID = UUID(uuidString: auth.user.id) else { throw BenchError("register: the server sent a malformed user id") }
            accounts.append(HTTPAccount(userID: userID, token: auth.accessToken))
        }
        let pushAccounts = Array(accounts[..<clients])
        let pullAccounts = Array(accounts[clients...])
        // The raw accounts: pgbench client c works as account offset+c, so their ids are made from that number.
        let rawPush = try await rawAccounts(store, registrar: registrar, offset: 0, count: clients)
        let rawPull = try await rawAccounts(store, registrar: registrar, offset: 100, count: clients)
        for account in pullAccounts.map(\.userID) + rawPull.map(\.userID) {
            _ = try await store.push(userID: account, writes: Self.writes(Self.pullItems), now: Date())
        }
        let http = HTTPLoad(http: http, base: base)
        let box = Data(SystemRandom().bytes(Self.boxBytes))
        if options.scenarios.contains(.push) {
            try await push(backend, base: base, http: http, box: box, accounts: pushAccounts, raw: rawPush)
        }
        if options.scenarios.contains(.pull) {
            try await pull(backend, base: base, client: client, http: http, box: box, accounts: pullAccounts, raw: rawPull)
        }
        if options.scenarios.contains(.scaling) {
            try await pullScaling(store, client: client, http: http, registrar: registrar)
        }
    }

    private func push(
        _ backend: BenchBackend, base: String, http: HTTPLoad, box: Data, accounts pushAccounts: [HTTPAccount],
        raw rawPush: [RawAccount]
    ) async throws {
        let store = backend.store
        emit("  push: each request 1 new \(Self.boxBytes)-byte item")
        let serverPush = try await load { worker, _ in
            let item = ItemRow(
                id: UUID(), kind: "note", revision: 1, updatedAt: UnixTime.milliseconds(Date()), deleted: false, box: box)
            let body = try WireJSON.encoder().encode(PushRequest(items: [PushItem(item: item, baseRevision: 0)]))
            _ = try await http.send(.POST, "/v1/sync/push", token: pushAccounts[worker].token, body: body)
        }
        row("    server over HTTP, in-process Swift client", serverPush.summary)
        let pushScript: @Sendable () throws -> String = {
            let placeholder = UUID(uuidString: "00000000-0000-4000-8000-000000000000")!
            let item = ItemRow(
                id: placeholder, kind: "note", revision: 1, updatedAt: UnixTime.milliseconds(Date()), deleted: false, box: box)
            let body = try WireJSON.encoder().encode(PushRequest(items: [PushItem(item: item, baseRevision: 0)]))
            // A fresh tag per run: every run pushes new item ids.
            return Wrk.pushScript(
                tokens: pushAccounts.map(\.token), body: String(decoding: body, as: UTF8.self),
                placeholder: placeholder.uuidString.lowercased(), tag: String(UUID().uuidString.lowercased().prefix(8)))
        }
        let storePush = try await load { worker, _ in
            // What ServerCore does for the request: authorize, push.
            let account = rawPush[worker]
            let now = Date()
            let counter = "token:\(account.family.uuidString.lowercased())"
            guard try await store.authorize(userID: account.userID, family: account.family, counter: counter, requests: 1, window: 60, now: now)
                .sessionActive
            else { throw BenchError("raw push: the session is missing") }
            _ = try await store.push(
                userID: account.userID,
                writes: [ItemWrite(
                    row: ItemRow(id: UUID(), kind: "note", revision: 1, updatedAt: UnixTime.milliseconds(now), deleted: false, box: box),
                    baseRevision: 0)],
                now: now)
        }
        row("    store calls in process (\(backend.postgresURL == nil ? "GRDB" : "postgres-nio"))", storePush.summary)
        try await compare(backend, scenario: .push, inProcess: serverPush, store: storePush, box: box, base: base, script: pushScript)
    }

    private func pull(
        _ backend: BenchBackend, base: String, client: SyncClient, http: HTTPLoad, box: Data,
        accounts pullAccounts: [HTTPAccount], raw rawPull: [RawAccount]
    ) async throws {
        let store = backend.store
        emit("  pull: changes?since=<0|100|200>&limit=100 of \(Self.pullItems) items")
        let pullCheck = try await client.changes(since: 0, limit: 100, accessToken: pullAccounts[0].token)
        guard pullCheck.items.count == 100, pullCheck.hasMore else { throw BenchError("pull: the first page does not hold 100 items") }
        let serverPull = try await load { worker, iteration in
            let since = ((worker + iteration) % 3) * 100
            _ = try await http.send(.GET, "/v1/sync/changes?since=\(since)&limit=100", token: pullAccounts[worker].token)
        }
        row("    server over HTTP, in-process Swift client", serverPull.summary)
        let storePull = try await load { worker, iteration in
            let account = rawPull[worker]
            let now = Date()
            let counter = "token:\(account.family.uuidString.lowercased())"
            guard try await store.authorize(userID: account.userID, family: account.family, counter: counter, requests: 1, window: 60, now: now)
                .sessionActive
            else { throw BenchError("raw pull: the session is missing") }
            let page = try await store.changes(userID: account.userID, since: Int64(((worker + iteration) % 3) * 100), limit: 100)
            guard page.items.count == 100 else { throw BenchError("raw pull: a page does not hold 100 items") }
        }
        row("    store calls in process (\(backend.postgresURL == nil ? "GRDB" : "postgres-nio"))", storePull.summary)
        try await compare(backend, scenario: .pull, inProcess: serverPull, store: storePull, box: box, base: base) {
            Wrk.pullScript(tokens: pullAccounts.map(\.token))
        }
    }

    /// The server under wrk for `options.seconds`, with the CPU time it took per request.
    private func wrkRun(_ wrk: Wrk, base: String, script: String) async throws -> LoadResult {
        let before = Self.processorSeconds()
        var result = try await wrk.run(script: script, base: base, connections: options.clients, seconds: options.seconds)
        // wrk runs in its own process, so this process's CPU time is the server's (and its database driver's).
        result.processorSecondsPerRequest = (Self.processorSeconds() - before) / Double(max(result.count, 1))
        return result
    }

    /// User and system CPU time this process has used, in seconds.
    static func processorSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The server under wrk (a C client, as pgbench is) next to its raw floor: pgbench on PostgreSQL, the in-process
    /// store calls on SQLite. On PostgreSQL the two take turns for `rounds` rounds and the medians are compared, so
    /// that load from elsewhere on a shared machine falls on both alike. Without wrk, the in-process client's figure
    /// stands in.
    private func compare(
        _ backend: BenchBackend, scenario: PGBenchScript.Scenario, inProcess: LoadResult, store: LoadResult, box: Data,
        base: String, script: @Sendable () throws -> String
    ) async throws {
        let wrk = Wrk.locate()
        if wrk == nil { row("    server over HTTP, wrk", "not installed (Debian: apt-get install -y wrk)") }
        let pgbench = backend.postgresURL == nil ? nil : PGBench.locate()
        if backend.postgresURL != nil, pgbench == nil { row("    pgbench", "not installed (Debian: apt-get install -y postgresql)") }
        if let wrk {
            // Warm-up: connections and the server's caches.
            _ = try await wrk.run(script: try script(), base: base, connections: options.clients, seconds: 1)
        }
        guard let url = backend.postgresURL, let pgbench else {
            var server = inProcess
            if let wrk {
                let result = try await wrkRun(wrk, base: base, script: try script())
                row("    server over HTTP, wrk (C client)", result.summary)
                server = result
            }
            let driver = wrk == nil ? "in-process client" : "wrk"
            row("    server (\(driver)) / store calls (goal >= 0.50)", String(format: "%.2f", server.rate / store.rate))
            return
        }
        let variables = PGBenchScript.variables(
            runTag: runTag, offset: scenario == .push ? 0 : 100, now: Date(), box: box)
        var servers: [LoadResult] = []
        var raws: [LoadResult] = []
        for round in 1...options.rounds {
            var line = ""
            if let wrk {
                let result = try await wrkRun(wrk, base: base, script: try script())
                servers.append(result)
                line = result.summary
            } else {
                servers.append(inProcess)
            }
            let raw = try await pgbench.run(
                script: PGBenchScript.text(scenario), variables: variables, url: url, clients: options.clients,
                seconds: options.seconds)
            raws.append(raw)
            if wrk != nil { row("    round \(round): server, wrk (C client)", line) }
            row("    round \(round): pgbench, the server's SQL", raw.summary)
        }
        func median(_ results: [LoadResult]) -> Double { results.map(\.rate).sorted()[results.count / 2] }
        let driver = wrk == nil ? "in-process client" : "wrk"
        row(
            "    server (\(driver)) / pgbench (target >= 0.50)",
            String(format: "%.2f   medians %.0f / %.0f req/s", median(servers) / median(raws), median(servers), median(raws)))
        if wrk != nil {
            row("    server (in-process client) / pgbench", String(format: "%.2f", inProcess.rate / median(raws)))
        }
        row("    server (\(driver)) / store calls", String(format: "%.2f", median(servers) / store.rate))
    }

    /// The same pull of 10 changes for one account holding 1,000 items, then 20,000 (seeded through the store).
    private func pullScaling(_ store: any ServerStore, client: SyncClient, http: HTTPLoad, registrar: Registrar) async throws {
        emit("  pull of the 10 newest changes, one account, median of 300 sequential requests")
        let auth = try await client.register(try registrar.request(email: "bench-\(runTag)-scaling@bench.invalid"))
        guard let userID = UUID(uuidString: auth.user.id) else { throw BenchError("register: the server sent a malformed user id") }
        var held = 0
        var medians: [Double] = []
        for (target, label) in [(1_000, "1,000"), (20_000, "20,000")] {
            var cursor: Int64 = 0
            while held < target {
                let batch = min(SyncLimits.maxPushItems, target - held)
                guard case .accepted(let next) = try await store.push(userID: userID, writes: Self.writes(batch), now: Date()) else {
                    throw BenchError("seeding: the store refused new items")
                }
                cursor = next
                held += batch
            }
            let since = cursor - 10
            let check = try await client.changes(since: since, limit: 100, accessToken: auth.accessToken)
            guard check.items.count == 10, !check.hasMore else { throw BenchError("pull scaling: expected exactly 10 changes") }
            // The same query through the store alone, alternating with the requests so that load hits both alike.
            var times: [Double] = []
            var storeTimes: [Double] = []
            for round in 0..<330 {
                let start = DispatchTime.now().uptimeNanoseconds
                _ = try await http.send(.GET, "/v1/sync/changes?since=\(since)&limit=100", token: auth.accessToken)
                let middle = DispatchTime.now().uptimeNanoseconds
                _ = try await store.changes(userID: userID, since: since, limit: 100)
                let end = DispatchTime.now().uptimeNanoseconds
                if round >= 30 {
                    times.append(Double(middle - start) / 1e9)
                    storeTimes.append(Double(end - middle) / 1e9)
                }
            }
            times.sort()
            storeTimes.sort()
            medians.append(times[times.count / 2])
            row(
                "    account holding \(label) items",
                String(
                    format: "%.2f ms (p99 %.2f ms), store call %.2f ms", times[times.count / 2] * 1000,
                    times[times.count * 99 / 100] * 1000, storeTimes[storeTimes.count / 2] * 1000))
        }
        row("    20,000 / 1,000 (target about 1)", String(format: "%.2f", medians[1] / medians[0]))
    }

    // MARK: Load

    /// Runs `request` in `options.clients` concurrent loops (see `concurrentLoad`).
    private func load(_ request: @escaping @Sendable (_ worker: Int, _ iteration: Int) async throws -> Void) async throws -> LoadResult {
        try await concurrentLoad(clients: options.clients, seconds: options.seconds, warmup: warmup, request)
    }

    // MARK: Setup helpers

    private func rawAccounts(_ store: any ServerStore, registrar: Registrar, offset: Int, count: Int) async throws -> [RawAccount] {
        var accounts: [RawAccount] = []
        for index in 0..<count {
            guard let userID = UUID(uuidString: PGBenchScript.userPrefix(runTag) + String(format: "%012d", offset + index)),
                  let family = UUID(uuidString: PGBenchScript.familyPrefix(runTag) + String(format: "%012d", offset + index))
            else { throw BenchError("cannot form the raw accounts' ids") }
            let now = Date()
            try await store.createUser(
                NewUser(
                    id: userID, email: "raw-\(runTag)-\(offset + index)@bench.invalid", createdAt: now,
                    authHash: "unused", vaultID: UUID(), slot: try registrar.slot(vaultID: UUID())))
            try await store.createSession(
                userID: userID, family: family, tokenID: UUID(), now: now, expiresAt: now.addingTimeInterval(86_400))
            accounts.append(RawAccount(userID: userID, family: family))
        }
        return accounts
    }

    /// `count` new items for seeding; they share one random box (the server cannot tell).
    static func writes(_ count: Int) -> [ItemWrite] {
        let now = UnixTime.milliseconds(Date())
        let box = Data(SystemRandom().bytes(boxBytes))
        return (0..<count).map { index in
            ItemWrite(
                row: ItemRow(id: UUID(), kind: "note", revision: 1, updatedAt: now + Int64(index), deleted: false, box: box),
                baseRevision: 0)
        }
    }

}

/// Runs `body` with coffer-server serving `store` in this process on a free loopback port (its base URL), then shuts
/// the server down, also when `body` throws. Production KDF limits and token checks; a rate limit that never bites and
/// a cheap auth hash, which only registration pays for.
func withBenchServer(
    store: any ServerStore, dataDirectory: String, http: HTTPClient, logger: Logger, sessionCheckInterval: TimeInterval = 1,
    _ body: (String) async throws -> Void
) async throws {
    let port = try freeLoopbackPort()
    var configuration = ServerConfiguration(
        host: "127.0.0.1", port: port, dataDirectory: dataDirectory, requestsPerMinute: 1_000_000_000,
        authHashIterations: 1_000, kdfLimits: .production)
    configuration.sessionCheckInterval = sessionCheckInterval
    let app = try await CofferServerApplication.build(configuration: configuration, store: store, logger: logger)
    let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
    let server = Task { try await group.run() }
    do {
        let base = "http://127.0.0.1:\(port)"
        try await waitUntilServing(base, http: http)
        try await body(base)
    } catch {
        await group.triggerGracefulShutdown()
        _ = await server.result
        throw error
    }
    await group.triggerGracefulShutdown()
    _ = await server.result
}

/// Waits until the server at `base` answers `/health`.
func waitUntilServing(_ base: String, http: HTTPClient) async throws {
    for _ in 0..<200 {
        var request = HTTPClientRequest(url: base + "/health")
        request.method = .GET
        if let response = try? await http.execute(request, timeout: .seconds(2)), response.status == .ok {
            _ = try? await response.body.collect(upTo: 1 << 16)
            return
        }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw BenchError("coffer-server did not start listening on \(base)")
}

/// A fresh 0700 directory for one measurement.
func temporaryDirectory(_ name: String) throws -> String {
    let path = NSTemporaryDirectory() + "coffer-bench-\(name)-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return path
}

/// Runs `request` in `clients` concurrent loops for `warmup` seconds and then `seconds`; counts the requests that
/// started after the warm-up and finished before the end, with this process's CPU time per request.
func concurrentLoad(
    clients: Int, seconds: Int, warmup: Double, _ request: @escaping @Sendable (_ worker: Int, _ iteration: Int) async throws -> Void
) async throws -> LoadResult {
    let begin = DispatchTime.now().uptimeNanoseconds
    let measureFrom = begin + UInt64(warmup * 1e9)
    let end = measureFrom + UInt64(seconds) * 1_000_000_000
    let results = try await withThrowingTaskGroup(of: LoadTally.self) { group in
        // This process's CPU time over the measured window.
        group.addTask {
            var tally = LoadTally()
            try await Task.sleep(for: .nanoseconds(measureFrom - min(measureFrom, DispatchTime.now().uptimeNanoseconds)))
            let before = ServerBenchRun.processorSeconds()
            try await Task.sleep(for: .nanoseconds(end - min(end, DispatchTime.now().uptimeNanoseconds)))
            tally.processorSeconds = ServerBenchRun.processorSeconds() - before
            return tally
        }
        for worker in 0..<clients {
            group.addTask {
                var result = LoadTally()
                var iteration = 0
                while true {
                    let start = DispatchTime.now().uptimeNanoseconds
                    if start >= end { break }
                    do {
                        try await request(worker, iteration)
                        let finish = DispatchTime.now().uptimeNanoseconds
                        if start >= measureFrom && finish <= end {
                            result.latencies.append(Double(finish - start) / 1e9)
                        }
                    } catch {
                        result.errors += 1
                        if result.firstError == nil { result.firstError = "\(error)" }
                        // A failing backend answers at once; do not spin.
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    iteration += 1
                }
                return result
            }
        }
        var all: [LoadTally] = []
        for try await result in group { all.append(result) }
        return all
    }
    let latencies = results.flatMap(\.latencies).sorted()
    var total = LoadResult(
        errors: results.reduce(0) { $0 + $1.errors }, firstError: results.lazy.compactMap(\.firstError).first,
        seconds: Double(seconds), sortedLatencies: latencies)
    total.processorSecondsPerRequest = results.reduce(0) { $0 + $1.processorSeconds } / Double(max(total.count, 1))
    if total.count == 0 { throw BenchError("no request succeeded: \(total.firstError ?? "unknown failure")") }
    return total
}

/// One load loop's requests.
struct LoadTally: Sendable {
    var latencies: [Double] = []
    var errors = 0
    var firstError: String?
    var processorSeconds = 0.0
}

/// Runs `body` with a running PostgreSQL store and the app role's URL: the database of COFFER_BENCH_POSTGRES_URL /
/// COFFER_BENCH_POSTGRES_ADMIN_URL (else the COFFER_TEST_ pair), or a throwaway cluster (`throwaway` true) started
/// with scripts/postgres.sh and stopped afterwards. Without either, says so and skips.
func withBenchPostgres(
    connections: Int, logger: Logger, _ body: (PostgresServerStore, String, Bool) async throws -> Void
) async throws {
    let environment = ProcessInfo.processInfo.environment
    var urls: (app: String, admin: String)?
    for prefix in ["COFFER_BENCH_POSTGRES", "COFFER_TEST_POSTGRES"] {
        if let app = environment["\(prefix)_URL"], let admin = environment["\(prefix)_ADMIN_URL"], !app.isEmpty, !admin.isEmpty {
            urls = (app, admin)
            break
        }
    }
    var cluster: ThrowawayCluster?
    if urls == nil {
        do {
            let started = try await ThrowawayCluster.start()
            cluster = started
            urls = (started.appURL, started.adminURL)
        } catch {
            emit("PostgreSQL: skipped: no COFFER_BENCH_POSTGRES_URL / COFFER_BENCH_POSTGRES_ADMIN_URL set, and \(error)")
            return
        }
    }
    guard let urls else { return }
    do {
        let store: PostgresServerStore
        do {
            store = try PostgresServerStore(url: urls.app, migrationURL: urls.admin, connections: connections, logger: logger)
        } catch {
            throw BenchError("PostgreSQL URL: \(error)")
        }
        let pool = Task { await store.run() }
        defer { pool.cancel() }
        try await body(store, urls.app, cluster != nil)
    } catch {
        try? await cluster?.stop()
        throw error
    }
    try await cluster?.stop()
}

/// Binds port 0 on 127.0.0.1 to learn a free port, then releases it for the server.
func freeLoopbackPort() throws -> Int {
    #if canImport(Glibc)
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard descriptor >= 0 else { throw BenchError("cannot open a socket to find a free port") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else { throw BenchError("cannot bind 127.0.0.1:0 to find a free port") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    guard named == 0 else { throw BenchError("cannot read the free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Registration bodies that pass the server's production KDF limits: one PBKDF2 stretch (210,000 iterations, the
/// least production accepts) is shared by every bench account; each gets its own vault id and wrapped key.
struct Registrar: Sendable {
    private let keys: SyncKeys
    private let header: SlotHeader
    private let kdf = PassphraseKDF.pbkdf2SHA256(iterations: 210_000)

    init() throws {
        header = SlotHeader.new(.passphrase, kdf: kdf)
        keys = try SyncKeys(passphrase: "coffer bench passphrase", kdf: kdf, salt: header.salt, limits: .production)
    }

    func slot(vaultID: UUID) throws -> WrappedSlot {
        let wrapped = try header.wrap(
            masterKey: SecretBytes(randomCount: 32), vaultID: withUnsafeBytes(of: vaultID.uuid) { Array($0) },
            kek: keys.keyEncryptionKey)
        let id = header.slotID
        guard id.count == 16 else { throw BenchError("a slot id is not 16 bytes") }
        let uuid = UUID(uuid: (
            id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10], id[11], id[12], id[13], id[14], id[15]))
        return WrappedSlot(
            id: uuid, kdf: KDFParameters(kdf), salt: Data(header.salt).base64EncodedString(), wrappedKey: wrapped.base64EncodedString())
    }

    func request(email: String) throws -> RegisterRequest {
        let vaultID = UUID()
        return RegisterRequest(email: email, authKey: keys.authKeyBase64, vaultID: vaultID, slot: try slot(vaultID: vaultID))
    }
}

/// A lean HTTP client for the load loops: the body goes out pre-encoded and the answer is collected but not decoded,
/// so that the client, sharing the machine's cores with the server, costs as little as it can.
struct HTTPLoad: Sendable {
    let http: HTTPClient
    let base: String

    @discardableResult
    func send(_ method: HTTPMethod, _ path: String, token: String, body: Data? = nil) async throws -> ByteBuffer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body {
            request.body = .bytes(ByteBuffer(bytes: body))
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        guard response.status == .ok else {
            throw BenchError("\(method) \(path.split(separator: "?").first ?? ""): HTTP \(response.status.code)")
        }
        return bytes
    }
}

// MARK: pgbench

/// The pgbench scripts: one pgbench transaction is one request's database work, statement for statement.
///
/// The statements are PostgresServerStore's, in the order ServerCore issues them, with the same transaction
/// boundaries postgres-nio draws (`BEGIN` and `COMMIT` are round trips of their own there too), sent in pgbench's
/// extended protocol as postgres-nio sends them. Every request starts with `authorize`, a transaction: set_config,
/// then `coffer_authorize` (the rate counter and the session check, for the transaction's user). A push then runs
/// `push`, a transaction: set_config, the change_seq update that locks the user's row, the SELECT … FOR UPDATE of the
/// pushed ids, the item upsert. A pull runs `changes`, a transaction: set_config, then `coffer_feed` (at most 101 rows
/// by seq).
///
/// What differs, by necessity: the ids come from pgbench's client number (`<tag>-0000-4000-8000-<n>` for account n,
/// `<tag>-0001-…` for its session family), built with `||` and `lpad` in the statement instead of bound as values;
/// "now" and the rate window are fixed for the run; the pushed box is the same 512 bytes each time, sent as text.
enum PGBenchScript {
    enum Scenario { case push, pull }

    static func userPrefix(_ tag: String) -> String { "\(tag)-0000-4000-8000-" }
    static func familyPrefix(_ tag: String) -> String { "\(tag)-0001-4000-8000-" }

    static func variables(runTag: String, offset: Int, now: Date, box: Data) -> [String: String] {
        let milliseconds = UnixTime.milliseconds(now)
        return [
            "user_prefix": userPrefix(runTag), "family_prefix": familyPrefix(runTag), "offset": "\(offset)",
            "now_ms": "\(milliseconds)", "window_start": "\(CounterWindow.start(now, window: 60))", "n": "0",
            "box": "\\x" + box.map { String(format: "%02x", $0) }.joined(),
        ]
    }

    static func text(_ scenario: Scenario) -> String {
        let user = "(:user_prefix || lpad(:uid::text, 12, '0'))"
        let family = "(:family_prefix || lpad(:uid::text, 12, '0'))"
        let timestamp = "(TIMESTAMPTZ 'epoch' + :now_ms::bigint * INTERVAL '1 millisecond')"
        var lines = ["\\set uid :client_id + :offset"]
        switch scenario {
        case .push: lines.append("\\set n :n + 1")
        case .pull: lines.append("\\set since random(0, 2) * 100")
        }
        // ServerCore.authenticate → store.authorize(counter: "token:<hash of sid>", window: 60).
        lines += [
            "BEGIN;",
            "SELECT set_config('app.user_id', \(user), true);",
            """
            SELECT * FROM coffer_authorize(\(family)::uuid, 'token:' || \(family), :window_start::bigint, :now_ms::bigint);
            """,
            "COMMIT;",
        ]
        switch scenario {
        case .push:
            // ServerCore.push → store.push.
            let item = "(:item_prefix || lpad(:client_id::text, 4, '0') || '-4000-8000-' || lpad(:n::text, 12, '0'))::uuid"
            lines += [
                "BEGIN;",
                "SELECT set_config('app.user_id', \(user), true);",
                """
                UPDATE users SET change_seq = change_seq + 1
                WHERE id = \(user)::uuid AND deleted_at IS NULL RETURNING change_seq \\gset
                """,
                """
                SELECT id, kind, revision, updated_at, deleted, box, meta, seq, (extract(epoch FROM stored_at) * 1000)::bigint
                FROM items WHERE user_id = \(user)::uuid AND id = ANY(ARRAY[\(item)]) FOR UPDATE;
                """,
                """
                INSERT INTO items (user_id, id, kind, revision, updated_at, deleted, box, size, meta, seq, stored_at)
                VALUES (\(user)::uuid, \(item), 'note', 1, :now_ms, false, :box::bytea, 512, NULL, :change_seq, \(timestamp))
                ON CONFLICT (user_id, id) DO UPDATE SET kind = EXCLUDED.kind, revision = EXCLUDED.revision,
                    updated_at = EXCLUDED.updated_at, deleted = EXCLUDED.deleted, box = EXCLUDED.box,
                    size = EXCLUDED.size, meta = EXCLUDED.meta, seq = EXCLUDED.seq,
                    stored_at = EXCLUDED.stored_at;
                """,
                "COMMIT;",
            ]
        case .pull:
            // ServerCore.changes → store.changes(since:limit: 100), which fetches limit + 1 rows.
            lines += [
                "BEGIN;",
                "SELECT set_config('app.user_id', \(user), true);",
                "SELECT * FROM coffer_feed(:since::bigint, 101);",
                "COMMIT;",
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// pgbench, run against the app role with `-n -M extended -c N -j 2 -T seconds`, per-transaction log for latencies.
struct PGBench: Sendable {
    let executable: String

    static func locate() -> PGBench? {
        let candidates = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .sorted { $0.compare($1, options: .numeric) == .orderedDescending }
            .map { "/usr/lib/postgresql/\($0)/bin/pgbench" }
            + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/pgbench" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }.map(PGBench.init)
    }

    func run(script: String, variables: [String: String], url: String, clients: Int, seconds: Int) async throws -> LoadResult {
        let directory = NSTemporaryDirectory() + "coffer-bench-pgbench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scriptPath = directory + "/script.sql"
        try Data(script.utf8).write(to: URL(fileURLWithPath: scriptPath))
        // Each run pushes fresh item ids, so a second run inserts as the first did instead of updating its rows.
        var variables = variables
        variables["item_prefix"] = String(UUID().uuidString.lowercased().prefix(8)) + "-"
        var arguments = [
            "-n", "-M", "extended", "-c", "\(clients)", "-j", "\(min(2, clients))", "-T", "\(seconds)", "-f", scriptPath,
            "-l", "--log-prefix", directory + "/log",
        ]
        for (name, value) in variables.sorted(by: { $0.key < $1.key }) { arguments += ["-D", "\(name)=\(value)"] }
        arguments.append(url)
        let output = directory + "/out"
        let status = try await Self.spawn(executable, arguments: arguments, output: output)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0, let tpsLine = text.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
              let tps = Double(tpsLine.dropFirst(6).prefix { $0 != " " })
        else {
            let reason = text.split(separator: "\n").first { $0.contains("error") || $0.contains("ERROR") || $0.contains("FATAL") }
            throw BenchError("pgbench failed (status \(status)): \(reason.map(String.init) ?? "see its output")")
        }
        let failed = text.split(separator: "\n").first { $0.hasPrefix("number of failed transactions:") }
            .flatMap { $0.split(separator: " ").dropFirst(4).first.flatMap { Int($0) } } ?? 0
        var latencies: [Double] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory) where file.hasPrefix("log") {
            let log = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
            for line in log.split(separator: "\n") {
                // client_id transaction_no latency_us script_no epoch epoch_us
                let fields = line.split(separator: " ")
                if fields.count >= 3, let microseconds = Double(fields[2]) { latencies.append(microseconds / 1e6) }
            }
        }
        latencies.sort()
        // pgbench's own rate (connection time excluded) rather than the log's count, so it is pgbench's number.
        var result = LoadResult(
            errors: failed, firstError: failed > 0 ? "failed transactions" : nil, seconds: Double(seconds),
            sortedLatencies: latencies)
        result.count = Int((tps * Double(seconds)).rounded())
        return result
    }

    /// Runs a process with stdout and stderr to `output` and returns its exit status, waiting on a dispatch thread
    /// rather than one of the concurrency pool's. posix_spawn directly: the child must start with no signal blocked
    /// and default handlers, or it inherits this process's threads' masks (NIO's, the pool's), and then pgbench's
    /// `-T` alarm never fires and a PostgreSQL started through pg_ctl cannot be stopped.
    static func spawn(_ executable: String, arguments: [String], output: String, environment: [String: String] = [:]) async throws -> Int32 {
        let descriptor = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw BenchError("cannot write \(output)") }
        defer { close(descriptor) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, descriptor, 1)
        posix_spawn_file_actions_adddup2(&actions, descriptor, 2)
        // Nothing else of this process's may leak in: wrk sizes its event loop for the descriptors it opens itself
        // and fails to connect on any numbered above that. glibc's closefrom action is not in Swift's Glibc module.
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGALRM, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw BenchError("cannot start \(executable) (errno \(spawned))") }
        let child = pid
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var status: Int32 = 0
                while waitpid(child, &status, 0) < 0 && errno == EINTR {}
                // WIFEXITED / WEXITSTATUS; a signal death reads as 128 + signal, as shells report it.
                continuation.resume(returning: status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F))
            }
        }
    }
}

/// A PostgreSQL cluster of scripts/postgres.sh in a temporary directory, for runs without database URLs.
struct ThrowawayCluster: Sendable {
    let script: String
    let directory: String
    let appURL: String
    let adminURL: String

    static func start() async throws -> ThrowawayCluster {
        guard let script = locateScript() else {
            throw BenchError("scripts/postgres.sh was not found (run from the repository)")
        }
        let directory = "/tmp/coffer-bench-pg-\(UUID().uuidString.prefix(8))"
        let port = try freeLoopbackPort()
        let output = NSTemporaryDirectory() + "coffer-bench-pg-\(UUID().uuidString).out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let status = try await PGBench.spawn(
            "/usr/bin/env", arguments: ["bash", script, "start", directory], output: output,
            environment: ["COFFER_PG_PORT": "\(port)"])
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        guard status == 0, let app = values["COFFER_TEST_POSTGRES_URL"], let admin = values["COFFER_TEST_POSTGRES_ADMIN_URL"] else {
            try? FileManager.default.removeItem(atPath: directory)
            let reason = text.split(separator: "\n").last.map(String.init) ?? "no output"
            throw BenchError("scripts/postgres.sh could not start a cluster: \(reason)")
        }
        return ThrowawayCluster(script: script, directory: directory, appURL: app, adminURL: admin)
    }

    func stop() async throws {
        let output = NSTemporaryDirectory() + "coffer-bench-pg-\(UUID().uuidString).out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        _ = try await PGBench.spawn("/usr/bin/env", arguments: ["bash", script, "stop", directory], output: output)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// scripts/postgres.sh in the working directory or above the executable (`.build*/…/coffer-bench`).
    private static func locateScript() -> String? {
        var candidates = [FileManager.default.currentDirectoryPath + "/scripts/postgres.sh"]
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            candidates.append(directory.appendingPathComponent("scripts/postgres.sh").path)
            directory = directory.deletingLastPathComponent()
        }
        return candidates.first { FileManager.default.isReadableFile(atPath: $0) }
    }
}

/// Writes a line at once: this bench's output is usually piped, where `print` would hold it back until exit.
func emit(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// A table row in `report`'s layout.
func row(_ label: String, _ value: String) {
    emit(label.padding(toLength: 52, withPad: " ", startingAt: 0) + value)
}
