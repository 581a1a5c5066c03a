import CofferCrypto
import CofferModel
import CofferOTP
import Crypto
import Foundation
import GRDB

/// A local change waiting to be pushed, with the server revision it replaces (0 when the server never had it).
@dynamicMemberLookup
public struct PendingChange: Sendable, Equatable {
    public var row: ItemRow
    public var baseRevision: Int64

    public subscript<Value>(dynamicMember field: KeyPath<ItemRow, Value>) -> Value { row[keyPath: field] }
}

/// The sync account this vault is linked to (docs/FORMAT.md §8). The refresh token is not here: it is a secret and
/// lives in the device key store.
public struct SyncAccount: Sendable, Equatable {
    public var server: String
    public var account: String
    public var userID: String
    public var cursor: Int64
    public var lastSync: Date?
    /// This device's id in manifests it makes; drawn when the vault is linked.
    public var device: UUID
    /// The newest manifest this device verified or made (docs/FORMAT.md §8.6); nil before the first.
    public var head: [UInt8]?
    /// `AccountCommitment` of the account passphrase slot this device knows (its KDF parameters and salt).
    public var accountCommitment: [UInt8]?
    /// Linked by a version without verified sync and not synced since: the one kind of device that may accept an
    /// account's rows without a manifest, and publish the first one.
    public var legacyLink: Bool

    public init(
        server: String, account: String, userID: String, cursor: Int64 = 0, lastSync: Date? = nil, device: UUID = UUID(),
        head: [UInt8]? = nil, accountCommitment: [UInt8]? = nil, legacyLink: Bool = false
    ) {
        self.server = server
        self.account = account
        self.userID = userID
        self.cursor = cursor
        self.lastSync = lastSync
        self.device = device
        self.head = head
        self.accountCommitment = accountCommitment
        self.legacyLink = legacyLink
    }
}

/// The server's rows as this device last verified them: revision and leaf (`ItemRow.leaf`) per item id.
public struct SyncedRows: Sendable, Equatable {
    public var revisions: [UUID: Int64] = [:]
    public var leaves: [UUID: [UInt8]] = [:]

    public init() {}
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
    public init() {}
}

extension Vault {
    // MARK: Account

    /// The linked sync account, if any.
    public func syncAccount() throws(VaultError) -> SyncAccount? {
        try read { db, _ in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT server, account, user_id, cursor, last_sync, device_id, head, account_commitment
                    FROM sync_account WHERE singleton = 1
                    """
            ).map { row in
                // Vaults linked before verified sync have no device id: one is drawn when they next link or sync.
                let device = (row["device_id"] as Data?).flatMap { $0.count == 16 ? UUID(bytes: Array($0)) : nil }
                return SyncAccount(
                    server: row["server"], account: row["account"], userID: row["user_id"], cursor: row["cursor"],
                    lastSync: (row["last_sync"] as Int64?).map { UnixTime.date(milliseconds: $0) },
                    device: device ?? UUID(), head: (row["head"] as Data?).map(Array.init),
                    accountCommitment: (row["account_commitment"] as Data?).map(Array.init), legacyLink: device == nil)
            }
        }
    }

    /// Links the vault to `account`, or unlinks it (nil). Either way the record of what the server holds is reset,
    /// so a new link pushes everything once — unless `keepingVerifiedState`, which only updates the account's fields
    /// (logging in again to the same account must not let a server roll the device back).
    public func setSyncAccount(_ account: SyncAccount?, keepingVerifiedState: Bool = false) throws(VaultError) {
        try writeTransaction { db, _ in
            if let account, keepingVerifiedState {
                // The device id stays: a device linked before verified sync keeps its right to publish the first
                // manifest until it has.
                try db.execute(
                    sql: """
                        UPDATE sync_account SET server = ?, account = ?, user_id = ?, account_commitment = ?
                        WHERE singleton = 1
                        """,
                    arguments: [account.server, account.account, account.userID, account.accountCommitment.map { Data($0) }])
                return
            }
            try db.execute(sql: "DELETE FROM sync_account")
            try db.execute(sql: "DELETE FROM sync_item")
            try db.execute(sql: "DELETE FROM sync_manifest")
            if let account {
                try db.execute(
                    sql: """
                        INSERT INTO sync_account (singleton, server, account, user_id, cursor, device_id, head, account_commitment)
                        VALUES (1, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        account.server, account.account, account.userID, account.cursor, Data(account.device.bytes),
                        account.head.map { Data($0) }, account.accountCommitment.map { Data($0) },
                    ])
            } else {
                try db.execute(sql: "DELETE FROM sync_conflict")
            }
        }
    }

    /// The server rows this device holds as verified: what the next manifest's root is computed over.
    public func syncedRows() throws(VaultError) -> SyncedRows {
        try read { db, _ in
            var rows = SyncedRows()
            for row in try Row.fetchAll(db, sql: "SELECT id, server_revision, leaf FROM sync_item") {
                guard let id = row["id"] as Data?, id.count == 16 else { throw VaultError.tampered("a sync record") }
                let uuid = UUID(bytes: Array(id))
                rows.revisions[uuid] = row["server_revision"]
                if let leaf = row["leaf"] as Data? { rows.leaves[uuid] = Array(leaf) }
            }
            return rows
        }
    }

    /// HMAC-SHA256 of `body` under the manifest key, `HKDF(MK, salt = vault_id, "coffer/v1/manifest")`
    /// (docs/FORMAT.md §8.6): only holders of the master key can make or check a manifest's tag.
    public func manifestTag(_ body: [UInt8]) -> [UInt8] {
        let key = KeySchedule.hkdf(currentKeys.master, salt: vaultIDBytes, label: KeySchedule.manifestKeyLabel)
        return Array(HMAC<SHA256>.authenticationCode(for: body, using: key))
    }

    /// The vault's key epoch (+1 on each master-key rotation), which manifests carry.
    public var keyEpoch: Int64 { currentKeys.epoch }

    /// Forgets the verified state (head, cursor, the server rows' leaves and the manifests) so that the next sync
    /// reads everything again and trusts the server's state as a new device would; the account link, device id,
    /// items and each item's last synced revision (what tells a local change from none when merging) stay.
    public func resetVerifiedState() throws(VaultError) {
        try writeTransaction { db, _ in
            try db.execute(sql: "UPDATE sync_account SET head = NULL, cursor = 0 WHERE singleton = 1")
            try db.execute(sql: "UPDATE sync_item SET leaf = NULL")
            try db.execute(sql: "DELETE FROM sync_manifest")
        }
    }

    // MARK: Outgoing

    /// Rows changed since the server last acknowledged them (new, edited or purged), in push order: oldest change
    /// first, and among rows written at the same moment a card's new photo parts before the card and its dropped
    /// parts after it, so that a state pushed in several batches never shows a card naming parts the server does not
    /// hold. Each row's id and box size only: a push reads the rows batch by batch (`pendingChanges(_:)`), so that the
    /// order is worked out once rather than once per batch.
    public func pendingQueue() throws(VaultError) -> [(id: UUID, bytes: Int)] {
        try read { db, _ in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT item.id, coalesce(length(item.box), 0) AS bytes
                    FROM item LEFT JOIN sync_item ON sync_item.id = item.id
                    WHERE sync_item.server_revision IS NULL OR sync_item.server_revision != item.revision
                    ORDER BY item.updated_at,
                        CASE WHEN item.kind != '\(PhotoPart.kind)' THEN 1 WHEN item.deleted = 0 THEN 0 ELSE 2 END, item.id
                    """
            ).compactMap { row in
                let id: Data = row["id"]
                return id.count == 16 ? (UUID(bytes: Array(id)), row["bytes"]) : nil
            }
        }
    }

    /// The rows of `ids` that are still pending, as they are now, in the order given: a row that was pushed or
    /// synced since it was queued is left out.
    public func pendingChanges(_ ids: some Sequence<UUID>) throws(VaultError) -> [PendingChange] {
        try read { db, _ in
            var changes: [PendingChange] = []
            for id in ids {
                let row = try db.row(
                    """
                    SELECT \(ItemRow.qualifiedColumns), sync_item.server_revision
                    FROM item LEFT JOIN sync_item ON sync_item.id = item.id
                    WHERE item.id = ? AND (sync_item.server_revision IS NULL OR sync_item.server_revision != item.revision)
                    """,
                    [Data(id.bytes)])
                if let row { changes.append(PendingChange(row: try ItemRow(stored: row), baseRevision: row["server_revision"] ?? 0)) }
            }
            return changes
        }
    }

    /// Every pending row, in push order (`pendingQueue`).
    public func pendingChanges() throws(VaultError) -> [PendingChange] {
        try pendingChanges(pendingQueue().map(\.id))
    }

    /// How many rows `pendingChanges` would return, counted without reading a box (photo parts are large).
    public func pendingCount() throws(VaultError) -> Int {
        try read { db, _ in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM item LEFT JOIN sync_item ON sync_item.id = item.id
                    WHERE sync_item.server_revision IS NULL OR sync_item.server_revision != item.revision
                    """) ?? 0
        }
    }

    /// Records an accepted push in one transaction: the server now holds `rows` as they are, `head` is the manifest
    /// that described the result, the feed is at `cursor`, and the account slot is the one `accountCommitment` names
    /// (when the push changed it).
    public func recordPush(
        _ rows: [ItemRow], head: (epoch: Int64, bytes: [UInt8]), cursor: Int64, device: UUID,
        accountCommitment: [UInt8]? = nil, at date: Date
    ) throws(VaultError) {
        try writeTransaction { db, _ in
            for row in rows { try recordServerRow(db, row) }
            try recordManifest(db, head)
            try setVerified(db, head: head.bytes, cursor: cursor, accountCommitment: accountCommitment, at: date)
            // A device linked before verified sync keeps the id its first manifest names.
            try db.execute(
                sql: "UPDATE sync_account SET device_id = coalesce(device_id, ?) WHERE singleton = 1", arguments: [Data(device.bytes)])
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
                    """
            )
            .map { row in
                SyncConflictCopy(
                    copyID: UUID(bytes: Array(row["id"] as Data)), originalID: UUID(bytes: Array(row["original_id"] as Data)),
                    detectedAt: UnixTime.date(milliseconds: row["detected_at"]))
            }
        }
    }

    // MARK: Rows

    func storeRow(_ db: Database, _ row: ItemRow, insert: Bool) throws {
        let sql =
            insert
            ? "INSERT INTO item (kind, revision, updated_at, deleted, box, id) VALUES (?, ?, ?, ?, ?, ?)"
            : "UPDATE item SET kind = ?, revision = ?, updated_at = ?, deleted = ?, box = ? WHERE id = ?"
        try db.write(sql, .text(row.kind), .integer(row.revision), .integer(row.updatedAt), .integer(row.deleted ? 1 : 0), .blob(row.box), .id(row.id))
    }

    /// Records `row` as the server's copy of its item: its revision (a local row whose revision differs is pending)
    /// and its leaf (what the next manifest commits to).
    func recordServerRow(_ db: Database, _ row: ItemRow) throws {
        try db.write(
            """
            INSERT INTO sync_item (id, server_revision, leaf) VALUES (?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET server_revision = excluded.server_revision, leaf = excluded.leaf
            """,
            .id(row.id), .integer(row.revision), .blob(Data(row.leaf)))
    }

    func openSyncRow(_ row: ItemRow, keys: Keys) throws -> Item {
        guard row.isWellFormed, !row.deleted else { throw VaultError.tampered("a synced item") }
        return try openRow(row, keys: keys)
    }

    /// The remote content with the higher of the two HOTP counters, when both versions are the same HOTP token.
    static func mergedCounter(local: Item, remote: Item) -> ItemContent? {
        guard case .otp(let mine) = local.content, case .otp(var theirs) = remote.content,
            case .hotp(let myCounter) = mine.parameters.kind, case .hotp(let theirCounter) = theirs.parameters.kind,
            mine.parameters.secret == theirs.parameters.secret
        else { return nil }
        guard myCounter > theirCounter else { return remote.content }
        guard
            let parameters = try? OTPParameters(
                secret: theirs.parameters.secret, algorithm: theirs.parameters.algorithm, digits: theirs.parameters.digits,
                kind: .hotp(counter: myCounter))
        else { return nil }
        theirs.parameters = parameters
        return .otp(theirs)
    }
}

extension RemoteMergeReport {
    /// Adds the counts of another merge (one sync merges several batches).
    public mutating func add(_ other: RemoteMergeReport) {
        applied += other.applied
        unchanged += other.unchanged
        mergedCounters += other.mergedCounters
        conflictCopies += other.conflictCopies
    }
}
