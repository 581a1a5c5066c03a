import CofferCrypto
import CofferKeystore
import CofferVault
import Foundation

extension Coffer {
    /// The steps of `migrateKeys`, in order; after each a crash leaves a vault that opens.
    public enum KeystoreMigrationStep: String, Sendable, CaseIterable {
        /// Every key is in the new store too; the record still names the old one.
        case copied
        /// The new store's keys read back equal, and its device key opens this vault.
        case verified
        /// The record names the new store: from here on the vault opens with it.
        case recorded
        /// The old store no longer holds the keys.
        case removed
    }

    /// The key-store accounts this vault may use: the device key, a staged one (rotation), the PIN device secret and
    /// the sync token (docs/FORMAT.md §1).
    var keystoreAccounts: [String] {
        [Self.deviceAccount(vault.vaultID), Self.deviceAccount(vault.vaultID) + "-next", Self.pinAccount(vault.vaultID), syncTokenAccount]
    }

    /// Moves every key of this vault from its store to `target`: copies, checks (each value read back equal, and the
    /// device key opening the vault), records the new store for this device (naming the old one as still holding
    /// copies), then deletes from the old store and drops that mention. `checkpoint` runs after each step. Returns how
    /// many keys moved. Asked to move to the store the vault already uses, it finishes a move a crash interrupted
    /// (`finishKeystoreMove`), or says there is nothing to do.
    public func migrateKeys(
        to target: any DeviceKeystore, checkpoint: (KeystoreMigrationStep) -> Void = { _ in }
    ) throws -> Int {
        guard let records = location.deviceRecords else { throw CofferError.keystoreNotRecorded }
        guard target.kind != keystore.kind else {
            guard try finishKeystoreMove() else { throw CofferError.keystoreUnchanged(target.kind) }
            return 0
        }
        var moved: [(String, SecretBytes)] = []
        for account in keystoreAccounts {
            if let value = try keystore.secret(for: account) {
                moved.append((account, value))
            }
        }
        for (account, value) in moved {
            try target.replaceSecret(value, for: account)
        }
        checkpoint(.copied)
        for (account, value) in moved {
            let copy = try target.secret(for: account)
            guard let copy, copy.isEqual(to: value) else { throw CofferError.keystoreCopyDiffers(account: account) }
        }
        let hasDeviceSlot = try vault.slots().contains { $0.type == .device }
        var deviceSlot: UUID?
        if hasDeviceSlot {
            let key = try target.secret(for: Self.deviceAccount(vault.vaultID))
            deviceSlot = try key.flatMap { key throws in try vault.deviceSlotID(opening: key) }
            guard deviceSlot != nil else { throw CofferError.keystoreCopyDiffers(account: Self.deviceAccount(vault.vaultID)) }
        }
        checkpoint(.verified)
        try records.record(target.kind, previous: keystore.kind, for: vault.vaultID)
        if let deviceSlot {
            // What `coffer slots` shows; the record above is what opening reads.
            try vault.relabelDeviceSlot(deviceSlot, keystore: target.kind.rawValue, name: location.deviceName)
        }
        checkpoint(.recorded)
        for (account, _) in moved {
            try keystore.deleteSecret(for: account)
        }
        try records.record(target.kind, for: vault.vaultID)
        checkpoint(.removed)
        return moved.count
    }

    /// The store a move recorded but has not finished deleting from, if any.
    public func unfinishedKeystoreMove() throws -> KeystoreKind? {
        guard let records = location.deviceRecords, let record = try records.record(for: vault.vaultID),
            record.keystore == keystore.kind
        else { return nil }
        return record.previous
    }

    /// Deletes this vault's keys from the store an interrupted move came from, once this vault's store is shown to
    /// hold a device key that opens the vault (never the only copy). Returns whether there was a move to finish.
    public func finishKeystoreMove() throws -> Bool {
        guard let previous = try unfinishedKeystoreMove(), let records = location.deviceRecords else { return false }
        let hasDeviceSlot = try vault.slots().contains { $0.type == .device }
        if hasDeviceSlot {
            let key = try keystore.secret(for: Self.deviceAccount(vault.vaultID))
            guard let key, try vault.deviceSlotID(opening: key) != nil else {
                throw CofferError.keystoreCopyDiffers(account: Self.deviceAccount(vault.vaultID))
            }
        }
        let old = location.keystore(previous)
        for account in keystoreAccounts {
            try old.deleteSecret(for: account)
        }
        try records.record(keystore.kind, for: vault.vaultID)
        return true
    }
}
