import AsyncHTTPClient
import CofferCrypto
import CofferKit
import CofferServer
import CofferServerStore
import CofferSync
import CofferSyncAPI
import Crypto
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
    /// A smoke run (`--smoke`): a short warm-up, and small accounts for the scaling scenario.
    var smoke = false
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
    var warmup: Double { options.smoke ? 0.2 : 1.0 }
    let logger: Logger = {
        var logger = Logger(label: "coffer-bench")
        logger.logLevel = .error
        return logger
    }()
    /// Distinguishes this run's rows from earlier runs' in a long-lived database.
    let runTag = String(UUID().lowercasedString.prefix(8))

    func run() async throws {
        emit(
            "coffer-bench server: \(options.clients) clients, \(options.seconds) s per scenario after \(String(format: "%g", warmup)) s warm-up, "
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
                title:
                    "PostgreSQL (app role, forced row-level security, \(options.clients) connections\(throwaway ? ", throwaway cluster with fsync=off" : ""))",
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
        let client = try SyncClient(server: base, http: http, retry: .never)
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
                placeholder: placeholder.lowercasedString, tag: String(UUID().lowercasedString.prefix(8)))
        }
        let storePush = try await load { worker, _ in
            // What ServerCore does for the request: authorize, push.
            let account = rawPush[worker]
            let now = Date()
            let counter = "token:\(account.family.lowercasedString)"
            guard
                try await store.authorize(userID: account.userID, family: account.family, counter: counter, requests: 1, window: 60, now: now)
                    .sessionActive
            else { throw BenchError("raw push: the session is missing") }
            _ = try await store.push(
                userID: account.userID,
                writes: [
                    ItemWrite(
                        row: ItemRow(id: UUID(), kind: "note", revision: 1, updatedAt: UnixTime.milliseconds(now), deleted: false, box: box),
                        baseRevision: 0)
                ],
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
            let counter = "token:\(account.family.lowercasedString)"
            guard
                try await store.authorize(userID: account.userID, family: account.family, counter: counter, requests: 1, window: 60, now: now)
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
        guard let actingKey = (backend.store as? PostgresServerStore)?.actingKey else {
            throw BenchError("the PostgreSQL store has not read its server key (migrate() first)")
        }
        let variables = PGBenchScript.variables(
            runTag: runTag, offset: scenario == .push ? 0 : 100, now: Date(), box: box,
            actingKey: actingKey.withUnsafeBytes { Data($0) })
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
        let (warmupRounds, measuredRounds) = options.smoke ? (3, 10) : (30, 300)
        emit("  pull of the 10 newest changes, one account, median of \(measuredRounds) sequential requests")
        let auth = try await client.register(try registrar.request(email: "bench-\(runTag)-scaling@bench.invalid"))
        guard let userID = UUID(uuidString: auth.user.id) else { throw BenchError("register: the server sent a malformed user id") }
        var held = 0
        var medians: [Double] = []
        let sizes = options.smoke ? [100, 2_000] : [1_000, 20_000]
        for target in sizes {
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
            for round in 0..<(warmupRounds + measuredRounds) {
                let start = DispatchTime.now().uptimeNanoseconds
                _ = try await http.send(.GET, "/v1/sync/changes?since=\(since)&limit=100", token: auth.accessToken)
                let middle = DispatchTime.now().uptimeNanoseconds
                _ = try await store.changes(userID: userID, since: since, limit: 100)
                let end = DispatchTime.now().uptimeNanoseconds
                if round >= warmupRounds {
                    times.append(Double(middle - start) / 1e9)
                    storeTimes.append(Double(end - middle) / 1e9)
                }
            }
            times.sort()
            storeTimes.sort()
            medians.append(times[times.count / 2])
            row(
                "    account holding \(target.formatted()) items",
                String(
                    format: "%.2f ms (p99 %.2f ms), store call %.2f ms", times[times.count / 2] * 1000,
                    times[times.count * 99 / 100] * 1000, storeTimes[storeTimes.count / 2] * 1000))
        }
        row("    \(sizes[1].formatted()) / \(sizes[0].formatted()) (target about 1)", String(format: "%.2f", medians[1] / medians[0]))
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
