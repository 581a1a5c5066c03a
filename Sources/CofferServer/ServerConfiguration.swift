import CofferCrypto
import CofferPlatform
import Foundation
import NIOCore

/// Everything `coffer-server` is configured with. The executable fills it from flags and environment; tests build it
/// directly, with an injected clock and cheap hashing.
public struct ServerConfiguration: Sendable {
    /// Host and port to listen on.
    public var host: String
    public var port: Int
    /// Holds the signing keys, the server secret and (by default) the SQLite store; created 0700.
    public var dataDirectory: String
    /// Sign in with Apple: the JWKS file (Apple's public keys) and the app's client id expected as audience.
    public var appleJWKSPath: String?
    public var appleAudience: String?
    /// PEM files; both or neither.
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// The origin allowed by CORS (`*` for any); nil sends no CORS headers.
    public var corsOrigin: String?
    /// Requests per minute per access token (and per address on unauthenticated endpoints, unless
    /// `addressRequestsPerMinute` is set).
    public var requestsPerMinute: Int
    /// Requests per minute per client address on the unauthenticated endpoints (prelogin, login, register, refresh);
    /// nil: `requestsPerMinute`. Many users behind one NAT share an address.
    public var addressRequestsPerMinute: Int?
    /// Failed logins allowed per account and per address in `failedLoginWindow` seconds.
    public var failedLoginLimit: Int
    public var failedLoginWindow: Int
    /// Lifetimes of the two token kinds, in seconds.
    public var accessTokenLifetime: Int
    public var refreshTokenLifetime: Int
    /// How long a soft-deleted account is kept before the purge job removes it, in seconds.
    public var accountRetention: TimeInterval
    /// How often the purge job runs, in seconds.
    public var purgeInterval: TimeInterval
    /// PBKDF2 iterations of the slow hash kept for each auth key.
    public var authHashIterations: Int
    /// KDF limits applied to slots clients upload.
    public var kdfLimits: KDFLimits
    /// The server's notion of now.
    public var clock: @Sendable () -> Date
    /// Serve request metrics at `/metrics`, to the operator token (`ServerMetrics`).
    public var metrics: Bool
    /// How long, in seconds, the in-memory places index is trusted before the store's places version is read
    /// again: an import through another instance (or `coffer-server places import`) shows within this time.
    public var placesCheckInterval: TimeInterval = 1
    /// How long, in seconds, a session's check in the store answers its requests from memory (`SessionGate`): a
    /// session revoked through another instance is refused within this time. 0 checks every request in the store.
    public var sessionCheckInterval: TimeInterval = 1
    /// The web vault's files (`index.html`, its scripts and `coffer-barcode.wasm`), served at `/app` only when set
    /// (`--web-vault`); allowed over plain HTTP only on a loopback address.
    public var webVaultDirectory: String?
    /// Threads reading and writing the sockets (NIO event loops), 1 to `maxEventLoops`. The routes run on Swift's
    /// concurrency pool, one thread per core; giving every core to the event loops as well made the two contend:
    /// on 2 cores, one loop answered region-refresh under 32 clients at p99 5.3 ms instead of 8.2
    /// (`coffer-bench places`).
    public var eventLoops: Int = ServerConfiguration.defaultEventLoops

    /// Connections held at once from one client address (`ConnectionLimits`); beyond it a new connection from that
    /// address is closed as soon as it is accepted. Many users behind one NAT share an address. A trusted proxy's
    /// connections count only towards `maxConnections`.
    public var maxConnectionsPerAddress: Int = 512
    /// Load balancers whose `X-Forwarded-For` names the client (`--trusted-proxy`): the per-address limits and the
    /// audit log then see each client's address instead of the proxy's (`TrustedProxies`).
    public var trustedProxies: [IPNetwork] = []
    /// Connections held at once in all; beyond it every new connection is closed at once.
    public var maxConnections: Int = ServerConfiguration.defaultMaxConnections
    /// Seconds a connection may go without a request part read or an answer written (a head never finished, an idle
    /// keep-alive connection) before it is closed.
    public var idleTimeout: TimeInterval = 30
    /// Seconds a request's body may take to arrive after its head (a 5 MiB push on a slow line takes some).
    public var requestTimeout: TimeInterval = 120
    /// The most bytes of live boxes one account may store; a push that would pass it is refused (413
    /// `quota_exceeded`).
    public var maxAccountBytes: Int64 = ServerConfiguration.defaultMaxAccountBytes
    /// The most live sessions one account may hold; a login past it is refused (429 `too_many_sessions`).
    public var maxSessionsPerAccount: Int = ServerConfiguration.defaultMaxSessionsPerAccount

    /// 1 GiB: about 500 card photos at their largest, or a million small items.
    public static let defaultMaxAccountBytes: Int64 = 1 << 30
    /// 100 devices, far beyond one person's; a script that logs in without ever logging out meets it.
    public static let defaultMaxSessionsPerAccount = 100

    /// Half the cores this process may use, at least one.
    public static var defaultEventLoops: Int { max(1, System.coreCount / 2) }

    /// 10,000, or fewer when the open-file limit is lower: it keeps 128 descriptors for the store, logs and listeners.
    public static var defaultMaxConnections: Int { max(64, min(10_000, (ProcessLimits.openFiles ?? 10_128) - 128)) }
    public static let maxEventLoops = 256

    public init(
        host: String = "127.0.0.1", port: Int = 8443, dataDirectory: String,
        appleJWKSPath: String? = nil, appleAudience: String? = nil,
        tlsCertificatePath: String? = nil, tlsKeyPath: String? = nil, corsOrigin: String? = nil,
        requestsPerMinute: Int = 100, failedLoginLimit: Int = 5, failedLoginWindow: Int = 300,
        accessTokenLifetime: Int = 15 * 60, refreshTokenLifetime: Int = 7 * 24 * 3600,
        accountRetention: TimeInterval = 30 * 24 * 3600, purgeInterval: TimeInterval = 3600,
        authHashIterations: Int = AuthHasher.productionIterations, kdfLimits: KDFLimits = .production,
        clock: @escaping @Sendable () -> Date = { Date() }, metrics: Bool = false
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.appleJWKSPath = appleJWKSPath
        self.appleAudience = appleAudience
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsKeyPath = tlsKeyPath
        self.corsOrigin = corsOrigin
        self.requestsPerMinute = requestsPerMinute
        self.failedLoginLimit = failedLoginLimit
        self.failedLoginWindow = failedLoginWindow
        self.accessTokenLifetime = accessTokenLifetime
        self.refreshTokenLifetime = refreshTokenLifetime
        self.accountRetention = accountRetention
        self.purgeInterval = purgeInterval
        self.authHashIterations = authHashIterations
        self.kdfLimits = kdfLimits
        self.clock = clock
        self.metrics = metrics
    }
}

/// Failures while starting the server. Descriptions name paths and rules, never key material.
public enum ServerSetupError: Error, Sendable, CustomStringConvertible {
    case dataDirectory(String)
    case signingKeys(String)
    case appleKeys(String)
    case tls(String)
    case configuration(String)

    public var description: String {
        switch self {
        case .dataDirectory(let detail): return "data directory: \(detail)"
        case .signingKeys(let detail): return "signing keys: \(detail)"
        case .appleKeys(let detail): return "Apple JWKS: \(detail)"
        case .tls(let detail): return "TLS: \(detail)"
        case .configuration(let detail): return detail
        }
    }
}
