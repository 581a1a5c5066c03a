import CofferCrypto
import CofferKeystore
import CofferVault
import Foundation

extension Coffer {
    /// Creates this device's copy of a vault that exists elsewhere (a synced vault): same vault id and master key,
    /// a new device key for this device, and a local passphrase slot when `passphrase` is given.
    public static func join(
        at location: CofferLocation, vaultID: UUID, masterKey: SecretBytes, passphrase: String?
    ) throws -> Coffer {
        guard !Vault.exists(in: location.vaultDirectory) else { throw VaultError.alreadyExists(path: location.vaultDirectory) }
        let store = try location.keystore(for: vaultID, creating: true).store
        try requireAnswer(from: store)
        try location.deviceRecords?.record(store.kind, for: vaultID)
        let deviceKey = try store.secretCreatingIfAbsent(for: deviceAccount(vaultID), random: location.options.random)
        let vault = try Vault.create(
            in: location.vaultDirectory, vaultID: vaultID, masterKey: masterKey, deviceKey: deviceKey,
            deviceLabel: location.deviceLabel(store), passphrase: passphrase, options: location.options)
        return Coffer(vault: vault, location: location, keystore: store)
    }

    /// Key-store account of the sync refresh token for this vault.
    public var syncTokenAccount: String { "vault-\(vault.vaultID.lowercasedString)-sync" }
}
