import CofferCrypto
import CofferKeystore
import CofferVault
import Foundation

/// What a program does with an open vault's items and slots, through the facade: the store stays behind it
/// (`vault` is for the sync layer only, `@_spi(Sync)`).
extension Coffer {
    /// The vault's id.
    public var vaultID: UUID { vault.vaultID }
    /// The directory that holds the vault.
    public var directory: String { vault.directory }
    /// When the vault was created.
    public var createdAt: Date { vault.createdAt }
    /// The slot this vault was opened with.
    public var openedSlotID: UUID { vault.openedSlotID }

    /// One item by id.
    public func item(id: UUID) throws -> Item {
        try vault.item(id: id)
    }

    /// How many live items the vault holds, from the catalogue (no item is opened).
    public func itemCount() throws -> Int {
        try vault.lookupCandidates().count
    }

    /// The names of the live items (of `kind`), oldest first, from the catalogue: no item is opened.
    public func itemNames(kind: ItemKind? = nil) throws -> [String] {
        try vault.lookupCandidates(kind: kind).map(\.name)
    }

    /// Changes an item: `change` gets its current content and edits it in place; a model error it throws leaves the
    /// item as it was. Returns the item as stored, with its new revision.
    @discardableResult
    public func update(_ item: Item, _ change: (inout ItemContent) throws -> Void) throws -> Item {
        try vault.modify(id: item.id, change)
    }

    /// Deletes an item for good (any kind; a damaged item too, by its full id).
    public func purge(id: UUID) throws {
        try vault.purge(id: id)
    }

    /// The ways the vault can be opened.
    public func slots() throws -> [SlotInfo] {
        try vault.slots()
    }

    /// Adds a passphrase slot (or replaces the passphrase).
    @discardableResult
    public func setPassphrase(_ passphrase: String, kdf: PassphraseKDF) throws -> SlotInfo {
        try vault.setPassphrase(passphrase, kdf: kdf)
    }

    /// Whether `passphrase` opens this vault's passphrase slot (nothing is changed either way).
    public func checkPassphrase(_ passphrase: String) throws {
        _ = try Vault.open(in: vault.directory, unlock: .passphrase(passphrase), options: location.options)
    }

    /// A new recovery code (the previous one stops working), shown once.
    public func newRecoveryCode() throws -> String {
        try vault.newRecoveryCode()
    }

    /// Removes every slot of `type` (never the last slot that opens the vault).
    public func removeSlots(ofType type: SlotType) throws {
        try vault.removeSlots(ofType: type)
    }

    /// Removes one slot by id (never the last slot that opens the vault).
    public func removeSlot(id: UUID) throws {
        try vault.removeSlot(id: id)
    }

    /// Writes an encrypted backup (FORMAT.md): it opens with the passphrase or the recovery code, never with this
    /// device's key.
    public func writeBackup(to path: String) throws {
        try vault.writeBackup(to: path)
    }

    /// The sync account this vault is linked to, if any.
    public func syncAccount() throws -> SyncAccount? {
        try vault.syncAccount()
    }
}
