import CofferServerStore
import Synchronization

/// `/health`'s view of the database: one `ServerStore.health()` at a time, and its answer reused for `freshness`, so a
/// flood of health checks (they need no token) costs the database at most one query per interval.
///
/// The first caller asks the store in its own task (an unstructured task would run wherever the global pool has
/// room, and a starved pool once kept it for longer than a client waits); callers meanwhile wait for that answer.
final class HealthProbe: Sendable {
    private struct State {
        var latest: (health: DatabaseHealth, at: ContinuousClock.Instant)?
        /// Callers waiting for the probe in flight; nil when none is.
        var waiting: [CheckedContinuation<DatabaseHealth, Never>]?
    }

    private enum Turn {
        case answered(DatabaseHealth)
        case probe
        case wait
    }

    private let store: any ServerStore
    private let freshness: Duration
    private let state = Mutex(State())

    init(store: any ServerStore, freshness: Duration = .milliseconds(500)) {
        self.store = store
        self.freshness = freshness
    }

    /// The latest answer not older than `freshness`, else a new one (shared by everyone asking meanwhile).
    func health() async -> DatabaseHealth {
        let now = ContinuousClock.now
        let turn = state.withLock { state -> Turn in
            if let latest = state.latest, latest.at.duration(to: now) < freshness { return .answered(latest.health) }
            if state.waiting != nil { return .wait }
            state.waiting = []
            return .probe
        }
        switch turn {
        case .answered(let health):
            return health
        case .wait:
            return await withCheckedContinuation { continuation in
                let answered = state.withLock { state -> DatabaseHealth? in
                    guard state.waiting != nil else { return state.latest?.health ?? .unreachable }
                    state.waiting?.append(continuation)
                    return nil
                }
                if let answered { continuation.resume(returning: answered) }
            }
        case .probe:
            let health = await store.health()
            // A probe cut short because its own request went away says nothing about the database: not kept.
            let keep = !Task.isCancelled
            let waiting = state.withLock { state -> [CheckedContinuation<DatabaseHealth, Never>] in
                if keep { state.latest = (health, ContinuousClock.now) }
                defer { state.waiting = nil }
                return state.waiting ?? []
            }
            for waiter in waiting { waiter.resume(returning: health) }
            return health
        }
    }
}
