import CofferCrypto
import CofferPlatform

/// Opens the key store of a kind the way the command line does, from the process environment.
public enum Keystores {
    /// The store of `kind` for a user whose data directory is `dataDirectory` (`$XDG_DATA_HOME/coffer`).
    /// `.keychain` is unreachable off Apple platforms; `.memory` is a fresh, empty store.
    public static func open(_ kind: KeystoreKind, dataDirectory: String) -> any DeviceKeystore {
        switch kind {
        case .file: return FileKeystore(directory: "\(dataDirectory)/keystore")
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

    /// The OS's own store when it answers now (the keychain on Apple systems; the Secret Service elsewhere, when
    /// there is a session bus), else the file store: what `--keystore auto` picks when a vault is created.
    public static func automatic(dataDirectory: String, sessionBus: Bool) -> any DeviceKeystore {
        #if canImport(Security)
        let preferred: (any DeviceKeystore)? = open(.keychain, dataDirectory: dataDirectory)
        #else
        let preferred: (any DeviceKeystore)? = sessionBus ? open(.secretService, dataDirectory: dataDirectory) : nil
        #endif
        if let preferred, preferred.status() == .available { return preferred }
        return open(.file, dataDirectory: dataDirectory)
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
