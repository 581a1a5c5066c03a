import CofferAgentWire
@_exported import CofferBarcode
import CofferCrypto
import CofferInterop
import CofferKeystore
@_exported import CofferModel
@_exported import CofferOTP
@_exported import CofferPlaces
import CofferVault
import CofferPlatform
import Foundation
import Logging

/// Errors of the facade's own: lookups by name and the operations it composes. The facade throws plainly: the
/// errors of the layers below (`VaultError`, `KeystoreError`, `ModelError`, `OTPError`, `PlacesError`,
/// `CofferCryptoError`) pass through as they are, each with cases a caller can act on.
public enum CofferError: Error, Sendable, CustomStringConvertible {
    case noMatch(String)
    /// Several items match a name equally well (`ItemLookup`); they are listed, oldest first.
    case ambiguous(String, candidates: [ItemLookup.Candidate])
    case wrongKind(expected: ItemKind, found: ItemKind)
    /// The vault cannot be opened without a prompt: there is no device key for it here.
    case needsSecret
    /// A PIN-held key whose device secret lives on another device (it was restored or imported there).
    case keyBoundElsewhere
    /// The operation would strand the vault's other synced devices (master-key rotation).
    case syncedVault
    /// Moving keys needs a location that keeps device records (`CofferLocation.standard`).
    case keystoreNotRecorded
    /// The vault's keys already live in that store.
    case keystoreUnchanged(KeystoreKind)
    /// A key read back from the new store is not the one written (nothing was recorded or deleted).
    case keystoreCopyDiffers(account: String)
    /// No agent listens at the socket.
    case agentNotRunning
    /// The agent's socket cannot be trusted or used (another user's, or it answered out of protocol).
    case agentUnusable(String)
    /// The agent refused the request.
    case agent(AgentFailure)

    public var description: String {
        switch self {
        case .noMatch(let query): return "no item matches \"\(query)\""
        case .ambiguous(let query, let candidates):
            let shown = candidates.prefix(8).map {
                "\($0.id.uuidString.prefix(8).lowercased()) (\($0.kind.rawValue.replacingOccurrences(of: "_", with: " ")) \($0.name))"
            }
            let more = candidates.count > shown.count ? ", and \(candidates.count - shown.count) more" : ""
            return "\(candidates.count) items match \"\(query)\": \(shown.joined(separator: ", "))\(more)"
        case .wrongKind(let expected, let found): return "that item is a \(found.rawValue), not a \(expected.rawValue)"
        case .needsSecret: return "no device key for this vault on this device"
        case .syncedVault:
            return "this vault syncs to other devices: its master key is rotated through the sync server"
        case .keyBoundElsewhere:
            return "this signing key is bound to the device it was added on; add its seed again to use it here"
        case .keystoreNotRecorded: return "this location keeps no record of key stores"
        case .keystoreUnchanged(let kind): return "this vault's keys are already in the \(kind.displayName)"
        case .keystoreCopyDiffers(let account):
            return "the new key store did not give back \(account) as written; the vault still uses the old store"
        case .agentNotRunning: return "no agent is running"
        case .agentUnusable(let reason): return "cannot use the agent: \(reason)"
        case .agent(let failure): return failure.message
        }
    }
}

/// The facade a program uses: an unlocked vault plus the device key store, with the operations that need both
/// (HOTP codes stored before shown, PIN-held signing keys, backups).
public final class Coffer: Sendable {
    /// The store itself, for the sync layer that ships its rows; programs use the operations of the facade.
    @_spi(Sync) public let vault: Vault
    public let location: CofferLocation
    /// The store that holds this vault's keys on this device.
    public let keystore: any DeviceKeystore
    let logger = Logger(label: "coffer")

    init(vault: Vault, location: CofferLocation, keystore: any DeviceKeystore) {
        self.vault = vault
        self.location = location
        self.keystore = keystore
    }

    static func deviceAccount(_ vaultID: UUID) -> String { "vault-\(vaultID.lowercasedString)-device" }
    static func pinAccount(_ vaultID: UUID) -> String { "vault-\(vaultID.lowercasedString)-pin" }
    /// The TPM entry of one PIN-held key's own device secret, named by the secret's identifier.
    static func pinAccount(_ vaultID: UUID, secretID: [UInt8]) -> String {
        "vault-\(vaultID.lowercasedString)-pin-" + Hex.encode(secretID)
    }

    // MARK: Lifecycle

    /// Creates a vault with a device slot (and a passphrase slot when `passphrase` is given).
    public static func initialize(
        at location: CofferLocation, passphrase: String? = nil, kdf: PassphraseKDF = .defaultPBKDF2
    ) throws -> Coffer {
        guard !Vault.exists(in: location.vaultDirectory) else { throw VaultError.alreadyExists(path: location.vaultDirectory) }
        let vaultID = UUID()
        // The record and the device key come before the vault exists, so a crash can never leave a vault whose key is
        // lost, or kept in a store this device would not look in.
        let store = try location.keystore(for: vaultID, creating: true).store
        try requireAnswer(from: store)
        try location.deviceRecords?.record(store.kind, for: vaultID)
        let deviceKey = try store.secretCreatingIfAbsent(for: deviceAccount(vaultID), random: location.options.random)
        let vault = try Vault.create(
            in: location.vaultDirectory, vaultID: vaultID, deviceKey: deviceKey, deviceLabel: location.deviceLabel(store),
            passphrase: passphrase, kdf: kdf, options: location.options)
        let coffer = Coffer(vault: vault, location: location, keystore: store)
        try location.deviceRecords?.recordSlot(vault.openedSlotID, for: vaultID)
        coffer.logger.info("vault created", metadata: ["vault": "\(vaultID)"])
        return coffer
    }

    /// Opens with the device key; throws `.needsSecret` when this device has none for the vault, and
    /// `KeystoreError.locked` / `.unreachable` when the store that holds it cannot answer (never
    /// `.needsSecret`: a caller that took "no key" for an answer would make a new one).
    public static func open(at location: CofferLocation) throws -> Coffer {
        let locked = try Vault.openLocked(in: location.vaultDirectory, options: location.options)
        let vaultID = locked.vaultID
        let resolved = try location.keystore(for: vaultID, creating: false)
        let store = resolved.store
        let account = deviceAccount(vaultID)
        let current = try store.secret(for: account)
        let staged = try store.secret(for: account + "-next")
        for (key, isStaged) in [(current, false), (staged, true)] {
            guard let key else { continue }
            let vault: Vault
            do {
                vault = try locked.unlock(.deviceKey(key))
            } catch .noSlot(.device) {
                throw CofferError.needsSecret
            } catch .deviceKeyMismatch where !isStaged && staged != nil {
                continue
            } catch {
                // Written out: leaving the rest of a typed catch to propagate crashes Swift 6.3's SILGen.
                throw error
            }
            if isStaged {
                // A rotation committed but crashed before promoting its new device key: finish it.
                try store.replaceSecret(key, for: account)
                try store.deleteSecret(for: account + "-next")
            }
            // Which slot this device's key opens, for telling dead slots later: only with the recorded store (a key
            // another store keeps for one command opens a slot of its own, which is not dead). A record that cannot
            // be written now costs only that hint, never the command.
            if resolved.source == "record" { try? location.deviceRecords?.recordSlot(vault.openedSlotID, for: vaultID) }
            return Coffer(vault: vault, location: location, keystore: store)
        }
        throw CofferError.needsSecret
    }

    /// Opens with a passphrase or recovery code, and gives this device a device slot so later opens need no prompt.
    public static func open(at location: CofferLocation, unlock: UnlockMethod, addDeviceSlot: Bool = true) throws -> Coffer {
        let vault = try Vault.open(in: location.vaultDirectory, unlock: unlock, options: location.options)
        var resolved = try location.keystore(for: vault.vaultID, creating: false)
        if addDeviceSlot, resolved.source == "default" {
            // Neither chosen nor recorded: keep a key this device already has in the file store (vaults from before
            // records), else this device starts keeping keys for the vault, and `auto` chooses where.
            let existing = try? resolved.store.secret(for: deviceAccount(vault.vaultID))
            let opens = existing.flatMap { key in try? vault.deviceSlotID(opening: key) } != nil
            if !opens { resolved = try location.keystore(for: vault.vaultID, creating: true) }
        }
        let coffer = Coffer(vault: vault, location: location, keystore: resolved.store)
        if addDeviceSlot {
            try coffer.ensureDeviceSlot()
        }
        return coffer
    }

    /// Gives this device a device slot when none opens with its key, and records the store that holds the key.
    /// Other devices' slots are never touched; a store that is locked or unreachable fails here, before anything is
    /// written.
    func ensureDeviceSlot() throws {
        let account = Self.deviceAccount(vault.vaultID)
        let key: SecretBytes
        do throws(KeystoreError) {
            key = try keystore.secretCreatingIfAbsent(for: account, random: location.options.random)
        } catch .sealedElsewhere {
            // A copied folder: the entry opens only on the machine whose TPM sealed it, so this one seals its own.
            key = SecretBytes(randomCount: 32, using: location.options.random)
            try keystore.replaceSecret(key, for: account)
        }
        try location.deviceRecords?.record(keystore.kind, for: vault.vaultID)
        let slot = try vault.addDeviceSlot(key, label: location.deviceLabel(keystore))
        try location.deviceRecords?.recordSlot(slot.id, for: vault.vaultID)
    }

    /// Device slots this device made whose keys are gone from its store (a keyring item deleted, a store reset), and
    /// that are still in the vault: nothing opens them, and `coffer slots remove` can drop them.
    public func deadDeviceSlots() throws -> [UUID] {
        guard let replaced = try location.deviceRecords?.record(for: vault.vaultID)?.replaced, !replaced.isEmpty else { return [] }
        let present = Set(try slots().filter { $0.type == .device }.map(\.id))
        return replaced.filter { present.contains($0) && $0 != vault.openedSlotID }
    }

    /// Restores an encrypted backup as this location's vault and adds a device slot.
    public static func restore(backup path: String, to location: CofferLocation, unlock: UnlockMethod) throws -> Coffer {
        let vault = try Vault.restoreBackup(from: path, into: location.vaultDirectory, unlock: unlock, deviceKey: nil, options: location.options)
        let coffer = Coffer(vault: vault, location: location, keystore: try location.keystore(for: vault.vaultID, creating: true).store)
        try coffer.ensureDeviceSlot()
        return coffer
    }

    /// Which secrets open the backup at `path`, read without one: its passphrase, its recovery code, or both.
    public static func backupOpensWith(_ path: String, options: VaultOptions = VaultOptions()) throws -> (passphrase: Bool, recoveryCode: Bool) {
        let types = try Vault.backupSlotTypes(at: path, options: options)
        return (types.contains(.passphrase), types.contains(.recovery))
    }

    /// The PIN-held signing keys no PIN opens on this device (added on another device, or on this one before its key
    /// store or TPM was replaced), by name: what a restore must say.
    public func signingKeysBoundElsewhere() throws -> [Item] {
        var bound: [Item] = []
        for item in try items(kind: .signingKey) {
            if case .signingKey(let key) = item.content, try pinHolder(for: key) == .anotherDevice { bound.append(item) }
        }
        return bound
    }

    /// Imports the items of an encrypted backup into this vault; items already present (same id) are skipped.
    public func importBackup(_ path: String, unlock: UnlockMethod) throws -> (imported: Int, skipped: Int) {
        let backup = try Vault.openBackup(at: path, unlock: unlock, stagingParent: location.vaultDirectory, options: location.options)
        defer { backup.discardImportCopy() }
        return try vault.importItems(from: backup)
    }

    /// Rotates the master key, and the device key with it: a copy of the old key store opens neither the old nor
    /// the new vault. The new device key is staged under `<account>-next` before the vault commits and promoted
    /// after, so a crash at any point leaves a key that opens the vault (`open` promotes a staged key it finds).
    /// `passphrase` is needed when the vault has a passphrase slot.
    public func rotateMasterKey(
        passphrase: String?, progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> Vault.RotationResult {
        // Other devices of a synced vault hold the old master key; a rotation here would strand them.
        if try vault.syncAccount() != nil { throw CofferError.syncedVault }
        let newDeviceKey = try stageNextDeviceKey()
        let result = try vault.rotateMasterKey(deviceKey: newDeviceKey, passphrase: passphrase, progress: progress)
        try promoteNextDeviceKey()
        return result
    }

    // MARK: Master-key rotation of a synced vault

    /// Prepares a rotation of a synced vault's master key (`Vault.prepareRotation`); the sync layer uploads it and
    /// has the server commit it before `commitPreparedRotation`. When the vault has a device slot, the new device key
    /// is staged under `<account>-next` first; `open` promotes it once the vault uses it.
    public func prepareSyncedRotation(passphrase: String?, accountKeyEpoch: Int64) throws -> PreparedRotation {
        let newDeviceKey = try stageNextDeviceKey()
        return try vault.prepareRotation(accountKeyEpoch: accountKeyEpoch, deviceKey: newDeviceKey, passphrase: passphrase)
    }

    /// Puts the prepared rotation in use after the server committed it, and promotes the staged device key.
    public func commitPreparedRotation(cursor: Int64) throws -> Vault.RotationResult {
        let result = try vault.commitPreparedRotation(cursor: cursor, at: Date())
        try promoteNextDeviceKey()
        return result
    }

    /// Forgets a prepared rotation the server did not take, and its staged device key.
    public func discardPreparedRotation() throws {
        try vault.discardPreparedRotation()
        try keystore.deleteSecret(for: Self.deviceAccount(vault.vaultID) + "-next")
    }

    /// Takes the master key another device rotated the synced vault to (`Vault.rekey`), with a new device key staged
    /// and promoted as in a rotation.
    public func rekey(to masterKey: SecretBytes, rotationEpoch: Int64, passphrase: String?) throws -> Vault.RotationResult {
        let newDeviceKey = try stageNextDeviceKey()
        let result = try vault.rekey(to: masterKey, rotationEpoch: rotationEpoch, deviceKey: newDeviceKey, passphrase: passphrase)
        try promoteNextDeviceKey()
        return result
    }

    /// A new device key stored under `<account>-next`, when the vault has a device slot.
    private func stageNextDeviceKey() throws -> SecretBytes? {
        let hasDeviceSlot = try vault.slots().contains { $0.type == .device }
        guard hasDeviceSlot else { return nil }
        let key = SecretBytes(randomCount: 32, using: location.options.random)
        try keystore.replaceSecret(key, for: Self.deviceAccount(vault.vaultID) + "-next")
        return key
    }

    /// Makes the staged device key the device key, once the vault's device slot is the staged key's.
    private func promoteNextDeviceKey() throws {
        let account = Self.deviceAccount(vault.vaultID)
        guard let staged = try keystore.secret(for: account + "-next") else { return }
        try keystore.replaceSecret(staged, for: account)
        try keystore.deleteSecret(for: account + "-next")
    }

    // MARK: Lookup

    /// The live items, optionally of one kind.
    public func items(kind: ItemKind? = nil) throws -> [Item] {
        try items(kind: kind) { $0 }
    }

    /// The live items (of `kind`) as `transform` makes them, oldest first, keeping only what it returns: a listing
    /// of a large vault holds its lines, not every item (`Vault.items(kind:_:)`).
    public func items<T>(kind: ItemKind? = nil, _ transform: (Item) throws -> T?) throws -> [T] {
        try vault.items(kind: kind, transform)
    }

    /// Adds an item; returns it with its new id and revision 1.
    @discardableResult
    public func add(_ content: ItemContent) throws -> Item {
        try vault.add(content)
    }

    /// Finds one item the way `ItemLookup` says (full id, exact name, name without case or accents, id prefix, name
    /// prefix, name substring), opening only the catalogue and the item found.
    public func find(_ query: String, kind: ItemKind? = nil) throws -> Item {
        let lookupQuery = ItemLookup.Query(query)
        if let item = try vault.bucketItem(lookupQuery, kind: kind) { return item }
        switch try vault.lookup(lookupQuery, kind: kind) {
        case .found(let id): return try vault.item(id: id)
        case .ambiguous(let matching): throw CofferError.ambiguous(query, candidates: matching)
        case .none: throw CofferError.noMatch(query)
        }
    }

    /// Other items already named `name` (compared without case or accents), for a warning before adding another.
    public func items(named name: String, excluding: UUID? = nil) throws -> [ItemLookup.Candidate] {
        let candidates = try vault.lookupCandidates()
        return ItemLookup.sameName(name, in: candidates, excluding: excluding)
    }

    // MARK: Operations

    /// A one-time code for `item`. For HOTP the advanced counter is committed before the code is returned, so a
    /// code is never shown twice even if the process dies right after.
    public func code(for item: Item, at now: Date) throws -> (code: String, secondsRemaining: Int?) {
        guard case .otp(let otp) = item.content else { throw CofferError.wrongKind(expected: .otp, found: item.kind) }
        if case .hotp = otp.parameters.kind {
            var used: OTPParameters?
            _ = try vault.modify(id: item.id) { content in
                guard case .otp(let current) = content, let next = try current.advancingCounter() else {
                    throw ModelError.malformedContent("not an HOTP token")
                }
                used = current.parameters
                content = .otp(next)
            }
            guard let used else { throw ModelError.malformedContent("not an HOTP token") }
            return (try used.code(at: now), nil)
        }
        return (try otp.parameters.code(at: now), try otp.parameters.secondsRemaining(at: now))
    }

    // MARK: Error plumbing

    /// Fails as the store would when it cannot answer now, before anything (a record, a key, a vault) is written.
    static func requireAnswer(from store: any DeviceKeystore) throws {
        switch store.status() {
        case .available: return
        case .locked: throw KeystoreError.locked(store.kind)
        case .unreachable(let reason): throw KeystoreError.unreachable(store.kind, reason)
        }
    }
}
