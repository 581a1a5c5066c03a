import CofferCrypto
import CofferPlatform

/// A key store of owner-only files, one per account, in a 0700 directory (by default
/// `$XDG_STATE_HOME/coffer/keystore`). It protects against other users, not against root or a copied home
/// directory; it is kept apart from the data directory so that copying or backing up a vault's folder never copies it.
public struct FileKeystore: DeviceKeystore {
    /// Directory holding the entries.
    public let directory: String
    /// Where an older Coffer kept the entries (`$XDG_DATA_HOME/coffer/keystore`, beside the vault): an entry found
    /// only there is moved to `directory` when it is first read.
    public let formerDirectory: String?

    static let magic: [UInt8] = Array("CKS1".utf8)

    public init(directory: String, formerDirectory: String? = nil) {
        self.directory = directory
        self.formerDirectory = formerDirectory
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
        if let entry = try Self.read(path(account), account: account) { return entry }
        return try movedFromFormerDirectory(account)
    }

    public func storeIfAbsent(_ secret: SecretBytes, for account: String) throws(KeystoreError) -> SecretBytes {
        try AccountName.validate(account)
        if let moved = try movedFromFormerDirectory(account) { return moved }
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
            if let formerDirectory { try PrivateFiles.remove("\(formerDirectory)/\(account).key") }
        } catch {
            throw .unreachable(.file, error.description)
        }
    }

    private func path(_ account: String) -> String { "\(directory)/\(account).key" }

    /// An entry an older Coffer left beside the vault, moved here: written to `directory` (unless another process
    /// moved it first), then removed from the former place, so that a copy of the data directory no longer carries it.
    private func movedFromFormerDirectory(_ account: String) throws(KeystoreError) -> SecretBytes? {
        guard let formerDirectory else { return nil }
        let former = "\(formerDirectory)/\(account).key"
        guard let entry = try Self.read(former, account: account) else { return nil }
        do {
            try PrivateFiles.createDirectory(directory)
            var raw = entry.withUnsafeBytes { Self.magic + Array($0) }
            defer { raw.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
            try PrivateFiles.write(raw, to: path(account), exclusive: true)
        } catch .alreadyExists {
            guard let moved = try Self.read(path(account), account: account) else { throw .corruptEntry(account: account) }
            guard moved.isEqual(to: entry) else { return moved }
        } catch {
            throw .unreachable(.file, error.description)
        }
        do {
            try PrivateFiles.remove(former)
        } catch {
            throw .unreachable(.file, error.description)
        }
        return entry
    }

    /// The entry in the file at `path`, or nil when there is none.
    private static func read(_ path: String, account: String) throws(KeystoreError) -> SecretBytes? {
        var raw: [UInt8]
        do {
            raw = try PrivateFiles.read(path, limit: 4096)
        } catch .notFound {
            return nil
        } catch {
            throw .unreachable(.file, error.description)
        }
        defer { raw.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        guard raw.count > magic.count, Array(raw.prefix(magic.count)) == magic else {
            throw .corruptEntry(account: account)
        }
        return SecretBytes(raw.dropFirst(magic.count))
    }
}
