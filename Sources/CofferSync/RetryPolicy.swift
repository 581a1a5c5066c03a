import Synchronization

/// How long a `SyncClient` keeps trying while the server is briefly away: a database failover (503), an instance
/// restarting behind a load balancer (502, 504, or a connection it closes mid-request), a connection refused after
/// the server had answered.
///
/// Delays double from a quarter second up to 2 s, with a fifth of jitter either way so that clients cut off together
/// do not come back together; a `Retry-After` longer than that (at most 10 s) is honoured. No retry starts once the
/// time spent would pass `window`.
public struct RetryPolicy: Sendable {
    /// Why a request is being sent again.
    public enum Reason: Sendable, Equatable {
        /// The server (or a load balancer in front of it) answered with this status.
        case busy(status: Int)
        /// The connection was refused or never made after this client had reached the server, or it closed before the
        /// answer.
        case unreachable
    }

    /// Told before each wait, for "server busy, retrying…".
    public struct Notice: Sendable, Equatable {
        public var reason: Reason
        public var delay: Duration
    }

    /// The most time all retries of one request may take.
    public var window: Duration
    /// Called before each wait (on the task that waits).
    public var notice: (@Sendable (Notice) -> Void)?

    public init(window: Duration, notice: (@Sendable (Notice) -> Void)? = nil) {
        self.window = window
        self.notice = notice
    }

    /// 45 seconds: replacing a primary that died takes contrib/ha's cluster its 20-second leader lease (Patroni's
    /// shortest), then the promotion and the servers' reconnection, whose backoff has grown meanwhile.
    public static let standard = RetryPolicy(window: .seconds(45))
    /// Every failure reported at once: for benchmarks, where a retry would hide the failure inside a latency.
    public static let never = RetryPolicy(window: .zero)

    static let busyStatuses: Set<Int> = [502, 503, 504]
    static let firstDelay: Duration = .milliseconds(250)
    /// The longest wait between two attempts (before jitter).
    public static let longestDelay: Duration = .seconds(2)
    static let longestRetryAfter = 10

    /// The wait before attempt `attempt + 1`.
    static func delay(attempt: Int, retryAfter: Int?) -> Duration {
        let backoff = min(firstDelay * (1 << min(attempt, 8)), longestDelay)
        let jittered = backoff * Double.random(in: 0.8...1.2)
        guard let retryAfter, retryAfter > 0 else { return jittered }
        return max(jittered, .seconds(min(retryAfter, longestRetryAfter)))
    }

    func allows(_ delay: Duration, after elapsed: Duration) -> Bool {
        elapsed + delay <= window
    }
}

/// A failed exchange: what to report, and how far the request got.
package struct ExchangeFailure: Error {
    /// How far a request got before its connection failed.
    package enum Reach: Sendable {
        /// The connection was refused or never made: the server never saw the request.
        case unsent
        /// The connection closed or was reset before the whole answer came: the server may have acted on it.
        case interrupted
        /// Anything else (a timeout, TLS, an answer too large): not retried.
        case other
    }

    var error: SyncClientError
    var reach: Reach

    init(_ error: SyncClientError, reach: Reach = .other) {
        self.error = error
        self.reach = reach
    }
}

/// Whether a client has had an answer from its server, which makes a refused connection a pause rather than a wrong
/// address. Shared by the copies of one `SyncClient`.
final class ServerContact: Sendable {
    private let answered = Atomic<Bool>(false)

    func reached() { answered.store(true, ordering: .relaxed) }
    var hasReached: Bool { answered.load(ordering: .relaxed) }
}
