import CofferTestSupport
import Foundation
import GRDB
import Testing

@_spi(Sync) @testable import CofferKit
@testable import CofferModel
@testable import CofferVault

/// The catalogue (docs/FORMAT.md §4): lookups open it and the item found, and it follows every change to the items.
@Suite("Catalogue: finding an item without opening every item")
struct CatalogueTests {
    static func coffer(_ test: TestVault) -> Coffer {
        Coffer(vault: test.vault, location: CofferLocation(vaultDirectory: test.directory, keystore: InMemoryKeystore()), keystore: InMemoryKeystore())
    }

    @Test("a lookup opens the catalogue and the item it finds: another item's damaged box is not read")
    func opensOnlyTheItemFound() throws {
        let test = try TestVault()
        let coffer = Self.coffer(test)
        #expect(try coffer.find("Costco").content.name == "Costco")
        let github = try #require(try test.vault.items().first { $0.kind == .otp })
        // Damage GitHub's box in place; its clear columns stay, so the catalogue's entry still describes it.
        try test.database().write { db in
            var box = try #require(try Data.fetchOne(db, sql: "SELECT box FROM item WHERE id = ?", arguments: [Data(github.id.bytes)]))
            box[box.count - 1] ^= 1
            try db.execute(sql: "UPDATE item SET box = ? WHERE id = ?", arguments: [box, Data(github.id.bytes)])
        }
        let reopened = Coffer(
            vault: try test.reopen(), location: CofferLocation(vaultDirectory: test.directory, keystore: InMemoryKeystore()),
            keystore: InMemoryKeystore())
        #expect(try reopened.find("openai").content.name == "OpenAI")
        #expect(try reopened.find("kyc").content.name == "KYC record")
        // Control: the damaged item itself, and a listing, still refuse it.
        #expect(throws: CofferError.self) { _ = try reopened.find("GitHub") }
        #expect(throws: VaultError.self) { _ = try test.reopen().items() }
    }

    @Test("changes by another process, deletions, imports and rotation are all seen by the next lookup")
    func followsChanges() throws {
        let test = try TestVault()
        let coffer = Self.coffer(test)
        _ = try coffer.find("Costco")
        // Another process renames the card, deletes the note and adds a token.
        let other = try test.reopen()
        let card = try #require(try other.items().first { $0.kind == .card })
        _ = try other.modify(id: card.id) { content in
            guard case .card(var value) = content else { return }
            value.name = "Costco Wholesale"
            content = .card(value)
        }
        let note = try #require(try other.items().first { $0.kind == .note })
        try other.purge(id: note.id)
        _ = try other.addAll([.otp(try OTPItem(issuer: "Fastmail", account: "me", parameters: try OTPParameters(secret: Array("12345678901234567890".utf8))))])
        #expect(try coffer.find("costco w").id == card.id)
        #expect(throws: CofferError.self) { _ = try coffer.find("KYC record") }
        #expect(try coffer.find("fastmail").kind == .otp)
        // Rotation re-seals every item at a new revision: every entry is made again, under the new key.
        _ = try test.vault.rotateMasterKey(deviceKey: SecretBytes(randomCount: 32), passphrase: "correct horse")
        #expect(try coffer.find("Costco Wholesale").id == card.id)
        #expect(try test.vault.lookupCandidates().map(\.name) == test.vault.items().map(\.content.name))
    }

    @Test("the stored catalogue is what FORMAT.md §4 says (Python reader): one current entry per live item, names folded")
    func format() throws {
        let test = try TestVault()
        try test.vault.add(.card(try Card(name: "Café Nero", symbology: .qr, payload: Array("x".utf8))))
        _ = try test.vault.lookupCandidates()
        let answers = try TestSupport.openSSLOracle([["op": "read_catalogue", "path": test.path, "passphrase": "correct horse"]])
        let answer = try #require(answers.first as? [String: Any])
        let entries = try #require(answer["entries"] as? [[String: Any]])
        let live = try #require(answer["live"] as? [String])
        #expect(Set(entries.compactMap { $0["id"] as? String }) == Set(live))
        #expect(entries.allSatisfy { $0["current"] as? Bool == true })
        #expect(answer["changes_current"] as? Bool == true)
        let cafe = try #require(entries.first { $0["name"] as? String == "Café Nero" })
        #expect(cafe["names"] as? [[String]] == [["Café Nero", "cafe nero"]])
        let token = try #require(entries.first { $0["kind"] as? String == "otp" })
        #expect((token["names"] as? [[String]])?.map(\.[0]) == ["GitHub (canary-account)", "GitHub", "canary-account", "GitHub:canary-account"])
        // Nothing of it in the clear.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: test.path)) + ((try? Data(contentsOf: URL(fileURLWithPath: test.path + "-wal"))) ?? Data())
        for marker in ["Café Nero", "cafe nero", "canary-account"] {
            #expect(CanaryScan.encodings(of: marker, in: bytes).isEmpty, "\(marker) in the vault file")
        }
    }

    @Test("a damaged catalogue is made again from the items, never believed")
    func damaged() throws {
        let test = try TestVault()
        let before = try test.vault.lookupCandidates()
        try test.database().write { db in
            try db.execute(sql: "UPDATE local_state SET box = randomblob(length(box))")
        }
        let vault = try test.reopen()
        #expect(try vault.lookupCandidates() == before)
        #expect(try vault.lookupCandidates(kind: .card).map(\.name) == ["Costco"])
        #expect(throws: Never.self) { _ = try vault.localValue(Vault.catalogueName) }
    }
}
