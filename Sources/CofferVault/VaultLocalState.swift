import CofferCrypto
import Crypto
import Foundation
import GRDB

/// This device's own sealed state, kept beside the items and never synced: cached places tiles, places imported
/// here, the last refresh point of the monitored regions. Each value is one AES-256-GCM box under a key derived from
/// the master key (`coffer/v1/local`), its row named by HMAC-SHA256 of the logical name under another derived key
/// (`coffer/v1/local-names`), so the file shows neither which values exist nor what they hold (docs/FORMAT.md §3).
/// The box holds the logical name too, so that rotation can re-seal every row under the new key.
extension Vault {
    static let localFormatVersion: UInt32 = 1

    struct LocalKeys {
        let seal: SymmetricKey
        let name: SymmetricKey
    }

    func localKeys(_ keys: Keys) -> LocalKeys {
        LocalKeys(
            seal: KeySchedule.hkdf(keys.master, salt: vaultIDBytes, label: KeySchedule.localStateKeyLabel),
            name: KeySchedule.hkdf(keys.master, salt: vaultIDBytes, label: KeySchedule.localNameKeyLabel))
    }

    static func rowName(_ name: String, keys: LocalKeys) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data(name.utf8), using: keys.name))
    }

    func localAssociatedData(rowName: Data) -> [UInt8] {
        KeySchedule.localAssociatedData(vaultID: vaultIDBytes, rowName: Array(rowName), formatVersion: Self.localFormatVersion)
    }

    func sealLocal(name: String, value: Data, keys: LocalKeys) throws -> (row: Data, box: Data) {
        let row = Self.rowName(name, keys: keys)
        var plaintext = Data()
        let nameBytes = Data(name.utf8)
        let length = UInt32(nameBytes.count)
        plaintext.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
        plaintext.append(nameBytes)
        plaintext.append(value)
        return (row, try Box.seal(plaintext, key: keys.seal, associatedData: localAssociatedData(rowName: row)))
    }

    func openLocal(row: Data, box: Data, keys: LocalKeys) throws -> (name: String, value: Data) {
        let plaintext: Data
        do {
            plaintext = try Box.open(box, key: keys.seal, associatedData: localAssociatedData(rowName: row))
        } catch {
            throw VaultError.tampered("a local-state box")
        }
        guard plaintext.count >= 4 else { throw VaultError.tampered("a local-state box") }
        let length = plaintext.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        guard plaintext.count >= 4 + length else { throw VaultError.tampered("a local-state box") }
        let start = plaintext.startIndex + 4
        let name = String(decoding: plaintext[start..<(start + length)], as: UTF8.self)
        guard Self.rowName(name, keys: keys) == row else { throw VaultError.tampered("a local-state box") }
        return (name, Data(plaintext[(start + length)...]))
    }

    /// The value stored under `name`, or nil.
    public func localValue(_ name: String) throws(VaultError) -> Data? {
        try read { db, keys in try storedLocalValue(name, db: db, keys: localKeys(keys)) }
    }

    /// Stores `value` under `name` (nil deletes it), in one transaction.
    public func setLocalValue(_ name: String, _ value: Data?) throws(VaultError) {
        try setLocalValues([name: value])
    }

    /// Stores several values at once, all or none.
    public func setLocalValues(_ values: [String: Data?]) throws(VaultError) {
        try writeTransaction { db, keys in try storeLocalValues(db, values, keys: keys) }
    }

    /// `setLocalValues` inside the caller's transaction.
    func storeLocalValues(_ db: Database, _ values: [String: Data?], keys: Keys) throws {
        let local = localKeys(keys)
        for (name, value) in values {
            if let value {
                let sealed = try sealLocal(name: name, value: value, keys: local)
                try db.run(
                    "INSERT INTO local_state (name, box) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET box = excluded.box",
                    [sealed.row, sealed.box])
            } else {
                try db.run("DELETE FROM local_state WHERE name = ?", [Self.rowName(name, keys: local)])
            }
        }
    }

    /// Re-seals every local value under `newKeys` (master-key rotation), inside the rotation's transaction.
    func resealLocalState(_ db: Database, from old: Keys, to new: Keys) throws {
        let oldLocal = localKeys(old)
        let newLocal = localKeys(new)
        let rows = try Row.fetchAll(db, sql: "SELECT name, box FROM local_state")
        try db.execute(sql: "DELETE FROM local_state")
        for row in rows {
            let (name, value) = try openLocal(row: row["name"], box: row["box"], keys: oldLocal)
            let sealed = try sealLocal(name: name, value: value, keys: newLocal)
            try db.execute(sql: "INSERT INTO local_state (name, box) VALUES (?, ?)", arguments: [sealed.row, sealed.box])
        }
    }
}
