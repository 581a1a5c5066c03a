import AsyncHTTPClient
@_spi(Sync) import CofferKit
import CofferServer
import CofferServerStore
import CofferServerTestSupport
import CofferSync
import CofferSyncAPI
import CofferTestSupport
import CofferVault
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

/// A load balancer in front of a live server that misbehaves on cue: it answers 503 itself to the next requests, or
/// passes the next push through and loses the answer (a 502, as a load balancer answers when its server's connection
/// dropped after the request was sent).
final class FlakyFront: Sendable {
    private struct State {
        var busy = 0
        var loseNextPush = false
        var seen: [String] = []
    }

    private let upstream: String
    private let state = Mutex(State())
    private let http = HTTPClient(eventLoopGroupProvider: .singleton)

    init(upstream: String) {
        self.upstream = upstream
    }

    /// Answers the next `count` requests with 503 (and `Retry-After: 0`).
    func busy(_ count: Int) { state.withLock { $0.busy = count } }
    /// Loses the answer to the next push, after the server took it.
    func loseNextPushAnswer() { state.withLock { $0.loseNextPush = true } }
    /// Method and path of every request that reached the front.
    var seen: [String] { state.withLock { $0.seen } }

    func shutdown() async throws { try await http.shutdown() }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        for method in [HTTPRequest.Method.get, .post, .delete] {
            router.on("**", method: method) { request, _ in try await self.handle(request) }
        }
        return router
    }

    private func handle(_ request: Request) async throws -> Response {
        let path = request.uri.path
        let (busy, lose) = state.withLock { state -> (Bool, Bool) in
            state.seen.append("\(request.method.rawValue) \(path)")
            if state.busy > 0 {
                state.busy -= 1
                return (true, false)
            }
            let lose = state.loseNextPush && path == "/v1/sync/push"
            if lose { state.loseNextPush = false }
            return (false, lose)
        }
        if busy {
            return Response(
                status: .serviceUnavailable, headers: [.contentType: "application/json", .retryAfter: "0"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"error":"unavailable","message":"busy"}"#)))
        }
        var forwarded = HTTPClientRequest(url: upstream + request.uri.description)
        forwarded.method = .init(rawValue: request.method.rawValue)
        for field in request.headers where [.authorization, .contentType, .accept].contains(field.name) {
            forwarded.headers.add(name: field.name.rawName, value: field.value)
        }
        forwarded.body = .bytes(try await request.body.collect(upTo: 64 << 20))
        let answer = try await http.execute(forwarded, timeout: .seconds(60))
        let body = try await answer.body.collect(upTo: 64 << 20)
        if lose { return Response(status: .badGateway) }
        var headers: HTTPFields = [:]
        if let type = answer.headers.first(name: "Content-Type") { headers[.contentType] = type }
        return Response(status: .init(code: Int(answer.status.code)), headers: headers, body: ResponseBody(byteBuffer: body))
    }

    /// Runs `body` with a front listening on 127.0.0.1 before `upstream`.
    static func with(upstream: String, _ body: @escaping @Sendable (FlakyFront, String) async throws -> Void) async throws {
        let front = FlakyFront(upstream: upstream)
        let app = Application(router: front.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            try await body(front, "http://127.0.0.1:\(port)")
        }
        try await front.shutdown()
    }
}

@Suite("Sync client retries")
struct SyncRetryTests {
    /// The notices a policy gave, for checking what a user was told.
    final class Notices: Sendable {
        private let list = Mutex<[RetryPolicy.Notice]>([])
        var all: [RetryPolicy.Notice] { list.withLock { $0 } }

        func policy(window: Duration = .seconds(30)) -> RetryPolicy {
            RetryPolicy(window: window) { [self] notice in list.withLock { $0.append(notice) } }
        }
    }

    @Test("a 503 is retried with backoff until the server answers, and each wait is told")
    func busyThenServed() async throws {
        try await SyncTesting.withLiveServer(.sqlite) { server, _, _ in
            try await FlakyFront.with(upstream: server) { front, url in
                let notices = Notices()
                let client = try SyncClient(server: url, retry: notices.policy())
                front.busy(3)
                _ = try await client.prelogin(email: "someone@example.org")
                #expect(front.seen.count == 4)
                #expect(notices.all.map(\.reason) == Array(repeating: .busy(status: 503), count: 3))
                #expect(notices.all.allSatisfy { $0.delay <= RetryPolicy.longestDelay * 1.2 })
            }
        }
    }

    @Test("a request that may not be sent twice is not retried after a 503; every retry stops at the window")
    func notResent() async throws {
        try await SyncTesting.withLiveServer(.sqlite) { server, _, _ in
            try await FlakyFront.with(upstream: server) { front, url in
                let client = try SyncClient(server: url, retry: Notices().policy())
                front.busy(1)
                let (registration, _) = try TestAccount.registration()
                await #expect(throws: SyncClientError.server(status: 503, code: "unavailable", message: "busy")) {
                    _ = try await client.register(registration)
                }
                #expect(front.seen == ["POST /v1/auth/register"])

                let impatient = try SyncClient(server: url, retry: Notices().policy(window: .milliseconds(600)))
                front.busy(1000)
                await #expect(throws: SyncClientError.self) { _ = try await impatient.prelogin(email: "someone@example.org") }
                #expect(front.seen.count <= 1 + 4)
            }
        }
    }

    @Test("a refused first contact is reported at once; after the server answered once, a refusal is retried")
    func refusedAfterContact() async throws {
        let (port, socket) = try TestSupport.refusingPort()
        defer { TestSupport.release(socket) }
        let notices = Notices()
        let client = try SyncClient(server: "http://127.0.0.1:\(port)", retry: notices.policy(window: .seconds(2)))
        await #expect(throws: SyncClientError.self) { _ = try await client.prelogin(email: "someone@example.org") }
        #expect(notices.all.isEmpty)
        #expect(SyncClient.reach(HTTPClientError.connectTimeout) == .unsent)
        #expect(SyncClient.reach(IOError(errnoCode: ECONNREFUSED, reason: "connect")) == .unsent)
        #expect(SyncClient.reach(HTTPClientError.remoteConnectionClosed) == .interrupted)
        #expect(SyncClient.reach(IOError(errnoCode: ECONNRESET, reason: "read")) == .interrupted)
        #expect(SyncClient.reach(HTTPClientError.readTimeout) == .other)
    }

    /// The push lands on the server and its answer is lost (502 from the front). The client sends it again: the
    /// server refuses the copy as stale, the device pulls its own items back, and nothing is duplicated or lost.
    @Test("a push whose answer was lost is sent again safely", arguments: Backend.allCases)
    func lostPushAnswer(backend: Backend) async throws {
        try await SyncTesting.withLiveServer(backend) { server, _, _ in
            try await FlakyFront.with(upstream: server) { front, url in
                let notices = Notices()
                let client = try SyncClient(server: url, retry: notices.policy())
                let device = try Coffer.initialize(at: try SyncTesting.location())
                _ = try device.vault.add(try SyncTesting.note("Before", "one"))
                let session = SyncSession(coffer: device, client: client)
                let email = "lost-\(UUID().uuidString.prefix(8).lowercased())@example.org"
                try await session.register(email: email, passphrase: SyncTesting.passphrase, kdf: SyncTesting.kdf)
                _ = try await session.sync()

                let added = try device.vault.add(try SyncTesting.note("During", "two"))
                front.loseNextPushAnswer()
                _ = try await session.sync()
                #expect(notices.all.contains { $0.reason == .busy(status: 502) })
                let pushes = front.seen.filter { $0 == "POST /v1/sync/push" }.count
                #expect(pushes >= 3)

                _ = try await session.sync()
                let other = try await SyncSession.login(
                    location: try SyncTesting.location(), client: try SyncClient(server: server), email: email,
                    passphrase: SyncTesting.passphrase, localPassphrase: nil, allowWeakKDF: true)
                _ = try await other.sync()
                #expect(try SyncTesting.names(other.coffer) == ["Before", "During"])
                #expect(try SyncTesting.contents(other.coffer) == SyncTesting.contents(device))
                #expect(try device.vault.item(id: added.id).revision == 1)
            }
        }
    }
}
