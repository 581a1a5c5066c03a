@testable import CofferServer
import CofferServerStore
import CofferServerTestSupport
import CofferSyncAPI
import CofferTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing

/// What the server does while its database fails over: every wait for the database is bounded, a failure is a 503
/// with `Retry-After`, and `/health` says whether the database takes writes.
@Suite("Failover: bounded waits and health")
struct FailoverTests {
    /// A wait that ignores cancellation, as a query on a frozen primary's socket does, until `open()`.
    final class Gate: Sendable {
        private let waiters = Mutex<[CheckedContinuation<Void, Never>]>([])
        private let opened = Mutex(false)

        func wait() async {
            await withCheckedContinuation { continuation in
                let already = opened.withLock { $0 }
                if already { continuation.resume() } else { waiters.withLock { $0.append(continuation) } }
            }
        }

        func open() {
            opened.withLock { $0 = true }
            for waiter in waiters.withLock({ list in
                defer { list = [] }; return list
            }) { waiter.resume() }
        }
    }

    struct Failure: Error, Equatable {}

    /// Without the deadline the operation waits on the gate forever and the time limit fails the test.
    @Test("a wait that ignores cancellation is answered `unavailable` at the deadline", .timeLimit(.minutes(2)))
    func deadlinePasses() async throws {
        let gate = Gate()
        defer { gate.open() }
        await #expect(throws: ServerStoreError.unavailable("the database did not answer within 0.3 seconds")) {
            try await OperationDeadline.run(.milliseconds(300)) {
                await gate.wait()
                return 1
            }
        }
    }

    @Test("an operation within the deadline gives its value or its own error; no deadline runs it as it is")
    func deadlineKept() async throws {
        #expect(try await OperationDeadline.run(.seconds(600)) { 42 } == 42)
        await #expect(throws: Failure()) { try await OperationDeadline.run(.seconds(600)) { () async throws -> Int in throw Failure() } }
        #expect(try await OperationDeadline.run(nil) { "direct" } == "direct")
    }

    @Test("cancelling the caller cancels the operation", .timeLimit(.minutes(2)))
    func deadlineCancelled() async throws {
        let started = Gate()
        let task = Task {
            try await OperationDeadline.run(.seconds(3600)) { () async throws -> Int in
                started.open()
                try await Task.sleep(for: .seconds(3600))
                return 1
            }
        }
        await started.wait()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    /// A PostgreSQL that takes the connection and never answers, like a frozen primary: the pool's connection attempt
    /// waits on the startup message, and postgres-nio keeps the lease request queued for a minute.
    @Test("a database that never answers: a read and the health check come back within their bounds", .timeLimit(.minutes(2)))
    func frozenDatabase() async throws {
        let (port, socket) = try TestSupport.silentPort()
        defer { TestSupport.release(socket) }
        var quiet = Logger(label: "test.frozen")
        quiet.logLevel = .critical
        let store = try PostgresServerStore(
            url: "postgres://coffer_app@127.0.0.1:\(port)/coffer", migrationURL: nil, operationTimeout: .seconds(1), logger: quiet)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await store.run() }
            defer { group.cancelAll() }
            // The pool alone would give up after a minute, with another message.
            await #expect(throws: ServerStoreError.unavailable("the database did not answer within 1.0 seconds")) {
                _ = try await store.networks()
            }
            #expect(await store.health() == .unreachable)
        }
    }

    @Test("a database that takes writes is reported writable", arguments: Backend.allCases)
    func writable(backend: Backend) async throws {
        try await backend.withStore { store in
            #expect(await store.health() == .writable)
        }
    }

    @Test("/health answers 200 with the database's state, and a store failure is 503 with Retry-After", arguments: Backend.allCases)
    func health(backend: Backend) async throws {
        try await withServer(backend) { api, _ in
            let answer = try await api.send(.get, "/health")
            #expect(answer.status == .ok)
            #expect(answer.json?["status"] as? String == "ok" && answer.json?["database"] as? String == "writable")
        }
        let unavailable = APIError.unavailable
        #expect(unavailable.status == .serviceUnavailable && unavailable.headers[.retryAfter] == "1")
        for health in [DatabaseHealth.readOnly, .unreachable] {
            let error = APIError.databaseUnavailable(health)
            #expect(error.status == .serviceUnavailable && error.code == "database_unavailable")
            #expect(error.headers[.retryAfter] == "1")
        }
    }

    @Test("the health probe asks a database that never answers once per interval and says unreachable", .timeLimit(.minutes(2)))
    func probe() async throws {
        let (port, socket) = try TestSupport.silentPort()
        defer { TestSupport.release(socket) }
        var quiet = Logger(label: "test.frozen")
        quiet.logLevel = .critical
        let store = try PostgresServerStore(url: "postgres://coffer_app@127.0.0.1:\(port)/coffer", migrationURL: nil, logger: quiet)
        let probe = HealthProbe(store: store, freshness: .seconds(600))
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await store.run() }
            defer { group.cancelAll() }
            let answers = await withTaskGroup(of: DatabaseHealth.self) { askers in
                for _ in 0..<50 { askers.addTask { await probe.health() } }
                return await askers.reduce(into: [DatabaseHealth]()) { $0.append($1) }
            }
            #expect(answers == Array(repeating: .unreachable, count: 50))
        }
    }
}

/// The client's address behind a load balancer: believed only from a trusted proxy, read from the right.
@Suite("Trusted proxies")
struct TrustedProxyTests {
    @Test(
        "networks parse and match",
        arguments: [
            ("10.0.0.0/8", "10.255.1.2", true), ("10.0.0.0/8", "11.0.0.1", false), ("192.0.2.7", "192.0.2.7", true),
            ("192.0.2.7", "192.0.2.8", false), ("2001:db8::/32", "2001:db8::1", true), ("2001:db8::/32", "2001:db9::1", false),
            ("127.0.0.1", "::ffff:127.0.0.1", true), ("0.0.0.0/0", "203.0.113.5", true), ("0.0.0.0/0", "2001:db8::1", false),
            ("192.0.2.128/25", "192.0.2.127", false), ("192.0.2.128/25", "192.0.2.200", true), ("::/0", "::1", true),
        ])
    func matches(network: String, address: String, expected: Bool) throws {
        let parsed = try #require(IPNetwork(network))
        #expect(parsed.contains(address) == expected)
    }

    @Test(
        "anything but an address or network is refused",
        arguments: [
            "", "host.example", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "::/129", " 10.0.0.1", "10.0.0.1 ", "10.0.0.0/8/8",
            "10.0.0.0/０", "1.2.3", "::ffff:1.2.3.4.5",
        ])
    func refused(text: String) {
        #expect(IPNetwork(text) == nil)
    }

    @Test(
        "the client is the rightmost address no trusted proxy added; from anyone else the header is ignored",
        arguments: [
            ("198.51.100.9", ["203.0.113.1"], "198.51.100.9"),
            ("10.0.0.2", ["203.0.113.1"], "203.0.113.1"),
            ("10.0.0.2", ["192.0.2.66, 203.0.113.1"], "203.0.113.1"),
            ("10.0.0.2", ["203.0.113.1, 10.0.0.7"], "203.0.113.1"),
            ("10.0.0.2", ["203.0.113.1", "10.0.0.7"], "203.0.113.1"),
            ("10.0.0.2", ["not-an-address"], "10.0.0.2"),
            ("10.0.0.2", ["203.0.113.1, garbage"], "10.0.0.2"),
            ("10.0.0.2", ["garbage, 203.0.113.1"], "203.0.113.1"),
            ("10.0.0.2", ["10.0.0.3, 10.0.0.4"], "10.0.0.3"),
            ("10.0.0.2", [], "10.0.0.2"),
        ])
    func clientAddress(peer: String, forwarded: [String], expected: String) throws {
        let proxies = TrustedProxies(networks: [try #require(IPNetwork("10.0.0.0/8"))])
        #expect(proxies.clientAddress(peer: peer, forwardedFor: forwarded) == expected)
    }

    @Test("a trusted proxy's connections count only towards the total")
    func connectionLimits() throws {
        let limits = ConnectionLimits(perAddress: 2, total: 5, proxies: TrustedProxies(networks: [try #require(IPNetwork("127.0.0.1"))]))
        #expect((0..<4).allSatisfy { _ in limits.admit("127.0.0.1") })
        #expect(limits.admit("192.0.2.1") && limits.admit("192.0.2.1") == false)
        #expect(limits.admit("127.0.0.1") == false)
    }

    /// Per-address limits, over real sockets from 127.0.0.1: trusted, each forwarded client has its own budget;
    /// untrusted, a forged header changes nothing.
    @Test("per-address limits count the forwarded client only behind a trusted proxy", arguments: [true, false])
    func limits(trusted: Bool) async throws {
        var configuration = try testConfiguration(clock: TestClock(Date()))
        configuration.addressRequestsPerMinute = 2
        if trusted { configuration.trustedProxies = [try #require(IPNetwork("127.0.0.1"))] }
        let settings = configuration
        try await Backend.sqlite.withStore { store in
            let router = try await CofferServerApplication.router(configuration: settings, store: store, logger: Logger(label: "test"))
            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
            try await app.test(.live) { client in
                func prelogin(from address: String) async throws -> HTTPResponse.Status {
                    var headers: HTTPFields = [.contentType: "application/json"]
                    headers[.xForwardedFor] = address
                    let body = ByteBuffer(string: #"{"email":"someone@example.org"}"#)
                    return try await client.execute(uri: "/v1/auth/prelogin", method: .post, headers: headers, body: body) { $0.status }
                }
                var statuses: [HTTPResponse.Status] = []
                for address in ["198.51.100.1", "198.51.100.1", "198.51.100.1", "198.51.100.2"] {
                    statuses.append(try await prelogin(from: address))
                }
                #expect(statuses == [.ok, .ok, .tooManyRequests, trusted ? .ok : .tooManyRequests])
            }
        }
    }
}
