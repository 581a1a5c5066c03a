import AsyncHTTPClient
import CofferCrypto
import CofferSyncAPI
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Failures talking to a sync server. Descriptions carry the server's error code and fixed message, never a token.
public enum SyncClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server could not be reached or the connection failed.
    case transport(String)
    /// The server answered with an error body.
    case server(status: Int, code: String, message: String)
    /// A push was refused because the server holds newer revisions: these (unverified: the server's word).
    case conflict([ItemRow])
    /// A push was refused because another device extended the vault's state first; the server's head is at `epoch`.
    case staleHead(epoch: Int64)
    /// The server's answer was not what the protocol says.
    case malformedResponse
    /// The server URL is not an http(s) URL.
    case invalidServerURL
    /// The server presented a public key other than the pinned one; nothing was sent.
    case pinMismatch(expected: String, presented: String)
    /// A key pin was given for a server reached without TLS.
    case pinNeedsHTTPS
    /// The server refused the email and passphrase of a login (its 401 to `/v1/auth/login`).
    case credentialsRefused

    public var description: String {
        switch self {
        case .transport(let detail): return "cannot reach the sync server: \(detail)"
        case .server(401, "session_lost", _):
            return "the sync server has no record of the session it gave this device: its database was restored from a backup or rolled back"
        case .server(let status, let code, let message): return "the sync server refused (\(status) \(code)): \(message)"
        case .conflict(let items):
            return items.count == 1 ? "the server holds a newer version of 1 item" : "the server holds newer versions of \(items.count) items"
        case .staleHead: return "another device changed the vault first"
        case .malformedResponse: return "the sync server sent an answer this version does not understand"
        case .invalidServerURL: return "the server must be an http:// or https:// URL"
        case .pinMismatch(let expected, let presented):
            return "the sync server's public key is not the pinned one: expected \(expected), presented \(presented); nothing was sent"
        case .pinNeedsHTTPS: return "a public-key pin needs an https:// server"
        case .credentialsRefused: return "the sync server refused this email and passphrase"
        }
    }
}

/// The HTTP side of sync: one method per endpoint of docs/openapi.yaml.
public struct SyncClient: Sendable {
    public let server: String
    /// The server's public-key pin: every connection is checked against it (`PinnedHTTP`).
    public let pin: ServerKeyPin?
    private let http: HTTPClient
    let requestTimeout: TimeAmount
    let tlsContext: PinnedTLSContext
    /// How requests are sent again while the server is briefly away.
    public let retryPolicy: RetryPolicy
    let contact = ServerContact()

    /// `server` is the base URL, e.g. `https://sync.example.org`; plain `http://` is accepted only for loopback.
    /// `timeout` bounds each request, connection attempts included (the client retries refused connections until then).
    /// With a `pin` (https only) every request goes over a connection whose server key has been checked against it;
    /// `tls` is the TLS configuration of those connections and of `presentedKey()` (the system's roots by default).
    public init(
        server: String, http: HTTPClient = SyncClient.defaultHTTP, timeout: Duration = .seconds(15), pin: ServerKeyPin? = nil,
        tls: TLSConfiguration = .makeClientConfiguration(), retry: RetryPolicy = .standard
    ) throws(SyncClientError) {
        var base = server
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base), let scheme = url.scheme?.lowercased(), let host = url.host, url.query == nil else {
            throw .invalidServerURL
        }
        guard scheme == "https" || (scheme == "http" && ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)) else {
            throw .invalidServerURL
        }
        if pin != nil, scheme != "https" { throw .pinNeedsHTTPS }
        self.server = base
        self.pin = pin
        self.tlsContext = PinnedTLSContext(tls)
        self.retryPolicy = retry
        self.http = http
        self.requestTimeout = .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
    }

    /// The shared HTTP client: it gives up on a server it cannot connect to after 3 seconds rather than retrying until
    /// the request's deadline, so an offline `coffer sync` answers promptly; a refused connection (no server on that
    /// port) is reported at once, not retried with backoff for those 3 seconds, as a pool serving many requests would.
    /// Lives for the whole process.
    public static let defaultHTTP = makeHTTPClient()

    /// A client configured as `defaultHTTP`, giving up on a connection after `connectTimeout`. The caller shuts it
    /// down.
    public static func makeHTTPClient(connectTimeout: Duration = .seconds(3)) -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.timeout.connect = .seconds(connectTimeout.components.seconds)
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    public func prelogin(email: String) async throws(SyncClientError) -> PreloginResponse {
        try await call(.POST, "/v1/auth/prelogin", body: PreloginRequest(email: email))
    }

    public func register(_ request: RegisterRequest) async throws(SyncClientError) -> AuthResponse {
        try await call(.POST, "/v1/auth/register", body: request, resend: .ifUnsent)
    }

    /// A 401 here is the server's answer to the credentials, told apart by the request it answers, never by its
    /// message: `credentialsRefused`.
    public func login(_ request: LoginRequest) async throws(SyncClientError) -> AuthResponse {
        do {
            return try await call(.POST, "/v1/auth/login", body: request)
        } catch {
            if case .server(401, "unauthorized", _) = error { throw .credentialsRefused }
            throw error
        }
    }

    /// Exchanges `refreshToken` for a new pair. With `retryKey`, the same token may be presented again with the same
    /// key if this answer is lost (`RefreshRetryKey`).
    public func refresh(_ refreshToken: String, retryKey: RefreshRetryKey? = nil) async throws(SyncClientError) -> AuthResponse {
        try await call(
            .POST, "/v1/auth/refresh", body: RefreshRequest(refreshToken: refreshToken, retryKey: retryKey?.base64URL),
            resend: retryKey == nil ? .ifUnsent : .safe)
    }

    public func logout(accessToken: String) async throws(SyncClientError) {
        let _: Empty = try await call(.POST, "/v1/auth/logout", token: accessToken, resend: .ifUnsent)
    }

    public func account(accessToken: String) async throws(SyncClientError) -> AccountResponse {
        try await call(.GET, "/v1/account", token: accessToken)
    }

    public func changePassphrase(_ request: PassphraseChangeRequest, accessToken: String) async throws(SyncClientError) -> AuthResponse {
        try await call(.POST, "/v1/account/passphrase", token: accessToken, body: request, resend: .ifUnsent)
    }

    /// Pushes a batch; `.conflict` carries the server's copies when any base revision is stale. Sent again after a lost
    /// answer, a push that landed is refused as stale (its base revisions and head are the old ones) and changes
    /// nothing: the next pull finds this device's own items.
    public func push(_ request: PushRequest, accessToken: String) async throws(SyncClientError) -> PushResponse {
        try await call(.POST, "/v1/sync/push", token: accessToken, body: request)
    }

    public func changes(since cursor: Int64, limit: Int, accessToken: String) async throws(SyncClientError) -> ChangesResponse {
        try await call(
            .GET, "/v1/sync/changes?since=\(cursor)&limit=\(limit)", token: accessToken, reading: ChangesResponse.init(canonicalJSON:))
    }

    /// The manifests after epoch `after`, oldest first.
    public func manifests(after epoch: Int64, limit: Int, accessToken: String) async throws(SyncClientError) -> ManifestsResponse {
        try await call(.GET, "/v1/sync/manifests?after=\(epoch)&limit=\(limit)", token: accessToken)
    }

    /// Stages re-sealed rows of master-key rotation `rotation`; returns how many rows it holds.
    public func stageRotation(
        _ rotation: UUID, _ request: RotationItemsRequest, accessToken: String
    ) async throws(SyncClientError) -> RotationItemsResponse {
        try await call(
            .POST, "/v1/sync/rotations/\(rotation.lowercasedString)/items", token: accessToken, body: request,
            resend: .ifUnsent)
    }

    /// Commits master-key rotation `rotation`: answered like a push (`.conflict`, `.staleHead`).
    public func commitRotation(
        _ rotation: UUID, _ request: RotationCommitRequest, accessToken: String
    ) async throws(SyncClientError) -> PushResponse {
        try await call(
            .POST, "/v1/sync/rotations/\(rotation.lowercasedString)/commit", token: accessToken, body: request,
            resend: .ifUnsent)
    }

    /// Drops the rows staged for `rotation`.
    public func discardRotation(_ rotation: UUID, accessToken: String) async throws(SyncClientError) {
        let _: Empty = try await call(
            .DELETE, "/v1/sync/rotations/\(rotation.lowercasedString)", token: accessToken, resend: .ifUnsent)
    }

    /// Deletes every server copy of the account's items.
    public func revoke(accessToken: String) async throws(SyncClientError) -> Int {
        let answer: [String: Int] = try await call(.DELETE, "/v1/sync/items", token: accessToken, resend: .ifUnsent)
        return answer["deleted"] ?? 0
    }

    public func deleteAccount(accessToken: String) async throws(SyncClientError) {
        let _: Empty = try await call(.DELETE, "/v1/user", token: accessToken, resend: .ifUnsent)
    }

    private struct Empty: Codable {}

    /// One request and its decoded answer. `reading`, when given, reads the answer first without `JSONDecoder`;
    /// `JSONDecoder` reads what it does not.
    private func call<Answer: Decodable>(
        _ method: HTTPMethod, _ path: String, token: String? = nil, body: (some Encodable)? = Optional<Empty>.none,
        resend: Resend = .safe, reading: (Data) -> Answer? = { _ in nil }
    ) async throws(SyncClientError) -> Answer {
        var request = HTTPClientRequest(url: server + path)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "coffer")
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            let encoded: Data
            do {
                encoded = try WireJSON.encoder().encode(body)
            } catch {
                throw .malformedResponse
            }
            request.body = .bytes(ByteBuffer(bytes: encoded))
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        let (status, bytes) = try await exchangeRetrying(request, resend: resend)
        let data = Data(bytes.readableBytesView)
        guard (200..<300).contains(status) else {
            guard let error = try? WireJSON.decoder().decode(ErrorBody.self, from: data) else {
                throw .server(status: status, code: "unknown", message: "HTTP \(status)")
            }
            if status == 409, let conflicts = error.details?.conflicts { throw .conflict(conflicts) }
            if status == 409, error.error == "stale_head", let epoch = error.details?.headEpoch { throw .staleHead(epoch: epoch) }
            throw .server(status: status, code: Self.printable(error.error), message: Self.printable(error.message))
        }
        if status == 204 || data.isEmpty {
            if let empty = Empty() as? Answer { return empty }
            throw .malformedResponse
        }
        if let answer = reading(data) { return answer }
        do {
            return try WireJSON.decoder().decode(Answer.self, from: data)
        } catch {
            throw .malformedResponse
        }
    }

    /// Whether a request may be sent again when its outcome is unknown (the server may have acted on it).
    enum Resend {
        /// Sending it twice has the effect of sending it once: reads, logins, pushes (applied by revision), a refresh
        /// with its retry key.
        case safe
        /// Only when it certainly never reached the server (the connection was refused or never made).
        case ifUnsent
    }

    /// One exchange, sent again with backoff while the server is briefly away (`RetryPolicy`): a 502, 503 or 504
    /// (a failover, a restarting instance behind a load balancer) or a connection closed before the answer, for a
    /// `.safe` request; and for any request a connection refused or never made once this client has reached the
    /// server before. A refused first contact is reported at once: the server is down or the address wrong, and
    /// waiting would only delay saying so.
    private func exchangeRetrying(_ request: HTTPClientRequest, resend: Resend) async throws(SyncClientError) -> (Int, ByteBuffer) {
        var attempt = 0
        let started = ContinuousClock.now
        while true {
            let delay: Duration
            let reason: RetryPolicy.Reason
            do throws(ExchangeFailure) {
                let answer = try await exchange(request)
                contact.reached()
                guard RetryPolicy.busyStatuses.contains(answer.status), resend == .safe else { return (answer.status, answer.body) }
                delay = RetryPolicy.delay(attempt: attempt, retryAfter: answer.retryAfter)
                reason = .busy(status: answer.status)
                guard retryPolicy.allows(delay, after: started.duration(to: .now)) else { return (answer.status, answer.body) }
            } catch {
                let again =
                    switch error.reach {
                    case .unsent: contact.hasReached
                    case .interrupted: resend == .safe
                    case .other: false
                    }
                guard again else { throw error.error }
                delay = RetryPolicy.delay(attempt: attempt, retryAfter: nil)
                reason = .unreachable
                guard retryPolicy.allows(delay, after: started.duration(to: .now)) else { throw error.error }
            }
            retryPolicy.notice?(RetryPolicy.Notice(reason: reason, delay: delay))
            do {
                try await Task.sleep(for: delay)
            } catch {
                throw .transport("cancelled")
            }
            attempt += 1
        }
    }

    /// One request and its whole answer, over the pinned connection or the shared client.
    private func exchange(_ request: HTTPClientRequest) async throws(ExchangeFailure) -> PinnedHTTP.Response {
        if let pin { return try await pinnedExchange(request, pin: pin) }
        do {
            let response = try await http.execute(request, timeout: requestTimeout)
            let body = try await response.body.collect(upTo: Self.maxAnswerBytes)
            let retryAfter = response.headers.first(name: "Retry-After").flatMap { Int($0) }
            return PinnedHTTP.Response(status: Int(response.status.code), body: body, retryAfter: retryAfter)
        } catch {
            throw ExchangeFailure(.transport(Self.transportDescription(error)), reach: Self.reach(error))
        }
    }

    /// How far a request that failed with `error` got: never sent (refused, no connection), interrupted (the
    /// connection closed or was reset), or something else.
    package static func reach(_ error: any Error) -> ExchangeFailure.Reach {
        switch error {
        case let error as HTTPClientError:
            if error == .connectTimeout { return .unsent }
            return error == .remoteConnectionClosed ? .interrupted : .other
        case is NIOConnectionError: return .unsent
        case let error as IOError:
            if [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH].contains(error.errnoCode) { return .unsent }
            return [ECONNRESET, EPIPE].contains(error.errnoCode) ? .interrupted : .other
        case ChannelError.eof, ChannelError.outputClosed: return .interrupted
        case PinnedHTTP.Failure.closed: return .interrupted
        default: return .other
        }
    }

    /// The server's text as it may be shown on a terminal: control characters (escape sequences) removed, at most
    /// 200 characters. A server is not trusted to write to the user's screen.
    public static func printable(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.filter { $0.properties.generalCategory != .control }.prefix(200))
        return String(scalars)
    }

    static let maxAnswerBytes = 64 * 1024 * 1024

    static func transportDescription(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout, .deadlineExceeded, .readTimeout: return "timed out"
            case .remoteConnectionClosed: return "connection closed"
            default: return "connection failed"
            }
        }
        return "connection failed"
    }
}
