import CofferCrypto
import CofferPlatform

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

    public var kind: KeystoreKind { .file }

    /// Available while the directory is (or can be made) a private directory; files are never locked.
    public func status() -> KeystoreStatus {
        do {
            try PrivateFiles.createDirectory(directory)
            return .available
        } catch {
            return .unreachable(error.description)
        }
    }

    public func secret(for account: String) throws(KeystoreError) -> SecretBytes? {
        try AccountName.validate(account)
        var raw: [UInt8]
        do {
            raw = try PrivateFiles.read(path(account), limit: 4096)
        } catch .notFound {
            return nil
        } catch {
            throw .unreachable(.file, error.description)
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
            throw .unreachable(.file, error.description)
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
            throw .unreachable(.file, error.description)
        }
    }

    public func deleteSecret(for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        do {
            try PrivateFiles.remove(path(account))
        } catch {
            throw .unreachable(.file, error.description)
        }
    }

    private func path(_ account: String) -> String { "\(directory)/\(account).key" }
}

