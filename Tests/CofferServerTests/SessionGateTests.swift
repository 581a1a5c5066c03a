@testable import CofferServer
import CofferServerStore
import CofferServerTestSupport
import Foundation
import Synchronization
import Testing

/// The request check answered from memory: fewer store round trips, the same counts, bounded staleness.
@Suite("Session gate")
struct SessionGateTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_010)

    private static func session(_ store: any ServerStore) async throws -> (user: UUID, family: UUID, key: String) {
        let user = try await StoreConformanceTests.newUser(store)
        let family = UUID()
        try await store.createSession(userID: user, family: family, tokenID: UUID(), now: now, expiresAt: now + 3600)
        return (user, family, "test:\(UUID())")
    }

    @Test("requests within a second cost one store check, and every one of them is counted", arguments: Backend.allCases)
    func batching(backend: Backend) async throws {
        try await backend.withStore { store in
            let (user, family, key) = try await Self.session(store)
            let gate = SessionGate()
            for offset in 0..<10 {
                let decision = try await gate.check(
                    userID: user, family: family, counter: key, limit: 1_000, window: 60, now: Self.now + Double(offset) * 0.05, store: store)
                #expect(decision == .admitted)
            }
            // Only the first reached the store; the nine after it wait for the next check.
            #expect(try await store.counter(key, window: 60, now: Self.now).count == 1)
            _ = try await gate.check(userID: user, family: family, counter: key, limit: 1_000, window: 60, now: Self.now + 1, store: store)
            #expect(try await store.counter(key, window: 60, now: Self.now).count == 11)
        }
    }

    @Test("past half the limit every request is checked in the store, so one instance's limit is exact", arguments: Backend.allCases)
    func exactLimit(backend: Backend) async throws {
        try await backend.withStore { store in
            let (user, family, key) = try await Self.session(store)
            let gate = SessionGate()
            var decisions: [SessionGate.Decision] = []
            for _ in 0..<21 {
                decisions.append(try await gate.check(userID: user, family: family, counter: key, limit: 20, window: 60, now: Self.now, store: store))
            }
            #expect(decisions.prefix(20).allSatisfy { $0 == .admitted })
            guard case .limited(let counter) = decisions.last else {
                Issue.record("the 21st request was not limited: \(String(describing: decisions.last))")
                return
            }
            #expect(counter.count == 21)
            #expect(try await store.counter(key, window: 60, now: Self.now).count == 21)
        }
    }

    @Test("another instance's requests reach the shared count within a second", arguments: Backend.allCases)
    func twoGates(backend: Backend) async throws {
        try await backend.withStore { store in
            let (user, family, key) = try await Self.session(store)
            let first = SessionGate(), second = SessionGate()
            // Each instance admits from memory while its own view is under half the limit (30 of 60)...
            for _ in 0..<25 {
                #expect(try await first.check(userID: user, family: family, counter: key, limit: 60, window: 60, now: Self.now, store: store) == .admitted)
                #expect(try await second.check(userID: user, family: family, counter: key, limit: 60, window: 60, now: Self.now, store: store) == .admitted)
            }
            // ...and a second later each reports what it admitted with its next check: the shared count holds all of
            // them, and the budget of 60 is kept across both (50 before, this one, and 9 of the next 40).
            #expect(try await second.check(userID: user, family: family, counter: key, limit: 60, window: 60, now: Self.now + 1, store: store) == .admitted)
            var admitted = 0
            for _ in 0..<40 {
                if try await first.check(
                    userID: user, family: family, counter: key, limit: 60, window: 60, now: Self.now + 1, store: store) == .admitted
                {
                    admitted += 1
                }
            }
            #expect(admitted == 9)
            #expect(try await store.counter(key, window: 60, now: Self.now).count == 50 + 1 + 40)
        }
    }

    @Test("a session revoked elsewhere is refused within a second; forgotten here, at once", arguments: Backend.allCases)
    func revocation(backend: Backend) async throws {
        try await backend.withStore { store in
            let (user, family, key) = try await Self.session(store)
            let gate = SessionGate()
            #expect(try await gate.check(userID: user, family: family, counter: key, limit: 100, window: 60, now: Self.now, store: store) == .admitted)
            try await store.revokeSession(userID: user, family: family)
            #expect(try await gate.check(userID: user, family: family, counter: key, limit: 100, window: 60, now: Self.now + 0.5, store: store) == .admitted)
            #expect(try await gate.check(userID: user, family: family, counter: key, limit: 100, window: 60, now: Self.now + 1, store: store) == .inactive)

            let other = try await Self.session(store)
            #expect(
                try await gate.check(userID: other.user, family: other.family, counter: other.key, limit: 100, window: 60, now: Self.now, store: store)
                    == .admitted)
            try await store.revokeSessions(userID: other.user, keeping: nil)
            gate.forget(userID: other.user)
            #expect(
                try await gate.check(userID: other.user, family: other.family, counter: other.key, limit: 100, window: 60, now: Self.now, store: store)
                    == .inactive)
            // A token of another user naming this family is never admitted from this family's entry.
            #expect(try await gate.check(userID: UUID(), family: family, counter: key, limit: 100, window: 60, now: Self.now + 1, store: store) == .inactive)
        }
    }

    @Test("requests of a session that arrive while its check is in flight wait for that check, not each its own")
    func singleFlight() async throws {
        let gate = SessionGate()
        let user = UUID(), family = UUID()
        let calls = CallLog()
        let answer = Self.answer
        // A fresh check, then past its freshness one request goes to the store and is held there.
        _ = try await gate.check(userID: user, family: family, limit: 1_000, window: 60, now: Self.now) { requests throws(ServerStoreError) in
            calls.record(requests)
            return answer(requests)
        }
        let (held, release) = AsyncStream<Void>.makeStream()
        let (entered, enter) = AsyncStream<Void>.makeStream()
        let slow = Task {
            try await gate.check(userID: user, family: family, limit: 1_000, window: 60, now: Self.now + 1.2) { requests throws(ServerStoreError) in
                calls.record(requests)
                enter.yield()
                for await _ in held { break }
                return answer(1 + requests)
            }
        }
        for await _ in entered { break }
        // Meanwhile ten more requests of the session: admitted from memory, none of them a store check.
        for offset in 0..<10 {
            let decision = try await gate.check(
                userID: user, family: family, limit: 1_000, window: 60, now: Self.now + 1.3 + Double(offset) * 0.01
            ) { requests throws(ServerStoreError) in
                calls.record(requests)
                return answer(requests)
            }
            #expect(decision == .admitted)
        }
        release.yield()
        #expect(try await slow.value == .admitted)
        #expect(calls.all == [1, 1])
        // Once that check has answered, its own freshness applies: a request past it goes to the store and reports
        // the ten admitted meanwhile.
        _ = try await gate.check(userID: user, family: family, limit: 1_000, window: 60, now: Self.now + 3.3) { requests throws(ServerStoreError) in
            calls.record(requests)
            return answer(requests)
        }
        #expect(calls.all == [1, 1, 11])
    }

    private static func answer(_ count: Int) -> Authorization {
        Authorization(counter: CounterState(count: count, windowEnds: now + 50), sessionActive: true)
    }

    /// The store checks a gate asked for, by how many requests each reported.
    private final class CallLog: Sendable {
        private let calls = Mutex<[Int]>([])
        func record(_ requests: Int) { calls.withLock { $0.append(requests) } }
        var all: [Int] { calls.withLock { $0 } }
    }
}
