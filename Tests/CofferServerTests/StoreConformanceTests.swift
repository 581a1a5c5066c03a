import CofferCrypto
import CofferServerStore
import CofferServerTestSupport
import CofferSyncAPI
import Foundation
import Testing

/// One suite, both stores: every behaviour the `ServerStore` protocol documents.
@Suite("Store conformance")
struct StoreConformanceTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func newUser(_ store: any ServerStore, email: String? = nil) async throws -> UUID {
        let id = UUID()
        try await store.createUser(
            NewUser(id: id, email: email ?? "u-\(id.uuidString.lowercased())@example.org", createdAt: now, authHash: "h"))
        return id
    }

    static func write(_ id: UUID = UUID(), revision: Int64 = 1, base: Int64 = 0, deleted: Bool = false, kind: String = "note") -> ItemWrite {
        ItemWrite(
            row: ItemRow(
                id: id, kind: kind, revision: revision, updatedAt: 1_700_000_000_000 + revision, deleted: deleted,
                box: deleted ? nil : Data("box-\(id)-\(revision)".utf8)), baseRevision: base)
    }

    @Test("accounts: unique live emails, lookups, soft delete, purge with cascade", arguments: Backend.allCases)
    func accounts(backend: Backend) async throws {
        try await backend.withStore { store in
            let email = "acct-\(UUID().uuidString.lowercased())@example.org"
            let id = try await Self.newUser(store, email: email)
            #expect(try await store.userID(email: email) == id)
            await #expect(throws: ServerStoreError.duplicate) { try await Self.newUser(store, email: email) }

            let subject = "apple-\(UUID().uuidString)"
            let appleID = UUID()
            try await store.createUser(NewUser(id: appleID, email: nil, appleSubject: subject, createdAt: Self.now))
            #expect(try await store.userID(appleSubject: subject) == appleID)

            let slot = WrappedSlot(id: UUID(), kdf: KDFParameters(.defaultPBKDF2), salt: "c2FsdA==", wrappedKey: "a2V5")
            #expect(try await store.replaceCredentials(userID: id, authHash: "h2", slot: slot, manifest: nil) == .accepted(cursor: 0))
            let record = try #require(try await store.user(id: id))
            #expect(record.authHash == "h2" && record.slot == slot && record.email == email && record.deletedAt == nil)

            _ = try await store.push(userID: id, writes: [Self.write()], now: Self.now)
            try await store.createSession(userID: id, family: UUID(), tokenID: UUID(), now: Self.now, expiresAt: Self.now + 3600)
            try await store.softDeleteUser(id: id, at: Self.now)
            #expect(try await store.userID(email: email) == nil)
            #expect(try await store.user(id: id)?.deletedAt != nil)
            // The email is free again for a new account while the old one waits for its purge.
            let again = try await Self.newUser(store, email: email)

            let (early, due) = try await withMaintenance(of: store) { maintenance in
                (try await maintenance.purgeUsers(deletedBefore: Self.now), try await maintenance.purgeUsers(deletedBefore: Self.now + 1))
            }
            #expect(early == 0)
            #expect(due >= 1)
            #expect(try await store.user(id: id) == nil)
            #expect(try await store.changes(userID: id, since: 0, limit: 10).items.isEmpty)
            #expect(try await store.user(id: again) != nil)
        }
    }

    @Test("sessions: rotation, reuse revokes the family, expiry, revocation", arguments: Backend.allCases)
    func sessions(backend: Backend) async throws {
        try await backend.withStore { store in
            let user = try await Self.newUser(store)
            let family = UUID(), first = UUID(), second = UUID(), third = UUID()
            #expect(try await store.liveSessionCount(userID: user, now: Self.now) == 0)
            try await store.createSession(userID: user, family: family, tokenID: first, now: Self.now, expiresAt: Self.now + 3600)
            #expect(try await store.liveSessionCount(userID: user, now: Self.now) == 1)
            #expect(try await store.liveSessionCount(userID: user, now: Self.now + 3600) == 0)
            #expect(try await Self.isActive(store, userID: user, family: family, now: Self.now))
            #expect(
                try await store.rotateRefreshToken(userID: user, family: family, tokenID: first, newTokenID: second, now: Self.now, expiresAt: Self.now + 3600)
                    == .rotated)
            // The spent token again: the whole family goes, including the token it was exchanged for.
            #expect(
                try await store.rotateRefreshToken(userID: user, family: family, tokenID: first, newTokenID: third, now: Self.now, expiresAt: Self.now + 3600)
                    == .reused)
            #expect(
                try await store.rotateRefreshToken(userID: user, family: family, tokenID: second, newTokenID: third, now: Self.now, expiresAt: Self.now + 3600)
                    == .invalid)
            #expect(!(try await Self.isActive(store, userID: user, family: family, now: Self.now)))
            #expect(try await store.liveSessionCount(userID: user, now: Self.now) == 0)

            // Another user's id never finds this user's family: to the store that is a family it has no record of (only
            // a forged token pairs them, and the server checks signatures first).
            let other = try await Self.newUser(store)
            let family2 = UUID(), token2 = UUID()
            try await store.createSession(userID: user, family: family2, tokenID: token2, now: Self.now, expiresAt: Self.now + 60)
            #expect(
                try await store.rotateRefreshToken(userID: other, family: family2, tokenID: token2, newTokenID: UUID(), now: Self.now, expiresAt: Self.now + 60)
                    == .lost)
            #expect(!(try await Self.isActive(store, userID: other, family: family2, now: Self.now)))
            // Expired.
            #expect(!(try await Self.isActive(store, userID: user, family: family2, now: Self.now + 61)))
            #expect(
                try await store.rotateRefreshToken(
                    userID: user, family: family2, tokenID: token2, newTokenID: UUID(), now: Self.now + 61, expiresAt: Self.now + 120) == .invalid)

            // A database restored from a backup: a family, or a live family's token, issued after the backup is unknown
            // to it (lost); in a revoked family an unknown token is simply invalid.
            let restored = UUID(), restoredFirst = UUID()
            try await store.createSession(userID: user, family: restored, tokenID: restoredFirst, now: Self.now, expiresAt: Self.now + 3600)
            #expect(
                try await store.rotateRefreshToken(
                    userID: user, family: restored, tokenID: UUID(), newTokenID: UUID(), now: Self.now, expiresAt: Self.now + 3600) == .lost)
            #expect(
                try await store.rotateRefreshToken(userID: user, family: UUID(), tokenID: UUID(), newTokenID: UUID(), now: Self.now, expiresAt: Self.now + 3600)
                    == .lost)
            try await store.revokeSession(userID: user, family: restored)
            #expect(
                try await store.rotateRefreshToken(
                    userID: user, family: restored, tokenID: UUID(), newTokenID: UUID(), now: Self.now, expiresAt: Self.now + 3600) == .invalid)

            let keep = UUID(), drop = UUID()
            try await store.createSession(userID: user, family: keep, tokenID: UUID(), now: Self.now, expiresAt: Self.now + 3600)
            try await store.createSession(userID: user, family: drop, tokenID: UUID(), now: Self.now, expiresAt: Self.now + 3600)
            try await store.revokeSessions(userID: user, keeping: keep)
            #expect(try await Self.isActive(store, userID: user, family: keep, now: Self.now))
            #expect(!(try await Self.isActive(store, userID: user, family: drop, now: Self.now)))
            try await store.revokeSession(userID: user, family: keep)
            #expect(!(try await Self.isActive(store, userID: user, family: keep, now: Self.now)))
        }
    }

    @Test("refresh retry: the rotation's key gets the same successor while it is unused; any other second presentation revokes", arguments: Backend.allCases)
    func refreshRetry(backend: Backend) async throws {
        try await backend.withStore { store in
            let user = try await Self.newUser(store)
            let key = RefreshRetryKey(bytes: Array(repeating: 7, count: 32))!.digest
            let otherKey = RefreshRetryKey(bytes: Array(repeating: 8, count: 32))!.digest
            func rotate(_ family: UUID, _ token: UUID, _ digest: [UInt8]?, at now: Date = Self.now, next: UUID = UUID()) async throws -> RefreshOutcome {
                try await store.rotateRefreshToken(
                    userID: user, family: family, tokenID: token, newTokenID: next, retryKeyDigest: digest, now: now, expiresAt: now + 3600)
            }
            func session() async throws -> (family: UUID, first: UUID) {
                let family = UUID(), first = UUID()
                try await store.createSession(userID: user, family: family, tokenID: first, now: Self.now, expiresAt: Self.now + 3600)
                return (family, first)
            }

            // The answer was lost: the same key gets the same successor, as often as it is asked, and moves the expiry.
            let (family, first) = try await session()
            let second = UUID()
            #expect(try await rotate(family, first, key, next: second) == .rotated)
            #expect(try await rotate(family, first, key, at: Self.now + 60) == .retried(successor: second))
            #expect(try await rotate(family, first, key, at: Self.now + 1800) == .retried(successor: second))
            #expect(try await Self.isActive(store, userID: user, family: family, now: Self.now + 3600 + 60))
            // Once the successor was exchanged itself, the spent token is a replay even with its key.
            let third = UUID()
            #expect(try await rotate(family, second, key, at: Self.now + 1800, next: third) == .rotated)
            #expect(try await rotate(family, first, key, at: Self.now + 1800) == .reused)
            #expect(!(try await Self.isActive(store, userID: user, family: family, now: Self.now + 1800)))
            #expect(try await rotate(family, third, nil, at: Self.now + 1800) == .invalid)

            // A wrong key, no key, or a key where the rotation had none: the family goes.
            for (spentWith, presented) in [(key, otherKey), (key, nil), (nil, key), (nil, nil)] as [([UInt8]?, [UInt8]?)] {
                let (family, first) = try await session()
                let second = UUID()
                #expect(try await rotate(family, first, spentWith, next: second) == .rotated)
                #expect(try await rotate(family, first, presented) == .reused)
                #expect(!(try await Self.isActive(store, userID: user, family: family, now: Self.now)))
                #expect(try await rotate(family, second, spentWith) == .invalid)
            }

            // A successor that expired is not handed out again.
            let (late, lateFirst) = try await session()
            #expect(try await rotate(late, lateFirst, key) == .rotated)
            #expect(try await rotate(late, lateFirst, key, at: Self.now + 3601) == .reused)

            // Another user's id never retries this user's rotation.
            let (mine, mineFirst) = try await session()
            #expect(try await rotate(mine, mineFirst, key) == .rotated)
            let other = try await Self.newUser(store)
            #expect(
                try await store.rotateRefreshToken(
                    userID: other, family: mine, tokenID: mineFirst, newTokenID: UUID(), retryKeyDigest: key, now: Self.now,
                    expiresAt: Self.now + 3600) == .lost)
            #expect(try await Self.isActive(store, userID: user, family: mine, now: Self.now))
        }
    }

    @Test("refresh retry: concurrent retries get one successor; a keyless replay racing a retry ends the family", arguments: Backend.allCases)
    func refreshRetryConcurrent(backend: Backend) async throws {
        try await backend.withStore { store in
            let user = try await Self.newUser(store)
            let key = RefreshRetryKey(bytes: Array(repeating: 9, count: 32))!.digest
            for round in 0..<5 {
                let family = UUID(), first = UUID(), second = UUID()
                try await store.createSession(userID: user, family: family, tokenID: first, now: Self.now, expiresAt: Self.now + 3600)
                #expect(
                    try await store.rotateRefreshToken(
                        userID: user, family: family, tokenID: first, newTokenID: second, retryKeyDigest: key, now: Self.now,
                        expiresAt: Self.now + 3600) == .rotated)
                // Round 0..2: several retries at once, all honest. Later rounds: a thief without the key joins them.
                let thief = round >= 3
                let outcomes = try await withThrowingTaskGroup(of: RefreshOutcome.self) { group in
                    for index in 0..<6 {
                        let digest = thief && index == 3 ? nil : key
                        group.addTask {
                            try await store.rotateRefreshToken(
                                userID: user, family: family, tokenID: first, newTokenID: UUID(), retryKeyDigest: digest, now: Self.now,
                                expiresAt: Self.now + 3600)
                        }
                    }
                    var outcomes: [RefreshOutcome] = []
                    for try await outcome in group { outcomes.append(outcome) }
                    return outcomes
                }
                if thief {
                    #expect(outcomes.filter { $0 == .reused }.count == 1)
                    #expect(outcomes.allSatisfy { $0 == .reused || $0 == .invalid || $0 == .retried(successor: second) })
                    #expect(!(try await Self.isActive(store, userID: user, family: family, now: Self.now)))
                } else {
                    #expect(outcomes == Array(repeating: .retried(successor: second), count: 6))
                    #expect(try await Self.isActive(store, userID: user, family: family, now: Self.now))
                }
            }
        }
    }

    @Test("users never see each other's rows", arguments: Backend.allCases)
    func isolation(backend: Backend) async throws {
        try await backend.withStore { store in
            let alice = try await Self.newUser(store), bob = try await Self.newUser(store)
            let shared = UUID()
            _ = try await store.push(userID: alice, writes: [Self.write(shared), Self.write()], now: Self.now)
            // Bob writing Alice's item id makes Bob's own row.
            guard case .accepted = try await store.push(userID: bob, writes: [Self.write(shared, revision: 7)], now: Self.now)
            else { Issue.record("bob's push refused"); return }
            #expect(try await store.item(userID: alice, id: shared)?.revision == 1)
            #expect(try await store.item(userID: bob, id: shared)?.revision == 7)
            #expect(try await store.changes(userID: bob, since: 0, limit: 100).items.map(\.id) == [shared])
            #expect(try await store.items(userID: bob, kind: "note").count == 1)
            #expect(try await store.deleteAllItems(userID: bob) == 1)
            #expect(try await store.changes(userID: alice, since: 0, limit: 100).items.count == 2)
            await #expect(throws: ServerStoreError.notFound) { try await store.softDeleteUser(id: UUID(), at: Self.now) }
        }
    }

    /// The session half of `authorize`, on a counter of its own.
    static func isActive(_ store: any ServerStore, userID: UUID, family: UUID, now: Date) async throws -> Bool {
        try await store.authorize(userID: userID, family: family, counter: "test:\(UUID())", requests: 1, window: 60, now: now).sessionActive
    }

    @Test("authorize counts the request and checks the session in one call", arguments: Backend.allCases)
    func authorize(backend: Backend) async throws {
        try await backend.withStore { store in
            let user = try await Self.newUser(store)
            let family = UUID()
            try await store.createSession(userID: user, family: family, tokenID: UUID(), now: Self.now, expiresAt: Self.now + 3600)
            let key = "token:\(family)"
            for expected in 1...3 {
                let authorization = try await store.authorize(userID: user, family: family, counter: key, requests: 1, window: 60, now: Self.now)
                #expect(
                    authorization
                        == Authorization(
                            counter: CounterState(
                                count: expected,
                                windowEnds: Date(timeIntervalSince1970: Double(CounterWindow.start(Self.now, window: 60) + 60))),
                            sessionActive: true))
            }
            // The same counter `increment` and `counter` see; a refused session still counts its requests.
            #expect(try await store.counter(key, window: 60, now: Self.now).count == 3)
            #expect(
                try await store.authorize(userID: UUID(), family: family, counter: key, requests: 1, window: 60, now: Self.now)
                    == Authorization(counter: try await store.counter(key, window: 60, now: Self.now), sessionActive: false))
            #expect(try await store.counter(key, window: 60, now: Self.now).count == 4)
            #expect(try await store.authorize(userID: user, family: family, counter: key, requests: 1, window: 60, now: Self.now + 60).counter.count == 1)
            // Requests a server admitted from memory are counted together with the one checked.
            #expect(try await store.authorize(userID: user, family: family, counter: key, requests: 7, window: 60, now: Self.now + 60).counter.count == 8)
            #expect(try await store.authorize(userID: user, family: family, counter: key, requests: 5, window: 60, now: Self.now + 120).counter.count == 5)
            // A deleted account's session ends with it.
            try await store.softDeleteUser(id: user, at: Self.now)
            #expect(!(try await Self.isActive(store, userID: user, family: family, now: Self.now)))
        }
    }

    @Test("counters count within a window and restart in the next", arguments: Backend.allCases)
    func counters(backend: Backend) async throws {
        try await backend.withStore { store in
            let key = "test:\(UUID())"
            #expect(try await store.counter(key, window: 60, now: Self.now).count == 0)
            for expected in 1...3 {
                #expect(try await store.increment(counter: key, window: 60, now: Self.now).count == expected)
            }
            let state = try await store.counter(key, window: 60, now: Self.now + 1)
            #expect(state.count == 3)
            #expect(state.windowEnds.timeIntervalSince1970 == Double(CounterWindow.start(Self.now, window: 60) + 60))
            #expect(try await store.increment(counter: key, window: 60, now: Self.now + 60).count == 1)
        }
    }

    @Test("the audit log keeps events per user, newest first", arguments: Backend.allCases)
    func audit(backend: Backend) async throws {
        try await backend.withStore { store in
            let user = try await Self.newUser(store)
            try await store.audit(AuditEvent(at: Self.now, kind: .loginFailed, userID: user, address: "127.0.0.1"))
            try await store.audit(AuditEvent(at: Self.now + 1, kind: .refreshReused, userID: user, address: nil, detail: "family revoked"))
            try await store.audit(AuditEvent(at: Self.now, kind: .loginFailed, userID: nil, address: "10.0.0.1"))
            let events = try await store.auditEvents(userID: user, limit: 10)
            #expect(events.map(\.kind) == [.refreshReused, .loginFailed])
            #expect(events.first?.detail == "family revoked" && events.last?.address == "127.0.0.1")
            #expect(try await withMaintenance(of: store) { try await $0.auditEvents(limit: 10) }.count >= 3)
        }
    }
}
