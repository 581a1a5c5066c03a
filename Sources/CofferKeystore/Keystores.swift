import CofferCrypto
import CofferPlatform

/// Where the key stores of one user keep their files.
public struct KeystoreDirectories: Sendable, Equatable {
    /// The data directory (`$XDG_DATA_HOME/coffer`): the TPM's sealed entries and the Secret Service's lock, which
    /// are worthless away from this machine or its keyring.
    public var data: String
    /// The state directory (`$XDG_STATE_HOME/coffer`): the file store's keys, apart from the vault so that a copy of
    /// the data directory carries no key.
    public var state: String

    public init(data: String, state: String) {
        self.data = data
        self.state = state
    }

    /// The directories the environment names (the XDG base-directory rules).
    public static func standard(environment: [String: String]) -> KeystoreDirectories {
        KeystoreDirectories(
            data: DataLocations.dataDirectory(environment: environment), state: DataLocations.stateDirectory(environment: environment))
    }

    /// The file store's directory.
    public var fileStore: String { "\(state)/keystore" }

    /// Where the file store kept its keys before version 1.14 (beside the vault), read and moved on first use.
    public var formerFileStore: String { "\(data)/keystore" }
}

/// Opens the key store of a kind the way the command line does, from the process environment.
public enum Keystores {
    /// The store of `kind` for a user whose directories are `directories`. `.keychain` is unreachable off Apple
    /// platforms; `.memory` is a fresh, empty store; `.tpm2` reaches the TPM through the TCTI `tpmTCTI`
    /// (`COFFER_TPM_TCTI`, default `device:/dev/tpmrm0`).
    public static func open(_ kind: KeystoreKind, directories: KeystoreDirectories, tpmTCTI: String) -> any DeviceKeystore {
        switch kind {
        case .file: return FileKeystore(directory: directories.fileStore, formerDirectory: directories.formerFileStore)
        case .tpm2:
            return TPM2Keystore(directory: "\(directories.data)/tpm2", tcti: tpmTCTI)
        case .secretService: return SecretServiceKeystore(lockPath: "\(directories.data)/secret-service.lock")
        case .keychain:
            #if canImport(Security)
            return KeychainKeystore()
            #else
            return UnreachableKeystore(kind: .keychain, reason: "there is no keychain on this system")
            #endif
        case .memory: return InMemoryKeystore()
        }
    }

    /// What `--keystore auto` picks when a vault is created: the first that answers now of the OS's own store (the
    /// keychain on Apple systems; the Secret Service elsewhere, when there is a session bus and its collection is
    /// unlocked) and this machine's TPM; else the file store.
    public static func automatic(directories: KeystoreDirectories, sessionBus: Bool, tpmTCTI: String) -> any DeviceKeystore {
        #if canImport(Security)
        let candidates: [KeystoreKind] = [.keychain]
        #else
        let candidates: [KeystoreKind] = (sessionBus ? [.secretService] : []) + [.tpm2]
        #endif
        for kind in candidates {
            let store = open(kind, directories: directories, tpmTCTI: tpmTCTI)
            if store.status() == .available { return store }
        }
        return open(.file, directories: directories, tpmTCTI: tpmTCTI)
    }
}

/// A store that cannot exist here: every call answers `.unreachable`, never "absent".
struct UnreachableKeystore: DeviceKeystore {
    let kind: KeystoreKind
    let reason: String

    func status() -> KeystoreStatus { .unreachable(reason) }
    func secret(for account: String) throws(KeystoreError) -> SecretBytes? { throw .unreachable(kind, reason) }
    func storeIfAbsent(_ secret: SecretBytes, for account: String) throws(KeystoreError) -> SecretBytes {
        throw .unreachable(kind, reason)
    }
    func replaceSecret(_ secret: SecretBytes, for account: String) throws(KeystoreError) { throw .unreachable(kind, reason) }
    func deleteSecret(for account: String) throws(KeystoreError) { throw .unreachable(kind, reason) }
}
