import CofferCrypto
import CofferPlatform

/// Opens the key store of a kind the way the command line does, from the process environment.
public enum Keystores {
    /// The store of `kind` for a user whose data directory is `dataDirectory` (`$XDG_DATA_HOME/coffer`).
    /// `.keychain` is unreachable off Apple platforms; `.memory` is a fresh, empty store; `.tpm2` reaches the TPM
    /// through the TCTI `tpmTCTI` (`COFFER_TPM_TCTI`, default `device:/dev/tpmrm0`).
    public static func open(_ kind: KeystoreKind, dataDirectory: String, tpmTCTI: String) -> any DeviceKeystore {
        switch kind {
        case .file: return FileKeystore(directory: "\(dataDirectory)/keystore")
        case .tpm2:
            return TPM2Keystore(directory: "\(dataDirectory)/tpm2", tcti: tpmTCTI)
        case .secretService: return SecretServiceKeystore(lockPath: "\(dataDirectory)/secret-service.lock")
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
    public static func automatic(dataDirectory: String, sessionBus: Bool, tpmTCTI: String) -> any DeviceKeystore {
        #if canImport(Security)
        let candidates: [KeystoreKind] = [.keychain]
        #else
        let candidates: [KeystoreKind] = (sessionBus ? [.secretService] : []) + [.tpm2]
        #endif
        for kind in candidates {
            let store = open(kind, dataDirectory: dataDirectory, tpmTCTI: tpmTCTI)
            if store.status() == .available { return store }
        }
        return open(.file, dataDirectory: dataDirectory, tpmTCTI: tpmTCTI)
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
