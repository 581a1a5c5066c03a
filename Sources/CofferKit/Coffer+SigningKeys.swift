import CofferCrypto
import CofferKeystore
import CofferModel
import CofferVault
import Foundation
import Logging

/// What checks a PIN-held key's PIN on this device, as far as can be known before the PIN is asked.
public enum PINHolder: Sendable, Equatable {
    /// The key's device secret is in this device's key store; the vault counts wrong PINs and locks the key at
    /// `PINProtection.attemptLimit`.
    case thisDevice
    /// The key's device secret is sealed by this machine's TPM behind the PIN: the TPM checks and counts it.
    case thisMachinesTPM
    /// Neither: the key was added on another device (or this device lost its key store), and no PIN opens it here.
    case anotherDevice
}

/// Where a key's device secret comes from.
enum PINSecretSource {
    case keystore(SecretBytes)
    case tpm(TPM2Keystore, account: String)
}

extension Coffer {
    // MARK: PIN-held signing keys

    /// Adds an Ed25519 key held under `pin`. On a device whose keys the TPM keeps, the key gets a device secret of its
    /// own, sealed by the TPM behind the PIN (with dictionary-attack protection): the TPM checks and counts every PIN.
    /// Elsewhere the vault's shared device secret is used and the vault counts wrong PINs.
    public func addSigningKey(name: String, seed: SecretBytes, flavor: SigningKey.Flavor, pin: String, tags: [String] = []) throws -> Item {
        let pinBytes = try PINProtection.pinBytes(pin)
        let vaultID = vault.vaultID
        let itemID = UUID()
        let salt = location.options.random.bytes(32)
        let deviceSecret: SecretBytes
        if let tpm = keystore as? TPM2Keystore {
            deviceSecret = SecretBytes(randomCount: 32, using: location.options.random)
            let account = Self.pinAccount(vaultID, secretID: PINProtection.secretIdentifier(deviceSecret))
            try tpm.storePINHeld(
                deviceSecret, authorisation: PINProtection.chipAuthorisation(pin: pinBytes, salt: salt), for: account)
        } else {
            deviceSecret = try keystore.secretCreatingIfAbsent(for: Self.pinAccount(vaultID), random: location.options.random)
        }
        let publicKey = try Ed25519.publicKey(seed: seed)
        let box = try PINProtection.seal(
            seed, pin: pinBytes, salt: salt, deviceSecret: deviceSecret, vaultID: vaultID.bytes, itemID: itemID.bytes)
        let key = try SigningKey(
            name: name, flavor: flavor, publicKey: publicKey, pinSalt: salt, pinBox: Array(box),
            boundVaultID: vaultID.bytes, deviceSecretID: PINProtection.secretIdentifier(deviceSecret), tags: tags)
        return try vault.add(.signingKey(key), id: itemID, createdAt: location.options.clock())
    }

    /// What checks `key`'s PIN here; no PIN is asked and the TPM is not used.
    public func pinHolder(for key: SigningKey) throws -> PINHolder {
        switch try pinSecretSource(for: key) {
        case .keystore?: return .thisDevice
        case .tpm?: return .thisMachinesTPM
        case nil: return .anotherDevice
        }
    }

    /// The dictionary-attack state of the TPM that checks `key`'s PIN; nil when no TPM does.
    public func tpmLockoutState(for key: SigningKey) throws -> TPM2Keystore.LockoutState? {
        guard case .tpm(let tpm, _)? = try pinSecretSource(for: key) else { return nil }
        return try tpm.lockoutState()
    }

    /// Refuses what no PIN could get past, before a PIN is asked: a key locked by the vault's count, a key of
    /// another device (`.keyBoundElsewhere`, also for a TPM entry another machine's TPM sealed), and a TPM in
    /// dictionary-attack lockout.
    public func checkBeforePIN(_ item: Item) throws {
        guard case .signingKey(let key) = item.content else { throw CofferError.wrongKind(expected: .signingKey, found: item.kind) }
        switch try pinSecretSource(for: key) {
        case nil: throw CofferError.keyBoundElsewhere
        case .keystore?: if key.isLocked { throw ModelError.keyLocked }
        case .tpm(let tpm, let account)?:
            do {
                try tpm.checkPINHeld(for: account)
            } catch .sealedElsewhere {
                throw CofferError.keyBoundElsewhere
            }
        }
    }

    /// Signs `message` with a PIN-held key. With the device secret in the key store, a wrong PIN is counted in the
    /// vault (persistently, before the PIN is tried) and the key locks after `PINProtection.attemptLimit` wrong PINs
    /// in a row; with it sealed by the TPM, the TPM checks the PIN and counts wrong ones toward its lockout
    /// (`KeystoreError.pinRefused`, `.pinLockout`). A key whose device secret is not on this device fails with
    /// `.keyBoundElsewhere` without counting anything: no PIN can open it here.
    public func sign(_ message: some DataProtocol, with item: Item, pin: String) throws -> [UInt8] {
        guard case .signingKey(let current) = item.content else { throw CofferError.wrongKind(expected: .signingKey, found: item.kind) }
        let pinBytes = try PINProtection.pinBytes(pin)
        switch try pinSecretSource(for: current) {
        case nil: throw CofferError.keyBoundElsewhere
        case .tpm(let tpm, let account)?:
            let deviceSecret: SecretBytes
            do {
                deviceSecret = try tpm.pinHeldSecret(
                    for: account, authorisation: PINProtection.chipAuthorisation(pin: pinBytes, salt: current.pinSalt))
            } catch .sealedElsewhere {
                throw CofferError.keyBoundElsewhere
            } catch {
                if case .pinRefused = error { logger.warning("wrong PIN (counted by the TPM)", metadata: ["item": "\(item.id)"]) }
                throw error
            }
            // The TPM gave the secret for this PIN: a box that does not open now is a damaged item, not a wrong PIN.
            guard PINProtection.secretIdentifier(deviceSecret) == current.deviceSecretID else { throw CofferError.keyBoundElsewhere }
            let seed = try PINProtection.open(
                Data(current.pinBox), salt: current.pinSalt, pin: pinBytes, deviceSecret: deviceSecret,
                vaultID: current.boundVaultID, itemID: item.id.bytes)
            return try Ed25519.sign(message, seed: seed)
        case .keystore(let deviceSecret)?:
            return try signCounting(message, with: item, pin: pinBytes, deviceSecret: deviceSecret)
        }
    }

    /// Signing with the shared device secret, the vault counting wrong PINs.
    private func signCounting(_ message: some DataProtocol, with item: Item, pin: SecretBytes, deviceSecret: SecretBytes) throws -> [UInt8] {
        do {
            // Count the attempt first: a process killed mid-check cannot be used to guess for free.
            let counted = try vault.modify(id: item.id) { content in
                guard case .signingKey(var key) = content else { throw ModelError.malformedContent("not a signing key") }
                guard !key.isLocked else { throw ModelError.keyLocked }
                key.failedAttempts += 1
                content = .signingKey(key)
            }
            guard case .signingKey(let key) = counted.content else { throw ModelError.malformedContent("not a signing key") }
            let seed: SecretBytes
            do {
                seed = try PINProtection.open(
                    Data(key.pinBox), salt: key.pinSalt, pin: pin, deviceSecret: deviceSecret,
                    vaultID: key.boundVaultID, itemID: item.id.bytes)
            } catch .authenticationFailed {
                logger.warning("wrong PIN", metadata: ["item": "\(item.id)"])
                throw ModelError.wrongPIN(remainingAttempts: PINProtection.attemptLimit - key.failedAttempts)
            }
            try vault.modify(id: item.id) { content in
                guard case .signingKey(var key) = content else { throw ModelError.malformedContent("not a signing key") }
                key.failedAttempts = 0
                content = .signingKey(key)
            }
            return try Ed25519.sign(message, seed: seed)
        } catch VaultError.model(let error) {
            // The count's own refusals (a locked key) are the item's, as a wrong PIN is.
            throw error
        }
    }

    /// Where `key`'s device secret is on this device: a TPM entry named by the key's secret identifier (found
    /// without using the TPM), else the key store's shared secret when its identifier matches, else nowhere.
    func pinSecretSource(for key: SigningKey) throws -> PINSecretSource? {
        try Self.pinSecretSource(for: key, location: location, keystore: keystore)
    }

    static func pinSecretSource(
        for key: SigningKey, location: CofferLocation, keystore: any DeviceKeystore
    ) throws -> PINSecretSource? {
        let vaultID = UUID(bytes: key.boundVaultID)
        // The TPM's entries stay where they were sealed whichever store holds the vault's keys now.
        if let tpm = (keystore as? TPM2Keystore) ?? (location.keystore(.tpm2) as? TPM2Keystore) {
            let account = pinAccount(vaultID, secretID: key.deviceSecretID)
            if tpm.containsEntry(for: account) { return .tpm(tpm, account: account) }
        }
        guard let secret = try (keystore.secret(for: pinAccount(vaultID))),
            PINProtection.secretIdentifier(secret) == key.deviceSecretID
        else { return nil }
        return .keystore(secret)
    }
}
