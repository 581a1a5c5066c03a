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
        let uuid = UUID(
            uuid: (
                id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10], id[11], id[12], id[13], id[14], id[15]
            ))
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

/// Writes a line at once: this bench's output is usually piped, where `print` would hold it back until exit.
func emit(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// A table row in `report`'s layout.
func row(_ label: String, _ value: String) {
    emit(column(label) + value)
}
