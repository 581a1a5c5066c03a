import CofferCrypto
import CofferModel
import CofferPlatform
import Crypto
import Foundation
import GRDB
import Synchronization

extension ItemRow {
    /// The columns `init(stored:)` reads, in its order.
    static let columns = "id, kind, revision, updated_at, deleted, box"
    /// `columns` named by table, for joins.
    static let qualifiedColumns = "item.id, item.kind, item.revision, item.updated_at, item.deleted, item.box"

    /// A row of `SELECT \(columns) FROM item`, read by position (listing 10,000 items reads 60,000 cells); a
    /// malformed id, kind or number is damage.
    init(stored row: Row) throws {
        guard let id = row.blob(0), id.count == 16 else { throw VaultError.tampered("an item id") }
        guard let kind = row.text(1) else { throw VaultError.tampered("an item kind") }
        self.init(
            id: UUID(bytes: Array(id)), kind: kind, revision: try row.integer(2, "an item revision"),
            updatedAt: try row.integer(3, "an item time"), deleted: try row.integer(4, "an item's deleted flag") != 0,
            box: row.blob(5))
    }
}

/// Per-chunk results of a parallel map over rows, each slot written by exactly one worker.
final class ChunkResults<Value: Sendable>: Sendable {
    private let results: Mutex<[Result<[Value], VaultError>]>

    init(count: Int) {
        results = Mutex(Array(repeating: .success([]), count: count))
    }

    func store(_ index: Int, _ result: Result<[Value], VaultError>) {
        results.withLock { $0[index] = result }
    }

    var all: [Result<[Value], VaultError>] { results.withLock { $0 } }
}

/// Item boxes larger than this are refused on read (files are hostile input).
let maximumBoxSize = 1 << 20

extension Vault {
    /// Box format version bound into every item's associated data (docs/FORMAT.md §4).
    public static let itemBoxVersion: UInt32 = 1

    // MARK: Reading

    /// Every live item, decrypted, oldest first (ties by id). Any box that fails authentication stops
    /// the listing with `.tampered`: a modified vault is never shown half-read. Rows are opened on all cores.
    public func items() throws(VaultError) -> [Item] {
        try items(kind: nil) { $0 }
    }

    /// Every live item (of `kind`) as `transform` makes it, oldest first (ties by id), `transform` dropping those
    /// it returns nil for. Items are read and opened a batch at a time and only what `transform` keeps is held, so a
    /// listing of a large vault never has every item and every box in memory at once. As with `items()`, any box that
    /// fails authentication stops it with `.tampered` before anything is returned.
    public func items<T>(kind: ItemKind?, _ transform: (Item) throws -> T?) throws(VaultError) -> [T] {
        var kept: [(createdAt: Date, order: (UInt64, UInt64), value: T)] = []
        try read { db, keys in
            let filter = (kind == nil ? "" : " AND kind = ?") + " AND \(Self.itemRowCondition)"
            let arguments: StatementArguments = kind.map { [$0.rawValue] } ?? []
            let statement = try db.makeStatement(sql: "SELECT \(ItemRow.columns) FROM item WHERE deleted = 0\(filter)")
            let cursor = try Row.fetchCursor(statement, arguments: arguments)
            var batch: [ItemRow] = []
            batch.reserveCapacity(Self.openingBatch)
            func flush() throws {
                for item in try openAll(batch, keys: keys) {
                    if let value = try transform(item) { kept.append((item.createdAt, item.id.byteOrder, value)) }
                }
                batch.removeAll(keepingCapacity: true)
            }
            while try cursor.next() != nil {
                batch.append(try ItemRow(current: statement.sqliteStatement))
                if batch.count == Self.openingBatch { try flush() }
            }
            try flush()
        }
        // Creation order; ties (items added together) by id, compared as integers: cheap and stable.
        kept.sort { first, second in
            if first.createdAt != second.createdAt { return first.createdAt < second.createdAt }
            return first.order < second.order
        }
        return kept.map { $0.value }
    }

    /// From how many items `addAll` brings the catalogue up to date itself: below it, the next lookup's catch-up
    /// costs less than a few milliseconds, and adding a handful of items need not rewrite every name bucket.
    static let catalogueRefreshThreshold = 64

    /// How many rows a listing opens at a time (in parallel): enough to keep every core busy, few enough that their
    /// boxes and items stay small next to what the listing keeps.
    static let openingBatch = 2_048

    /// Decrypts and decodes `rows` in parallel chunks; the first failure wins. Rows `fromServer` fail as a sync
    /// merge reports them (`openRemote`).
    func openAll(_ rows: [ItemRow], keys: Keys, fromServer: Bool = false) throws(VaultError) -> [Item] {
        try parallelMap(rows) { fromServer ? try openRemote($0, keys: keys) : try openRow($0, keys: keys) }
    }

    /// `transform` of each of `rows`, in order, computed in chunks on every core; the first failure in order wins.
    func parallelMap<Element: Sendable, Value: Sendable>(
        _ rows: [Element], _ transform: @Sendable (Element) throws -> Value
    ) throws(VaultError) -> [Value] {
        let chunkCount = rows.count < 256 ? 1 : ProcessInfo.processInfo.activeProcessorCount * 4
        let chunkSize = (rows.count + chunkCount - 1) / max(chunkCount, 1)
        let results = ChunkResults<Value>(count: chunkCount)
        // Pool threads started here would begin with this thread's registers, and what they held.
        ProcessHardening.clearVectorRegisters()
        DispatchQueue.concurrentPerform(iterations: chunkCount) { chunk in
            let range = min(chunk * chunkSize, rows.count)..<min((chunk + 1) * chunkSize, rows.count)
            do {
                results.store(chunk, .success(try rows[range].map(transform)))
            } catch {
                results.store(chunk, .failure(Self.mapped(error)))
            }
            ProcessHardening.scrubWorkerThread()
        }
        var values: [Value] = []
        values.reserveCapacity(rows.count)
        for result in results.all {
            switch result {
            case .success(let chunk): values += chunk
            case .failure(let error): throw error
            }
        }
        return values
    }

    /// The live item with `id`.
    public func item(id: UUID) throws(VaultError) -> Item {
        try read { db, keys in try fetchItem(db, id: id, keys: keys) }
    }

    /// Ids, kinds and revisions of purged items (tombstones), for sync.
    public func tombstones() throws(VaultError) -> [(id: UUID, kind: String, revision: UInt64)] {
        try read { db, _ in
            try Row.fetchAll(db, sql: "SELECT id, kind, revision FROM item WHERE deleted = 1").map { row in
                guard let id = row.blob(0), id.count == 16, let kind = row.text(1) else { throw VaultError.tampered("an item id") }
                return (UUID(bytes: Array(id)), kind, UInt64(clamping: try row.integer(2, "an item revision")))
            }
        }
    }

    // MARK: Writing

    /// Adds a new item; returns it with its id and revision 1.
    @discardableResult
    public func add(_ content: ItemContent) throws(VaultError) -> Item {
        try add(content, id: UUID(), createdAt: options.clock())
    }

    /// Adds an item with a given id and creation time (imports and restores keep both).
    @discardableResult
    public func add(_ content: ItemContent, id: UUID, createdAt: Date) throws(VaultError) -> Item {
        let now = options.clock()
        let item = Item(id: id, revision: 1, createdAt: createdAt, updatedAt: now, content: content)
        try writeTransaction { db, keys in
            try insert(db, item: item, keys: keys)
        }
        return item
    }

    /// Adds many items in one transaction (all or nothing). `photos[i]`, when given, holds the images of card
    /// `contents[i]` (each checked as `CardPhoto.checkedType` says; one that is not refuses the whole call). `progress`
    /// is called with (items written, items in all) every 256 items while the transaction is open; nothing is visible
    /// to readers until it commits.
    public func addAll(
        _ contents: [ItemContent], photos: [[PhotoSide: Data]] = [], progress: (Int, Int) -> Void = { _, _ in }
    ) throws(VaultError) -> [Item] {
        let now = options.clock()
        var items = contents.map { Item(id: UUID(), revision: 1, createdAt: now, updatedAt: now, content: $0) }
        // Rows go in in id order, so that the table's B-tree grows at a few places instead of at a random page per
        // item; the order of the items returned is the order given.
        let order = items.indices.sorted { items[$0].id.byteOrder < items[$1].id.byteOrder }
        try writeTransaction { db, keys in
            try withLargeCache(db, for: items.count) {
                var written = 0
                var start = order.startIndex
                while start < order.endIndex {
                    let batch = order[start..<min(start + Self.openingBatch, order.endIndex)]
                    start = batch.endIndex
                    for index in batch where index < photos.count && !photos[index].isEmpty {
                        guard case .card(var card) = items[index].content else { continue }
                        try applyPhotoChanges(db, to: &card, cardID: items[index].id, PhotoChanges(images: photos[index]), keys: keys, now: now)
                        items[index].content = .card(card)
                    }
                    // Checked and sealed on every core, then written in order.
                    let batchItems = batch.map { items[$0] }
                    let boxes = try parallelMap(batchItems) { item in
                        try item.content.validated()
                        return try seal(item, keys: keys)
                    }
                    for (item, box) in zip(batchItems, boxes) {
                        try write(db, item: item, box: box)
                        written += 1
                        if written % 256 == 0 { progress(written, items.count) }
                    }
                }
            }
            // The catalogue and its name buckets are brought up to date from the items in hand, in the same
            // transaction: otherwise the first lookup after a large import opened every new item (40 s after 222,000).
            // Only a speed-up: if an older item's box does not open, the import still goes in and the next lookup
            // meets the damage, as it would have.
            if items.count >= Self.catalogueRefreshThreshold,
                let update = try? catalogueUpdate(db, keys: keys, known: Dictionary(items.map { ($0.id, $0) }) { first, _ in first })
            {
                try storeLocalValues(db, update.values, keys: keys)
            }
        }
        return items
    }

    /// Stores a changed copy of `item`. `item.revision` must be the stored revision (optimistic concurrency);
    /// the stored copy gets revision + 1.
    @discardableResult
    public func update(_ item: Item) throws(VaultError) -> Item {
        try writeTransaction { db, keys in
            try item.content.validated()
            let stored = try storedRevision(db, id: item.id)
            guard stored == item.revision else {
                throw VaultError.conflict(itemID: item.id, expected: item.revision, stored: stored)
            }
            var next = item
            next.revision = stored + 1
            next.updatedAt = options.clock()
            try replace(db, item: next, keys: keys)
            return next
        }
    }

    /// Reads, changes and stores an item in one transaction, so concurrent processes cannot lose each other's
    /// changes (HOTP counters, PIN attempt counts, one-time passes). `transform` may throw to abort without writing.
    @discardableResult
    public func modify(id: UUID, _ transform: (inout ItemContent) throws -> Void) throws(VaultError) -> Item {
        try modify(id: id, photos: PhotoChanges(), transform)
    }

    /// Deletes an item for good, leaving a tombstone (id, kind, revision) so sync can propagate the deletion; a
    /// card's photos go with it.
    public func purge(id: UUID) throws(VaultError) {
        try writeTransaction { db, keys in
            let stored = try storedRevision(db, id: id)
            for photo in storedPhotos(db, cardID: id, keys: keys) { try purgeParts(db, of: photo, now: options.clock()) }
            try db.execute(
                sql: "UPDATE item SET deleted = 1, box = NULL, revision = ?, updated_at = ? WHERE id = ?",
                arguments: [Int64(stored + 1), UnixTime.milliseconds(options.clock()), Data(id.bytes)])
        }
    }

    // MARK: Rows and boxes

    func insert(_ db: Database, item: Item, keys: Keys) throws {
        try item.content.validated()
        try write(db, item: item, box: try seal(item, keys: keys))
    }

    /// Runs `body` with SQLite's page cache grown for a transaction that writes `rows` rows: with the default 2 MiB
    /// an import of 50,000 items spilled its pages to the log and read them back, a sixth of its time.
    func withLargeCache<Result>(_ db: Database, for rows: Int, _ body: () throws -> Result) throws -> Result {
        // Below this the default cache holds the rows; a smaller setting would shrink it.
        guard rows > 2_048 else { return try body() }
        // KiB, as a negative cache_size counts: about 1 KiB a row, at most 64 MiB.
        let previous = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2_000
        try db.execute(sql: "PRAGMA cache_size = -\(min(rows, 65_536))")
        defer { try? db.execute(sql: "PRAGMA cache_size = \(previous)") }
        return try body()
    }

    /// Inserts the row of new `item`, sealed as `box`.
    private func write(_ db: Database, item: Item, box: Data) throws {
        try db.write(
            "INSERT INTO item (id, kind, revision, updated_at, deleted, box) VALUES (?, ?, ?, ?, 0, ?)",
            .id(item.id), .text(item.kind.rawValue), .integer(Int64(item.revision)),
            .integer(UnixTime.milliseconds(item.updatedAt)), .blob(box))
    }

    func replace(_ db: Database, item: Item, keys: Keys) throws {
        try store(db, item: item, box: try seal(item, keys: keys))
    }

    /// Writes `item`'s row with `box`, its content sealed for exactly its id, kind, revision and time.
    func store(_ db: Database, item: Item, box: Data) throws {
        try db.write(
            "UPDATE item SET kind = ?, revision = ?, updated_at = ?, deleted = 0, box = ? WHERE id = ?",
            .text(item.kind.rawValue), .integer(Int64(item.revision)), .integer(UnixTime.milliseconds(item.updatedAt)), .blob(box),
            .id(item.id))
    }

    func storedRevision(_ db: Database, id: UUID) throws -> UInt64 {
        guard let revision = try db.value(Int64.self, "SELECT revision FROM item WHERE id = ? AND deleted = 0 AND \(Self.itemRowCondition)", [Data(id.bytes)])
        else {
            throw VaultError.itemNotFound
        }
        return UInt64(revision)
    }

    func fetchItem(_ db: Database, id: UUID, keys: Keys) throws -> Item {
        guard
            let row = try db.firstRow(
                "SELECT \(ItemRow.columns) FROM item WHERE id = ? AND deleted = 0 AND \(Self.itemRowCondition)", .id(id), read: ItemRow.init(current:))
        else { throw VaultError.itemNotFound }
        return try openRow(row, keys: keys)
    }

    /// The associated data of an item box: vault id, item id, kind, revision, update time and box version.
    func associatedData(itemID: UUID, kind: String, revision: UInt64, updatedAt: Int64) -> [UInt8] {
        KeySchedule.itemAssociatedData(
            vaultID: vaultIDBytes, itemID: itemID.bytes, kind: kind, revision: revision,
            updatedAt: UInt64(bitPattern: updatedAt), formatVersion: Self.itemBoxVersion)
    }

    func seal(_ item: Item, keys: Keys) throws -> Data {
        let plaintext = try ItemContentCoding.encode(item.content, createdAt: item.createdAt)
        let aad = associatedData(
            itemID: item.id, kind: item.kind.rawValue, revision: item.revision, updatedAt: UnixTime.milliseconds(item.updatedAt))
        return try Box.seal(plaintext, key: keys.items, associatedData: aad)
    }

    func openRow(_ row: Row, keys: Keys) throws -> Item {
        try openRow(try ItemRow(stored: row), keys: keys)
    }

    func openRow(_ row: ItemRow, keys: Keys) throws -> Item {
        let id = row.id
        let kindText = row.kind
        guard !row.deleted, let box = row.box, box.count <= maximumBoxSize, row.isWellFormed else {
            throw VaultError.tampered("item \(id.lowercasedString)")
        }
        let plaintext: Data
        do {
            plaintext = try Box.open(box, key: keys.items, associatedData: row.associatedData(vaultID: vaultIDBytes, formatVersion: Self.itemBoxVersion))
        } catch {
            throw VaultError.tampered("item \(id.lowercasedString)")
        }
        // The kind was authenticated as associated data, so an unknown one is a newer Coffer's, not damage.
        guard let kind = ItemKind(rawValue: kindText) else {
            throw VaultError.model(.malformedContent("item kind \(kindText) is unknown to this version"))
        }
        let (content, createdAt) = try ItemContentCoding.decode(plaintext, kind: kind)
        return Item(id: id, revision: UInt64(row.revision), createdAt: createdAt, updatedAt: UnixTime.date(milliseconds: row.updatedAt), content: content)
    }
}

extension ItemContent {
    /// Runs the kind's validation (throws `ModelError`).
    func validated() throws {
        switch self {
        case .card(var card): try card.validate()
        case .otp(var otp): try otp.validate()
        case .credential(var credential): try credential.validate()
        case .signingKey(var key): try key.validate()
        case .note(var note): try note.validate()
        }
    }
}
