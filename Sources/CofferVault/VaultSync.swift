import CofferCrypto
import CofferModel
import CofferOTP
import Crypto
import Foundation
import GRDB

/// One item row exactly as stored: the unit of sync. The box is the same bytes on every device and on the server.
public struct SyncRow: Sendable, Equatable {
    public var id: UUID
    public var kind: String
    public var revision: Int64
    /// Unix milliseconds, bound into the box.
    public var updatedAt: Int64
    public var deleted: Bool
    public var box: Data?

    public init(id: UUID, kind: String, revision: Int64, updatedAt: Int64, deleted: Bool, box: Data?) {
        self.id = id
        self.kind = kind
        self.revision = revision
        self.updatedAt = updatedAt
        self.deleted = deleted
        self.box = box
    }
}

/// A local change waiting to be pushed, with the server revision it replaces (0 when the server never had it).
public struct PendingChange: Sendable, Equatable {
    public var row: SyncRow
    public var baseRevision: Int64
}

/// The sync account this vault is linked to (docs/FORMAT.md §8). The refresh token is not here: it is a secret and
/// lives in the device key store.
public struct SyncAccount: Sendable, Equatable {
    public var server: String
    public var account: String
    public var userID: String
    public var cursor: Int64
    public var lastSync: Date?

    public init(server: String, account: String, userID: String, cursor: Int64 = 0, lastSync: Date? = nil) {
        self.server = server
        self.account = account
        self.userID = userID
        self.cursor = cursor
        self.lastSync = lastSync
    }
}

/// A copy kept when a remote change won over a local one.
public struct SyncConflictCopy: Sendable, Equatable {
    /// The copy: a new item holding the local version that lost.
    public var copyID: UUID
    /// The item the remote version now occupies.
    public var originalID: UUID
    public var detectedAt: Date
}

/// What merging remote rows did.
public struct RemoteMergeReport: Sendable, Equatable {
    /// Remote rows stored as they came.
    public var applied = 0
    /// Rows the vault already had (or older than what it has).
    public var unchanged = 0
    /// HOTP tokens changed on both sides, merged by keeping the higher counter.
    public var mergedCounters = 0
    /// Local versions that lost to a remote change and were kept as conflict copies.
    public var conflictCopies = 0
    /// Remote rows that did not open under this vault's key or are of a kind this version does not know; not stored.
    public var unreadable = 0

    public init() {}
}

extension Vault {
    // MARK: Account

    /// The linked sync account, if any.
    public func syncAccount() throws(VaultError) -> SyncAccount? {
        try read { db, _ in
            try Row.fetchOne(db, sql: "SELECT server, account, user_id, cursor, last_sync FROM sync_account WHERE singleton = 1")
                .map { row in
                    SyncAccount(
                        server: row["server"], account: row["account"], userID: row["user_id"], cursor: row["cursor"],
                        lastSync: (row["last_sync"] as Int64?).map { Self.date(milliseconds: $0) })
                }
        }
    }

    /// Links the vault to `account`, or unlinks it (nil). Either way the record of what the server holds is reset,
    /// so a new link pushes everything once.
    public func setSyncAccount(_ account: SyncAccount?) throws(VaultError) {
        try writeTransaction { db, _ in
            try db.execute(sql: "DELETE FROM sync_account")
            try db.execute(sql: "DELETE FROM sync_item")
            if let account {
                try db.execute(
                    sql: "INSERT INTO sync_account (singleton, server, account, user_id, cursor) VALUES (1, ?, ?, ?, ?)",
                    arguments: [account.server, account.account, account.userID, account.cursor])
            } else {
                try db.execute(sql: "DELETE FROM sync_conflict")
            }
        }
    }

    /// Records the change cursor reached and when.
    public func setSyncCursor(_ cursor: Int64, at date: Date) throws(VaultError) {
        try writeTransaction { db, _ in
            try db.execute(
                sql: "UPDATE sync_account SET cursor = ?, last_sync = ? WHERE singleton = 1",
                arguments: [cursor, Self.milliseconds(date)])
        }
    }

    // MARK: Outgoing

    /// Rows changed since the server last acknowledged them (new, edited or purged), oldest revision first.
    public func pendingChanges(limit: Int = .max) throws(VaultError) -> [PendingChange] {
        try read { db, _ in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT item.id, item.kind, item.revision, item.updated_at, item.deleted, item.box, sync_item.server_revision
                    FROM item LEFT JOIN sync_item ON sync_item.id = item.id
                    WHERE sync_item.server_revision IS NULL OR sync_item.server_revision != item.revision
                    ORDER BY item.updated_at, item.id
                    LIMIT ?
                    """,
                arguments: [limit == .max ? -1 : limit])
            .map { row in
                PendingChange(row: try Self.syncRow(row), baseRevision: row["server_revision"] ?? 0)
            }
        }
    }

    /// Records that the server now holds these revisions.
    public func markSynced(_ rows: [(id: UUID, revision: Int64)]) throws(VaultError) {
        try writeTransaction { db, _ in
            for row in rows {
                try db.execute(
                    sql: "INSERT INTO sync_item (id, server_revision) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET server_revision = excluded.server_revision",
                    arguments: [Data(row.id.bytes), row.revision])
            }
        }
    }

    /// Conflict copies made by earlier merges, newest first.
    public func syncConflicts() throws(VaultError) -> [SyncConflictCopy] {
        try read { db, _ in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT sync_conflict.id, sync_conflict.original_id, sync_conflict.detected_at FROM sync_conflict
                    JOIN item ON item.id = sync_conflict.id AND item.deleted = 0
                    ORDER BY sync_conflict.detected_at DESC
                    """)
            .map { row in
                SyncConflictCopy(
                    copyID: UUID(bytes: Array(row["id"] as Data)), originalID: UUID(bytes: Array(row["original_id"] as Data)),
                    detectedAt: Self.date(milliseconds: row["detected_at"]))
            }
        }
    }

    // MARK: Incoming

    /// Merges rows from the server, in one transaction. Every live row must open under this vault's key with its own
    /// associated data before it is stored, so a server can neither forge nor move boxes, and a row older than what
    /// the vault holds is never applied. When both sides changed an item, HOTP counters merge by maximum; otherwise
    /// the remote version takes the item's place and the local one is kept as a new item, listed as a conflict copy.
    public func mergeRemote(_ rows: [SyncRow]) throws(VaultError) -> RemoteMergeReport {
        try writeTransaction { db, keys in
            var report = RemoteMergeReport()
            for remote in rows {
                var remoteItem: Item?
                if !remote.deleted {
                    guard let item = try? openSyncRow(remote, keys: keys) else {
                        report.unreadable += 1
                        continue
                    }
                    remoteItem = item
                }
                let local = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT item.id, item.kind, item.revision, item.updated_at, item.deleted, item.box, sync_item.server_revision
                        FROM item LEFT JOIN sync_item ON sync_item.id = item.id WHERE item.id = ?
                        """,
                    arguments: [Data(remote.id.bytes)])
                guard let local else {
                    try storeRow(db, remote, insert: true)
                    report.applied += 1
                    continue
                }
                let localRow = try Self.syncRow(local)
                let base: Int64? = local["server_revision"]
                let locallyChanged = base != localRow.revision
                if !locallyChanged {
                    if remote.revision > localRow.revision {
                        try storeRow(db, remote, insert: false)
                        report.applied += 1
                    } else {
                        report.unchanged += 1
                    }
                    continue
                }
                if let base, remote.revision <= base {
                    report.unchanged += 1
                    continue
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
                    try markSynced(db, id: remote.id, revision: remote.revision)
                    report.mergedCounters += 1
                    continue
                }
                if !localRow.deleted, let localItem = try? openSyncRow(localRow, keys: keys) {
                    let copy = Item(
                        id: UUID(), revision: 1, createdAt: localItem.createdAt, updatedAt: options.clock(), content: localItem.content)
                    try insert(db, item: copy, keys: keys)
                    try db.execute(
                        sql: "INSERT INTO sync_conflict (id, original_id, detected_at) VALUES (?, ?, ?)",
                        arguments: [Data(copy.id.bytes), Data(remote.id.bytes), Self.milliseconds(options.clock())])
                    report.conflictCopies += 1
                }
                try storeRow(db, remote, insert: false)
                report.applied += 1
            }
            return report
        }
    }

    /// Wraps the master key under `kek` for `header` (the sync account's passphrase slot).
    public func wrapMasterKey(for header: SlotHeader, kek: SymmetricKey) throws(VaultError) -> Data {
        do {
            return try header.wrap(masterKey: currentKeys.master, vaultID: vaultIDBytes, kek: kek)
        } catch {
            throw .crypto(error)
        }
    }

    // MARK: Rows

    private func storeRow(_ db: Database, _ row: SyncRow, insert: Bool) throws {
        let arguments: StatementArguments = [row.kind, row.revision, row.updatedAt, row.deleted, row.box, Data(row.id.bytes)]
        if insert {
            try db.execute(sql: "INSERT INTO item (kind, revision, updated_at, deleted, box, id) VALUES (?, ?, ?, ?, ?, ?)", arguments: arguments)
        } else {
            try db.execute(sql: "UPDATE item SET kind = ?, revision = ?, updated_at = ?, deleted = ?, box = ? WHERE id = ?", arguments: arguments)
        }
        try markSynced(db, id: row.id, revision: row.revision)
    }

    private func markSynced(_ db: Database, id: UUID, revision: Int64) throws {
        try db.execute(
            sql: "INSERT INTO sync_item (id, server_revision) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET server_revision = excluded.server_revision",
            arguments: [Data(id.bytes), revision])
    }

    private func openSyncRow(_ row: SyncRow, keys: Keys) throws -> Item {
        guard row.revision >= 1, row.updatedAt >= 0, let box = row.box, box.count <= maximumBoxSize else {
            throw VaultError.tampered("a synced item")
        }
        return try openRow(
            StoredItemRow(id: Data(row.id.bytes), kind: row.kind, revision: row.revision, updatedAt: row.updatedAt, box: box),
            keys: keys)
    }

    private static func syncRow(_ row: Row) throws -> SyncRow {
        guard let id = row["id"] as Data?, id.count == 16 else { throw VaultError.tampered("an item id") }
        return SyncRow(
            id: UUID(bytes: Array(id)), kind: row["kind"], revision: row["revision"], updatedAt: row["updated_at"],
            deleted: row["deleted"], box: row["box"])
    }

    /// The remote content with the higher of the two HOTP counters, when both versions are the same HOTP token.
    static func mergedCounter(local: Item, remote: Item) -> ItemContent? {
        guard case .otp(let mine) = local.content, case .otp(var theirs) = remote.content,
              case .hotp(let myCounter) = mine.parameters.kind, case .hotp(let theirCounter) = theirs.parameters.kind,
              mine.parameters.secret == theirs.parameters.secret
        else { return nil }
        guard myCounter > theirCounter else { return remote.content }
        guard let parameters = try? OTPParameters(
            secret: theirs.parameters.secret, algorithm: theirs.parameters.algorithm, digits: theirs.parameters.digits,
            kind: .hotp(counter: myCounter))
        else { return nil }
        theirs.parameters = parameters
        return .otp(theirs)
    }
}
