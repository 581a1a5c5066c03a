@_spi(Testing) import CofferCrypto
import CofferKeystore
@_spi(Sync) import CofferKit
import CofferModel
import CofferServerStore
import CofferServerTestSupport
import CofferSync
import CofferSyncAPI
import CofferTestSupport
import CofferVault
import Foundation
import GRDB
import Testing

extension HostileServerTests {
    @Test("a replayed old revision")
    func replayedRevision() async throws {
        try await Self.withWorld { world in
            let id = world.notes[0].uuidString.lowercased()
            let old: (revision: Int64, updatedAt: Int64, box: Data) = try await world.database.read { db in
                let row = try Row.fetchOne(db, sql: "SELECT revision, updated_at, box FROM items WHERE id = ?", arguments: [id])
                return (row?["revision"] ?? 0, row?["updated_at"] ?? 0, row?["box"] ?? Data())
            }
            try await Self.edit(world.a, world.notes[0], "one")
            _ = try await world.b.sync()
            try await Self.edit(world.a, world.notes[1], "two")
            try await world.tamper { db, user in
                try db.execute(
                    sql: "UPDATE items SET revision = ?, updated_at = ?, box = ?, seq = ? WHERE user_id = ? AND id = ?",
                    arguments: [old.revision, old.updatedAt, old.box, try World.nextSequence(db, user), user, id])
            }
            try await Self.expectRefusal(world.b, .replayedRevision(world.notes[0]))
        }
    }

    @Test("a forged tombstone")
    func forgedTombstone() async throws {
        try await Self.withWorld { world in
            try await Self.edit(world.a, world.notes[0], "one")
            try await world.tamper { db, user in
                try db.execute(
                    sql: "UPDATE items SET deleted = 1, box = NULL, size = 0, revision = revision + 1, seq = ? WHERE user_id = ? AND id = ?",
                    arguments: [try World.nextSequence(db, user), user, world.notes[2].uuidString.lowercased()])
            }
            try await Self.expectRefusal(world.b, .forgedDeletion(world.notes[2]))
        }
    }

    @Test("a missing manifest, and manifests out of order")
    func brokenChain() async throws {
        for attack in ["missing", "reordered"] {
            try await Self.withWorld { world in
                for (index, text) in ["one", "two", "three"].enumerated() {
                    try await Self.edit(world.a, world.notes[index], text)
                }
                // B verified epoch 1; the server holds 2, 3, 4.
                try await world.tamper { db, user in
                    if attack == "missing" {
                        try db.execute(sql: "DELETE FROM manifests WHERE user_id = ? AND epoch = 3", arguments: [user])
                    } else {
                        let second = try Data.fetchOne(db, sql: "SELECT body FROM manifests WHERE user_id = ? AND epoch = 2", arguments: [user])
                        let third = try Data.fetchOne(db, sql: "SELECT body FROM manifests WHERE user_id = ? AND epoch = 3", arguments: [user])
                        try db.execute(sql: "UPDATE manifests SET body = ? WHERE user_id = ? AND epoch = 2", arguments: [third, user])
                        try db.execute(sql: "UPDATE manifests SET body = ? WHERE user_id = ? AND epoch = 3", arguments: [second, user])
                    }
                }
                try await Self.expectRefusal(world.b, attack == "missing" ? .brokenChain(epoch: 3) : .brokenChain(epoch: 2))
            }
        }
    }

    @Test("a rolled-back head: an older state the device verified reads as a restore, one it never saw as an attack")
    func rolledBack() async throws {
        try await Self.withWorld { world in
            try await Self.edit(world.a, world.notes[0], "one")
            try await Self.edit(world.a, world.notes[1], "two")
            _ = try await world.b.sync()
            // C joins at epoch 3 and so never saw epoch 2.
            let c = try await world.newDevice()
            _ = try await c.sync()
            // The server forgets the last push's manifest.
            try await world.tamper { db, user in
                try db.execute(sql: "DELETE FROM manifests WHERE user_id = ? AND epoch = 3", arguments: [user])
            }
            try await Self.expectRefusal(world.b, .restored(serverEpoch: 2, verifiedEpoch: 3))
            try await Self.expectRefusal(c, .rolledBack(serverEpoch: 2, verifiedEpoch: 3))
            // Republishing onto a state C never verified is refused too.
            await Self.expectFailure(.rolledBack(serverEpoch: 2, verifiedEpoch: 3)) { _ = try await c.republish() }
        }
    }

    @Test("a server restored from a backup: reported as such, republished by a device, and every device continues")
    func restoredServer() async throws {
        try await Self.withWorld { world in
            try await Self.edit(world.a, world.notes[0], "one")
            _ = try await world.b.sync()
            let backup = try await world.database.read(Self.tables)
            try await Self.edit(world.a, world.notes[1], "two")
            try await Self.edit(world.a, world.notes[2], "three")
            _ = try await world.b.sync()
            // A device that joined after the backup was taken.
            let c = try await world.newDevice()
            _ = try await c.sync()
            // B has an edit queued when the server comes back from the backup (epoch 2, its feed numbered anew).
            _ = try world.b.coffer.vault.modify(id: world.notes[0]) { $0 = try SyncTesting.note("Edited", "on B") }
            try await world.tamper { db, _ in try Self.restore(db, backup) }
            try await Self.expectRefusal(world.b, .restored(serverEpoch: 2, verifiedEpoch: 4))
            let report = try await world.b.republish()
            #expect(report.head?.epoch == 5 && report.pushed == 3)
            // Every device continues, whatever it had verified, and all hold the same items.
            _ = try await world.a.sync()
            _ = try await c.sync()
            let heads = try [world.a, world.b, c].map { try #require(try $0.verifiedHead()).manifest }
            #expect(Set(heads.map(\.fingerprint)).count == 1 && heads[0].epoch == 5)
            let contents = try SyncTesting.contents(world.b.coffer)
            #expect(try SyncTesting.contents(world.a.coffer) == contents && SyncTesting.contents(c.coffer) == contents)
            #expect(try SyncTesting.names(world.a.coffer).contains("Edited"))
        }
    }

    @Test("a fork: each device is shown the other's history once they meet")
    func fork() async throws {
        try await Self.withWorld { world in
            // The server keeps the state both devices verified (epoch 1) ...
            let snapshot = try await world.database.read(Self.tables)
            // ... lets A move on (epoch 2), and keeps that world too ...
            try await Self.edit(world.a, world.notes[0], "A's")
            let worldA = try await world.database.read(Self.tables)
            // ... shows B the old one, where B makes its own epoch 2 ...
            try await world.tamper { db, _ in try Self.restore(db, snapshot) }
            try await Self.edit(world.b, world.notes[1], "B's")
            // ... and then shows B A's world.
            try await world.tamper { db, _ in try Self.restore(db, worldA) }
            try await Self.expectRefusal(world.b, .forked(epoch: 2))
        }
    }

    /// The server's items, manifests and feed positions, as they are now.
    struct Tables: Sendable {
        var items: [[DatabaseValue]]
        var manifests: [[DatabaseValue]]
        var sequences: [[DatabaseValue]]
    }

    @Sendable static func tables(_ db: Database) throws -> Tables {
        Tables(
            items: try Row.fetchAll(db, sql: "SELECT * FROM items").map { Array($0.databaseValues) },
            manifests: try Row.fetchAll(db, sql: "SELECT user_id, epoch, body FROM manifests").map { Array($0.databaseValues) },
            sequences: try Row.fetchAll(db, sql: "SELECT change_seq, id FROM users").map { Array($0.databaseValues) })
    }

    /// Puts back tables read earlier, as a restore from a backup would (the feed numbered from where it was);
    /// manifests at feed position 0 so that any cursor sees them.
    static func restore(_ db: Database, _ tables: Tables) throws {
        try db.execute(sql: "DELETE FROM items")
        try db.execute(sql: "DELETE FROM manifests")
        for values in tables.sequences {
            try db.execute(sql: "UPDATE users SET change_seq = ? WHERE id = ?", arguments: StatementArguments(values))
        }
        for values in tables.items {
            try db.execute(sql: "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", arguments: StatementArguments(values))
        }
        for values in tables.manifests {
            try db.execute(sql: "INSERT INTO manifests (user_id, epoch, body, seq) VALUES (?, ?, ?, 0)", arguments: StatementArguments(values))
        }
    }

    @Test("a swapped box and an altered box", arguments: ["swapped", "altered"])
    func alteredBox(attack: String) async throws {
        try await Self.withWorld { world in
            try await Self.edit(world.a, world.notes[2], "three")
            let first = world.notes[0].uuidString.lowercased()
            let second = world.notes[1].uuidString.lowercased()
            try await world.tamper { db, user in
                let boxFirst = try #require(try Data.fetchOne(db, sql: "SELECT box FROM items WHERE id = ?", arguments: [first]))
                let boxSecond = try #require(try Data.fetchOne(db, sql: "SELECT box FROM items WHERE id = ?", arguments: [second]))
                var flipped = boxFirst
                flipped[flipped.count / 2] ^= 0x01
                let replacement = attack == "swapped" ? boxSecond : flipped
                try db.execute(
                    sql: "UPDATE items SET box = ?, seq = ? WHERE user_id = ? AND id = ?",
                    arguments: [replacement, try World.nextSequence(db, user), user, first])
            }
            try await Self.expectRefusal(world.b, .alteredRow(world.notes[0]))
        }
    }

    /// The pull that answers a conflict reads the whole set, so the changed row itself is found (its box no longer
    /// opens at the revision the server gives it) before the 409's claim is even weighed.
    @Test("rows inside a 409 answer are not applied, and a claimed revision no device made is an error")
    func unverifiedConflict() async throws {
        try await Self.withWorld { world in
            let id = world.notes[0]
            // The server claims a newer revision it never received, without showing it in the feed.
            try await world.tamper { db, user in
                try db.execute(
                    sql: "UPDATE items SET revision = revision + 5 WHERE user_id = ? AND id = ?",
                    arguments: [user, id.uuidString.lowercased()])
            }
            _ = try world.b.coffer.vault.modify(id: id) { $0 = try SyncTesting.note("Edited", "on B") }
            let before = try Snapshot(world.b.coffer)
            await Self.expectFailure(.alteredRow(id)) { _ = try await world.b.sync() }
            #expect(try Snapshot(world.b.coffer) == before)
            #expect(try world.b.coffer.vault.pendingChanges().map(\.row.id) == [id])
        }
    }

    @Test("a manifest from another vault")
    func otherVault() async throws {
        try await Self.withWorld { world in
            // Another account, another vault, with its own manifest.
            let other = try Coffer.initialize(at: try SyncTesting.location())
            try other.vault.add(try SyncTesting.note("Other", "vault"))
            let session = SyncSession(coffer: other, client: try SyncClient(server: world.server))
            try await session.register(email: "other-\(world.email)", passphrase: SyncTesting.passphrase, kdf: SyncTesting.kdf)
            _ = try await session.sync()
            let otherUser = try #require(try other.vault.syncAccount()).userID
            try await Self.edit(world.a, world.notes[0], "one")
            try await world.tamper { db, user in
                let body = try Data.fetchOne(db, sql: "SELECT body FROM manifests WHERE user_id = ? AND epoch = 1", arguments: [otherUser])
                try db.execute(sql: "UPDATE manifests SET body = ? WHERE user_id = ? AND epoch = 2", arguments: [body, user])
            }
            try await Self.expectRefusal(world.b, .otherVault)
        }
    }

    @Test("a forged manifest: the server edits the head's root")
    func forgedManifest() async throws {
        try await Self.withWorld { world in
            try await Self.edit(world.a, world.notes[0], "one")
            try await world.tamper { db, user in
                var body = try #require(try Data.fetchOne(db, sql: "SELECT body FROM manifests WHERE user_id = ? AND epoch = 2", arguments: [user]))
                body[70] ^= 0x01
                try db.execute(sql: "UPDATE manifests SET body = ? WHERE user_id = ? AND epoch = 2", arguments: [body, user])
            }
            try await Self.expectRefusal(world.b, .forgedManifest(epoch: 2))
        }
    }

    @Test("a slot reverted after a passphrase change")
    func slotReverted() async throws {
        try await Self.withWorld { world in
            let old: (slot: String, hash: String) = try await world.database.read { db in
                let row = try Row.fetchOne(db, sql: "SELECT slot, auth_hash FROM users WHERE email = ?", arguments: [world.email])
                return (row?["slot"] ?? "", row?["auth_hash"] ?? "")
            }
            try await world.a.changePassphrase(current: SyncTesting.passphrase, new: "a new passphrase", kdf: SyncTesting.kdf)
            // The change ends B's session; B logs in again, told that the account's parameters changed, keeps the state
            // it verified, and takes the new slot from the verified head.
            let location = world.b.coffer.location
            let b = try await SyncSession.login(
                location: location, client: try SyncClient(server: world.server), email: world.email,
                passphrase: "a new passphrase", localPassphrase: nil, allowWeakKDF: true, acceptParameterChange: true)
            #expect(try b.verifiedHead()?.manifest.epoch == 1)
            _ = try await b.sync()
            #expect(try b.verifiedHead()?.manifest.epoch == 2)
            // The server hands out the old slot (and takes the old passphrase) again.
            try await world.tamper { db, user in
                try db.execute(sql: "UPDATE users SET slot = ?, auth_hash = ? WHERE id = ?", arguments: [old.slot, old.hash, user])
            }
            // A new device checks the head before it creates anything.
            let fresh = try SyncTesting.location()
            await Self.expectFailure(.slotReverted) {
                _ = try await SyncSession.login(
                    location: fresh, client: try SyncClient(server: world.server), email: world.email,
                    passphrase: SyncTesting.passphrase, localPassphrase: nil, allowWeakKDF: true)
            }
            #expect(!Vault.exists(in: fresh.vaultDirectory))
        }
    }

    @Test("a KDF downgrade at prelogin is refused before anything is stretched or sent; a changed one too")
    func kdfDowngrade() async throws {
        try await Self.withWorld { world in
            let audit: @Sendable () async throws -> Int = {
                try await world.database.read { db in
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM audit_log WHERE kind LIKE 'login%'") ?? 0
                }
            }
            let logins = try await audit()
            let weak = WrappedSlot(
                id: UUID(), kdf: KDFParameters(.pbkdf2SHA256(iterations: 250_000)), salt: Data(count: 32).base64EncodedString(), wrappedKey: "AA==")
            let weakText = String(decoding: try WireJSON.encoder().encode(weak), as: UTF8.self)
            try await world.tamper { db, user in
                try db.execute(sql: "UPDATE users SET slot = ? WHERE id = ?", arguments: [weakText, user])
            }
            await #expect {
                _ = try await SyncSession.login(
                    location: try SyncTesting.location(), client: try SyncClient(server: world.server), email: world.email,
                    passphrase: SyncTesting.passphrase, localPassphrase: nil)
            } throws: { error in
                guard case SyncError.weakKDF(let kdf) = error else { return false }
                return kdf == .pbkdf2SHA256(iterations: 250_000)
            }
            #expect(try await audit() == logins, "a login reached the server")

            // Parameters no Coffer accepts are the same refusal (once an error of another kind, exit 1, not 76), with
            // the same opening words.
            for parameters in [PassphraseKDF.pbkdf2SHA256(iterations: 0), .pbkdf2SHA256(iterations: UInt32.max), .scrypt(logN: 40, r: 8, p: 1)] {
                let hostile = WrappedSlot(id: UUID(), kdf: KDFParameters(parameters), salt: Data(count: 32).base64EncodedString(), wrappedKey: "AA==")
                let hostileText = String(decoding: try WireJSON.encoder().encode(hostile), as: UTF8.self)
                try await world.tamper { db, user in
                    try db.execute(sql: "UPDATE users SET slot = ? WHERE id = ?", arguments: [hostileText, user])
                }
                await #expect {
                    _ = try await SyncSession.login(
                        location: try SyncTesting.location(), client: try SyncClient(server: world.server), email: world.email,
                        passphrase: SyncTesting.passphrase, localPassphrase: nil)
                } throws: { error in
                    guard case SyncError.unusableKDF = error else { return false }
                    let weak = SyncError.weakKDF(.pbkdf2SHA256(iterations: 250_000)).description
                    return "\(error)".hasPrefix(String(weak.prefix(50))) && "\(error)".hasSuffix("nothing was sent")
                }
            }
            #expect(try await audit() == logins, "a login reached the server")

            // Strong parameters, but not the ones B knows: refused unless B is told the change is expected.
            let changed = WrappedSlot(
                id: UUID(), kdf: KDFParameters(.pbkdf2SHA256(iterations: 700_000)), salt: Data(count: 32).base64EncodedString(), wrappedKey: "AA==")
            let changedText = String(decoding: try WireJSON.encoder().encode(changed), as: UTF8.self)
            try await world.tamper { db, user in
                try db.execute(sql: "UPDATE users SET slot = ? WHERE id = ?", arguments: [changedText, user])
            }
            let location = world.b.coffer.location
            await #expect {
                _ = try await SyncSession.login(
                    location: location, client: try SyncClient(server: world.server), email: world.email,
                    passphrase: SyncTesting.passphrase, localPassphrase: nil)
            } throws: { error in
                guard case SyncError.accountParametersChanged = error else { return false }
                return true
            }
            #expect(try await audit() == logins, "a login reached the server")
        }
    }
}
