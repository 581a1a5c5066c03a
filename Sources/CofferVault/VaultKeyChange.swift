import CofferCrypto
import CofferModel
import Crypto
import Foundation
import GRDB

/// A master-key rotation of a synced vault, prepared on this device and not committed yet (docs/FORMAT.md §8.8).
public struct PreparedRotation: Sendable, Equatable {
    /// Names the rotation's staged rows on the server.
    public let id: UUID
    /// The account's key epoch after the rotation: the one its manifest carries.
    public let keyEpoch: Int64
    /// Live items re-sealed under the new key.
    public let rowCount: Int
    /// The rotation's manifest and its epoch, recorded before the server is asked to commit; nil before.
    public let manifest: (epoch: Int64, bytes: [UInt8])?

    public static func == (lhs: PreparedRotation, rhs: PreparedRotation) -> Bool {
        lhs.id == rhs.id && lhs.keyEpoch == rhs.keyEpoch && lhs.rowCount == rhs.rowCount
            && lhs.manifest?.epoch == rhs.manifest?.epoch && lhs.manifest?.bytes == rhs.manifest?.bytes
    }
}

/// The keys that check a synced vault's manifests: the current master key's, and those of earlier master keys, each
/// only for the manifests made before the rotation that retired it (a holder of an old key must not be able to make
/// a manifest that extends the vault's history).
public struct ManifestKeys: Sendable {
    let current: SymmetricKey
    /// Earlier keys and the epoch of the rotation manifest that retired each.
    let previous: [(validBelow: Int64, key: SymmetricKey)]

    /// The tags `body` of a manifest of `epoch` may carry: one per key that may have made it.
    public func tags(body: [UInt8], epoch: Int64) -> [[UInt8]] {
        var tags = [Array(HMAC<SHA256>.authenticationCode(for: body, using: current))]
        for earlier in previous where epoch < earlier.validBelow {
            tags.append(Array(HMAC<SHA256>.authenticationCode(for: body, using: earlier.key)))
        }
        return tags
    }
}

extension Vault {
    /// Local-state name of the earlier manifest keys (docs/FORMAT.md §8.8).
    static let previousManifestKeysName = "sync/previous-manifest-keys"

    // MARK: Checking manifests

    /// The keys that check this vault's manifests (`ManifestKeys`).
    public func manifestKeys() throws(VaultError) -> ManifestKeys {
        try read { db, keys in
            ManifestKeys(current: manifestKey(keys.master), previous: try previousManifestKeys(db, keys: keys))
        }
    }

    func manifestKey(_ master: SecretBytes) -> SymmetricKey {
        KeySchedule.hkdf(master, salt: vaultIDBytes, label: KeySchedule.manifestKeyLabel)
    }

    /// Whether `masterKey` is this vault's master key (compared in constant time).
    public func hasMasterKey(_ masterKey: SecretBytes) -> Bool {
        currentKeys.master.isEqual(to: masterKey)
    }

    // MARK: Rotation of a synced vault

    /// Prepares a master-key rotation of a synced vault without changing what is in use: a new master key (sealed
    /// under the current one), every live item re-sealed under it at the next revision, and the vault's slots made
    /// anew for it (the device slot for `deviceKey`, the passphrase slot for `passphrase`, which must open the current
    /// one, and a new recovery code). It replaces any rotation prepared before. `accountKeyEpoch` is the key epoch of
    /// the account's newest verified manifest.
    public func prepareRotation(
        accountKeyEpoch: Int64, deviceKey: SecretBytes?, passphrase: String?
    ) throws(VaultError) -> PreparedRotation {
        let id = UUID(bytes: options.random.bytes(16))
        let newMaster = SecretBytes(randomCount: 32, using: options.random)
        let newKeys = try Keys(master: newMaster, items: KeySchedule.itemsKey(masterKey: newMaster, vaultID: vaultIDBytes), epoch: 0)
        let passphraseSecret = try Self.passphraseSecret(passphrase)
        let recovery = RecoveryCode.generate(random: options.random)
        return try writeTransaction { db, keys in
            let slots = try Self.readSlots(db, limits: options.limits)
            try checkSlotSecrets(slots, deviceKey: deviceKey, passphrase: passphraseSecret)
            try Self.clearPreparedRotation(db)
            let label = try carriedDeviceLabel(db, master: keys.master)
            let now = options.clock()
            let count = try resealLiveItems(db, from: keys, to: newKeys, now: now) { row in
                try db.write(
                    """
                    INSERT INTO sync_rotation_item (id, kind, revision, updated_at, deleted, box)
                    VALUES (?, ?, ?, ?, 0, ?)
                    """,
                    .id(row.id), .text(row.kind), .integer(row.revision), .integer(row.updatedAt), .blob(row.box))
            }
            var hasRecovery = false
            var hasDevice = false
            for slot in slots {
                let secret: SecretBytes
                switch slot.header.type {
                case .device:
                    // One device slot, this device's (as in `replaceSlots`).
                    guard !hasDevice else { continue }
                    hasDevice = true
                    guard let deviceKey else { throw VaultError.noSlot(.device) }
                    secret = deviceKey
                case .passphrase:
                    guard let passphraseSecret else { throw VaultError.wrongPassphrase }
                    secret = passphraseSecret
                case .recovery:
                    guard !hasRecovery else { continue }
                    hasRecovery = true
                    secret = recovery.secret
                }
                let made = try Self.makeSlot(
                    type: slot.header.type, secret: secret, kdf: slot.header.kdf, masterKey: newMaster, vaultID: vaultIDBytes,
                    options: options)
                try db.execute(
                    sql: "INSERT INTO sync_rotation_slot (id, type, kdf, salt, wrapped_key) VALUES (?, ?, ?, ?, ?)",
                    arguments: [
                        Data(made.header.slotID), Int(made.header.type.rawValue), made.header.kdf.map { Data($0.encoded) },
                        Data(made.header.salt), made.wrapped,
                    ])
                // Sealed under the new key already; unread until the commit makes the slot current.
                if slot.header.type == .device, let label {
                    try insertLabel(db, label, slotID: made.header.slotID, master: newMaster)
                }
            }
            let keyEpoch = accountKeyEpoch + 1
            let masterBox = try newMaster.withUnsafeBytes { raw in
                try Box.seal(
                    Data(raw), key: rotationKey(keys.master),
                    associatedData: rotationAssociatedData(id: id, keyEpoch: keyEpoch, field: "master"))
            }
            let recoveryBox =
                hasRecovery
                ? try Box.seal(
                    Data(recovery.text.utf8), key: rotationKey(newMaster),
                    associatedData: rotationAssociatedData(id: id, keyEpoch: keyEpoch, field: "recovery"))
                : nil
            try db.execute(
                sql: """
                    INSERT INTO sync_rotation (singleton, id, key_epoch, master_box, recovery_box, created_at)
                    VALUES (1, ?, ?, ?, ?, ?)
                    """,
                arguments: [Data(id.bytes), keyEpoch, masterBox, recoveryBox, UnixTime.milliseconds(now)])
            return PreparedRotation(id: id, keyEpoch: keyEpoch, rowCount: count, manifest: nil)
        }
    }

    /// The rotation prepared here, if any.
    public func preparedRotation() throws(VaultError) -> PreparedRotation? {
        try read { db, _ in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT id, key_epoch, manifest, manifest_epoch FROM sync_rotation WHERE singleton = 1")
            else { return nil }
            guard let id = row["id"] as Data?, id.count == 16 else { throw VaultError.tampered("the prepared rotation") }
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_rotation_item") ?? 0
            var manifest: (Int64, [UInt8])?
            if let bytes = row["manifest"] as Data?, let epoch = row["manifest_epoch"] as Int64? { manifest = (epoch, Array(bytes)) }
            return PreparedRotation(id: UUID(bytes: Array(id)), keyEpoch: row["key_epoch"], rowCount: count, manifest: manifest)
        }
    }

    /// The prepared rotation's re-sealed rows, in id order.
    public func preparedRotationRows() throws(VaultError) -> [ItemRow] {
        try read { db, _ in
            try Row.fetchAll(db, sql: "SELECT \(ItemRow.columns) FROM sync_rotation_item ORDER BY id").map(ItemRow.init(stored:))
        }
    }

    /// The keys that check manifests once the prepared rotation is in use: the new master key's, and this one's for
    /// the manifests before `rotationEpoch`.
    public func preparedManifestKeys(rotationEpoch: Int64) throws(VaultError) -> ManifestKeys {
        try read { db, keys in
            let master = try preparedMasterKey(db, keys: keys)
            var previous = try previousManifestKeys(db, keys: keys)
            previous.append((rotationEpoch, manifestKey(keys.master)))
            return ManifestKeys(current: manifestKey(master), previous: previous)
        }
    }

    /// Wraps the prepared rotation's new master key under `kek` for `header` (the account's new passphrase slot).
    public func wrapPreparedMasterKey(for header: SlotHeader, kek: SymmetricKey) throws(VaultError) -> Data {
        let master = try read { db, keys in try preparedMasterKey(db, keys: keys) }
        do {
            return try header.wrap(masterKey: master, vaultID: vaultIDBytes, kek: kek)
        } catch {
            throw .crypto(error)
        }
    }

    /// Records the rotation's manifest, before the server is asked to commit it: after a crash, finding it as the
    /// server's is what tells that the server took the rotation.
    public func recordPreparedManifest(epoch: Int64, bytes: [UInt8]) throws(VaultError) {
        try writeTransaction { db, _ in
            try db.execute(
                sql: "UPDATE sync_rotation SET manifest = ?, manifest_epoch = ? WHERE singleton = 1", arguments: [Data(bytes), epoch])
            guard db.changesCount == 1 else { throw VaultError.noPreparedRotation }
        }
    }

    /// Forgets the prepared rotation (the server did not take it); the vault goes on with its current key.
    public func discardPreparedRotation() throws(VaultError) {
        try writeTransaction { db, _ in try Self.clearPreparedRotation(db) }
    }

    /// Puts the prepared rotation in use once the server has committed it, in one transaction: the re-sealed rows
    /// replace the items (an item changed here since it was prepared is re-sealed as it is now, at a revision above
    /// both, and stays a change to push), the new slots replace the old, local state is re-sealed, the rows are
    /// recorded as the server's, and the rotation's manifest becomes the verified head with the feed at `cursor`.
    public func commitPreparedRotation(cursor: Int64, at date: Date) throws(VaultError) -> RotationResult {
        let (result, newKeys) = try writeTransaction { db, keys -> (RotationResult, Keys) in
            guard
                let record = try Row.fetchOne(
                    db, sql: "SELECT id, key_epoch, recovery_box, manifest, manifest_epoch FROM sync_rotation WHERE singleton = 1"),
                let id = (record["id"] as Data?).flatMap({ $0.count == 16 ? UUID(bytes: Array($0)) : nil }),
                let manifest = record["manifest"] as Data?, let manifestEpoch = record["manifest_epoch"] as Int64?
            else { throw VaultError.noPreparedRotation }
            let master = try preparedMasterKey(db, keys: keys)
            let newKeys = try Keys(
                master: master, items: KeySchedule.itemsKey(masterKey: master, vaultID: vaultIDBytes), epoch: keys.epoch + 1)
            var staged: [UUID: ItemRow] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT \(ItemRow.columns) FROM sync_rotation_item") {
                let item = try ItemRow(stored: row)
                staged[item.id] = item
            }
            let now = options.clock()
            for row in try Row.fetchAll(db, sql: "SELECT \(ItemRow.columns) FROM item") {
                let local = try ItemRow(stored: row)
                guard let prepared = staged[local.id] else {
                    // Added since the rotation was prepared: sealed anew as it is, still to be pushed.
                    if !local.deleted { try storeRow(db, try resealedAsIs(local, from: keys, to: newKeys), insert: false) }
                    continue
                }
                if !local.deleted, local.revision == prepared.revision - 1 {
                    try storeRow(db, prepared, insert: false)
                } else {
                    try keepLocalChange(db, local, above: prepared.revision, keys: keys, newKeys: newKeys, now: now)
                }
                try recordServerRow(db, prepared)
            }
            try resealLocalState(db, from: keys, to: newKeys)
            var previous = try previousManifestKeys(db, keys: newKeys)
            previous.append((manifestEpoch, manifestKey(keys.master)))
            try writePreviousManifestKeys(db, previous, keys: newKeys)
            try db.execute(sql: "DELETE FROM slot")
            try db.execute(sql: "INSERT INTO slot (id, type, kdf, salt, wrapped_key) SELECT id, type, kdf, salt, wrapped_key FROM sync_rotation_slot")
            var recoveryCode: String?
            if let box = record["recovery_box"] as Data? {
                let keyEpoch: Int64 = record["key_epoch"]
                let text = try Box.open(
                    box, key: rotationKey(master), associatedData: rotationAssociatedData(id: id, keyEpoch: keyEpoch, field: "recovery"))
                recoveryCode = String(decoding: text, as: UTF8.self)
            }
            try recordManifest(db, (manifestEpoch, Array(manifest)))
            try setVerified(db, head: Array(manifest), cursor: cursor, accountCommitment: nil, at: date)
            try db.execute(sql: "UPDATE vault SET key_epoch = ? WHERE singleton = 1", arguments: [newKeys.epoch])
            try Self.clearPreparedRotation(db)
            return (RotationResult(itemCount: staged.values.count { $0.kind != PhotoPart.kind }, recoveryCode: recoveryCode), newKeys)
        }
        replaceKeys(newKeys)
        return result
    }

    /// Takes the master key another device rotated to (unwrapped from the account's slot, and checked by the caller
    /// against the server's head): every item is re-sealed under it, every slot re-wrapped (the device slot for
    /// `deviceKey`, the passphrase slot for `passphrase`, which must open the current one, and a new recovery code),
    /// in one transaction. Manifests before `rotationEpoch` stay checkable with this key's manifest key.
    ///
    /// The rotation wrote every live item at the revision after the server's: an item changed here and not pushed
    /// yet is moved onto that revision, so that it stays one change to push instead of meeting the rotation's copy as
    /// a conflict.
    public func rekey(
        to masterKey: SecretBytes, rotationEpoch: Int64, deviceKey: SecretBytes?, passphrase: String?
    ) throws(VaultError) -> RotationResult {
        guard masterKey.count == 32 else { throw .tampered("the master key") }
        let passphraseSecret = try Self.passphraseSecret(passphrase)
        let recovery = RecoveryCode.generate(random: options.random)
        let (result, newKeys) = try writeTransaction { db, keys -> (RotationResult, Keys) in
            let slots = try Self.readSlots(db, limits: options.limits)
            try checkSlotSecrets(slots, deviceKey: deviceKey, passphrase: passphraseSecret)
            let label = try carriedDeviceLabel(db, master: keys.master)
            try Self.clearPreparedRotation(db)
            let newKeys = try Keys(
                master: masterKey, items: KeySchedule.itemsKey(masterKey: masterKey, vaultID: vaultIDBytes), epoch: keys.epoch + 1)
            let now = options.clock()
            var count = 0
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(ItemRow.qualifiedColumns), sync_item.server_revision
                    FROM item LEFT JOIN sync_item ON sync_item.id = item.id
                    """)
            for row in rows {
                let local = try ItemRow(stored: row)
                let serverRevision: Int64? = row["server_revision"]
                if let serverRevision, serverRevision != local.revision {
                    let rotated = serverRevision + 1
                    try db.run("UPDATE sync_item SET server_revision = ? WHERE id = ?", [rotated, Data(local.id.bytes)])
                    if local.revision <= rotated {
                        try keepLocalChange(db, local, above: rotated, keys: keys, newKeys: newKeys, now: now)
                        count += local.deleted || local.kind == PhotoPart.kind ? 0 : 1
                        continue
                    }
                }
                guard !local.deleted else { continue }
                try storeRow(db, try resealedAsIs(local, from: keys, to: newKeys), insert: false)
                count += local.kind == PhotoPart.kind ? 0 : 1
            }
            try resealLocalState(db, from: keys, to: newKeys)
            var previous = try previousManifestKeys(db, keys: newKeys)
            previous.append((rotationEpoch, manifestKey(keys.master)))
            try writePreviousManifestKeys(db, previous, keys: newKeys)
            let recoveryCode = try replaceSlots(
                db, slots, masterKey: masterKey, deviceKey: deviceKey, deviceLabel: label, passphrase: passphraseSecret,
                recovery: recovery)
            try db.execute(sql: "UPDATE vault SET key_epoch = ? WHERE singleton = 1", arguments: [newKeys.epoch])
            return (RotationResult(itemCount: count, recoveryCode: recoveryCode), newKeys)
        }
        replaceKeys(newKeys)
        return result
    }

    // MARK: Helpers

    /// Every live row (items and photo parts) opened under `keys` and sealed under `newKeys` at its next revision,
    /// dated `now`; `store` keeps each. Returns how many rows.
    func resealLiveItems(
        _ db: Database, from keys: Keys, to newKeys: Keys, now: Date, progress: (Int, Int) -> Void = { _, _ in },
        _ store: (ItemRow) throws -> Void
    ) throws -> Int {
        let rows = try Row.fetchAll(db, sql: "SELECT \(ItemRow.columns) FROM item WHERE deleted = 0").map(ItemRow.init(stored:))
        var done = 0
        // Re-sealed a batch at a time on every core, then written in order.
        var start = rows.startIndex
        while start < rows.endIndex {
            let batch = Array(rows[start..<min(start + Self.openingBatch, rows.endIndex)])
            start += batch.count
            let resealedRows = try parallelMap(batch) { row in
                try resealed(row, from: keys, to: newKeys, revision: row.revision + 1, updatedAt: now)
            }
            for row in resealedRows {
                try store(row)
                done += 1
                if done % 256 == 0 { progress(done, rows.count) }
            }
        }
        progress(done, rows.count)
        return done
    }

    /// `row` sealed under `newKeys` at its own revision and time.
    func resealedAsIs(_ row: ItemRow, from keys: Keys, to newKeys: Keys) throws -> ItemRow {
        try resealed(row, from: keys, to: newKeys, revision: row.revision, updatedAt: UnixTime.date(milliseconds: row.updatedAt))
    }

    /// Re-seals a local change under the new key at a revision above `revision` (the server's copy), so that it
    /// stays a change to push.
    private func keepLocalChange(_ db: Database, _ local: ItemRow, above revision: Int64, keys: Keys, newKeys: Keys, now: Date) throws {
        let next = max(local.revision, revision) + 1
        if local.deleted {
            try db.run("UPDATE item SET revision = ?, updated_at = ? WHERE id = ?", [next, UnixTime.milliseconds(now), Data(local.id.bytes)])
            return
        }
        try storeRow(db, try resealed(local, from: keys, to: newKeys, revision: next, updatedAt: now), insert: false)
    }

    /// Checks that the secrets a key change needs are there and right: a device key for a device slot, and a
    /// passphrase that opens the passphrase slot (a typo must not lock the owner out).
    func checkSlotSecrets(_ slots: [StoredSlot], deviceKey: SecretBytes?, passphrase: SecretBytes?) throws {
        if slots.contains(where: { $0.header.type == .device }) && deviceKey == nil { throw VaultError.noSlot(.device) }
        if let slot = slots.first(where: { $0.header.type == .passphrase }) {
            guard let passphrase else { throw VaultError.wrongPassphrase }
            let kek = try slot.header.keyEncryptionKey(secret: passphrase, limits: options.limits)
            do {
                _ = try slot.header.unwrap(slot.wrapped, vaultID: vaultIDBytes, kek: kek)
            } catch {
                throw VaultError.wrongPassphrase
            }
        }
    }

    /// Replaces every slot by one of the same type wrapping `masterKey`; a recovery slot gets a new code, returned.
    /// The device slots become one, this device's, for `deviceKey` (labelled `deviceLabel`): other devices' slots wrap
    /// the old master key with keys this device does not have, so they go, and those devices unlock again.
    func replaceSlots(
        _ db: Database, _ slots: [StoredSlot], masterKey: SecretBytes, deviceKey: SecretBytes?, deviceLabel: DeviceLabel?,
        passphrase: SecretBytes?, recovery: (secret: SecretBytes, text: String)
    ) throws -> String? {
        try db.execute(sql: "DELETE FROM slot")
        var recoveryCode: String?
        var hasDevice = false
        for slot in slots {
            switch slot.header.type {
            case .device:
                guard !hasDevice else { continue }
                hasDevice = true
                guard let deviceKey else { throw VaultError.noSlot(.device) }
                let made = try Self.insertSlot(
                    db, type: .device, secret: deviceKey, kdf: nil, masterKey: masterKey, vaultID: vaultIDBytes, options: options)
                if let deviceLabel { try insertLabel(db, deviceLabel, slotID: made.id.bytes, master: masterKey) }
            case .passphrase:
                guard let passphrase else { throw VaultError.wrongPassphrase }
                try Self.insertSlot(
                    db, type: .passphrase, secret: passphrase, kdf: slot.header.kdf, masterKey: masterKey, vaultID: vaultIDBytes,
                    options: options)
            case .recovery:
                guard recoveryCode == nil else { continue }
                try Self.insertSlot(
                    db, type: .recovery, secret: recovery.secret, kdf: nil, masterKey: masterKey, vaultID: vaultIDBytes, options: options)
                recoveryCode = recovery.text
            }
        }
        try Self.pruneLabels(db)
        return recoveryCode
    }

    static func passphraseSecret(_ passphrase: String?) throws(VaultError) -> SecretBytes? {
        do {
            return try passphrase.map { text throws(CofferCryptoError) in try Passphrase.bytes(text) }
        } catch {
            throw .crypto(error)
        }
    }

    private static func clearPreparedRotation(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM sync_rotation")
        try db.execute(sql: "DELETE FROM sync_rotation_slot")
        try db.execute(sql: "DELETE FROM sync_rotation_item")
        try pruneLabels(db)
    }

    private func rotationKey(_ master: SecretBytes) -> SymmetricKey {
        KeySchedule.hkdf(master, salt: vaultIDBytes, label: KeySchedule.rotationKeyLabel)
    }

    private func rotationAssociatedData(id: UUID, keyEpoch: Int64, field: String) -> [UInt8] {
        KeySchedule.associatedData(
            label: KeySchedule.rotationKeyLabel,
            fields: [vaultIDBytes, id.bytes, Array(field.utf8), UInt64(bitPattern: keyEpoch).bigEndianBytes])
    }

    private func preparedMasterKey(_ db: Database, keys: Keys) throws -> SecretBytes {
        guard let row = try Row.fetchOne(db, sql: "SELECT id, key_epoch, master_box FROM sync_rotation WHERE singleton = 1"),
            let id = (row["id"] as Data?).flatMap({ $0.count == 16 ? UUID(bytes: Array($0)) : nil }),
            let box = row["master_box"] as Data?
        else { throw VaultError.noPreparedRotation }
        var plain: Data
        do {
            plain = try Box.open(
                box, key: rotationKey(keys.master),
                associatedData: rotationAssociatedData(id: id, keyEpoch: row["key_epoch"], field: "master"))
        } catch {
            throw VaultError.tampered("the prepared rotation")
        }
        defer { plain.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        guard plain.count == 32 else { throw VaultError.tampered("the prepared rotation") }
        return SecretBytes(plain)
    }

    /// The earlier manifest keys: `validBelow` (8 bytes, big-endian) ‖ key (32 bytes), repeated.
    private func previousManifestKeys(_ db: Database, keys: Keys) throws -> [(validBelow: Int64, key: SymmetricKey)] {
        let local = localKeys(keys)
        let row = Self.rowName(Self.previousManifestKeysName, keys: local)
        guard let box = try Data.fetchOne(db, sql: "SELECT box FROM local_state WHERE name = ?", arguments: [row]) else { return [] }
        let value = Array(try openLocal(row: row, box: box, keys: local).value)
        guard value.count % 40 == 0 else { throw VaultError.tampered("a local-state box") }
        return stride(from: 0, to: value.count, by: 40).map { start in
            let epoch = value[start..<(start + 8)].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            return (epoch, SymmetricKey(data: value[(start + 8)..<(start + 40)]))
        }
    }

    private func writePreviousManifestKeys(_ db: Database, _ list: [(validBelow: Int64, key: SymmetricKey)], keys: Keys) throws {
        var value = Data()
        for entry in list {
            value.append(contentsOf: UInt64(bitPattern: entry.validBelow).bigEndianBytes)
            entry.key.withUnsafeBytes { value.append(contentsOf: $0) }
        }
        let sealed = try sealLocal(name: Self.previousManifestKeysName, value: value, keys: localKeys(keys))
        try db.execute(
            sql: "INSERT INTO local_state (name, box) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET box = excluded.box",
            arguments: [sealed.row, sealed.box])
    }
}

extension UInt64 {
    fileprivate var bigEndianBytes: [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: self >> (56 - 8 * $0)) } }
}
