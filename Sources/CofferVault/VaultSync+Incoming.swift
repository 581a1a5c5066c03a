import CofferCrypto
import CofferModel
import CofferOTP
import Crypto
import Foundation
import GRDB

// The incoming half of sync: verified rows from the server merged into the vault.
extension Vault {
    /// Applies verified rows from the server, and the verified head and cursor with them, in one transaction: all or
    /// nothing. Every live row must open under this vault's key with its own associated data (a row that does not is
    /// `.tampered`, and nothing is applied), so a server can neither forge nor move boxes. When both sides changed an
    /// item, HOTP counters merge by maximum; otherwise the remote version takes the item's place and the local one is
    /// kept as a new item, listed as a conflict copy. Every row is recorded as the server's (`syncedRows`). `rows`
    /// hold one row per item (the feed's newest).
    /// With `replacingServerRows`, the server rows recorded before are forgotten first (a full read: rows the new
    /// state does not hold are no longer the server's). With `forgettingHistory`, so are the manifests this device
    /// verified (a device taking a state as new, which may not continue them); a full read of a device that verified
    /// this state's history keeps them, so that a later restore from a backup is still told from an attack.
    public func applyRemote(
        _ rows: [ItemRow], head: [UInt8]?, chain: [(epoch: Int64, bytes: [UInt8])] = [], cursor: Int64,
        accountCommitment: [UInt8]?, replacingServerRows: Bool = false, forgettingHistory: Bool = false, at date: Date
    ) throws(VaultError) -> RemoteMergeReport {
        try writeTransaction { db, keys in
            var report = RemoteMergeReport()
            // In batches: each batch's boxes open on all cores, and its local rows are read with a few statements
            // instead of one lookup per row (a new device's first pull of 10,000 items spent a third of its merge in
            // those lookups and another third opening boxes one after another).
            var start = rows.startIndex
            while start < rows.endIndex {
                let batch = rows[start..<min(start + Self.openingBatch, rows.endIndex)]
                start = batch.endIndex
                let live = batch.filter { !$0.deleted && $0.kind != PhotoPart.kind }
                var opened: [UUID: Item] = [:]
                opened.reserveCapacity(live.count)
                for (row, item) in zip(live, try openAll(live, keys: keys, fromServer: true)) { opened[row.id] = item }
                let locals = try localRows(db, ids: batch.map(\.id))
                for remote in batch {
                    report.add(try merge(db, remote, local: locals[remote.id], opened: opened[remote.id], keys: keys))
                    try recordServerRow(db, remote)
                }
            }
            if replacingServerRows {
                // After the merge, which needs each item's last synced revision to tell a local change from none.
                let kept = Set(rows.map(\.id))
                for id in try Data.fetchAll(db, sql: "SELECT id FROM sync_item") where id.count != 16 || !kept.contains(UUID(bytes: Array(id))) {
                    try db.run("DELETE FROM sync_item WHERE id = ?", [id])
                }
            }
            if forgettingHistory { try db.execute(sql: "DELETE FROM sync_manifest") }
            for manifest in chain { try recordManifest(db, manifest) }
            try setVerified(db, head: head, cursor: cursor, accountCommitment: accountCommitment, at: date)
            return report
        }
    }

    /// Records `rows` as everything the server holds and the feed as read up to `cursor`, leaving the items and the
    /// verified head alone: a device about to republish onto a server restored from a backup. Local rows that differ
    /// become pending.
    public func replaceServerRows(_ rows: [ItemRow], cursor: Int64) throws(VaultError) {
        try writeTransaction { db, _ in
            try db.execute(sql: "DELETE FROM sync_item")
            for row in rows { try recordServerRow(db, row) }
            try db.execute(sql: "UPDATE sync_account SET cursor = ? WHERE singleton = 1", arguments: [cursor])
        }
    }

    /// The manifest of `epoch` this device verified or made, if it kept it.
    public func verifiedManifest(epoch: Int64) throws(VaultError) -> [UInt8]? {
        try read { db, _ in
            try Data.fetchOne(db, sql: "SELECT body FROM sync_manifest WHERE epoch = ?", arguments: [epoch]).map(Array.init)
        }
    }

    /// The manifests this device verified or made after `epoch`, oldest first.
    public func verifiedManifests(after epoch: Int64) throws(VaultError) -> [[UInt8]] {
        try read { db, _ in
            try Data.fetchAll(db, sql: "SELECT body FROM sync_manifest WHERE epoch > ? ORDER BY epoch", arguments: [epoch])
                .map(Array.init)
        }
    }

    func recordManifest(_ db: Database, _ manifest: (epoch: Int64, bytes: [UInt8])) throws {
        try db.execute(
            sql: "INSERT INTO sync_manifest (epoch, body) VALUES (?, ?) ON CONFLICT (epoch) DO UPDATE SET body = excluded.body",
            arguments: [manifest.epoch, Data(manifest.bytes)])
    }

    /// The first live row whose box does not open under this vault's key with its associated data: a server's
    /// altered, swapped or forged box.
    public func firstUnopenableRow(_ rows: [ItemRow]) -> UUID? {
        let keys = currentKeys
        return rows.first { row in
            guard !row.deleted else { return false }
            return (try? checkOpens(row, keys: keys)) == nil
        }?.id
    }

    func setVerified(_ db: Database, head: [UInt8]?, cursor: Int64, accountCommitment: [UInt8]?, at date: Date) throws {
        try db.execute(
            sql: """
                UPDATE sync_account SET cursor = ?, last_sync = ?, head = coalesce(?, head),
                    account_commitment = coalesce(?, account_commitment)
                WHERE singleton = 1
                """,
            arguments: [cursor, UnixTime.milliseconds(date), head.map { Data($0) }, accountCommitment.map { Data($0) }])
    }

    /// A local row as a merge compares it: the row, and the revision the server last had (nil if never synced).
    typealias LocalRow = (row: ItemRow, base: Int64?)

    /// The local rows of `ids` that exist, by id, read a few hundred at a time.
    private func localRows(_ db: Database, ids: [UUID]) throws -> [UUID: LocalRow] {
        var found: [UUID: LocalRow] = [:]
        var start = ids.startIndex
        while start < ids.endIndex {
            let chunk = ids[start..<min(start + Self.lookupChunk, ids.endIndex)]
            start = chunk.endIndex
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let sql = """
                SELECT \(ItemRow.qualifiedColumns), sync_item.server_revision
                FROM item LEFT JOIN sync_item ON sync_item.id = item.id WHERE item.id IN (\(placeholders))
                """
            // Only the full chunk's statement is kept: a cache entry per other length would pile up.
            let statement = chunk.count == Self.lookupChunk ? try db.cachedStatement(sql: sql) : try db.makeStatement(sql: sql)
            let cursor = try Row.fetchCursor(statement, arguments: StatementArguments(chunk.map { Data($0.bytes) }))
            while let stored = try cursor.next() {
                let row = try ItemRow(stored: stored)
                found[row.id] = (row, stored[6])
            }
        }
        return found
    }

    /// How many ids one lookup statement binds: well under SQLite's limit on parameters.
    static let lookupChunk = 500

    /// Opens a row from the server: a box that does not open is the server's tampering.
    func openRemote(_ remote: ItemRow, keys: Keys) throws(VaultError) -> Item {
        do {
            return try openSyncRow(remote, keys: keys)
        } catch let error as VaultError {
            throw error
        } catch {
            throw .tampered("item \(remote.id.lowercasedString) from the server")
        }
    }

    /// Merges one remote row (docs/FORMAT.md §8.4), given its local row (`localRows`) and, for a live row, its
    /// opened item.
    private func merge(_ db: Database, _ remote: ItemRow, local: LocalRow?, opened: Item?, keys: Keys) throws -> RemoteMergeReport {
        if remote.kind == PhotoPart.kind { return try mergePhotoPart(db, remote, local: local?.row, keys: keys) }
        var report = RemoteMergeReport()
        let remoteItem = remote.deleted ? nil : try opened ?? openRemote(remote, keys: keys)
        guard let (localRow, base) = local else {
            try storeRow(db, remote, insert: true)
            report.applied += 1
            return report
        }
        if localRow == remote {
            // This device's own push, whose answer was lost before it was recorded.
            report.unchanged += 1
            return report
        }
        if base == localRow.revision {
            // Not changed here since the server last had it.
            if remote.revision > localRow.revision {
                try storeRow(db, remote, insert: false)
                report.applied += 1
            } else {
                report.unchanged += 1
            }
            return report
        }
        if let base, remote.revision <= base {
            report.unchanged += 1
            return report
        }
        // Both sides changed the item.
        if let remoteItem, !localRow.deleted, let localItem = try? openSyncRow(localRow, keys: keys),
            let merged = Self.mergedCounter(local: localItem, remote: remoteItem)
        {
            var item = remoteItem
            item.content = merged
            item.revision = UInt64(max(localRow.revision, remote.revision) + 1)
            item.updatedAt = options.clock()
            try replace(db, item: item, keys: keys)
            report.mergedCounters += 1
            return report
        }
        if !localRow.deleted, let localItem = try? openSyncRow(localRow, keys: keys) {
            var content = localItem.content
            // A photo's parts name the card they were made for; the copy is another item, so it keeps none.
            if case .card(var card) = content {
                card.photos = []
                content = .card(card)
            }
            let copy = Item(id: UUID(), revision: 1, createdAt: localItem.createdAt, updatedAt: options.clock(), content: content)
            try insert(db, item: copy, keys: keys)
            try db.execute(
                sql: "INSERT INTO sync_conflict (id, original_id, detected_at) VALUES (?, ?, ?)",
                arguments: [Data(copy.id.bytes), Data(remote.id.bytes), UnixTime.milliseconds(options.clock())])
            report.conflictCopies += 1
        }
        try storeRow(db, remote, insert: false)
        report.applied += 1
        return report
    }

    /// Merges one remote photo part. Parts are never edited (a new image is new parts), only made and deleted, so
    /// the higher revision wins; the part must open under this vault's photo key first.
    private func mergePhotoPart(_ db: Database, _ remote: ItemRow, local: ItemRow?, keys: Keys) throws -> RemoteMergeReport {
        var report = RemoteMergeReport()
        if !remote.deleted { _ = try openPart(remote, key: photoKey(keys)) }
        guard let local else {
            try storeRow(db, remote, insert: true)
            report.applied += 1
            return report
        }
        guard local != remote, remote.revision > local.revision else {
            report.unchanged += 1
            return report
        }
        try storeRow(db, remote, insert: false)
        report.applied += 1
        return report
    }

    /// Wraps the master key under `kek` for `header` (the sync account's passphrase slot).
    public func wrapMasterKey(for header: SlotHeader, kek: SymmetricKey) throws(VaultError) -> Data {
        do {
            return try header.wrap(masterKey: currentKeys.master, vaultID: vaultIDBytes, kek: kek)
        } catch {
            throw .crypto(error)
        }
    }
}
