import CofferCrypto
import CofferPlatform

/// Why the device key store could not answer. Descriptions never include a secret.
public enum KeystoreError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidAccountName
    case corruptEntry(account: String)
    case unavailable(String)

    public var description: String {
        switch self {
        case .invalidAccountName: return "invalid key store account name"
        case .corruptEntry(let account): return "the device key store entry \(account) is damaged"
        case .unavailable(let reason): return "the device key store is unavailable: \(reason)"
        }
    }
}

/// Where a device keeps secrets that must never leave it: the device slot's key and the PIN device secret.
///
/// Implementations: `FileKeystore` (Linux default, owner-only files), `InMemoryKeystore` (tests). The Secret
/// Service (libsecret) and the Apple Keychain fit the same three calls.
public protocol DeviceKeystore: Sendable {
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

/// A key store of owner-only files, one per account, in a 0700 directory (by default
/// `$XDG_DATA_HOME/coffer/keystore`). It protects against other users, not against root or a copied home
/// directory; it is kept apart from the vault directory so that copying or backing up a vault never copies it.
public struct FileKeystore: DeviceKeystore {
    /// Directory holding the entries.
    public let directory: String

    static let magic: [UInt8] = Array("CKS1".utf8)

    public init(directory: String) {
        self.directory = directory
    }

    public func secret(for account: String) throws(KeystoreError) -> SecretBytes? {
        try AccountName.validate(account)
        var raw: [UInt8]
        do {
            raw = try PrivateFiles.read(path(account), limit: 4096)
        } catch .notFound {
            return nil
        } catch {
            throw .unavailable(error.description)
        }
        defer { raw.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        guard raw.count > Self.magic.count, Array(raw.prefix(Self.magic.count)) == Self.magic else {
            throw .corruptEntry(account: account)
        }
        return SecretBytes(raw.dropFirst(Self.magic.count))
    }

    public func storeIfAbsent(_ secret: SecretBytes, for account: String) throws(KeystoreError) -> SecretBytes {
        try AccountName.validate(account)
        do {
            try PrivateFiles.createDirectory(directory)
            var raw = secret.withUnsafeBytes { Self.magic + Array($0) }
            defer { raw.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
            try PrivateFiles.write(raw, to: path(account), exclusive: true)
            return secret
        } catch .alreadyExists {
            guard let existing = try self.secret(for: account) else { throw .corruptEntry(account: account) }
            return existing
        } catch {
            throw .unavailable(error.description)
        }
    }

    public func replaceSecret(_ secret: SecretBytes, for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        do {
            try PrivateFiles.createDirectory(directory)
            var raw = secret.withUnsafeBytes { Self.magic + Array($0) }
            defer { raw.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
            try PrivateFiles.write(raw, to: path(account))
        } catch {
            throw .unavailable(error.description)
        }
    }

    public func deleteSecret(for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        do {
            try PrivateFiles.remove(path(account))
        } catch {
            throw .unavailable(error.description)
        }
    }

    private func path(_ account: String) -> String { "\(directory)/\(account).key" }
}

/// A key store that lives only as long as the process: for tests.
public final class InMemoryKeystore: DeviceKeystore, @unchecked Sendable {
    // Guarded by `lock`.
    private var entries: [String: SecretBytes] = [:]
    private let lock = Lock()

    public init() {}

    public func secret(for account: String) throws(KeystoreError) -> SecretBytes? {
        try AccountName.validate(account)
        return lock.withLock { entries[account] }
    }

    public func storeIfAbsent(_ secret: SecretBytes, for account: String) throws(KeystoreError) -> SecretBytes {
        try AccountName.validate(account)
        return lock.withLock {
            if let existing = entries[account] { return existing }
            entries[account] = secret
            return secret
        }
    }

    public func replaceSecret(_ secret: SecretBytes, for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        lock.withLock { entries[account] = secret }
    }

    public func deleteSecret(for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        lock.withLock { _ = entries.removeValue(forKey: account) }
    }
}
