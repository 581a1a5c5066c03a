import CofferCrypto
import CofferServerStore
import CofferServerTestSupport
import CofferSyncAPI
import Foundation
import Testing

/// The store's rows: pushes and the feed, protected rows, manifests and staged rotations.
extension StoreConformanceTests {
    @Test("push: all or nothing, conflicts carry the stored rows, feed in change order with pages", arguments: Backend.allCases)
    func pushAndChanges(backend: Backend) async throws {
        try await backend.withStore { store in
            let user = try await Self.newUser(store)
            let a = UUID(), b = UUID(), c = UUID()
            guard case .accepted(let first) = try await store.push(userID: user, writes: [Self.write(a), Self.write(b)], now: Self.now)
            else { Issue.record("first push refused"); return }
            #expect(first == 2)
            // One stale write spoils the batch: c must not appear.
            let outcome = try await store.push(
                userID: user, writes: [Self.write(c), Self.write(a, revision: 3, base: 2)], now: Self.now)
            guard case .conflicts(let stored) = outcome else { Issue.record("stale push accepted"); return }
            #expect(stored.map(\.id) == [a] && stored.first?.revision == 1)
            #expect(try await store.item(userID: user, id: c) == nil)

            guard
                case .accepted(let second) = try await store.push(
                    userID: user, writes: [Self.write(a, revision: 2, base: 1), Self.write(b, revision: 2, base: 1, deleted: true)], now: Self.now)
            else { Issue.record("second push refused"); return }
            #expect(second == 4)
            let all = try await store.changes(userID: user, since: 0, limit: 10)
            #expect(all.items.map(\.id) == [a, b] && all.cursor == 4 && !all.hasMore)
            #expect(all.items[1].deleted && all.items[1].box == nil)
            let page = try await store.changes(userID: user, since: 0, limit: 1)
            #expect(page.items.count == 1 && page.hasMore && page.cursor == page.items[0].sequence)
            #expect(try await store.changes(userID: user, since: 4, limit: 10).items.isEmpty)
            #expect(try await store.items(userID: user, kind: "note").map(\.id) == [a])
            let usage = try await store.usage(userID: user)
            #expect(usage.items == 1 && usage.cursor == 4 && usage.bytes == Self.write(a, revision: 2).box?.count)

            #expect(try await store.deleteAllItems(userID: user) == 2)
            #expect(try await store.changes(userID: user, since: 0, limit: 10).items.isEmpty)
            // After a revoke any base is accepted: the server has nothing left to lose.
            guard case .accepted = try await store.push(userID: user, writes: [Self.write(a, revision: 5, base: 4)], now: Self.now)
            else { Issue.record("push after revoke refused"); return }
        }
    }

    @Test("a write without meta never replaces or deletes a row stored with meta (a card); the whole push is refused", arguments: Backend.allCases)
    func protectedItems(backend: Backend) async throws {
        try await backend.withStore { store in
            let user = try await Self.newUser(store)
            let card = UUID(), other = UUID()
            var created = Self.write(card, kind: "cardoncue.card")
            created.meta = #"{"name":"Costco"}"#
            #expect(try await store.push(userID: user, writes: [created], now: Self.now) == .accepted(cursor: 1))
            let stored = try #require(try await store.item(userID: user, id: card))
            let attempts: [[ItemWrite]] = [
                [Self.write(other), Self.write(card, revision: 2, base: 1)],
                [Self.write(card, revision: 2, base: 1, deleted: true)],
                [Self.write(card, revision: 2, base: 1, kind: "cardoncue.card")],
                // Refused, not a conflict: pulling and pushing again would not help.
                [Self.write(card, revision: 5, base: 3)],
            ]
            for writes in attempts {
                await #expect(throws: ServerStoreError.protectedItem) { try await store.push(userID: user, writes: writes, now: Self.now) }
            }
            #expect(try await store.item(userID: user, id: card) == stored)
            #expect(try await store.item(userID: user, id: other) == nil)
            #expect(try await store.usage(userID: user).cursor == 1)
            // The card face's own writes carry meta and go on.
            var edited = Self.write(card, revision: 2, base: 1, kind: "cardoncue.card")
            edited.meta = #"{"name":"Costco Wholesale"}"#
            #expect(try await store.push(userID: user, writes: [edited], now: Self.now) == .accepted(cursor: 2))
        }
    }

    @Test("manifests: stored with their push at its feed position, only onto the head they extend; required once one exists", arguments: Backend.allCases)
    func manifests(backend: Backend) async throws {
        try await backend.withStore { store in
            let user = try await Self.newUser(store)
            let first = Data(repeating: 1, count: 188), second = Data(repeating: 2, count: 188), third = Data(repeating: 3, count: 188)
            #expect(
                try await store.push(
                    userID: user, writes: [Self.write(), Self.write()],
                    manifest: ManifestWrite(baseEpoch: 0, epoch: 1, bytes: first), now: Self.now) == .accepted(cursor: 2))
            // Another device that saw no head, or an old one, is turned away with the head's epoch; nothing is written.
            #expect(
                try await store.push(
                    userID: user, writes: [Self.write()], manifest: ManifestWrite(baseEpoch: 0, epoch: 1, bytes: second),
                    now: Self.now) == .staleHead(epoch: 1))
            // Once a head exists, a state change needs a manifest; the CardOnCue face's own rows do not.
            #expect(try await store.push(userID: user, writes: [Self.write()], now: Self.now) == .manifestRequired)
            #expect(try await store.push(userID: user, writes: [Self.write(kind: "cardoncue.card")], now: Self.now) == .accepted(cursor: 3))
            #expect(try await store.usage(userID: user).items == 3)
            // A manifest alone (nothing else changed), and a chain put back before a new head.
            #expect(
                try await store.push(
                    userID: user, writes: [], manifest: ManifestWrite(baseEpoch: 1, epoch: 2, bytes: second), now: Self.now)
                    == .accepted(cursor: 3))
            #expect(
                try await store.push(
                    userID: user, writes: [Self.write()],
                    manifest: ManifestWrite(baseEpoch: 2, manifests: [.init(epoch: 3, bytes: third), .init(epoch: 4, bytes: first)]),
                    now: Self.now) == .accepted(cursor: 4))
            #expect(try await store.manifests(userID: user, after: 1, limit: 10).map(\.epoch) == [2, 3, 4])
            #expect(try await store.manifests(userID: user, after: 0, limit: 2).map(\.bytes) == [first, second])
            #expect(try await store.head(userID: user, atOrBefore: 2)?.epoch == 1)
            #expect(try await store.head(userID: user, atOrBefore: 3)?.epoch == 2)
            #expect(try await store.head(userID: user, atOrBefore: 4)?.bytes == first)
            #expect(try await store.usage(userID: user).headEpoch == 4)
            // Onto a verified head, a write based on a row the server does not hold is a conflict with no copy to list:
            // the head names a row it lost. Nothing is written.
            let lost = Self.write(revision: 3, base: 2)
            #expect(
                try await store.push(
                    userID: user, writes: [Self.write(), lost], manifest: ManifestWrite(baseEpoch: 4, epoch: 5, bytes: third),
                    now: Self.now) == .conflicts([]))
            #expect(try await store.item(userID: user, id: lost.id) == nil)
            #expect(try await store.usage(userID: user).headEpoch == 4)
            // A passphrase change carries its manifest the same way.
            let slot = WrappedSlot(id: UUID(), kdf: KDFParameters(.defaultPBKDF2), salt: "c2FsdA==", wrappedKey: "a2V5")
            #expect(try await store.replaceCredentials(userID: user, authHash: "h2", slot: slot, manifest: nil) == .manifestRequired)
            #expect(
                try await store.replaceCredentials(
                    userID: user, authHash: "h2", slot: slot, manifest: ManifestWrite(baseEpoch: 3, epoch: 4, bytes: second)) == .staleHead(epoch: 4))
            #expect(try await store.user(id: user)?.authHash == "h")
            #expect(
                try await store.replaceCredentials(
                    userID: user, authHash: "h2", slot: slot, manifest: ManifestWrite(baseEpoch: 4, epoch: 5, bytes: second)) == .accepted(cursor: 4))
            #expect(try await store.user(id: user)?.slot == slot)
            // Revoking sync deletes the manifests with the items.
            _ = try await store.deleteAllItems(userID: user)
            #expect(try await store.manifests(userID: user, after: 0, limit: 10).isEmpty)
            #expect(try await store.usage(userID: user).headEpoch == 0)
            // A quota: a push that grows the live boxes past it is refused whole; one that does not grow them lands.
            let usage = try await store.usage(userID: user).bytes
            let grown = Self.write()
            let limit = Int64(usage) + Int64(grown.box?.count ?? 0) - 1
            #expect(
                try await store.push(userID: user, writes: [grown], manifest: nil, maxStoredBytes: limit, now: Self.now)
                    == .quotaExceeded(limit: limit))
            #expect(try await store.item(userID: user, id: grown.id) == nil)
            #expect(
                try await store.push(userID: user, writes: [grown], manifest: nil, maxStoredBytes: limit + 1, now: Self.now)
                    == .accepted(cursor: 5))
            // With no head left, the server has nothing to lose: such a write is taken.
            #expect(try await store.push(userID: user, writes: [Self.write(revision: 3, base: 2)], now: Self.now) == .accepted(cursor: 6))
        }
    }

    @Test("rotations: staged rows stay out of every read until one commit applies them with the slot and the manifest", arguments: Backend.allCases)
    func rotations(backend: Backend) async throws {
        try await backend.withStore { store in
            let user = try await Self.newUser(store)
            let other = try await Self.newUser(store)
            let (a, b) = (UUID(), UUID())
            let head = Data(repeating: 1, count: 188), rotated = Data(repeating: 2, count: 188)
            #expect(
                try await store.push(
                    userID: user, writes: [Self.write(a), Self.write(b)], manifest: ManifestWrite(baseEpoch: 0, epoch: 1, bytes: head),
                    now: Self.now) == .accepted(cursor: 2))
            let rotation = UUID()
            #expect(try await store.stageRotation(userID: user, rotation: rotation, writes: [Self.write(a, revision: 2, base: 1)], now: Self.now) == 1)
            // Staging the same item again replaces it; another rotation and another user stage apart.
            #expect(
                try await store.stageRotation(
                    userID: user, rotation: rotation, writes: [Self.write(a, revision: 2, base: 1), Self.write(b, revision: 2, base: 1)],
                    now: Self.now) == 2)
            #expect(try await store.stageRotation(userID: user, rotation: UUID(), writes: [Self.write(a, revision: 2, base: 1)], now: Self.now) == 1)
            #expect(try await store.stageRotation(userID: other, rotation: rotation, writes: [Self.write(a)], now: Self.now) == 1)
            // Nothing staged is seen.
            let page = try await store.changes(userID: user, since: 0, limit: 10)
            #expect(page.items.map(\.revision) == [1, 1] && page.cursor == 2)
            let slot = WrappedSlot(id: UUID(), kdf: KDFParameters(.defaultPBKDF2), salt: "c2FsdA==", wrappedKey: "bmV3")
            // A commit naming another count, or an old head, changes nothing.
            #expect(
                try await store.commitRotation(
                    userID: user, rotation: rotation, expectedRows: 3, slot: slot, manifest: ManifestWrite(baseEpoch: 1, epoch: 2, bytes: rotated),
                    now: Self.now) == .incompleteRotation(staged: 2))
            #expect(
                try await store.commitRotation(
                    userID: user, rotation: rotation, expectedRows: 2, slot: slot, manifest: ManifestWrite(baseEpoch: 0, epoch: 1, bytes: rotated),
                    now: Self.now) == .staleHead(epoch: 1))
            #expect(try await store.user(id: user)?.slot == nil)
            #expect(try await store.usage(userID: user).headEpoch == 1)
            // The commit: rows, slot and manifest together; every staged row of the account goes, another user's stays.
            #expect(
                try await store.commitRotation(
                    userID: user, rotation: rotation, expectedRows: 2, slot: slot, manifest: ManifestWrite(baseEpoch: 1, epoch: 2, bytes: rotated),
                    now: Self.now) == .accepted(cursor: 4))
            #expect(try await store.changes(userID: user, since: 2, limit: 10).items.map(\.revision) == [2, 2])
            #expect(try await store.user(id: user)?.slot == slot)
            #expect(try await store.head(userID: user, atOrBefore: 4)?.bytes == rotated)
            #expect(
                try await store.commitRotation(
                    userID: user, rotation: rotation, expectedRows: 2, slot: slot, manifest: ManifestWrite(baseEpoch: 2, epoch: 3, bytes: head),
                    now: Self.now) == .incompleteRotation(staged: 0))
            // A staged row whose base is stale makes the commit a conflict, whole.
            let late = UUID()
            #expect(try await store.stageRotation(userID: other, rotation: late, writes: [Self.write(b, revision: 5, base: 4)], now: Self.now) == 1)
            #expect(try await store.push(userID: other, writes: [Self.write(b)], now: Self.now) == .accepted(cursor: 1))
            guard
                case .conflicts(let stored) = try await store.commitRotation(
                    userID: other, rotation: late, expectedRows: 1, slot: slot, manifest: ManifestWrite(baseEpoch: 0, epoch: 1, bytes: head),
                    now: Self.now)
            else {
                Issue.record("a stale staged row was committed")
                return
            }
            #expect(stored.map(\.id) == [b])
            #expect(try await store.user(id: other)?.slot == nil)
            // Discarding and revoking drop staged rows.
            try await store.discardRotation(userID: other, rotation: rotation)
            #expect(try await store.stageRotation(userID: other, rotation: rotation, writes: [Self.write(a)], now: Self.now) == 1)
            _ = try await store.deleteAllItems(userID: other)
            #expect(
                try await store.commitRotation(
                    userID: other, rotation: rotation, expectedRows: 1, slot: slot, manifest: ManifestWrite(baseEpoch: 0, epoch: 1, bytes: head),
                    now: Self.now) == .incompleteRotation(staged: 0))
        }
    }
}
