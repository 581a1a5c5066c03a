import CofferServerStore
import Synchronization

/// `/health`'s view of the database: one `ServerStore.health()` at a time, and its answer reused for `freshness`, so a
/// flood of health checks (they need no token) costs the database at most one query per interval.
final class HealthProbe: Sendable {
    private struct Probe {
        var task: Task<DatabaseHealth, Never>
        var started: ContinuousClock.Instant
    }

    private let store: any ServerStore
    private let freshness: Duration
    private let latest = Mutex<Probe?>(nil)

    init(store: any ServerStore, freshness: Duration = .milliseconds(500)) {
        self.store = store
        self.freshness = freshness
    }

    /// The latest answer not older than `freshness`, else a new one (shared by everyone asking meanwhile).
    func health() async -> DatabaseHealth {
        let now = ContinuousClock.now
        let task = latest.withLock { probe -> Task<DatabaseHealth, Never> in
            if let probe, probe.started.duration(to: now) < freshness { return probe.task }
            let store = store
            let task = Task { await store.health() }
            probe = Probe(task: task, started: now)
            return task
        }
        return await task.value
    }
}
