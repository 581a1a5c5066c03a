import CofferCrypto
import CofferPlatform

/// Why a device key store could not answer. A store that is locked or out of reach says so: it never answers "no
/// such entry", because that answer makes a caller create a new key (and a vault would then lose its device slot).
/// Descriptions never include a secret.
public enum KeystoreError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidAccountName
    case corruptEntry(account: String)
    /// The store is there but locked (a Secret Service collection not yet unlocked, a locked keychain).
    case locked(KeystoreKind)
    /// The store cannot be reached: no session bus, no provider, no library, an I/O error.
    case unreachable(KeystoreKind, String)
    /// The entry is there but was sealed by another machine's TPM (a copied home directory): it opens only there.
    case sealedElsewhere(KeystoreKind)
    /// The TPM refused the PIN of a PIN-held entry and counted it; `triesLeft` more wrong PINs put it in lockout,
    /// and it forgets one every `recoverySeconds`.
    case pinRefused(triesLeft: UInt32, recoverySeconds: UInt32)
    /// The TPM is in dictionary-attack lockout after too many wrong PINs: it checks no PIN until one failure is
    /// forgotten (one every `recoverySeconds`) or its owner clears the lockout.
    case pinLockout(recoverySeconds: UInt32)

    public var description: String {
        switch self {
        case .invalidAccountName: return "invalid key store account name"
        case .corruptEntry(let account): return "the device key store entry \(account) is damaged"
        case .locked(let kind): return "the \(kind.displayName) is locked"
        case .unreachable(let kind, let reason): return "the \(kind.displayName) is unavailable: \(reason)"
        case .sealedElsewhere: return "this vault's key on this device was sealed by another machine's TPM, and opens only there"
        case .pinRefused(0, _): return "wrong PIN; the TPM counted it and is now locked out (too many wrong PINs)"
        case .pinRefused(let left, _):
            return "wrong PIN; the TPM counted it: \(left) more wrong PIN\(left == 1 ? "" : "s") and it locks out"
        case .pinLockout: return "the TPM is locked out after too many wrong PINs, and checks no PIN now"
        }
    }
}

/// The kinds of device key store, by the name `--keystore`, `COFFER_KEYSTORE` and the device record use.
public enum KeystoreKind: String, Sendable, CaseIterable, Codable {
    /// Owner-only files in `$XDG_STATE_HOME/coffer/keystore`: servers and headless machines.
    case file
    /// The freedesktop Secret Service (GNOME Keyring, KWallet, KeePassXC) through libsecret.
    case secretService = "secret-service"
    /// The Apple data-protection keychain.
    case keychain
    /// Entries sealed by this machine's TPM 2.0, kept as files that load only in that TPM.
    case tpm2
    /// Process memory: tests and programs that keep no key.
    case memory

    /// How messages name the store.
    public var displayName: String {
        switch self {
        case .file: return "file key store"
        case .secretService: return "Secret Service key store"
        case .keychain: return "keychain"
        case .tpm2: return "TPM key store"
        case .memory: return "in-memory key store"
        }
    }
}

/// Whether a store can answer now.
public enum KeystoreStatus: Sendable, Equatable {
    /// It answers: found or absent are real answers.
    case available
    /// It holds entries but will not give them until unlocked.
    case locked
    /// It cannot be reached, for the reason given (never a value).
    case unreachable(String)

    /// The word `coffer keystore status` prints.
    public var name: String {
        switch self {
        case .available: return "available"
        case .locked: return "locked"
        case .unreachable: return "unreachable"
        }
    }
}

/// Where a device keeps secrets that must never leave it: the device slot's key, the PIN device secret, the sync
/// token.
///
/// Every call tells four answers apart: found (a value), absent (nil, or nothing to delete), locked
/// (`KeystoreError.locked`) and unreachable (`KeystoreError.unreachable`). Implementations: `FileKeystore`,
/// `SecretServiceKeystore`, `KeychainKeystore` (Apple), `InMemoryKeystore` (tests); `KeystoreContract` in the tests
/// holds every one of them to the same rules.
public protocol DeviceKeystore: Sendable {
    /// Which kind of store this is.
    var kind: KeystoreKind { get }
    /// Whether the store can answer now, without changing anything and without a prompt.
    func status() -> KeystoreStatus
    /// The secret stored under `account`, or nil when there is none.
    func secret(for account: String) throws(KeystoreError) -> SecretBytes?
    /// Stores `secret` under `account` unless one exists; returns the secret that is stored afterwards, so two
    /// processes racing to create an entry end up with the same one.
    func storeIfAbsent(_ secret: SecretBytes, for account: String) throws(KeystoreError) -> SecretBytes
    /// Stores `secret` under `account`, atomically replacing any entry (key rotation).
    func replaceSecret(_ secret: SecretBytes, for account: String) throws(KeystoreError)
    /// Removes the entry (no error when there is none).
    func deleteSecret(for account: String) throws(KeystoreError)
}

extension DeviceKeystore {
    /// The secret under `account`, creating a random 32-byte one first when there is none.
    public func secretCreatingIfAbsent(for account: String, random: some RandomSource = SystemRandom()) throws(KeystoreError) -> SecretBytes {
        if let existing = try secret(for: account) { return existing }
        return try storeIfAbsent(SecretBytes(randomCount: 32, using: random), for: account)
    }
}

enum AccountName {
    /// Account names become file names: letters, digits, `.`, `_`, `-`, 1–128 characters, not starting with a dot.
    static func validate(_ account: String) throws(KeystoreError) {
        let utf8 = Array(account.utf8)
        guard !utf8.isEmpty, utf8.count <= 128, utf8.first != UInt8(ascii: "."),
            utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            })
        else { throw .invalidAccountName }
    }
}
