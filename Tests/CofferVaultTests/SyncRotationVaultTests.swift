import CofferCrypto
import CofferModel
import CofferTestSupport
import CofferVault
import Foundation
import Testing

/// The vault's side of rotating a synced vault's master key (docs/FORMAT.md §8.8): what is prepared, checked by an
/// independent reader, and what committing or dropping it does.
@Suite("Rotation of a synced vault, in the vault file")
struct SyncRotationVaultTests {
    @Test("a prepared rotation is what FORMAT.md §8.8 says (Python reader): the new key under the old, each item under the new, the slots, the recovery code")
    func preparedMatchesFormat() throws {
        let test = try TestVault(passphrase: "correct horse")
        _ = try test.vault.newRecoveryCode()
        let items = try test.vault.items()
        let prepared = try test.vault.prepareRotation(
            accountKeyEpoch: 4, deviceKey: SecretBytes(randomCount: 32), passphrase: "correct horse")
        #expect(prepared.keyEpoch == 5 && prepared.rowCount == items.count && prepared.manifest == nil)
        let answers = try TestSupport.openSSLOracle([["op": "read_prepared_rotation", "path": test.path, "passphrase": "correct horse"]])
        let answer = try #require(answers.first as? [String: Any])
        #expect(answer["key_epoch"] as? Int == 5)
        #expect(answer["new_master_differs"] as? Bool == true)
        #expect(answer["passphrase_slot_opens"] as? Bool == true)
        #expect((answer["recovery_code"] as? String)?.count ?? 0 >= 20)
        let staged = try #require(answer["items"] as? [[String: Any]])
        let revisions = Dictionary(
            uniqueKeysWithValues: staged.compactMap { row -> (String, Int)? in
                guard let id = row["id"] as? String, let revision = row["revision"] as? Int else { return nil }
                return (id, revision)
            })
        #expect(revisions == Dictionary(uniqueKeysWithValues: items.map { (TestSupport.hex($0.id.bytes), Int($0.revision) + 1) }))
        // Nothing in use changed.
        #expect(try test.reopen().items() == items)
    }

    @Test("committing takes the staged rows, keeps what changed since as changes to push, and the new slots; the old device key no longer opens")
    func commit() throws {
        let test = try TestVault(passphrase: "correct horse")
        let items = try test.vault.items()
        let next = SecretBytes(randomCount: 32)
        _ = try test.vault.prepareRotation(accountKeyEpoch: 1, deviceKey: next, passphrase: "correct horse")
        let edited = try test.vault.modify(id: items[0].id) { $0 = .note(try Note(name: "Edited", text: "after preparing")) }
        let added = try test.vault.add(.note(try Note(name: "Added", text: "after preparing")))
        try test.vault.recordPreparedManifest(epoch: 2, bytes: Array(repeating: 7, count: 188))
        let result = try test.vault.commitPreparedRotation(cursor: 9, at: Date())
        #expect(result.itemCount == items.count && result.recoveryCode == nil)

        #expect(throws: VaultError.self) { _ = try Vault.open(in: test.directory, unlock: .deviceKey(test.deviceKey), options: testOptions) }
        let reopened = try Vault.open(in: test.directory, unlock: .deviceKey(next), options: testOptions)
        _ = try Vault.open(in: test.directory, unlock: .passphrase("correct horse"), options: testOptions)
        let after = Dictionary(uniqueKeysWithValues: try reopened.items().map { ($0.id, $0) })
        #expect(after.count == items.count + 1)
        #expect(after[edited.id]?.content == edited.content && after[edited.id]?.revision == edited.revision + 1)
        #expect(after[added.id]?.content == added.content)
        for item in items.dropFirst() {
            #expect(after[item.id]?.content == item.content && after[item.id]?.revision == item.revision + 1)
        }
        // The rotation's rows are the server's now; the change made since and the new item are still to push.
        #expect(Set(try reopened.pendingChanges().map(\.id)) == [edited.id, added.id])
        #expect(try reopened.preparedRotation() == nil)
    }

    @Test("dropping a prepared rotation leaves the vault as it was, under its old key")
    func discard() throws {
        let test = try TestVault(passphrase: "correct horse")
        let items = try test.vault.items()
        _ = try test.vault.prepareRotation(accountKeyEpoch: 1, deviceKey: SecretBytes(randomCount: 32), passphrase: "correct horse")
        #expect(throws: VaultError.self) { _ = try test.vault.commitPreparedRotation(cursor: 1, at: Date()) }
        try test.vault.discardPreparedRotation()
        #expect(try test.vault.preparedRotation() == nil)
        let reopened = try Vault.open(in: test.directory, unlock: .deviceKey(test.deviceKey), options: testOptions)
        #expect(try reopened.items() == items)
    }

    @Test("a wrong vault passphrase prepares nothing")
    func wrongPassphrase() throws {
        let test = try TestVault(passphrase: "correct horse")
        #expect(throws: VaultError.self) {
            _ = try test.vault.prepareRotation(accountKeyEpoch: 1, deviceKey: SecretBytes(randomCount: 32), passphrase: "wrong")
        }
        #expect(try test.vault.preparedRotation() == nil)
    }
}
