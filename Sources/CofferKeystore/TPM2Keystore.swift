import CofferCrypto
import CofferPlatform

/// A key store whose secrets are sealed by this machine's TPM 2.0: each entry is a file of the sealed object's
/// marshalled public and private parts (docs/FORMAT.md §1), which load only in the TPM that made them. A copy of
/// the files, the home directory or the whole disk carries nothing another machine can open.
///
/// The TPM is reached through the TCTI `COFFER_TPM_TCTI` names (default `device:/dev/tpmrm0`, the kernel's resource
/// manager; the user must be in the `tss` group). The objects need no authorisation and are exempt from the TPM's
/// dictionary-attack lockout (`noDA`), so wrong PINs elsewhere can never lock a vault out.
public struct TPM2Keystore: DeviceKeystore {
    /// Directory holding the sealed entries (by default `$XDG_DATA_HOME/coffer/tpm2`).
    public let directory: String
    /// The TCTI configuration string.
    public let tcti: String

    /// The TCTI used when `COFFER_TPM_TCTI` is not set.
    public static let defaultTCTI = "device:/dev/tpmrm0"

    static let magic: [UInt8] = Array("CTP1".utf8)

    public init(directory: String, tcti: String = TPM2Keystore.defaultTCTI) {
        self.directory = directory
        self.tcti = tcti
    }

    public var kind: KeystoreKind { .tpm2 }

    private var tpm: TPM2 { TPM2(tcti: tcti) }

    /// Available when the TPM answers and the directory is usable. A TPM in dictionary-attack lockout still opens
    /// these entries (they are `noDA`), so lockout is not `.locked` here.
    public func status() -> KeystoreStatus {
        do {
            _ = try tpm.dictionaryAttackState()
            try PrivateFiles.createDirectory(directory)
            return .available
        } catch let failure as TPM2.Failure {
            return .unreachable(Self.reason(failure))
        } catch {
            return .unreachable(String(describing: error))
        }
    }

    public func secret(for account: String) throws(KeystoreError) -> SecretBytes? {
        try AccountName.validate(account)
        let parts: [UInt8]
        do {
            parts = try PrivateFiles.read(path(account), limit: 4096)
        } catch .notFound {
            return nil
        } catch {
            throw .unreachable(.tpm2, error.description)
        }
        guard parts.count > Self.magic.count, Array(parts.prefix(Self.magic.count)) == Self.magic else {
            throw .corruptEntry(account: account)
        }
        do {
            return try tpm.unseal(Array(parts.dropFirst(Self.magic.count)), authorisation: SecretBytes([]))
        } catch {
            throw Self.keystoreError(error, account: account)
        }
    }

    public func storeIfAbsent(_ secret: SecretBytes, for account: String) throws(KeystoreError) -> SecretBytes {
        try AccountName.validate(account)
        let parts = try sealed(secret, account: account)
        do {
            try PrivateFiles.createDirectory(directory)
            try PrivateFiles.write(parts, to: path(account), exclusive: true)
            return secret
        } catch .alreadyExists {
            guard let existing = try self.secret(for: account) else { throw .corruptEntry(account: account) }
            return existing
        } catch {
            throw .unreachable(.tpm2, error.description)
        }
    }

    public func replaceSecret(_ secret: SecretBytes, for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        let parts = try sealed(secret, account: account)
        do {
            try PrivateFiles.createDirectory(directory)
            try PrivateFiles.write(parts, to: path(account))
        } catch {
            throw .unreachable(.tpm2, error.description)
        }
    }

    public func deleteSecret(for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        do {
            try PrivateFiles.remove(path(account))
        } catch {
            throw .unreachable(.tpm2, error.description)
        }
    }

    // MARK: PIN-held entries

    /// The TPM's dictionary-attack state, as PIN-held entries meet it.
    public struct LockoutState: Sendable, Equatable {
        /// Whether the TPM checks no PIN now.
        public let inLockout: Bool
        /// Wrong authorisations counted and not yet forgotten.
        public let failures: UInt32
        /// The count at which the TPM locks out.
        public let maximumFailures: UInt32
        /// Seconds after which one failure is forgotten.
        public let recoverySeconds: UInt32
    }

    /// Reads the TPM's dictionary-attack state (no authorisation needed).
    public func lockoutState() throws(KeystoreError) -> LockoutState {
        do {
            let state = try tpm.dictionaryAttackState()
            return LockoutState(
                inLockout: state.inLockout, failures: state.failures, maximumFailures: state.maximumFailures,
                recoverySeconds: state.recoverySeconds)
        } catch {
            throw Self.keystoreError(error, account: "")
        }
    }

    /// Whether there is an entry for `account`, answered from the directory alone (no TPM call): which PIN-held keys
    /// this machine holds, known before a PIN is asked.
    public func containsEntry(for account: String) -> Bool {
        (try? AccountName.validate(account)) != nil && PrivateFiles.exists(path(account))
    }

    /// Seals `secret` behind `authorisation` (a PIN's derived value, at most 64 bytes) with the TPM's
    /// dictionary-attack protection: the TPM checks and counts every wrong one. Never replaces an entry.
    public func storePINHeld(_ secret: SecretBytes, authorisation: SecretBytes, for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        let parts: [UInt8]
        do {
            parts = Self.magic + (try tpm.seal(secret, authorisation: authorisation, dictionaryProtected: true))
        } catch {
            throw Self.keystoreError(error, account: account)
        }
        do {
            try PrivateFiles.createDirectory(directory)
            try PrivateFiles.write(parts, to: path(account), exclusive: true)
        } catch {
            throw .unreachable(.tpm2, error.description)
        }
    }

    /// What can be known of a PIN-held entry before its PIN is asked: that this TPM can load it
    /// (`.sealedElsewhere` when another TPM sealed it) and is not in lockout (`.pinLockout`).
    public func checkPINHeld(for account: String) throws(KeystoreError) {
        let parts = try sealedParts(account)
        let state: TPM2.DictionaryAttackState
        do {
            state = try tpm.dictionaryAttackState()
        } catch {
            throw Self.keystoreError(error, account: account)
        }
        if state.inLockout { throw .pinLockout(recoverySeconds: state.recoverySeconds) }
        do {
            try tpm.checkLoads(parts)
        } catch {
            throw Self.keystoreError(error, account: account)
        }
    }

    /// Opens a PIN-held entry with `authorisation`. A wrong one is refused and counted by the TPM (`.pinRefused`,
    /// with the tries left before lockout); a TPM in lockout checks nothing (`.pinLockout`).
    public func pinHeldSecret(for account: String, authorisation: SecretBytes) throws(KeystoreError) -> SecretBytes {
        let parts = try sealedParts(account)
        do {
            return try tpm.unseal(parts, authorisation: authorisation)
        } catch .wrongAuthorisation {
            let state = try? tpm.dictionaryAttackState()
            let left = state.map { $0.inLockout ? 0 : $0.maximumFailures - min($0.failures, $0.maximumFailures) } ?? 0
            throw .pinRefused(triesLeft: left, recoverySeconds: state?.recoverySeconds ?? 0)
        } catch .lockout {
            throw .pinLockout(recoverySeconds: (try? tpm.dictionaryAttackState())?.recoverySeconds ?? 0)
        } catch {
            throw Self.keystoreError(error, account: account)
        }
    }

    /// The sealed parts of an existing entry; a missing one is damage here (the caller found it before).
    private func sealedParts(_ account: String) throws(KeystoreError) -> [UInt8] {
        try AccountName.validate(account)
        let parts: [UInt8]
        do {
            parts = try PrivateFiles.read(path(account), limit: 4096)
        } catch {
            throw .unreachable(.tpm2, error.description)
        }
        guard parts.count > Self.magic.count, Array(parts.prefix(Self.magic.count)) == Self.magic else {
            throw .corruptEntry(account: account)
        }
        return Array(parts.dropFirst(Self.magic.count))
    }

    private func sealed(_ secret: SecretBytes, account: String) throws(KeystoreError) -> [UInt8] {
        do {
            return Self.magic + (try tpm.seal(secret, authorisation: SecretBytes([]), dictionaryProtected: false))
        } catch {
            throw Self.keystoreError(error, account: account)
        }
    }

    private func path(_ account: String) -> String { "\(directory)/\(account).tpm2" }

    static func keystoreError(_ failure: TPM2.Failure, account: String) -> KeystoreError {
        switch failure {
        case .foreign: return .sealedElsewhere(.tpm2)
        case .damaged: return .corruptEntry(account: account)
        case .lockout: return .locked(.tpm2)
        default: return .unreachable(.tpm2, reason(failure))
        }
    }

    static func reason(_ failure: TPM2.Failure) -> String {
        switch failure {
        case .unreachable(let reason): return reason
        case .lockout: return "the TPM is in dictionary-attack lockout"
        case .wrongAuthorisation: return "the TPM refused the authorisation"
        case .foreign: return "the entry was sealed by another machine's TPM"
        case .damaged: return "the entry is damaged"
        case .failed(let reason, _): return reason
        }
    }
}
