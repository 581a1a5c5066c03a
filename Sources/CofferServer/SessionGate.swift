import CofferServerStore
import Foundation
import Synchronization

/// The check every authenticated request passes (its session is alive, its per-session request budget is not spent),
/// answered from memory while that is safe and from the store otherwise.
///
/// The store's check is a database write, and it was the floor under every authenticated request's latency. Here a
/// session checked in the store less than `freshness` ago, whose count in this window is at most half its limit, is
/// admitted from memory and its request counted locally; the next check in the store adds those requests to the shared
/// counter. So:
/// - on one instance the limit is exact: past half of it every request is checked in the store;
/// - with several instances on one database each instance's requests reach the shared counter within `freshness`
///   (or at once past half the limit), so the others' unreported requests are at most one second's worth;
/// - a session revoked through this instance is refused here at once (`forget`), through another one within
///   `freshness` and the time one store check takes;
/// - a session's requests that arrive while its check is in flight do not each go to the store (single flight).
final class SessionGate: Sendable {
    /// What the gate knows of one session family.
    private struct Entry {
        var userID: UUID
        /// The counter window the figures below belong to (`CounterWindow.start`).
        var window: Int64
        /// The shared counter as the store last answered, this instance's reported requests included.
        var reported: Int
        /// Requests admitted from memory since, not yet in the store.
        var unreported: Int
        /// Requests being reported by a check in flight.
        var reporting: Int
        /// When the store last said the session is alive.
        var checkedAt: Date

        var count: Int { reported + unreported + reporting }
    }

    /// A decision on one request.
    enum Decision: Equatable {
        case admitted
        case limited(CounterState)
        case inactive
    }

    private let entries = Mutex<[UUID: Entry]>([:])
    /// How long a session's check in the store is trusted.
    let freshness: TimeInterval
    /// At most this many sessions are remembered; beyond it the gate starts over (each then costs one store check).
    let capacity: Int

    init(freshness: TimeInterval = 1, capacity: Int = 100_000) {
        self.freshness = freshness
        self.capacity = capacity
    }

    /// Decides on one request of session `family` against a budget of `limit` requests per `window` seconds.
    func check(
        userID: UUID, family: UUID, counter key: String, limit: Int, window: Int, now: Date, store: any ServerStore
    ) async throws(ServerStoreError) -> Decision {
        try await check(userID: userID, family: family, limit: limit, window: window, now: now) { requests throws(ServerStoreError) in
            try await store.authorize(userID: userID, family: family, counter: key, requests: requests, window: window, now: now)
        }
    }

    /// The same, with the store's check (`ServerStore.authorize` of `requests` requests) as a function.
    func check(
        userID: UUID, family: UUID, limit: Int, window: Int, now: Date,
        authorize: (Int) async throws(ServerStoreError) -> Authorization
    ) async throws(ServerStoreError) -> Decision {
        let windowStart = CounterWindow.start(now, window: window)
        let toReport: Int? = entries.withLock { entries in
            // While a check of this session is in flight, the one before it stays trusted for up to a second more:
            // concurrent requests of one session wait for that check's answer rather than each making its own.
            if var entry = entries[family], entry.userID == userID, entry.window == windowStart, now >= entry.checkedAt,
                now.timeIntervalSince(entry.checkedAt) < (entry.reporting > 0 ? 2 * freshness : freshness),
                2 * (entry.count + 1) <= limit
            {
                entry.unreported += 1
                entries[family] = entry
                return nil
            }
            // To the store: this request and those admitted here since the last check (of this window).
            var entry =
                entries[family].flatMap { $0.userID == userID && $0.window == windowStart ? $0 : nil }
                ?? Entry(userID: userID, window: windowStart, reported: 0, unreported: 0, reporting: 0, checkedAt: .distantPast)
            let requests = entry.unreported + 1
            entry.unreported = 0
            entry.reporting += requests
            if entries[family] == nil, entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[family] = entry
            return requests
        }
        guard let toReport else { return .admitted }

        let checked: Authorization
        do {
            checked = try await authorize(toReport)
        } catch {
            // Not reported: counted again with the next check.
            entries.withLock { entries in
                guard var entry = entries[family], entry.window == windowStart else { return }
                entry.reporting -= toReport
                entry.unreported += toReport
                entries[family] = entry
            }
            throw error
        }
        entries.withLock { entries in
            guard checked.sessionActive else {
                entries[family] = nil
                return
            }
            guard var entry = entries[family], entry.userID == userID, entry.window == windowStart else { return }
            entry.reporting -= toReport
            // Checks may answer out of order; the shared counter only grows within a window.
            entry.reported = max(entry.reported, checked.counter.count)
            entry.checkedAt = max(entry.checkedAt, now)
            entries[family] = entry
        }
        if checked.counter.count > limit { return .limited(checked.counter) }
        return checked.sessionActive ? .admitted : .inactive
    }

    /// Forgets session `family` (revoked): its next request is checked in the store.
    func forget(family: UUID) {
        _ = entries.withLock { $0.removeValue(forKey: family) }
    }

    /// Forgets every session of `userID` (all revoked, or the account deleted).
    func forget(userID: UUID) {
        entries.withLock { entries in entries = entries.filter { $0.value.userID != userID } }
    }
}
