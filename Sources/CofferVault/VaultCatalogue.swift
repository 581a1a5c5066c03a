import CofferCrypto
import CofferModel
import Foundation
import GRDB

/// The catalogue: what finding an item by name needs (ids, kinds, names), kept as one sealed local-state value so
/// that a lookup opens one box and the item it finds instead of every item (docs/FORMAT.md §4).
///
/// It is a cache and never the truth. It records SQLite's count of writes to the item table (kept by triggers,
/// whoever writes); while that count is unchanged it is current. Otherwise every live row's id, kind, revision and
/// time (in the clear already) are compared with its entries, rows it does not describe exactly are opened, their
/// entries made again, and it is stored again. So it stays right through crashes, imports, sync and rotation with no
/// step of theirs having to remember it.
extension Vault {
    static let catalogueName = "catalogue"
    static let catalogueVersion: UInt8 = 1

    /// What `query` names among the live items (of `kind`), by `ItemLookup`'s rules, read from the catalogue; several
    /// equally good matches come oldest first. `bucketItem` answers the common case, one exact name, sooner.
    public func lookup(_ query: ItemLookup.Query, kind: ItemKind? = nil) throws(VaultError) -> ItemLookup.Outcome {
        let catalogue = try currentCatalogue()
        var ranked: [(entry: CatalogueIndex.Entry, rank: Int)] = []
        for entry in catalogue.entries where kind == nil || entry.kind == kind {
            let names = entry.names
            if let rank = query.rank(
                id: entry.id, nameCount: names.count, name: { catalogue.bytes[catalogue.nameRanges[names.lowerBound + $0].exact] },
                foldedName: { catalogue.bytes[catalogue.nameRanges[names.lowerBound + $0].folded] })
            {
                ranked.append((entry, rank))
            }
        }
        return ItemLookup.outcome(CatalogueIndex.oldestFirst(ranked).map { (catalogue.candidate($0.entry), $0.rank) })
    }

    /// Every live item as a name lookup sees it, oldest first (ties by id), optionally of one kind.
    public func lookupCandidates(kind: ItemKind? = nil) throws(VaultError) -> [ItemLookup.Candidate] {
        let catalogue = try currentCatalogue()
        return CatalogueIndex.oldestFirst(catalogue.entries.filter { kind == nil || $0.kind == kind }.map { ($0, 0) })
            .map { catalogue.candidate($0.entry) }
    }

    /// The catalogue, made current: when SQLite's count of item writes is the one it was made at, as stored; else
    /// rows it does not describe exactly are opened, their entries made again, and the result stored with its name
    /// buckets (`VaultCatalogueBuckets`).
    func currentCatalogue() throws(VaultError) -> CatalogueIndex {
        let outcome = try read { db, keys in try catalogueUpdate(db, keys: keys) }
        if !outcome.values.isEmpty {
            // Stored for the next lookup; a failure here costs that lookup time, never correctness.
            try? setLocalValues(outcome.values)
        }
        return outcome.index
    }

    /// The catalogue of the rows in `db` now, with the local values that store it and its buckets (none when the
    /// stored ones are current). Rows of `known` items (an import's, open already) are described from them; other
    /// rows the stored catalogue does not describe exactly are opened.
    func catalogueUpdate(
        _ db: Database, keys: Keys, known: [UUID: Item] = [:]
    ) throws -> (index: CatalogueIndex, values: [String: Data?]) {
        let changes = try Int64.fetchOne(db, sql: "SELECT count FROM item_changes WHERE singleton = 1") ?? -1
        let local = localKeys(keys)
        let name = Self.rowName(Self.catalogueName, keys: local)
        let box = try Data.fetchOne(db, sql: "SELECT box FROM local_state WHERE name = ?", arguments: [name])
        // A catalogue that does not open or decode is made again from the items, which are the truth.
        let stored = box.flatMap { try? CatalogueIndex(Array(openLocal(row: name, box: $0, keys: local).value)) }
        let buckets = storedBuckets(db: db, keys: local)
        if let stored, stored.changes == changes {
            // Current; its buckets too, unless they were never made (a vault of an earlier version) or are stale.
            if buckets.changes == changes { return (stored, [:]) }
            return (stored, Self.bucketValues(stored.catalogueEntries(), changes: changes, previous: buckets.count, keys: local))
        }

        let rows = try Row.fetchAll(db, sql: "SELECT id, kind, revision, updated_at FROM item WHERE deleted = 0 AND \(Self.itemRowCondition)")
            .map(CatalogueRow.init)
        var kept: [UUID: CatalogueEntry] = [:]
        if let stored {
            let storedEntries = stored.catalogueEntries()
            kept.reserveCapacity(storedEntries.count)
            for entry in storedEntries { kept[entry.row.id] = entry }
        }
        // One pass in row order: an entry the stored catalogue has exactly, or one made from a known item, or a slot
        // for a row to open (a few lookups per row; four passes over every row took a third of a large import's
        // catalogue update).
        var described: [CatalogueEntry?] = []
        described.reserveCapacity(rows.count)
        var staleIndices: [Int] = []
        for (index, row) in rows.enumerated() {
            if let entry = kept.removeValue(forKey: row.id), entry.row == row {
                described.append(entry)
            } else if let item = known[row.id] {
                described.append(
                    CatalogueEntry(
                        row: row, createdAt: UnixTime.milliseconds(item.createdAt), candidate: ItemLookup.Candidate(id: item.id, content: item.content)))
            } else {
                described.append(nil)
                staleIndices.append(index)
            }
        }
        kept = [:]
        let staleIDs = staleIndices.map { Data(rows[$0].id.bytes) }
        var stale: [ItemRow] = []
        for chunk in stride(from: 0, to: staleIDs.count, by: 500).map({ staleIDs[$0..<min($0 + 500, staleIDs.count)] }) {
            stale += try Row.fetchAll(
                db, sql: "SELECT \(ItemRow.columns) FROM item WHERE deleted = 0 AND id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))",
                arguments: StatementArguments(Array(chunk))
            ).map(ItemRow.init(stored:))
        }
        let opened = Dictionary(uniqueKeysWithValues: zip(stale, try openAll(stale, keys: keys)).map { ($0.0.id, ($0.0, $0.1)) })
        for index in staleIndices {
            guard let (itemRow, item) = opened[rows[index].id] else { continue }
            described[index] = CatalogueEntry(
                row: CatalogueRow(id: itemRow.id, kind: itemRow.kind, revision: itemRow.revision, updatedAt: itemRow.updatedAt),
                createdAt: UnixTime.milliseconds(item.createdAt), candidate: ItemLookup.Candidate(id: item.id, content: item.content))
        }
        let entries = described.compactMap { $0 }
        let index = try CatalogueIndex(Self.encodeCatalogue(entries, changes: changes))
        var values = Self.bucketValues(entries, changes: changes, previous: buckets.count, keys: local)
        values[Self.catalogueName] = Data(index.bytes)
        return (index, values)
    }

    // MARK: Encoding (docs/FORMAT.md §4)

    static func encodeCatalogue(_ entries: some Collection<CatalogueEntry>, changes: Int64) -> [UInt8] {
        var out: [UInt8] = []
        // Reserved once (the clipped names are no longer than these): grown by doubling, a catalogue of 222,000
        // items held up to twice its size while it was written.
        out.reserveCapacity(
            entries.reduce(13) { total, entry in
                total + 16 + 24 + 6 + entry.row.kind.utf8.count + entry.candidate.name.utf8.count
                    + zip(entry.candidate.names, entry.candidate.foldedNames).reduce(0) { $0 + 4 + $1.0.utf8.count + $1.1.utf8.count }
            })
        out.append(catalogueVersion)
        out.appendBigEndian(UInt64(bitPattern: changes))
        out.appendBigEndian(UInt32(entries.count))
        for entry in entries {
            out.append(contentsOf: entry.row.id.bytes)
            out.appendBigEndian(UInt64(bitPattern: entry.row.revision))
            out.appendBigEndian(UInt64(bitPattern: entry.row.updatedAt))
            out.appendBigEndian(UInt64(bitPattern: entry.createdAt))
            out.appendString(entry.row.kind)
            out.appendString(entry.candidate.name)
            out.appendBigEndian(UInt16(entry.candidate.names.count))
            for (name, folded) in zip(entry.candidate.names, entry.candidate.foldedNames) {
                out.appendString(name)
                out.appendString(folded)
            }
        }
        return out
    }
}

/// A decoded catalogue: fixed fields per entry, names as ranges of one buffer, so that a lookup compares bytes and
/// makes strings only for the items it returns.
struct CatalogueIndex {
    struct Entry {
        let id: UUID
        let revision: Int64
        let updatedAt: Int64
        let createdAt: Int64
        let kind: ItemKind
        let shown: Range<Int>
        /// Indices into `nameRanges`.
        let names: Range<Int>
    }

    let bytes: [UInt8]
    /// SQLite's count of item writes when the catalogue was made.
    let changes: Int64
    private(set) var entries: [Entry] = []
    private(set) var nameRanges: [(exact: Range<Int>, folded: Range<Int>)] = []

    init(_ bytes: [UInt8]) throws {
        self.bytes = bytes
        var reader = ByteReader(bytes)
        guard try reader.byte() == Vault.catalogueVersion else { throw VaultError.tampered("the catalogue") }
        changes = Int64(bitPattern: try reader.uint64())
        let count = Int(try reader.uint32())
        guard count <= bytes.count / 40 else { throw VaultError.tampered("the catalogue") }
        entries.reserveCapacity(count)
        nameRanges.reserveCapacity(count * 2)
        for _ in 0..<count {
            let id = UUID(bytes: Array(bytes[try reader.range(16)]))
            let revision = Int64(bitPattern: try reader.uint64())
            let updatedAt = Int64(bitPattern: try reader.uint64())
            let createdAt = Int64(bitPattern: try reader.uint64())
            guard let kind = ItemKind(rawValue: String(decoding: bytes[try reader.string()], as: UTF8.self)) else {
                throw VaultError.tampered("the catalogue")
            }
            let shown = try reader.string()
            let nameCount = Int(try reader.uint16())
            let first = nameRanges.count
            for _ in 0..<nameCount { nameRanges.append((try reader.string(), try reader.string())) }
            entries.append(
                Entry(
                    id: id, revision: revision, updatedAt: updatedAt, createdAt: createdAt, kind: kind, shown: shown,
                    names: first..<nameRanges.count))
        }
        guard reader.isAtEnd else { throw VaultError.tampered("the catalogue") }
    }

    /// Every entry with its names as strings (to make the catalogue or its buckets again).
    func catalogueEntries() -> [CatalogueEntry] {
        entries.map { entry in
            CatalogueEntry(
                row: CatalogueRow(id: entry.id, kind: entry.kind.rawValue, revision: entry.revision, updatedAt: entry.updatedAt),
                createdAt: entry.createdAt, candidate: candidate(entry))
        }
    }

    func candidate(_ entry: Entry) -> ItemLookup.Candidate {
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        return ItemLookup.Candidate(
            id: entry.id, kind: entry.kind, name: text(entry.shown), names: nameRanges[entry.names].map { text($0.exact) },
            foldedNames: nameRanges[entry.names].map { text($0.folded) })
    }

    /// Creation order; ties (items added together) by id.
    static func oldestFirst<T>(_ ranked: [(entry: Entry, rank: T)]) -> [(entry: Entry, rank: T)] {
        ranked.sorted { first, second in
            if first.entry.createdAt != second.entry.createdAt { return first.entry.createdAt < second.entry.createdAt }
            return first.entry.id.byteOrder < second.entry.id.byteOrder
        }
    }
}

/// What a catalogue entry is checked against: the row's clear columns.
struct CatalogueRow: Equatable {
    let id: UUID
    let kind: String
    let revision: Int64
    let updatedAt: Int64

    init(id: UUID, kind: String, revision: Int64, updatedAt: Int64) {
        self.id = id
        self.kind = kind
        self.revision = revision
        self.updatedAt = updatedAt
    }

    init(_ row: Row) throws {
        guard let id = row.blob(0), id.count == 16, let kind = row.text(1) else { throw VaultError.tampered("an item id") }
        self.init(
            id: UUID(bytes: Array(id)), kind: kind, revision: try row.integer(2, "an item revision"),
            updatedAt: try row.integer(3, "an item time"))
    }
}

struct CatalogueEntry {
    let row: CatalogueRow
    let createdAt: Int64
    let candidate: ItemLookup.Candidate
}

/// Reads the catalogue's big-endian fields; any overrun is damage.
private struct ByteReader {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func range(_ count: Int) throws -> Range<Int> {
        guard count >= 0, bytes.count - offset >= count else { throw VaultError.tampered("the catalogue") }
        defer { offset += count }
        return offset..<(offset + count)
    }

    mutating func byte() throws -> UInt8 { bytes[try range(1).lowerBound] }
    mutating func uint16() throws -> UInt16 { bytes[try range(2)].reduce(0) { $0 << 8 | UInt16($1) } }
    mutating func uint32() throws -> UInt32 { bytes[try range(4)].reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func uint64() throws -> UInt64 { bytes[try range(8)].reduce(0) { $0 << 8 | UInt64($1) } }

    /// A `str` field: the range of its UTF-8 bytes.
    mutating func string() throws -> Range<Int> { try range(Int(try uint16())) }
}

private extension Array where Element == UInt8 {
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    mutating func appendString(_ text: String) {
        let utf8 = CatalogueText.clipped(text)
        appendBigEndian(UInt16(utf8.count))
        append(contentsOf: utf8)
    }
}

enum CatalogueText {
    /// At most 65,535 bytes of UTF-8, what a `str` field holds (item names are far shorter; a longer one is cut at a
    /// character).
    static func clipped(_ text: String) -> [UInt8] {
        let utf8 = Array(text.utf8)
        guard utf8.count > Int(UInt16.max) else { return utf8 }
        return Array(String(decoding: utf8.prefix(Int(UInt16.max)), as: UTF8.self).utf8.prefix(Int(UInt16.max)))
    }
}
