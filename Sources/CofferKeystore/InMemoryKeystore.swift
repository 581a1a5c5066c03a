import CofferCrypto
import CofferPlatform

/// A key store that lives only as long as the process: for tests, which can also make it locked or unreachable.
public final class InMemoryKeystore: DeviceKeystore, @unchecked Sendable {
    // Both guarded by `lock`.
    private var entries: [String: SecretBytes] = [:]
    private var state = KeystoreStatus.available
    private let lock = Lock()

    /// An empty, available store.
    public init() {}

    public var kind: KeystoreKind { .memory }

    public func status() -> KeystoreStatus { lock.withLock { state } }

    /// Makes every later call answer as a store in `state` would (tests of locked and unreachable stores).
    public func setStatus(_ state: KeystoreStatus) {
        lock.withLock { self.state = state }
    }

    public func secret(for account: String) throws(KeystoreError) -> SecretBytes? {
        try AccountName.validate(account)
        return try guarded { entries[account] }
    }

    public func storeIfAbsent(_ secret: SecretBytes, for account: String) throws(KeystoreError) -> SecretBytes {
        try AccountName.validate(account)
        return try guarded {
            if let existing = entries[account] { return existing }
            entries[account] = secret
            return secret
        }
    }

    public func replaceSecret(_ secret: SecretBytes, for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        try guarded { entries[account] = secret }
    }

    public func deleteSecret(for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        try guarded { _ = entries.removeValue(forKey: account) }
    }

    /// Runs `body` under the lock when the store is available; otherwise fails as that state does.
    private func guarded<Result>(_ body: () -> Result) throws(KeystoreError) -> Result {
        let outcome: Result? = lock.withLock {
            guard state == .available else { return nil }
            return body()
        }
        if let outcome { return outcome }
        switch status() {
        case .locked: throw .locked(.memory)
        case .unreachable(let reason): throw .unreachable(.memory, reason)
        case .available: return try guarded(body)
        }
    }
}
