import CofferCrypto
import CofferKeystore
import CofferTestSupport
import Foundation
import Crypto
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

    /// Renames the vault's card through `vault` (another process's connection), returning the card as it was.
    static func renameCard(in vault: Vault, to name: String) throws -> Item {
        let card = try #require(try vault.items().first { $0.kind == .card })
        _ = try vault.modify(id: card.id) { content in
            guard case .card(var value) = content else { return }
            value.name = name
            content = .card(value)
        }
        return card
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
        #expect(throws: VaultError.self) { _ = try reopened.find("GitHub") }
        #expect(throws: VaultError.self) { _ = try test.reopen().items() }
    }

    @Test("changes by another process, deletions, imports and rotation are all seen by the next lookup")
    func followsChanges() throws {
        let test = try TestVault()
        let coffer = Self.coffer(test)
        _ = try coffer.find("Costco")
        // Another process renames the card, deletes the note and adds a token.
        let other = try test.reopen()
        let card = try Self.renameCard(in: other, to: "Costco Wholesale")
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

    @Test("an import brings the catalogue and buckets up to date itself: the first lookup after it opens no new item it does not find")
    func importKeepsTheCatalogueCurrent() throws {
        let test = try TestVault()
        let coffer = Self.coffer(test)
        _ = try coffer.find("Costco")
        let imported = try test.vault.addAll(try (0..<200).map { .note(try Note(name: "Imported \($0)", text: "text \($0)")) })
        // Damage a new item's box in place: a lookup that caught up by opening the new rows would fail on it.
        func damage(_ id: UUID) throws {
            try test.database().write { db in
                var box = try #require(try Data.fetchOne(db, sql: "SELECT box FROM item WHERE id = ?", arguments: [Data(id.bytes)]))
                box[box.count - 1] ^= 1
                try db.execute(sql: "UPDATE item SET box = ? WHERE id = ?", arguments: [box, Data(id.bytes)])
            }
        }
        func reopen() throws -> Coffer {
            Coffer(
                vault: try test.reopen(), location: CofferLocation(vaultDirectory: test.directory, keystore: InMemoryKeystore()),
                keystore: InMemoryKeystore())
        }
        try damage(imported[7].id)
        let reopened = try reopen()
        #expect(try reopened.find("Imported 150").id == imported[150].id)
        #expect(try reopened.find("imported 3").id == imported[3].id)
        // Control: a single add leaves the catch-up to the next lookup, which opens the new row and so meets the damage.
        let added = try test.vault.add(.note(try Note(name: "Added later", text: "text")))
        try damage(added.id)
        #expect(throws: VaultError.self) { _ = try reopen().find("Imported 151") }
    }

    @Test("a lookup by a name opens its bucket, not the catalogue: a damaged catalogue is not even read")
    func nameFromOneBucket() throws {
        let test = try TestVault()
        let coffer = Self.coffer(test)
        _ = try coffer.find("Costco")
        let catalogueRow = Vault.rowName(Vault.catalogueName, keys: test.vault.localKeys(test.vault.currentKeys))
        let damaged = Data(repeating: 7, count: 64)
        try test.database().write { db in
            try db.execute(sql: "UPDATE local_state SET box = ? WHERE name = ?", arguments: [damaged, catalogueRow])
        }
        func storedCatalogue() throws -> Data? {
            try test.database().read { db in try Data.fetchOne(db, sql: "SELECT box FROM local_state WHERE name = ?", arguments: [catalogueRow]) }
        }
        #expect(try coffer.find("Costco").content.name == "Costco")
        #expect(try coffer.find("github").kind == .otp)
        #expect(try coffer.find("canary-account").kind == .otp)
        #expect(try storedCatalogue() == damaged, "a name lookup read the catalogue")
        // Control: a prefix needs every name, so the catalogue is read (and, damaged, made again).
        #expect(try coffer.find("cost").content.name == "Costco")
        #expect(try storedCatalogue() != damaged)
    }

    @Test("buckets answer exactly what the whole catalogue answers: 400 queries on 300 items with shared names")
    func bucketsAgreeWithTheRules() throws {
        let test = try TestVault(items: false)
        var generator = SplitMix64(seed: 14)
        let words = ["Café", "cafe", "CAFÉ", "Bank", "bank", "GitHub", "Git", "Mail", "mail", "Ｍａｉｌ", "Shop", "shop", "Zoë", "zoe"]
        var contents: [ItemContent] = []
        for index in 0..<300 {
            let name = "\(words[Int.random(in: 0..<words.count, using: &generator)])\(Bool.random(using: &generator) ? "" : " \(index % 40)")"
            if index % 3 == 0 {
                contents.append(
                    .otp(
                        try OTPItem(
                            issuer: name, account: words[index % words.count],
                            parameters: try OTPParameters(secret: Array("12345678901234567890".utf8)))))
            } else {
                contents.append(.card(try Card(name: name, symbology: .qr, payload: Array("x".utf8))))
            }
        }
        _ = try test.vault.addAll(contents)
        let candidates = try test.vault.lookupCandidates()
        #expect(candidates.count == 300)
        var queries = words + words.map { $0.uppercased() } + candidates.prefix(40).map(\.name)
        while queries.count < 400 {
            queries.append("\(words[Int.random(in: 0..<words.count, using: &generator)]) \(Int.random(in: 0..<45, using: &generator))")
        }
        var fromBuckets = 0
        for query in queries {
            for kind in [nil, ItemKind.card, .otp] {
                let expected = ItemLookup.find(query, in: candidates.filter { kind == nil || $0.kind == kind })
                #expect(try test.vault.lookup(ItemLookup.Query(query), kind: kind) == expected, "\(query) \(String(describing: kind))")
                if let item = try test.vault.bucketItem(ItemLookup.Query(query), kind: kind) {
                    fromBuckets += 1
                    #expect(ItemLookup.Outcome.found(item.id) == expected, "\(query) \(String(describing: kind)) from its bucket")
                }
            }
        }
        // The buckets must have answered a good share themselves, or this compares the catalogue with itself.
        #expect(fromBuckets > 300)
    }

    @Test("buckets are what FORMAT.md §4 says (Python reader): every name once, in the bucket its keyed hash names")
    func bucketFormat() throws {
        let test = try TestVault(items: false)
        _ = try test.vault.addAll(
            (0..<700).map { index in
                .card(try! Card(name: "Card \(index) Café", symbology: .qr, payload: Array("x".utf8)))
            })
        try test.vault.add(.otp(try OTPItem(issuer: "GitHub", account: "me", parameters: try OTPParameters(secret: Array("12345678901234567890".utf8)))))
        _ = try test.vault.lookup(ItemLookup.Query("Card 3 Café"))
        let answers = try TestSupport.openSSLOracle([["op": "read_catalogue_buckets", "path": test.path, "passphrase": "correct horse"]])
        let answer = try #require(answers.first as? [String: Any])
        let records = try #require(answer["records"] as? [[String: Any]])
        #expect(answer["changes_current"] as? Bool == true)
        // 704 names at 128 a bucket: 8 buckets.
        #expect(answer["count"] as? Int == 8)
        #expect(records.allSatisfy { $0["bucket"] as? Int == $0["hashed_bucket"] as? Int })
        #expect(Set(records.compactMap { $0["bucket"] as? Int }).count == 8)
        let expected = try test.vault.lookupCandidates().flatMap { candidate in
            zip(candidate.names, candidate.foldedNames).map { "\(TestSupport.hex(candidate.id.bytes)) \(candidate.kind.rawValue) \($0) \($1)" }
        }
        let stored = records.map {
            "\($0["id"] as? String ?? "") \($0["kind"] as? String ?? "") \($0["name"] as? String ?? "") \($0["folded"] as? String ?? "")"
        }
        #expect(stored.sorted() == expected.sorted())
        #expect(stored.contains { $0.hasSuffix(" Card 3 Café card 3 cafe") })
    }

    @Test("golden: the bucket a name falls in and the bytes of a head and a bucket (FORMAT.md §4, computed in Python)")
    func bucketGolden() throws {
        let keys = Vault.LocalKeys(seal: SymmetricKey(data: [UInt8](repeating: 9, count: 32)), name: SymmetricKey(data: Array(0..<32) as [UInt8]))
        let hash = BucketHash(keys)
        #expect(hash.bucket(of: Array("cafe nero".utf8), count: 4_096) == 1_780)
        #expect(hash.bucket(of: Array("github".utf8), count: 4_096) == 3_871)
        #expect(hash.bucket(of: Array("costco".utf8), count: 8) == 0)
        #expect(hash.bucket(of: Array("github".utf8), count: 8) == 7)
        let id = try #require(UUID(uuidString: "00112233-4455-6677-8899-aabbccddeeff"))
        let entry = CatalogueEntry(
            row: CatalogueRow(id: id, kind: "card", revision: 3, updatedAt: 0), createdAt: 0,
            candidate: ItemLookup.Candidate(id: id, kind: .card, name: "Café Nero", names: ["Café Nero"], foldedNames: ["cafe nero"]))
        let values = Vault.bucketValues([entry], changes: 5, previous: 4, keys: keys)
        #expect(values[Vault.bucketsHeadName].flatMap { $0.map { TestSupport.hex($0) } } == "0100000000000000050001")
        #expect(
            values[Vault.bucketName(0)].flatMap { $0.map { TestSupport.hex($0) } }
                == "0100000000000000050000000100112233445566778899aabbccddeeff000463617264000a436166c3a9204e65726f000963616665206e65726f")
        // The buckets of the former, larger count are deleted.
        #expect(values.keys.sorted() == [Vault.bucketsHeadName, Vault.bucketName(0), Vault.bucketName(1), Vault.bucketName(2), Vault.bucketName(3)].sorted())
        #expect(values[Vault.bucketName(3)] == .some(nil))
    }

    @Test("a bucket from before a change is never believed: renamed, deleted and added names by another process")
    func staleBuckets() throws {
        let test = try TestVault()
        let coffer = Self.coffer(test)
        _ = try coffer.find("Costco")
        let other = try test.reopen()
        let card = try Self.renameCard(in: other, to: "Sam's Club")
        #expect(try test.vault.bucketItem(ItemLookup.Query("Costco"), kind: nil)?.id == nil)
        #expect(throws: CofferError.self) { _ = try coffer.find("Costco") }
        #expect(try coffer.find("Sam's Club").id == card.id)
        // Made again by that lookup: the new name now comes from its bucket.
        #expect(try test.vault.bucketItem(ItemLookup.Query("sam's club"), kind: nil)?.id == card.id)
        // A vault whose buckets were never made (an earlier version) gets them at its next lookup.
        try test.database().write { db in
            try db.execute(
                sql: "DELETE FROM local_state WHERE name = ?",
                arguments: [Vault.rowName(Vault.bucketsHeadName, keys: test.vault.localKeys(test.vault.currentKeys))])
        }
        #expect(try test.vault.bucketItem(ItemLookup.Query("Sam's Club"), kind: nil)?.id == nil)
        #expect(try coffer.find("Sam's Club").id == card.id)
        #expect(try test.vault.bucketItem(ItemLookup.Query("Sam's Club"), kind: nil)?.id == card.id)
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
