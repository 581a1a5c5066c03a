import CofferCrypto
import CofferModel
import CofferPlatform
import Crypto
import Foundation
import GRDB

extension Vault {
    // MARK: Slots

    /// The vault's slots, device first, each device slot with its label when it has one.
    public func slots() throws(VaultError) -> [SlotInfo] {
        try read { db, keys in
            let labels = try readLabels(db, master: keys.master)
            return try Self.readSlots(db, limits: options.limits).map {
                let id = UUID(bytes: $0.header.slotID)
                return SlotInfo(id: id, type: $0.header.type, kdf: $0.header.kdf, device: labels[id])
            }
        }
    }

    /// Adds a passphrase slot, or replaces the existing one: one key is re-wrapped, no item is written.
    @discardableResult
    public func setPassphrase(_ passphrase: String, kdf: PassphraseKDF = .defaultPBKDF2) throws(VaultError) -> SlotInfo {
        let secret: SecretBytes
        do {
            secret = try Passphrase.bytes(passphrase)
        } catch {
            throw .crypto(error)
        }
        return try writeTransaction { db, keys in
            try db.execute(sql: "DELETE FROM slot WHERE type = ?", arguments: [Int(SlotType.passphrase.rawValue)])
            return try Self.insertSlot(
                db, type: .passphrase, secret: secret, kdf: kdf, masterKey: keys.master, vaultID: vaultIDBytes, options: options)
        }
    }

    /// Replaces any recovery slot with a new one; returns the code to show the user once.
    public func newRecoveryCode() throws(VaultError) -> String {
        let (secret, text) = RecoveryCode.generate(random: options.random)
        try writeTransaction { db, keys in
            try db.execute(sql: "DELETE FROM slot WHERE type = ?", arguments: [Int(SlotType.recovery.rawValue)])
            try Self.insertSlot(
                db, type: .recovery, secret: secret, kdf: nil, masterKey: keys.master, vaultID: vaultIDBytes, options: options)
        }
        return text
    }

    /// Removes every slot of `type`, refusing to remove the last way in.
    public func removeSlots(ofType type: SlotType) throws(VaultError) {
        try writeTransaction { db, _ in
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM slot") ?? 0
            let matching = try Int.fetchOne(db, sql: "SELECT count(*) FROM slot WHERE type = ?", arguments: [Int(type.rawValue)]) ?? 0
            guard matching > 0 else { throw VaultError.noSlot(type) }
            guard matching < total else { throw VaultError.lastSlot }
            try db.execute(sql: "DELETE FROM slot WHERE type = ?", arguments: [Int(type.rawValue)])
            try Self.pruneLabels(db)
        }
    }

    // MARK: Rotation

    /// What a master-key rotation did.
    public struct RotationResult: Sendable, Equatable {
        /// Items re-encrypted.
        public let itemCount: Int
        /// The new recovery code, when the vault had a recovery slot (the old code no longer works).
        public let recoveryCode: String?
    }

    /// Replaces the master key (after a suspected compromise): every item is re-encrypted and every slot re-wrapped
    /// in one transaction, so a crash leaves the old vault or the new one. The device slot needs `deviceKey`, a
    /// passphrase slot needs `passphrase`; a recovery slot is replaced by a new code.
    /// `progress` is called with (items done, items in all) as the re-encryption advances.
    public func rotateMasterKey(
        deviceKey: SecretBytes?, passphrase: String?, progress: (Int, Int) -> Void = { _, _ in }
    ) throws(VaultError) -> RotationResult {
        let newMaster = SecretBytes(randomCount: 32, using: options.random)
        let newItemsKey = KeySchedule.itemsKey(masterKey: newMaster, vaultID: vaultIDBytes)
        let passphraseSecret = try Self.passphraseSecret(passphrase)
        let recovery = RecoveryCode.generate(random: options.random)
        let (count, recoveryCode, newKeys) = try writeTransaction { db, keys -> (Int, String?, Keys) in
            let slots = try Self.readSlots(db, limits: options.limits)
            try checkSlotSecrets(slots, deviceKey: deviceKey, passphrase: passphraseSecret)
            let label = try carriedDeviceLabel(db, master: keys.master)
            let newKeys = try Keys(master: newMaster, items: newItemsKey, epoch: keys.epoch + 1)
            let rows = try resealLiveItems(db, from: keys, to: newKeys, now: options.clock(), progress: progress) { row in
                try storeRow(db, row, insert: false)
            }
            // Photo parts belong to their cards: the count is of items.
            let parts = try Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE deleted = 0 AND kind = ?", arguments: [PhotoPart.kind]) ?? 0
            let count = rows - parts
            try resealLocalState(db, from: keys, to: newKeys)
            let code = try replaceSlots(
                db, slots, masterKey: newMaster, deviceKey: deviceKey, deviceLabel: label, passphrase: passphraseSecret,
                recovery: recovery)
            try db.execute(sql: "UPDATE vault SET key_epoch = ? WHERE singleton = 1", arguments: [newKeys.epoch])
            return (count, code, newKeys)
        }
        replaceKeys(newKeys)
        return RotationResult(itemCount: count, recoveryCode: recoveryCode)
    }

    // MARK: Backups

    /// Writes an encrypted backup to `path`: a copy of the vault file without its device slot (which would be
    /// useless elsewhere and must never leave the device), opened later by passphrase or recovery code.
    public func writeBackup(to path: String) throws(VaultError) {
        try requireOpen()
        let hasPortableSlot = try slots().contains { $0.type != .device }
        guard hasPortableSlot else { throw .noSlot(.passphrase) }
        let temporary = PrivateFiles.temporarySibling(of: path)
        defer { Self.removeDatabaseFiles(temporary) }
        do {
            // An empty 0600 file for VACUUM INTO to fill, so the copy is never readable by others, even briefly.
            try PrivateFiles.write([], to: temporary)
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM INTO ?", arguments: [temporary])
            }
            try PrivateFiles.restrictFile(temporary)
            let copy = try Self.openDatabase(temporary, options: options)
            try copy.writeWithoutTransaction { db in
                try db.execute(sql: "DELETE FROM slot WHERE type = ?", arguments: [Int(SlotType.device.rawValue)])
                try db.execute(sql: "DELETE FROM slot_label")
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                try db.execute(sql: "VACUUM")
            }
            try copy.close()
            try PrivateFiles.replace(path, with: temporary)
        } catch let error as VaultError {
            throw error
        } catch {
            throw Self.mapped(error)
        }
    }

    /// The kinds of slot a backup file holds (a backup keeps its passphrase and recovery-code slots, never a device
    /// slot), read from the file without a secret and without writing to it: which secret to ask for.
    public static func backupSlotTypes(at path: String, options: VaultOptions = VaultOptions()) throws(VaultError) -> Set<SlotType> {
        guard PrivateFiles.exists(path) else { throw .notFound(path: path) }
        do {
            let database = try openDatabase(path, options: options, readonly: true)
            defer { try? database.close() }
            return try database.read { db in
                _ = try readID(db)
                return Set(try UInt8.fetchAll(db, sql: "SELECT DISTINCT type FROM slot").compactMap(SlotType.init(rawValue:)))
            }
        } catch let error as VaultError {
            throw error
        } catch {
            throw mapped(error)
        }
    }

    /// Restores a backup as a new vault in `directory` (which must not hold one): checks that `unlock` opens it,
    /// copies it into place atomically, and adds a device slot for `deviceKey` (labelled `deviceLabel`).
    public static func restoreBackup(
        from path: String, into directory: String, unlock: UnlockMethod, deviceKey: SecretBytes?, deviceLabel: DeviceLabel? = nil,
        options: VaultOptions = VaultOptions()
    ) throws(VaultError) -> Vault {
        let bytes = try wrap { () throws(PrivateFileError) in try PrivateFiles.read(path, limit: 1 << 30) }
        try wrap { () throws(PrivateFileError) in try PrivateFiles.createDirectory(directory) }
        let destination = databasePath(in: directory)
        guard !PrivateFiles.exists(destination) else { throw .alreadyExists(path: directory) }
        let temporaryDirectory = PrivateFiles.temporarySibling(of: destination)
        try wrap { () throws(PrivateFileError) in try PrivateFiles.createDirectory(temporaryDirectory) }
        defer {
            removeDatabaseFiles(databasePath(in: temporaryDirectory))
            try? PrivateFiles.removeDirectory(temporaryDirectory)
        }
        try wrap { () throws(PrivateFileError) in try PrivateFiles.write(bytes, to: databasePath(in: temporaryDirectory)) }
        // Opening checks the header, the format version and the secret before anything is published.
        let staged = try open(in: temporaryDirectory, unlock: unlock, options: options)
        do {
            try staged.database.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            try staged.database.close()
        } catch {
            throw mapped(error)
        }
        try wrap { () throws(PrivateFileError) in try PrivateFiles.publish(databasePath(in: temporaryDirectory), as: destination) }
        let vault = try open(in: directory, unlock: unlock, options: options)
        if let deviceKey { try vault.addDeviceSlot(deviceKey, label: deviceLabel) }
        return vault
    }

    /// Copies the items of another (unlocked) vault into this one in one transaction, keeping their ids and
    /// creation times, and cards' photos. Items whose id already exists here are skipped and counted.
    public func importItems(from other: Vault) throws(VaultError) -> (imported: Int, skipped: Int) {
        let incoming = try other.items()
        var images: [UUID: [PhotoSide: Data]] = [:]
        for item in incoming {
            guard case .card(let card) = item.content else { continue }
            for photo in card.photos {
                if let (_, image) = try other.photo(photo.side, of: item) { images[item.id, default: [:]][photo.side] = image }
            }
        }
        return try writeTransaction { db, keys in
            var imported = 0
            var skipped = 0
            for item in incoming {
                let exists = try db.value(Bool.self, "SELECT 1 FROM item WHERE id = ?", [Data(item.id.bytes)]) ?? false
                if exists {
                    skipped += 1
                    continue
                }
                var copy = item
                copy.revision = 1
                copy.updatedAt = options.clock()
                if case .card(var card) = copy.content, !card.photos.isEmpty {
                    // The parts are sealed anew under this vault's photo key.
                    card.photos = []
                    try applyPhotoChanges(
                        db, to: &card, cardID: copy.id, PhotoChanges(images: images[item.id] ?? [:]), keys: keys, now: copy.updatedAt)
                    copy.content = .card(card)
                }
                try insert(db, item: copy, keys: keys)
                imported += 1
            }
            return (imported, skipped)
        }
    }

    /// Opens a copy of a backup file, unlocked by passphrase or recovery code, to import its items. The copy is
    /// staged in a private directory inside `stagingParent` (the importing vault's directory).
    public static func openBackup(
        at path: String, unlock: UnlockMethod, stagingParent: String, options: VaultOptions = VaultOptions()
    ) throws(VaultError) -> Vault {
        let directory = PrivateFiles.temporarySibling(of: "\(stagingParent)/x") + "-import"
        do {
            let bytes = try wrap { () throws(PrivateFileError) in try PrivateFiles.read(path, limit: 1 << 30) }
            try wrap { () throws(PrivateFileError) in
                try PrivateFiles.createDirectory(directory)
                try PrivateFiles.write(bytes, to: databasePath(in: directory))
            }
            return try open(in: directory, unlock: unlock, options: options)
        } catch {
            removeDatabaseFiles(databasePath(in: directory))
            try? PrivateFiles.removeDirectory(directory)
            throw error
        }
    }

    /// Closes the database and removes a directory made by `openBackup`.
    public func discardImportCopy() {
        try? database.close()
        Self.removeDatabaseFiles(Self.databasePath(in: directory))
        try? PrivateFiles.removeDirectory(directory)
    }
}
