import CofferCrypto
import CofferModel
import Crypto
import Foundation
import GRDB

/// Photos of cards, front and back (docs/FORMAT.md §5b). An image is cut into parts of at most 60 KiB; each part is a
/// row of kind `card_photo` in the item table, sealed under the photo key with its own associated data, so that it
/// syncs, is verified by manifests, rotates and is backed up like any row, while listing and lookups skip it by its
/// kind without reading its box. The card's own box lists its photos (side, type, size, SHA-256, part ids).
extension Vault {
    /// Changes to a card's photos made together with an edit: images to set (replacing any of that side) and sides
    /// to remove.
    public struct PhotoChanges: Sendable, Equatable {
        public var images: [PhotoSide: Data]
        public var removals: Set<PhotoSide>

        public init(images: [PhotoSide: Data] = [:], removals: Set<PhotoSide> = []) {
            self.images = images
            self.removals = removals
        }

        public var isEmpty: Bool { images.isEmpty && removals.isEmpty }
    }

    /// Version bound into every photo part box's associated data.
    static let photoBoxVersion: UInt32 = 1
    /// SQL condition of the rows that are items (every row but photo parts).
    static let itemRowCondition = "kind != '\(PhotoPart.kind)'"

    // MARK: Reading

    /// The image of `item`'s photo of `side`, joined from its parts and checked: each part opens under the photo key
    /// with its own associated data, names this card, this side and its place, and the whole has the recorded size
    /// and SHA-256. Nil when the card has no such photo; `.tampered` when a part is missing, moved or altered.
    public func photo(_ side: PhotoSide, of item: Item) throws(VaultError) -> (photo: CardPhoto, image: Data)? {
        guard case .card(let card) = item.content, let photo = card.photo(side) else { return nil }
        let what = "the \(side.rawValue) photo of card \(item.id.lowercasedString)"
        return try read { db, keys in
            let key = photoKey(keys)
            var image = Data()
            image.reserveCapacity(photo.size)
            for (index, partID) in photo.parts.enumerated() {
                guard
                    let stored = try Row.fetchOne(
                        db, sql: "SELECT \(ItemRow.columns) FROM item WHERE id = ? AND deleted = 0 AND kind = ?",
                        arguments: [Data(partID.bytes), PhotoPart.kind])
                else { throw VaultError.tampered(what) }
                guard let part = try? openPart(try ItemRow(stored: stored), key: key),
                    part.cardID == item.id, part.side == side, part.index == index, part.count == photo.parts.count
                else { throw VaultError.tampered(what) }
                image.append(contentsOf: part.bytes)
            }
            guard image.count == photo.size, Array(SHA256.hash(data: image)) == photo.digest else { throw VaultError.tampered(what) }
            return (photo, image)
        }
    }

    // MARK: Writing

    /// Reads, changes and stores a card with changes to its photos, in one transaction: the new images' parts are
    /// written, the replaced and removed ones become tombstones, and the card records the result.
    @discardableResult
    public func modify(
        id: UUID, photos changes: PhotoChanges, _ transform: (inout ItemContent) throws -> Void
    ) throws(VaultError) -> Item {
        try writeTransaction { db, keys in
            var item = try fetchItem(db, id: id, keys: keys)
            try transform(&item.content)
            let now = options.clock()
            if !changes.isEmpty {
                guard case .card(var card) = item.content else {
                    throw VaultError.model(.invalidField(field: "photo", rule: "only cards have photos"))
                }
                try applyPhotoChanges(db, to: &card, cardID: id, changes, keys: keys, now: now)
                item.content = .card(card)
            }
            try item.content.validated()
            item.revision += 1
            item.updatedAt = now
            try replace(db, item: item, keys: keys)
            return item
        }
    }

    /// Writes the parts of `changes.images` and tombstones those of replaced and removed photos, updating `card`'s list.
    func applyPhotoChanges(
        _ db: Database, to card: inout Card, cardID: UUID, _ changes: PhotoChanges, keys: Keys, now: Date
    ) throws {
        for side in PhotoSide.allCases where changes.removals.contains(side) || changes.images[side] != nil {
            if let old = card.photo(side) { try purgeParts(db, of: old, now: now) }
            card.photos.removeAll { $0.side == side }
            if let image = changes.images[side] {
                card.photos.append(try insertPhoto(db, image: [UInt8](image), side: side, cardID: cardID, keys: keys, now: now))
            }
        }
        card.photos.sort { $0.side == .front && $1.side == .back }
    }

    /// Checks `image` (PNG or JPEG, at most 2 MiB), seals its parts for `cardID`'s `side` and inserts them; returns
    /// the record the card keeps.
    func insertPhoto(_ db: Database, image: [UInt8], side: PhotoSide, cardID: UUID, keys: Keys, now: Date) throws -> CardPhoto {
        let type = try CardPhoto.checkedType(of: image)
        let key = photoKey(keys)
        let updatedAt = UnixTime.milliseconds(now)
        var ids: [UUID] = []
        for part in PhotoPart.split(image, cardID: cardID, side: side) {
            let id = UUID(bytes: options.random.bytes(16))
            let row = ItemRow(id: id, kind: PhotoPart.kind, revision: 1, updatedAt: updatedAt, deleted: false, box: nil)
            let box = try Box.seal(Data(part.encoded), key: key, associatedData: photoAssociatedData(row))
            try db.execute(
                sql: "INSERT INTO item (id, kind, revision, updated_at, deleted, box) VALUES (?, ?, 1, ?, 0, ?)",
                arguments: [Data(id.bytes), PhotoPart.kind, updatedAt, box])
            ids.append(id)
        }
        return CardPhoto(side: side, type: type, size: image.count, digest: Array(SHA256.hash(data: image)), parts: ids)
    }

    /// Turns the parts of `photo` into tombstones (revision + 1), so that sync deletes them everywhere.
    func purgeParts(_ db: Database, of photo: CardPhoto, now: Date) throws {
        for id in photo.parts {
            try db.run(
                """
                UPDATE item SET deleted = 1, box = NULL, revision = revision + 1, updated_at = ?
                WHERE id = ? AND kind = ? AND deleted = 0
                """,
                [UnixTime.milliseconds(now), Data(id.bytes), PhotoPart.kind])
        }
    }

    /// The photos of the card stored as `id`, when it is a live card that opens (a purge removes them with it).
    func storedPhotos(_ db: Database, cardID id: UUID, keys: Keys) -> [CardPhoto] {
        guard let item = try? fetchItem(db, id: id, keys: keys), case .card(let card) = item.content else { return [] }
        return card.photos
    }

    // MARK: Boxes

    /// The key of photo part boxes: HKDF(MK, salt = vault id, info = "coffer/v1/photos").
    func photoKey(_ keys: Keys) -> SymmetricKey {
        KeySchedule.hkdf(keys.master, salt: vaultIDBytes, label: KeySchedule.photoKeyLabel)
    }

    func photoAssociatedData(_ row: ItemRow) -> [UInt8] {
        KeySchedule.photoAssociatedData(
            vaultID: vaultIDBytes, partID: row.id.bytes, revision: UInt64(max(row.revision, 0)),
            updatedAt: UInt64(max(row.updatedAt, 0)), formatVersion: Self.photoBoxVersion)
    }

    /// Opens a live photo part row under `key`.
    func openPart(_ row: ItemRow, key: SymmetricKey) throws -> PhotoPart {
        guard row.kind == PhotoPart.kind, !row.deleted, let box = row.box, box.count <= maximumBoxSize, row.isWellFormed else {
            throw VaultError.tampered("photo part \(row.id.lowercasedString)")
        }
        do {
            return try PhotoPart(decoding: try Box.open(box, key: key, associatedData: photoAssociatedData(row)))
        } catch {
            throw VaultError.tampered("photo part \(row.id.lowercasedString)")
        }
    }

    /// Checks that a live row of any kind opens under `keys` with its own associated data (a row from a server).
    func checkOpens(_ row: ItemRow, keys: Keys) throws {
        if row.kind == PhotoPart.kind {
            _ = try openPart(row, key: photoKey(keys))
        } else {
            _ = try openSyncRow(row, keys: keys)
        }
    }

    /// `row` (live) opened under `keys` and sealed under `newKeys` at `revision` and `updatedAt`: an item or a photo
    /// part, for master-key rotations.
    func resealed(_ row: ItemRow, from keys: Keys, to newKeys: Keys, revision: Int64, updatedAt: Date) throws -> ItemRow {
        var next = row
        next.revision = revision
        next.updatedAt = UnixTime.milliseconds(updatedAt)
        if row.kind == PhotoPart.kind {
            let part = try openPart(row, key: photoKey(keys))
            next.box = try Box.seal(Data(part.encoded), key: photoKey(newKeys), associatedData: photoAssociatedData(next))
        } else {
            var item = try openRow(row, keys: keys)
            item.revision = UInt64(revision)
            item.updatedAt = updatedAt
            next.box = try seal(item, keys: newKeys)
        }
        return next
    }
}
