import CofferTestSupport
import Crypto
import Foundation
import GRDB
import Testing

@_spi(Testing) @testable import CofferCrypto
@testable import CofferKit
@testable import CofferModel
@testable import CofferVault

/// Card photos (docs/FORMAT.md §5b): kept in parts of their own, bound to their card and side, skipped by listing,
/// removed with the card, carried by rotation and backups, and readable by the independent Python reader.
@Suite("Card photos")
struct CardPhotoTests {
    static func card(_ name: String = "Costco", payload: String = "111222333") throws -> ItemContent {
        .card(try Card(name: name, symbology: .code128, payload: Array(payload.utf8)))
    }

    static func photoRows(_ test: TestVault, deleted: Bool) throws -> Int {
        try test.database().read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE kind = 'card_photo' AND deleted = ?", arguments: [deleted]) ?? 0
        }
    }

    @Test(
        "a photo is stored in parts, read back whole, and listed only on its card",
        arguments: [
            (1, "png"), (60 * 1024, "png"), (60 * 1024 + 1, "jpeg"), (150_000, "jpeg"), (CardPhoto.maximumBytes, "png"),
        ])
    func roundTrip(size: Int, type: String) throws {
        let test = try TestVault()
        let card = try test.vault.add(try Self.card())
        let image = type == "png" ? TestPhotos.png(size: max(size, 8)) : TestPhotos.jpeg(size: max(size, 4))
        let edited = try test.vault.modify(id: card.id, photos: .init(images: [.back: Data(image)])) { _ in }
        guard case .card(let stored) = edited.content else { Issue.record("not a card"); return }
        let photo = try #require(stored.photo(.back))
        #expect(photo.type == (type == "png" ? .png : .jpeg) && photo.size == image.count)
        #expect(photo.parts.count == (image.count + 61_439) / 61_440)
        #expect(try Self.photoRows(test, deleted: false) == photo.parts.count)
        let read = try #require(try test.reopen().photo(.back, of: try test.vault.item(id: card.id)))
        #expect(read.image == Data(image))
        #expect(try test.vault.photo(.front, of: edited) == nil)
        // Listing and lookups see the five items, never a part.
        #expect(try test.vault.items().count == 5)
        #expect(try test.vault.lookupCandidates().count == 5)
        // A part's id is not an item.
        #expect(throws: VaultError.self) { try test.vault.item(id: photo.parts[0]) }
        #expect(throws: VaultError.self) { try test.vault.purge(id: photo.parts[0]) }
    }

    @Test(
        "an image that is not PNG or JPEG, an empty one and one over 2 MiB are refused, and nothing is written",
        arguments: ["gif", "empty", "large"])
    func refused(kind: String) throws {
        let test = try TestVault()
        let card = try test.vault.add(try Self.card())
        let image: [UInt8] =
            switch kind {
            case "gif": Array("GIF89a".utf8) + Array(repeating: 0, count: 100)
            case "empty": []
            default: TestPhotos.png(size: CardPhoto.maximumBytes + 1)
            }
        #expect(throws: VaultError.self) {
            try test.vault.modify(id: card.id, photos: .init(images: [.front: Data(image)])) { content in
                guard case .card(var card) = content else { return }
                card.name = "Renamed"
                content = .card(card)
            }
        }
        let stored = try test.vault.item(id: card.id)
        #expect(stored.content == card.content && stored.revision == 1)
        #expect(try Self.photoRows(test, deleted: false) + Self.photoRows(test, deleted: true) == 0)
    }

    @Test("replacing and removing a photo leave tombstones for sync; purging a card removes its photos; archiving keeps them")
    func lifecycle() throws {
        let test = try TestVault()
        let card = try test.vault.add(try Self.card())
        try test.vault.modify(id: card.id, photos: .init(images: [.front: Data(TestPhotos.png(size: 70_000)), .back: Data(TestPhotos.jpeg(size: 10))])) { _ in }
        #expect(try Self.photoRows(test, deleted: false) == 3)
        let replaced = try test.vault.modify(id: card.id, photos: .init(images: [.front: Data(TestPhotos.jpeg(size: 500, seed: 9))])) { _ in }
        #expect(try Self.photoRows(test, deleted: false) == 2 && Self.photoRows(test, deleted: true) == 2)
        #expect(try test.vault.photo(.front, of: replaced)?.image == Data(TestPhotos.jpeg(size: 500, seed: 9)))
        let removed = try test.vault.modify(id: card.id, photos: .init(removals: [.back])) { _ in }
        guard case .card(let withoutBack) = removed.content else { return }
        #expect(withoutBack.photos.map(\.side) == [.front])
        #expect(try Self.photoRows(test, deleted: false) == 1)
        // Archiving (rm) and restoring is an edit of the card: the photo stays.
        let archived = try test.vault.modify(id: card.id) { content in
            guard case .card(var card) = content else { return }
            card.archivedAt = Date()
            content = .card(card)
        }
        #expect(try test.vault.photo(.front, of: archived) != nil)
        try test.vault.purge(id: card.id)
        #expect(try Self.photoRows(test, deleted: false) == 0 && Self.photoRows(test, deleted: true) == 4)
    }

    @Test(
        "a part moved to another card, another side or another place, an altered part and a missing part are refused",
        arguments: ["other card", "other side", "order", "altered", "missing", "digest"])
    func bound(attack: String) throws {
        let test = try TestVault()
        let first = try test.vault.add(try Self.card("First", payload: "1"))
        let second = try test.vault.add(try Self.card("Second", payload: "2"))
        let big = Data(TestPhotos.png(size: 130_000))
        let a = try test.vault.modify(id: first.id, photos: .init(images: [.front: big, .back: Data(TestPhotos.png(size: 100, seed: 5))])) { _ in }
        let b = try test.vault.modify(id: second.id, photos: .init(images: [.front: big])) { _ in }
        guard case .card(let cardA) = a.content, case .card(let cardB) = b.content else { return }
        let frontA = try #require(cardA.photo(.front))
        var target = a
        switch attack {
        case "other card", "other side", "order", "digest":
            // The card's own box names parts that are not its own: every part opens, but names another card, side
            // or place (or the whole has another digest).
            target = try test.vault.modify(id: first.id) { content in
                guard case .card(var card) = content else { return }
                switch attack {
                case "other card": card.photos[0].parts = try #require(cardB.photo(.front)).parts
                case "other side":
                    card.photos[1].parts = [frontA.parts[2]]
                case "order": card.photos[0].parts = [frontA.parts[1], frontA.parts[0], frontA.parts[2]]
                default: card.photos[0].digest = Array(repeating: 7, count: 32)
                }
                content = .card(card)
            }
        case "altered":
            try test.database().write { db in
                var box = try #require(try Data.fetchOne(db, sql: "SELECT box FROM item WHERE id = ?", arguments: [Data(frontA.parts[1].bytes)]))
                box[box.count / 2] ^= 1
                try db.execute(sql: "UPDATE item SET box = ? WHERE id = ?", arguments: [box, Data(frontA.parts[1].bytes)])
            }
        default:
            try test.database().write { db in
                try db.execute(sql: "DELETE FROM item WHERE id = ?", arguments: [Data(frontA.parts[2].bytes)])
            }
        }
        let side: PhotoSide = attack == "other side" ? .back : .front
        #expect(throws: VaultError.self) { try test.vault.photo(side, of: target) }
        // The other card's photo is untouched.
        #expect(try test.vault.photo(.front, of: b)?.image == big)
    }

    @Test("rotating the master key re-seals the parts; a backup imported into another vault brings the photos")
    func rotationAndBackup() throws {
        let test = try TestVault()
        let card = try test.vault.add(try Self.card())
        let image = Data(TestPhotos.jpeg(size: 90_000))
        try test.vault.modify(id: card.id, photos: .init(images: [.front: image])) { _ in }
        let result = try test.vault.rotateMasterKey(deviceKey: test.deviceKey, passphrase: "correct horse")
        #expect(result.itemCount == 5)
        let rotated = try test.vault.item(id: card.id)
        #expect(try test.vault.photo(.front, of: rotated)?.image == image)

        let backup = try TestSupport.temporaryDirectory("photo-backup") + "/backup.coffer"
        try test.vault.writeBackup(to: backup)
        let other = try TestVault(items: false)
        let opened = try Vault.openBackup(at: backup, unlock: .passphrase("correct horse"), stagingParent: other.directory, options: testOptions)
        #expect(try other.vault.importItems(from: opened).imported == 5)
        #expect(try other.vault.photo(.front, of: try other.vault.item(id: card.id))?.image == image)
    }

    @Test("the Python reader (from FORMAT.md alone) opens every part and joins each photo to its card's record")
    func oracleReadsPhotos() throws {
        let test = try TestVault()
        let card = try test.vault.add(try Self.card())
        let front = TestPhotos.png(size: 125_000)
        let back = TestPhotos.jpeg(size: 700)
        try test.vault.modify(id: card.id, photos: .init(images: [.front: Data(front), .back: Data(back)])) { _ in }
        let answer = try #require(
            try TestSupport.openSSLOracle([
                ["op": "read_vault", "path": test.path, "secret_kind": "passphrase", "secret": "correct horse"]
            ]).first as? [String: Any])
        let items = try #require(answer["items"] as? [[String: Any]])
        #expect(items.count == 5)
        let stored = try #require(items.first { $0["id"] as? String == TestSupport.hex(card.id.bytes) }?["content"] as? [String: Any])
        let photos = try #require(stored["photos"] as? [[String: Any]])
        #expect(photos.map { $0["side"] as? String } == ["front", "back"])
        #expect(photos.map { $0["type"] as? String } == ["image/png", "image/jpeg"])
        #expect(photos.map { $0["image"] as? String } == [TestSupport.hex(front), TestSupport.hex(back)])
    }

    @Test("golden: parts sealed and a card content written by the Python oracle from FORMAT.md (photo_v1.json)")
    func golden() throws {
        let url = TestSupport.repositoryRoot.appendingPathComponent("Tests/Vectors/vault/photo_v1.json")
        let golden = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        func string(_ key: String) throws -> String { try #require(golden[key] as? String) }
        let master = SecretBytes(TestSupport.hex(try string("master_key")))
        let vaultID = try #require(UUID(uuidString: try string("vault_id")))
        let cardID = try #require(UUID(uuidString: try string("card_id")))
        let image = TestSupport.hex(try string("image"))
        let revision = try #require(golden["revision"] as? Int)
        let updatedAt = try #require(golden["updated_at"] as? Int64)
        let key = KeySchedule.hkdf(master, salt: vaultID.bytes, label: KeySchedule.photoKeyLabel)
        let parts = PhotoPart.split(image, cardID: cardID, side: .front)
        let expected = try #require(golden["parts"] as? [[String: Any]])
        #expect(parts.count == expected.count)
        var partIDs: [UUID] = []
        for (part, vector) in zip(parts, expected) {
            let idText = try #require(vector["id"] as? String)
            let id = try #require(UUID(uuidString: idText))
            partIDs.append(id)
            let aad = KeySchedule.photoAssociatedData(
                vaultID: vaultID.bytes, partID: id.bytes, revision: UInt64(revision), updatedAt: UInt64(updatedAt), formatVersion: 1)
            let box = try Box.seal(
                Data(part.encoded), key: key, associatedData: aad, fixedNonce: TestSupport.hex(try #require(vector["nonce"] as? String)))
            #expect(TestSupport.hex(Array(SHA256.hash(data: box))) == vector["box_sha256"] as? String)
            if let full = vector["box"] as? String {
                let opened = try PhotoPart(decoding: try Box.open(Data(TestSupport.hex(full)), key: key, associatedData: aad))
                #expect(opened == part)
            }
        }
        let content = TestSupport.hex(try string("card_content"))
        let (decoded, createdAt) = try ItemContentCoding.decode(Data(content), kind: .card)
        guard case .card(let card) = decoded else { Issue.record("not a card"); return }
        #expect(
            card.photos == [
                CardPhoto(
                    side: .front, type: .png, size: image.count, digest: TestSupport.hex(try string("image_sha256")), parts: partIDs)
            ])
        #expect(Array(try ItemContentCoding.encode(decoded, createdAt: createdAt)) == content)
    }
}
