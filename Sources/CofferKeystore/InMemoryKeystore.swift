import CofferCrypto
import Synchronization

/// A key store that lives only as long as the process: for tests, which can also make it locked or unreachable.
public final class InMemoryKeystore: DeviceKeystore, Sendable {
    private struct Contents {
        var entries: [String: SecretBytes] = [:]
        var state = KeystoreStatus.available
    }

    private let contents = Mutex(Contents())

    /// An empty, available store.
    public init() {}

    public var kind: KeystoreKind { .memory }

    public func status() -> KeystoreStatus { contents.withLock { $0.state } }

    /// Makes every later call answer as a store in `state` would (tests of locked and unreachable stores).
    public func setStatus(_ state: KeystoreStatus) {
        contents.withLock { $0.state = state }
    }

    public func secret(for account: String) throws(KeystoreError) -> SecretBytes? {
        try AccountName.validate(account)
        return try guarded { $0.entries[account] }
    }

    public func storeIfAbsent(_ secret: SecretBytes, for account: String) throws(KeystoreError) -> SecretBytes {
        try AccountName.validate(account)
        return try guarded {
            if let existing = $0.entries[account] { return existing }
            $0.entries[account] = secret
            return secret
        }
    }

    public func replaceSecret(_ secret: SecretBytes, for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        try guarded { $0.entries[account] = secret }
    }

    public func deleteSecret(for account: String) throws(KeystoreError) {
        try AccountName.validate(account)
        try guarded { _ = $0.entries.removeValue(forKey: account) }
    }

    /// Runs `body` under the lock when the store is available; otherwise fails as that state does.
    private func guarded<Result: Sendable>(_ body: (inout Contents) -> Result) throws(KeystoreError) -> Result {
        let outcome: Result? = contents.withLock { contents in
            guard contents.state == .available else { return nil }
            return body(&contents)
        }
        if let outcome { return outcome }
        switch status() {
        case .locked: throw .locked(.memory)
        case .unreachable(let reason): throw .unreachable(.memory, reason)
        case .available: return try guarded(body)
        }
    }
}
