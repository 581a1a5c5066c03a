import CofferPlaces
import CofferServerStore
import Foundation
import Logging
import Synchronization

/// The server's in-memory `PlaceIndex`, built from the store and kept fresh by one rule:
///
/// - the index answers only while its version equals the store's places version as read at most
///   `placesCheckInterval` seconds ago; the first request past that reads the version again (one query, shared by
///   the requests that arrive meanwhile);
/// - when the versions differ (an import through this instance, another instance on the same database, or
///   `coffer-server places import`), requests are answered by the store's own query, exact and current, while one
///   background task reads every place again; the new index answers once the version it was read at is still the
///   store's;
/// - an import through this instance forgets the last reading, so its next request sees the import.
///
/// So one instance never answers from places older than its last import, and another within the interval.
final class PlaceIndexCache: Sendable {
    private struct State {
        var index: PlaceIndex?
        /// The store's version at the last reading, and when that reading began.
        var storeVersion: Int64?
        var readAt: Date?
        var reading: Task<Int64?, Never>?
        /// When the reading under way began (what `readAt` becomes).
        var readingSince: Date?
        var building = false
    }

    /// Locations per page when reading the store.
    static let pageSize = 10_000
    /// Tries of a rebuild whose places changed while it read them.
    static let attempts = 3

    private let store: any ServerStore
    private let interval: TimeInterval
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private let state = Mutex(State())

    init(store: any ServerStore, interval: TimeInterval, clock: @escaping @Sendable () -> Date, logger: Logger) {
        self.store = store
        self.interval = interval
        self.clock = clock
        self.logger = logger
    }

    /// The index, when the rule lets it answer; nil sends the caller to the store (and starts a rebuild if the
    /// index is missing or stale).
    func current() async -> PlaceIndex? {
        let now = clock()
        enum Step {
            case use(PlaceIndex?)
            case wait(Task<Int64?, Never>)
        }
        let step = state.withLock { state -> Step in
            if let readAt = state.readAt, now >= readAt, now.timeIntervalSince(readAt) < interval {
                return .use(state.index.flatMap { $0.version == state.storeVersion ? $0 : nil })
            }
            if let reading = state.reading { return .wait(reading) }
            let store = self.store, logger = self.logger
            let reading = Task<Int64?, Never> {
                do {
                    return try await store.placesVersion()
                } catch {
                    logger.warning("places version unreadable", metadata: ["error": "\(error)"])
                    return nil
                }
            }
            state.reading = reading
            state.readingSince = now
            return .wait(reading)
        }
        let reading: Task<Int64?, Never>
        switch step {
        case .use(let index):
            if index == nil { rebuildIfNeeded() }
            return index
        case .wait(let task):
            reading = task
        }
        let version = await reading.value
        let index = state.withLock { state -> PlaceIndex? in
            if state.reading == reading {
                state.reading = nil
                if let version {
                    state.storeVersion = version
                    state.readAt = state.readingSince
                }
            }
            guard let version, let index = state.index, index.version == version else { return nil }
            return index
        }
        if index == nil { rebuildIfNeeded() }
        return index
    }

    /// After an import through this instance: the next request reads the version again.
    func invalidate() {
        state.withLock { $0.readAt = nil }
    }

    /// Reads every place into a new index, unless a build is under way.
    private func rebuildIfNeeded() {
        let start = state.withLock { state -> Bool in
            guard !state.building else { return false }
            state.building = true
            return true
        }
        guard start else { return }
        Task { await build() }
    }

    /// Reads the store a page at a time and installs the index if the places did not change meanwhile (the version
    /// before equals the version after); tries again otherwise. Errors are logged; requests keep using the store.
    func build() async {
        defer { state.withLock { $0.building = false } }
        do {
            for _ in 0..<Self.attempts {
                let before = try await store.placesVersion()
                var builder = PlaceIndex.Builder(networks: try await store.networks(), version: before)
                var after: String?
                while true {
                    let page = try await store.locationsPage(after: after, limit: Self.pageSize)
                    for location in page { builder.add(location) }
                    guard page.count == Self.pageSize, let last = page.last else { break }
                    after = last.id
                }
                guard try await store.placesVersion() == before else { continue }
                let index = builder.build()
                state.withLock { $0.index = index }
                logger.info("places index built", metadata: ["locations": "\(index.count)", "version": "\(before)"])
                return
            }
            logger.notice("places changed during every read of the index; the store answers until the next try")
        } catch {
            logger.warning("places index not built", metadata: ["error": "\(error)"])
        }
    }
}
