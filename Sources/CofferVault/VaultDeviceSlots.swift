import CofferCrypto
import Crypto
import Foundation
import GRDB

/// What a device slot says about its device: a name people recognise, the key store that holds its key, and when
/// it was added. Sealed in the vault (docs/FORMAT.md §4, `slot_label`), so the file names no device.
public struct DeviceLabel: Sendable, Equatable {
    /// What people call the device (default: its host name).
    public var name: String
    /// The key store's name (`KeystoreKind` raw value: file, secret-service, keychain, memory).
    public var keystore: String
    /// When the slot was added.
    public var createdAt: Date

    public init(name: String, keystore: String, createdAt: Date) {
        self.name = name
        self.keystore = keystore
        self.createdAt = createdAt
    }
}

/// One device slot per device. Several devices may share one vault folder (Syncthing, Nextcloud): each adds its own
/// device slot, and nothing here ever removes another device's slot except `removeSlot(id:)`, asked by name.
extension Vault {
    /// Gives the device whose key is `key` a device slot, unless a device slot already opens with it (then that slot
    /// is returned unchanged). The check and the insert are one write transaction, so devices unlocking at once each
    /// keep their slot, and one device unlocking twice at once makes one slot.
    @discardableResult
    public func addDeviceSlot(_ key: SecretBytes, label: DeviceLabel?) throws(VaultError) -> SlotInfo {
        try writeTransaction { db, keys in
            for slot in try Self.readSlots(db, limits: options.limits, type: .device) where try opens(slot, with: key) {
                return SlotInfo(id: UUID(bytes: slot.header.slotID), type: .device, kdf: nil)
            }
            var made = try Self.insertSlot(
                db, type: .device, secret: key, kdf: nil, masterKey: keys.master, vaultID: vaultIDBytes, options: options)
            if let label {
                try insertLabel(db, label, slotID: made.id.bytes, master: keys.master)
                made.device = label
            }
            return made
        }
    }

    /// The device slot that `key` opens, if any.
    public func deviceSlotID(opening key: SecretBytes) throws(VaultError) -> UUID? {
        try read { db, _ in
            try Self.readSlots(db, limits: options.limits, type: .device).first { try opens($0, with: key) }
                .map { UUID(bytes: $0.header.slotID) }
        }
    }

    /// Records that device slot `id`'s key now lives in the store `keystore` (`coffer keystore migrate`), keeping the
    /// slot's name and date; a slot from before labels gets one named `name`, dated now.
    public func relabelDeviceSlot(_ id: UUID, keystore: String, name: String) throws(VaultError) {
        try writeTransaction { db, keys in
            let type = try Int.fetchOne(db, sql: "SELECT type FROM slot WHERE id = ?", arguments: [Data(id.bytes)])
            guard type == Int(SlotType.device.rawValue) else { throw VaultError.slotNotFound }
            let current = try readLabels(db, master: keys.master)[id]
            let label = DeviceLabel(name: current?.name ?? name, keystore: keystore, createdAt: current?.createdAt ?? options.clock())
            try insertLabel(db, label, slotID: id.bytes, master: keys.master)
        }
    }

    /// Removes one slot by id, refusing to remove the last way in.
    public func removeSlot(id: UUID) throws(VaultError) {
        try writeTransaction { db, _ in
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM slot") ?? 0
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM slot WHERE id = ?", arguments: [Data(id.bytes)]) ?? false else {
                throw VaultError.slotNotFound
            }
            guard total > 1 else { throw VaultError.lastSlot }
            try db.execute(sql: "DELETE FROM slot WHERE id = ?", arguments: [Data(id.bytes)])
            try Self.pruneLabels(db)
        }
    }

    // MARK: Labels

    private func opens(_ slot: StoredSlot, with key: SecretBytes) throws -> Bool {
        let kek = try slot.header.keyEncryptionKey(secret: key, limits: options.limits)
        return (try? slot.header.unwrap(slot.wrapped, vaultID: vaultIDBytes, kek: kek)) != nil
    }

    private static func labelKey(_ master: SecretBytes, vaultID: [UInt8]) -> SymmetricKey {
        KeySchedule.hkdf(master, salt: vaultID, label: KeySchedule.slotLabelKeyLabel)
    }

    private static func labelAssociatedData(vaultID: [UInt8], slotID: [UInt8]) -> [UInt8] {
        KeySchedule.associatedData(label: KeySchedule.slotLabelKeyLabel, fields: [vaultID, slotID])
    }

    func insertLabel(_ db: Database, _ label: DeviceLabel, slotID: [UInt8], master: SecretBytes) throws {
        try Self.insertLabel(db, label, slotID: slotID, master: master, vaultID: vaultIDBytes)
    }

    /// Seals `label` for the slot `slotID` under the label key of `master`: `u64 created_at (Unix ms) ‖
    /// u32 len(keystore) ‖ keystore ‖ name`.
    static func insertLabel(_ db: Database, _ label: DeviceLabel, slotID: [UInt8], master: SecretBytes, vaultID: [UInt8]) throws {
        var plaintext = withUnsafeBytes(of: UInt64(bitPattern: UnixTime.milliseconds(label.createdAt)).bigEndian) { Data($0) }
        let store = Data(label.keystore.utf8)
        plaintext.append(contentsOf: withUnsafeBytes(of: UInt32(store.count).bigEndian) { Array($0) })
        plaintext.append(store)
        plaintext.append(Data(label.name.utf8))
        let box = try Box.seal(
            plaintext, key: labelKey(master, vaultID: vaultID), associatedData: labelAssociatedData(vaultID: vaultID, slotID: slotID))
        try db.execute(
            sql: "INSERT INTO slot_label (slot_id, box) VALUES (?, ?) ON CONFLICT (slot_id) DO UPDATE SET box = excluded.box",
            arguments: [Data(slotID), box])
    }

    /// Every label row whose slot exists, opened; a box that fails to open is reported as tampered.
    func readLabels(_ db: Database, master: SecretBytes) throws -> [UUID: DeviceLabel] {
        let key = Self.labelKey(master, vaultID: vaultIDBytes)
        var labels: [UUID: DeviceLabel] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT slot_id, box FROM slot_label WHERE slot_id IN (SELECT id FROM slot)") {
            guard let slotID = row.blob(0), let box = row.blob(1) else { throw VaultError.tampered("a slot label") }
            let plaintext: Data
            do {
                plaintext = try Box.open(box, key: key, associatedData: Self.labelAssociatedData(vaultID: vaultIDBytes, slotID: Array(slotID)))
            } catch {
                throw VaultError.tampered("a slot label")
            }
            let bytes = Array(plaintext)
            guard bytes.count >= 12 else { throw VaultError.tampered("a slot label") }
            let created = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let storeLength = Int(bytes[8..<12].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            guard bytes.count >= 12 + storeLength else { throw VaultError.tampered("a slot label") }
            labels[UUID(bytes: Array(slotID))] = DeviceLabel(
                name: String(decoding: bytes[(12 + storeLength)...], as: UTF8.self),
                keystore: String(decoding: bytes[12..<(12 + storeLength)], as: UTF8.self),
                createdAt: UnixTime.date(milliseconds: Int64(bitPattern: created)))
        }
        return labels
    }

    /// The label of the device slot this vault was opened with, to carry onto this device's slot when a key change
    /// re-makes the slots.
    func carriedDeviceLabel(_ db: Database, master: SecretBytes) throws -> DeviceLabel? {
        try readLabels(db, master: master)[openedSlotID]
    }

    /// Drops labels whose slot is gone (and is not a prepared rotation's new slot).
    static func pruneLabels(_ db: Database) throws {
        try db.execute(
            sql: """
                DELETE FROM slot_label
                WHERE slot_id NOT IN (SELECT id FROM slot) AND slot_id NOT IN (SELECT id FROM sync_rotation_slot)
                """)
    }
}
