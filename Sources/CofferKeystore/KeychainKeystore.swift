#if canImport(Security)
import CofferCrypto
import Foundation
import Security

/// The Apple data-protection keychain: generic passwords of the service `app.coffer.keystore`, one per account,
/// readable only on this device while it is unlocked (`WhenUnlockedThisDeviceOnly`), never synchronised through
/// iCloud. Create-if-absent is `SecItemAdd`; on a duplicate the existing item is read, never updated.
///
/// Errors map as the Keychain documents them: item not found → absent; interaction not allowed (the device is
/// locked) → `.locked`; anything else, including -34018 (a tool without the keychain entitlement) → `.unreachable`.
public struct KeychainKeystore: DeviceKeystore {
    static let service = "app.coffer.keystore"

    /// The keychain of the user running this process.
    public init() {}

    public var kind: KeystoreKind { .keychain }

    /// Probes with a lookup of an account that is never stored: not found means the keychain answers.
    public func status() -> KeystoreStatus {
        do {
            _ = try secret(for: "coffer-status-probe")
            return .available
        } catch {
            if case .locked = error { return .locked }
            return .unreachable(error.description)
        }
    }

    public func secret(for account: String) throws(KeystoreError) -> SecretBytes? {
        try AccountName.validate(account)
        var query = Self.query(account)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        try Self.check(status)
        guard var data = result as? Data else { throw .corruptEntry(account: account) }
        defer { data.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        return SecretBytes(data)
    }

    public func storeIfAbsent(_ secret: SecretBytes, for account: String) throws(KeystoreError) -> SecretBytes {
        try AccountName.validate(account)
        var item = Self.query(account)
        item[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        item[kSecValueData as String] = Data(secret.bytes)
        let status = SecItemAdd(item as CFDictionary, nil)
        if status == errSecDuplicateItem {
            guard let existing = try self.secret(for: account) else { throw .corruptEntry(account: account) }
            return existing
        }
        try Self.check(status)
        return secret
    }

    public func replaceSecret(_ secret: SecretBytes, for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        let status = SecItemUpdate(
            Self.query(account) as CFDictionary, [kSecValueData as String: Data(secret.bytes)] as CFDictionary)
        if status == errSecItemNotFound {
            _ = try storeIfAbsent(secret, for: account)
            return
        }
        try Self.check(status)
    }

    public func deleteSecret(for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        let status = SecItemDelete(Self.query(account) as CFDictionary)
        if status == errSecItemNotFound { return }
        try Self.check(status)
    }

    /// The attributes that name one entry: device-only, not synchronised, in the data-protection keychain.
    static func query(_ account: String) -> [String: Any] {
        [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecAttrSynchronizable as String: false,
            kSecUseDataProtectionKeychain as String: true,
        ]
    }

    static func check(_ status: OSStatus) throws(KeystoreError) {
        switch status {
        case errSecSuccess: return
        case errSecInteractionNotAllowed: throw .locked(.keychain)
        default:
            let message = SecCopyErrorMessageString(status, nil) as String? ?? "OSStatus \(status)"
            throw .unreachable(.keychain, message)
        }
    }
}
#endif
