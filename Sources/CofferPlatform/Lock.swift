import Foundation

/// A mutual-exclusion lock for the few places that guard shared mutable state synchronously.
public final class Lock: @unchecked Sendable {
    private let lock = NSLock()

    public init() {}

    /// Runs `body` while holding the lock.
    public func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
