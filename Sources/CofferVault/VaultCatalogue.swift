import CofferCrypto
import CofferModel
import Foundation
import GRDB

/// The catalogue: what finding an item by name needs (ids, kinds, names), kept as one sealed local-state value so
/// that a lookup opens one box and the item it finds instead of every item (docs/FORMAT.md §4.2).
///
/// It is a cache and never the truth: every lookup reads each live row's id, kind, revision and time (in the clear
/// already) and compares them with the catalogue's; rows it does not describe exactly are opened and their entries
/// made again, and the catalogue is then stored again. So it stays right through crashes, imports, sync and
/// rotation (whose new revisions make every entry stale) with no step of theirs having to remember it.
extension Vault {
    static let catalogueName = "catalogue"
    static let catalogueVersion: UInt8 = 1

    /// Every live item as a name lookup sees it, oldest first (ties by id), optionally of one kind.
    public func lookupCandidates(kind: ItemKind? = nil) throws(VaultError) -> [ItemLookup.Candidate] {
        let (rows, stored, stale) = try read { db, keys in
            let rows = try Row.fetchAll(db, sql: "SELECT id, kind, revision, updated_at FROM item WHERE deleted = 0").map(CatalogueRow.init)
            let local = localKeys(keys)
            let name = Self.rowName(Self.catalogueName, keys: local)
            let box = try Data.fetchOne(db, sql: "SELECT box FROM local_state WHERE name = ?", arguments: [name])
            // A catalogue that does not open or decode is made again from the items, which are the truth.
            let stored = box.flatMap { try? Self.decodeCatalogue(openLocal(row: name, box: $0, keys: local).value) } ?? [:]
            let staleIDs = rows.filter { stored[$0.id]?.row != $0 }.map { Data($0.id.bytes) }
            var stale: [ItemRow] = []
            for chunk in stride(from: 0, to: staleIDs.count, by: 500).map({ staleIDs[$0..<min($0 + 500, staleIDs.count)] }) {
                stale += try Row.fetchAll(
                    db, sql: "SELECT \(ItemRow.columns) FROM item WHERE deleted = 0 AND id IN (\(chunk.map { _ in "?" }.joined(separator: ",")))",
                    arguments: StatementArguments(Array(chunk))
                ).map(ItemRow.init(stored:))
            }
            return (rows, stored, zip(stale, try openAll(stale, keys: keys)).map { ($0.0, $0.1) })
        }
        var entries = stored
        for (row, item) in stale {
            entries[item.id] = CatalogueEntry(
                row: CatalogueRow(id: row.id, kind: row.kind, revision: row.revision, updatedAt: row.updatedAt),
                createdAt: UnixTime.milliseconds(item.createdAt), candidate: ItemLookup.Candidate(id: item.id, content: item.content))
        }
        let live = Set(rows.map(\.id))
        entries = entries.filter { live.contains($0.key) }
        if !stale.isEmpty || entries.count != stored.count {
            // Stored for the next lookup; a failure here costs that lookup time, never correctness.
            try? setLocalValue(Self.catalogueName, Self.encodeCatalogue(entries.values))
        }
        return entries.values
            .filter { kind == nil || $0.candidate.kind == kind }
            .sorted { first, second in
                if first.createdAt != second.createdAt { return first.createdAt < second.createdAt }
                return first.row.id.byteOrder < second.row.id.byteOrder
            }
            .map(\.candidate)
    }

    // MARK: Encoding (docs/FORMAT.md §4.2)

    static func encodeCatalogue(_ entries: some Collection<CatalogueEntry>) -> Data {
        var out = Data([catalogueVersion])
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

    static func decodeCatalogue(_ data: Data) throws -> [UUID: CatalogueEntry] {
        var reader = ByteReader(Array(data))
        guard try reader.byte() == catalogueVersion else { throw VaultError.tampered("the catalogue") }
        let count = Int(try reader.uint32())
        var entries: [UUID: CatalogueEntry] = [:]
        entries.reserveCapacity(min(count, 1 << 20))
        for _ in 0..<count {
            let id = UUID(bytes: try reader.bytes(16))
            let revision = Int64(bitPattern: try reader.uint64())
            let updatedAt = Int64(bitPattern: try reader.uint64())
            let createdAt = Int64(bitPattern: try reader.uint64())
            let kindText = try reader.string()
            guard let kind = ItemKind(rawValue: kindText) else { throw VaultError.tampered("the catalogue") }
            let name = try reader.string()
            let nameCount = Int(try reader.uint16())
            var names: [String] = [], folded: [String] = []
            for _ in 0..<nameCount {
                names.append(try reader.string())
                folded.append(try reader.string())
            }
            entries[id] = CatalogueEntry(
                row: CatalogueRow(id: id, kind: kindText, revision: revision, updatedAt: updatedAt), createdAt: createdAt,
                candidate: ItemLookup.Candidate(id: id, kind: kind, name: name, names: names, foldedNames: folded))
        }
        guard reader.isAtEnd else { throw VaultError.tampered("the catalogue") }
        return entries
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

    mutating func bytes(_ count: Int) throws -> [UInt8] {
        guard count >= 0, bytes.count - offset >= count else { throw VaultError.tampered("the catalogue") }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func byte() throws -> UInt8 { try bytes(1)[0] }
    mutating func uint16() throws -> UInt16 { try bytes(2).reduce(0) { $0 << 8 | UInt16($1) } }
    mutating func uint32() throws -> UInt32 { try bytes(4).reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func uint64() throws -> UInt64 { try bytes(8).reduce(0) { $0 << 8 | UInt64($1) } }

    mutating func string() throws -> String {
        let length = Int(try uint16())
        guard bytes.count - offset >= length else { throw VaultError.tampered("the catalogue") }
        defer { offset += length }
        return String(decoding: bytes[offset..<(offset + length)], as: UTF8.self)
    }
}

private extension Data {
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    /// A string of at most 65,535 UTF-8 bytes (item names are far shorter; a longer one is cut at a character).
    mutating func appendString(_ text: String) {
        var utf8 = Array(text.utf8)
        if utf8.count > Int(UInt16.max) {
            utf8 = Array(String(decoding: utf8.prefix(Int(UInt16.max)), as: UTF8.self).utf8.prefix(Int(UInt16.max)))
        }
        appendBigEndian(UInt16(utf8.count))
        append(contentsOf: utf8)
    }
}
