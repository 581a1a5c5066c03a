import CofferCrypto
import CofferModel
import Crypto
import Foundation
import GRDB

/// Name buckets: the catalogue's names spread over small sealed values by a keyed hash of their folded form, so that
/// finding an item by a name it carries (the everyday `coffer code GitHub`) opens one small box, whatever the
/// vault's size, instead of the whole catalogue (docs/FORMAT.md §4).
///
/// They are made with the catalogue, from the same entries, and like it they are a cache: they answer only while
/// SQLite's count of item writes is the one they record, and only when a name (exactly, or folded) is the best rule
/// and one item has it. Anything else — a full id, an id prefix, a prefix or substring, several items of one name, a
/// missing or damaged box — is answered by the catalogue, so the buckets change how fast a lookup is, never what it
/// finds.
extension Vault {
    static let bucketsHeadName = "catalogue-buckets"
    static let bucketsVersion: UInt8 = 1
    /// Names a bucket holds at most on average; the count of buckets is the least power of two that allows it.
    static let namesPerBucket = 128
    static let maxBuckets = 4_096

    static func bucketName(_ index: Int) -> String { "catalogue-bucket-\(index)" }

    static func bucketCount(names: Int) -> Int {
        var count = 1
        while count < maxBuckets, count * namesPerBucket < names { count *= 2 }
        return count
    }

    /// The one item whose name `query` is, found through the bucket of that name and read in the same transaction;
    /// nil when the buckets cannot say (see the type's documentation), and the caller asks the catalogue.
    public func bucketItem(_ query: ItemLookup.Query, kind: ItemKind?) throws(VaultError) -> Item? {
        guard !query.isItemID, !query.foldedUTF8.isEmpty else { return nil }
        return try read { db, keys -> Item? in
            let changes =
                try db.firstRow("SELECT count FROM item_changes WHERE singleton = 1") { try Cell.integer($0, 0, "the item change count") } ?? -1
            let local = localKeys(keys)
            guard let headValue = try? storedLocalValue(Self.bucketsHeadName, db: db, keys: local),
                let head = try? BucketsHead(Array(headValue)), head.changes == changes
            else { return nil }
            let index = BucketHash(local).bucket(of: query.foldedUTF8, count: head.count)
            guard let value = try? storedLocalValue(Self.bucketName(index), db: db, keys: local),
                let bucket = try? NameBucket(Array(value)), bucket.changes == changes,
                let id = bucket.onlyItem(named: query, kind: kind)
            else { return nil }
            return try fetchItem(db, id: id, keys: keys)
        }
    }

    /// The values that store `entries` as buckets at item-write count `changes`, with deletions of the buckets of a
    /// former, larger count (`previous`).
    static func bucketValues(_ entries: [CatalogueEntry], changes: Int64, previous: Int, keys: LocalKeys) -> [String: Data?] {
        let hash = BucketHash(keys)
        let count = bucketCount(names: entries.reduce(0) { $0 + $1.candidate.names.count })
        var buckets = [[UInt8]](repeating: NameBucket.header(changes: changes), count: count)
        var records = [UInt32](repeating: 0, count: count)
        for entry in entries {
            for (name, folded) in zip(entry.candidate.names, entry.candidate.foldedNames) {
                let index = hash.bucket(of: Array(folded.utf8), count: count)
                NameBucket.append(id: entry.row.id, kind: entry.row.kind, name: name, folded: folded, to: &buckets[index])
                records[index] += 1
            }
        }
        var values: [String: Data?] = [bucketsHeadName: Data(BucketsHead.encode(changes: changes, count: count))]
        for index in 0..<count {
            NameBucket.setCount(records[index], in: &buckets[index])
            values[bucketName(index)] = Data(buckets[index])
            // Each bucket is held once: as bytes being built, then as the value.
            buckets[index] = []
        }
        for index in count..<max(count, previous) { values[bucketName(index)] = .some(nil) }
        return values
    }

    /// The stored head's count of item writes (nil when absent or damaged) and how many buckets may be stored, for
    /// deleting those a smaller count no longer uses: every possible one when a head is stored but does not open.
    func storedBuckets(db: Database, keys: LocalKeys) -> (changes: Int64?, count: Int) {
        do {
            guard let value = try storedLocalValue(Self.bucketsHeadName, db: db, keys: keys) else { return (nil, 0) }
            let head = try BucketsHead(Array(value))
            return (head.changes, head.count)
        } catch {
            return (nil, Self.maxBuckets)
        }
    }

    /// A local-state value read in an open transaction, nil when absent.
    func storedLocalValue(_ name: String, db: Database, keys: LocalKeys) throws -> Data? {
        let row = Self.rowName(name, keys: keys)
        guard let box = try db.firstRow("SELECT box FROM local_state WHERE name = ?", .blob(row), read: { Cell.blob($0, 0) }) ?? nil else {
            return nil
        }
        return try openLocal(row: row, box: box, keys: keys).value
    }
}

/// Which bucket a folded name falls in: HMAC-SHA256 under the local-names key of
/// `"coffer/v1/catalogue-bucket" ‖ 0x00 ‖ folded name`, its first four bytes (big-endian) modulo the count. Keyed,
/// so that the file does not show which bucket a given name would be in.
struct BucketHash {
    static let label = Array("coffer/v1/catalogue-bucket".utf8) + [0]
    private let prepared: HMAC<SHA256>

    init(_ keys: Vault.LocalKeys) {
        var prepared = HMAC<SHA256>(key: keys.name)
        prepared.update(data: Self.label)
        self.prepared = prepared
    }

    func bucket(of folded: [UInt8], count: Int) -> Int {
        var mac = prepared
        mac.update(data: folded)
        let value = mac.finalize().withUnsafeBytes { raw in raw.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
        return Int(value % UInt32(count))
    }
}

/// `catalogue-buckets = version (u8 = 1) ‖ item writes (u64) ‖ bucket count (u16)`.
struct BucketsHead {
    let changes: Int64
    let count: Int

    init(_ bytes: [UInt8]) throws {
        guard bytes.count == 11, bytes[0] == Vault.bucketsVersion else { throw VaultError.tampered("the catalogue") }
        changes = Int64(bitPattern: bytes[1..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        count = Int(bytes[9]) << 8 | Int(bytes[10])
        guard (1...Vault.maxBuckets).contains(count), count & (count - 1) == 0 else { throw VaultError.tampered("the catalogue") }
    }

    static func encode(changes: Int64, count: Int) -> [UInt8] {
        var out: [UInt8] = [Vault.bucketsVersion]
        Swift.withUnsafeBytes(of: UInt64(bitPattern: changes).bigEndian) { out.append(contentsOf: $0) }
        Swift.withUnsafeBytes(of: UInt16(count).bigEndian) { out.append(contentsOf: $0) }
        return out
    }
}

/// `catalogue-bucket-<k> = version (u8 = 1) ‖ item writes (u64) ‖ count (u32) ‖ record × count`, and
/// `record = id (16) ‖ str(kind) ‖ str(name) ‖ str(folded name)`: one per name of an item whose folded form falls in
/// bucket k.
struct NameBucket {
    let changes: Int64
    private let bytes: [UInt8]

    init(_ bytes: [UInt8]) throws {
        guard bytes.count >= 13, bytes[0] == Vault.bucketsVersion else { throw VaultError.tampered("the catalogue") }
        changes = Int64(bitPattern: bytes[1..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        self.bytes = bytes
        // Checked whole before use: a record that overruns is damage, not a shorter bucket.
        var count = 0
        try forEachRecord { _, _, _, _ in count += 1 }
        guard count == Int(bytes[9..<13].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) else {
            throw VaultError.tampered("the catalogue")
        }
    }

    /// The item whose name (exactly, else folded) `query` is, when exactly one item is best; nil otherwise.
    func onlyItem(named query: ItemLookup.Query, kind: ItemKind?) -> UUID? {
        let wanted = kind.map { Array($0.rawValue.utf8) }
        var best = Int.max
        var found: [UUID] = []
        try? forEachRecord { id, recordKind, name, folded in
            if let wanted, !recordKind.elementsEqual(wanted) { return }
            guard let rank = query.nameRank(name, folded: folded), rank <= best else { return }
            let item = UUID(bytes: Array(id))
            if rank < best {
                best = rank
                found = [item]
            } else if !found.contains(item) {
                found.append(item)
            }
        }
        return found.count == 1 ? found[0] : nil
    }

    private func forEachRecord(
        _ body: (_ id: ArraySlice<UInt8>, _ kind: ArraySlice<UInt8>, _ name: ArraySlice<UInt8>, _ folded: ArraySlice<UInt8>) throws -> Void
    ) throws {
        var offset = 13
        func field(_ length: Int) throws -> ArraySlice<UInt8> {
            guard bytes.count - offset >= length else { throw VaultError.tampered("the catalogue") }
            defer { offset += length }
            return bytes[offset..<(offset + length)]
        }
        func string() throws -> ArraySlice<UInt8> {
            let length = try field(2).reduce(0) { $0 << 8 | Int($1) }
            return try field(length)
        }
        while offset < bytes.count {
            try body(try field(16), try string(), try string(), try string())
        }
    }

    static func header(changes: Int64) -> [UInt8] {
        var out: [UInt8] = [Vault.bucketsVersion]
        Swift.withUnsafeBytes(of: UInt64(bitPattern: changes).bigEndian) { out.append(contentsOf: $0) }
        out += [0, 0, 0, 0]
        return out
    }

    static func setCount(_ count: UInt32, in bucket: inout [UInt8]) {
        Swift.withUnsafeBytes(of: count.bigEndian) { bucket.replaceSubrange(9..<13, with: $0) }
    }

    static func append(id: UUID, kind: String, name: String, folded: String, to bucket: inout [UInt8]) {
        bucket.append(contentsOf: id.bytes)
        for text in [kind, name, folded] {
            let utf8 = CatalogueText.clipped(text)
            bucket.append(UInt8(utf8.count >> 8))
            bucket.append(UInt8(utf8.count & 0xFF))
            bucket.append(contentsOf: utf8)
        }
    }
}
