@_spi(Testing) import CofferCrypto
@_spi(Sync) import CofferKit
import CofferServerStore
@testable import CofferSync
import CofferServerTestSupport
import CofferSyncAPI
import CofferTestSupport
import CofferVault
import Foundation
import GRDB
import Testing

/// Master-key rotation of a synced vault (docs/FORMAT.md §8.8) against the real `coffer-server`: one device rotates,
/// the others notice the new key epoch, log in once and go on; every step survives a crash on either side.
@Suite("Rotating a synced vault's master key")
struct SyncRotationTests {
    typealias World = HostileServerTests.World

    /// The device's session again, as a new process would open it (the vault and key store as they are on disk).
    static func reopened(_ session: SyncSession) throws -> SyncSession {
        SyncSession(coffer: try Coffer.open(at: session.coffer.location), client: session.client)
    }

    static func login(_ session: SyncSession, _ world: World, vaultPassphrase: String? = nil) async throws -> SyncSession {
        try await SyncSession.login(
            location: session.coffer.location, client: session.client, email: world.email, passphrase: SyncTesting.passphrase,
            localPassphrase: vaultPassphrase, allowWeakKDF: true)
    }

    /// The account slot as the server hands it out, opened with the passphrase.
    static func accountKey(_ world: World) async throws -> SecretBytes {
        let client = try SyncClient(server: world.server)
        let parameters = try await client.prelogin(email: world.email)
        let kdf = try parameters.kdf.kdf(limits: .testing)
        let salt = Array(try #require(Data(base64Encoded: parameters.salt)))
        let keys = try SyncKeys(passphrase: SyncTesting.passphrase, kdf: kdf, salt: salt, limits: .testing)
        let answer = try await client.login(LoginRequest(email: world.email, authKey: keys.authKeyBase64))
        let slot = try #require(answer.slot)
        let header = try slot.header(limits: .testing)
        let vaultID = try #require(answer.vaultID)
        return try header.unwrap(try #require(Data(base64Encoded: slot.wrappedKey)), vaultID: vaultID.bytes, kek: keys.keyEncryptionKey)
    }

    @Test("one device rotates; another notices, logs in once, keeps its unpushed edit without a conflict copy; a new device joins")
    func rotateAndFollow() async throws {
        try await HostileServerTests.withWorld { world in
            let before = try SyncTesting.contents(world.a.coffer)
            let oldKey = try await Self.accountKey(world)
            #expect(world.a.coffer.vault.hasMasterKey(oldKey))
            // B edits while A rotates: the edit is not pushed yet.
            _ = try world.b.coffer.vault.modify(id: world.notes[0]) { $0 = try SyncTesting.note("Edited on B", "during the rotation") }

            let report = try await world.a.rotateMasterKey(accountPassphrase: SyncTesting.passphrase, vaultPassphrase: nil)
            #expect(report.rotation.itemCount == before.count)
            #expect(try SyncTesting.contents(world.a.coffer) == before)
            let newKey = try await Self.accountKey(world)
            #expect(world.a.coffer.vault.hasMasterKey(newKey) && !newKey.isEqual(to: oldKey))
            #expect(Int64(report.head.keyEpoch) > 1)
            // A's vault opens from disk with the promoted device key.
            let reopenedA = try Self.reopened(world.a)
            #expect(try SyncTesting.contents(reopenedA.coffer) == before)

            // B finds a head made under a key it does not hold: refused, nothing changed.
            try await HostileServerTests.expectRefusal(world.b, .newerKeyEpoch(Int64(report.head.keyEpoch)))
            let b = try await Self.login(world.b, world)
            #expect(b.keyChange != nil)
            #expect(b.coffer.vault.hasMasterKey(newKey))
            let synced = try await b.sync()
            #expect(synced.merge.conflictCopies == 0)
            #expect(try b.coffer.vault.syncConflicts().isEmpty)
            _ = try await world.a.sync()
            let expected = try SyncTesting.contents(world.a.coffer)
            #expect(try SyncTesting.contents(b.coffer) == expected)
            #expect(expected[world.notes[0]] == (try SyncTesting.note("Edited on B", "during the rotation")))
            #expect(try world.a.verifiedHead()?.manifest == (try b.verifiedHead()?.manifest))

            // A new device gets the new key from the slot and the whole state.
            let c = try await world.newDevice()
            _ = try await c.sync()
            #expect(try SyncTesting.contents(c.coffer) == expected)
            #expect(c.coffer.vault.hasMasterKey(newKey))
        }
    }

    @Test("a device that missed two rotations and edits in between takes the newest key at one login")
    func missedTwoRotations() async throws {
        try await HostileServerTests.withWorld { world in
            _ = try await world.a.rotateMasterKey(accountPassphrase: SyncTesting.passphrase, vaultPassphrase: nil)
            try await HostileServerTests.edit(world.a, world.notes[2], "between the rotations")
            let second = try await world.a.rotateMasterKey(accountPassphrase: SyncTesting.passphrase, vaultPassphrase: nil)
            #expect(second.head.keyEpoch == 3)
            try await HostileServerTests.expectRefusal(world.b, .newerKeyEpoch(3))
            let b = try await Self.login(world.b, world)
            _ = try await b.sync()
            #expect(try SyncTesting.contents(b.coffer) == (try SyncTesting.contents(world.a.coffer)))
            #expect(try b.verifiedHead()?.manifest == second.head)
            // B goes on pushing under the new key, and A verifies it.
            try await HostileServerTests.edit(b, world.notes[0], "after catching up")
            _ = try await world.a.sync()
            #expect(try SyncTesting.contents(world.a.coffer) == (try SyncTesting.contents(b.coffer)))
        }
    }

    @Test("a device that missed the rotation and has a passphrase slot of its own is asked for that passphrase")
    func followerWithOwnPassphrase() async throws {
        try await HostileServerTests.withWorld { world in
            try world.b.coffer.vault.setPassphrase("b's own vault passphrase", kdf: .pbkdf2SHA256(iterations: 1_000))
            _ = try await world.a.rotateMasterKey(accountPassphrase: SyncTesting.passphrase, vaultPassphrase: nil)
            do {
                _ = try await Self.login(world.b, world)
                Issue.record("a login took the new key without this vault's own passphrase")
            } catch SyncError.vaultPassphraseNeeded {
            } catch {
                Issue.record("expected vaultPassphraseNeeded, got \(error)")
            }
            // Nothing changed here: the old key still opens the vault.
            #expect(try SyncTesting.contents(try Self.reopened(world.b).coffer).count == 4)
            let b = try await Self.login(world.b, world, vaultPassphrase: "b's own vault passphrase")
            _ = try await b.sync()
            #expect(try SyncTesting.contents(b.coffer) == (try SyncTesting.contents(world.a.coffer)))
            // The passphrase slot was re-wrapped under the new key.
            let location = b.coffer.location
            let opened = try Coffer.open(at: location, unlock: .passphrase("b's own vault passphrase"), addDeviceSlot: false)
            #expect(try opened.vault.items().count == 4)
        }
    }

    @Test("a crash after the server committed the rotation: the next sync finishes it here")
    func crashAfterServerCommit() async throws {
        try await HostileServerTests.withWorld { world in
            let before = try SyncTesting.contents(world.a.coffer)
            // Everything `rotateMasterKey` does up to the server's commit, then the process "dies".
            let manifest = try await Self.prepareAndCommitOnServer(world)
            let a = try Self.reopened(world.a)
            #expect(try a.coffer.vault.preparedRotation() != nil)
            let report = try await a.sync()
            #expect(report.finishedRotation != nil)
            #expect(try a.coffer.vault.preparedRotation() == nil)
            #expect(try SyncTesting.contents(a.coffer) == before)
            #expect(try a.verifiedHead()?.manifest == manifest)
            #expect(a.coffer.vault.hasMasterKey(try await Self.accountKey(world)))
            let b = try await Self.login(world.b, world)
            _ = try await b.sync()
            #expect(try SyncTesting.contents(b.coffer) == before)
        }
    }

    @Test("a crash before the server committed: the next sync drops the rotation on both sides, the old key goes on")
    func crashBeforeServerCommit() async throws {
        try await HostileServerTests.withWorld { world in
            let before = try SyncTesting.contents(world.a.coffer)
            let oldKey = try await Self.accountKey(world)
            _ = try await Self.prepareAndCommitOnServer(world, commit: false)
            let staged = try await world.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM rotation_items") }
            #expect(staged == 4)
            let a = try Self.reopened(world.a)
            let report = try await a.sync()
            #expect(report.finishedRotation == nil)
            #expect(try a.coffer.vault.preparedRotation() == nil)
            #expect(a.coffer.vault.hasMasterKey(oldKey))
            #expect(try SyncTesting.contents(a.coffer) == before)
            let left = try await world.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM rotation_items") }
            #expect(left == 0)
            _ = try await world.b.sync()
            #expect(try SyncTesting.contents(world.b.coffer) == before)
        }
    }

    @Test("a change another device pushes between the rotation's staging and its commit: refused whole, then rotated again")
    func raceWithAnotherDevice() async throws {
        try await HostileServerTests.withWorld { world in
            _ = try await Self.prepareAndCommitOnServer(world, commit: false)
            // B changes the vault before A's commit: the commit must find a newer head.
            try await HostileServerTests.edit(world.b, world.notes[1], "pushed by B first")
            let access = try await world.a.freshAccessToken()
            let prepared = try #require(try world.a.coffer.vault.preparedRotation())
            await #expect(throws: SyncClientError.self) {
                _ = try await world.a.client.commitRotation(
                    prepared.id, try await Self.commitRequest(world, manifest: try #require(prepared.manifest).bytes),
                    accessToken: access)
            }
            // The server's state is B's push, whole: the staged rows did not land.
            let report = try await world.a.rotateMasterKey(accountPassphrase: SyncTesting.passphrase, vaultPassphrase: nil)
            #expect(report.rotation.itemCount == 4)
            let b = try await Self.login(world.b, world)
            _ = try await b.sync()
            let contents = try SyncTesting.contents(b.coffer)
            #expect(contents == (try SyncTesting.contents(world.a.coffer)))
            #expect(contents[world.notes[1]] == (try SyncTesting.note("Edited", "pushed by B first")))
        }
    }

    @Test("a server that hands out the pre-rotation slot after a rotation is caught at login")
    func revertedSlot() async throws {
        try await HostileServerTests.withWorld { world in
            let oldSlot = try await world.database.read { db in
                try String.fetchOne(db, sql: "SELECT slot FROM users WHERE email = ?", arguments: [world.email])
            }
            _ = try await world.a.rotateMasterKey(accountPassphrase: SyncTesting.passphrase, vaultPassphrase: nil)
            try await world.tamper { db, user in
                try db.execute(sql: "UPDATE users SET slot = ? WHERE id = ?", arguments: [oldSlot, user])
            }
            // A new device is handed the old key: the head (made under the new one) does not verify, and nothing is
            // created here.
            await HostileServerTests.expectFailure(.forgedManifest(epoch: 2)) {
                let c = try await world.newDevice()
                _ = try await c.sync()
            }
            // B, still on the old key, sees nothing to take and a head it cannot verify.
            await HostileServerTests.expectFailure(.newerKeyEpoch(2)) { _ = try await world.b.sync() }
        }
    }

    @Test("a server that breaks the chain to the rotated head is refused at login, and the vault keeps its key and items")
    func brokenChainAtLogin() async throws {
        try await HostileServerTests.withWorld { world in
            let rotation = try await world.a.rotateMasterKey(accountPassphrase: SyncTesting.passphrase, vaultPassphrase: nil)
            try await HostileServerTests.edit(world.a, world.notes[0], "after the rotation")
            // The rotation's manifest goes: the head (epoch 3) no longer links to what B verified (epoch 1).
            try await world.tamper { db, user in
                try db.execute(
                    sql: "DELETE FROM manifests WHERE user_id = ? AND epoch = ?", arguments: [user, rotation.head.epoch])
            }
            let before = try HostileServerTests.Snapshot(world.b.coffer)
            await HostileServerTests.expectFailure(.brokenChain(epoch: rotation.head.epoch)) {
                _ = try await Self.login(world.b, world)
            }
            let reopened = try Self.reopened(world.b)
            #expect(try HostileServerTests.Snapshot(reopened.coffer) == before)
            #expect(!reopened.coffer.vault.hasMasterKey(try await Self.accountKey(world)))
        }
    }

    // MARK: Helpers

    /// Does what `rotateMasterKey` does on device A up to the server's commit (and the commit, unless `commit` is
    /// false), without finishing here: a process killed at that point.
    static func prepareAndCommitOnServer(_ world: World, commit: Bool = true) async throws -> Manifest {
        let a = world.a
        _ = try await a.sync()
        let account = try #require(try a.coffer.vault.syncAccount())
        let verified = try Manifest(bytes: try #require(account.head))
        let prepared = try a.coffer.prepareSyncedRotation(passphrase: nil, accountKeyEpoch: Int64(verified.keyEpoch))
        let rows = try a.coffer.vault.preparedRotationRows()
        let known = try a.coffer.vault.syncedRows()
        let access = try await a.freshAccessToken()
        _ = try await a.client.stageRotation(
            prepared.id, RotationItemsRequest(items: rows.map { PushItem(item: $0, baseRevision: known.revisions[$0.id] ?? 0) }),
            accessToken: access)
        var leaves = known.leaves
        for row in rows { leaves[row.id] = row.leaf }
        var manifest = Manifest(
            vaultID: a.coffer.vault.vaultID, epoch: verified.epoch + 1, previous: verified.hash, root: StateRoot.root(leaves),
            count: UInt32(leaves.count), device: account.device, madeAt: UnixTime.milliseconds(Date()),
            keyEpoch: UInt32(prepared.keyEpoch), account: verified.account)
        manifest.tag = try a.coffer.vault.preparedManifestKeys(rotationEpoch: manifest.epoch).tags(body: manifest.body, epoch: manifest.epoch)[0]
        try a.coffer.vault.recordPreparedManifest(epoch: manifest.epoch, bytes: manifest.bytes)
        if commit {
            _ = try await a.client.commitRotation(prepared.id, try await commitRequest(world, manifest: manifest.bytes), accessToken: access)
        }
        return manifest
    }

    /// The commit of A's prepared rotation: its slot wrapped under the account passphrase.
    static func commitRequest(_ world: World, manifest: [UInt8]) async throws -> RotationCommitRequest {
        let vault = world.a.coffer.vault
        let prepared = try #require(try vault.preparedRotation())
        let parameters = try await SyncClient(server: world.server).prelogin(email: world.email)
        let kdf = try parameters.kdf.kdf(limits: .testing)
        let salt = Array(try #require(Data(base64Encoded: parameters.salt)))
        let keys = try SyncKeys(passphrase: SyncTesting.passphrase, kdf: kdf, salt: salt, limits: .testing)
        let header = SlotHeader(slotID: SystemRandom().bytes(16), type: .passphrase, kdf: kdf, salt: salt)
        let wrapped = try vault.wrapPreparedMasterKey(for: header, kek: keys.keyEncryptionKey)
        return RotationCommitRequest(
            authKey: keys.authKeyBase64,
            slot: WrappedSlot(
                id: UUID(bytes: header.slotID), kdf: parameters.kdf, salt: parameters.salt, wrappedKey: wrapped.base64EncodedString()),
            baseEpoch: (try #require(prepared.manifest)).epoch - 1, manifest: Data(manifest).base64EncodedString(),
            items: prepared.rowCount)
    }
}
