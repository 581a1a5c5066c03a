import CofferPlatform

/// Bytes that must not outlive their use: keys, passphrases, seeds, PINs.
///
/// The buffer is private to the instance, zeroed when the last reference goes away (with a write the optimiser
/// cannot drop), and never shown by `description`, `debugDescription` or reflection.
public final class SecretBytes: @unchecked Sendable {
    // Immutable after init, so sharing across threads is safe.
    private let buffer: UnsafeMutableRawBufferPointer

    /// Copies `bytes` into fresh private storage. The caller remains responsible for its own copy.
    public init<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        _ = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<bytes.count]).initializeMemory(as: UInt8.self, from: bytes)
        count = bytes.count
    }

    /// Fills `count` bytes from `random`.
    public init(randomCount count: Int, using random: some RandomSource = SystemRandom()) {
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        random.fill(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
        self.count = count
    }

    /// Takes the UTF-8 bytes of `text`.
    public convenience init(utf8 text: String) {
        self.init(Array(text.utf8))
    }

    deinit {
        Self.wipe(buffer)
        buffer.deallocate()
    }

    /// Number of secret bytes.
    public let count: Int

    /// Calls `body` with a read-only view of the bytes. Do not let the pointer escape.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// A copy as an array, for APIs that need one. Prefer `withUnsafeBytes`.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Constant-time comparison.
    public func isEqual(to other: SecretBytes) -> Bool {
        withUnsafeBytes { mine in other.withUnsafeBytes { theirs in ConstantTime.equal(mine, theirs) } }
    }

    /// Overwrites memory with zeros in a way the compiler must keep.
    public static func wipe(_ memory: UnsafeMutableRawBufferPointer) {
        SecureMemory.zero(memory)
    }
}

extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SecretBytes(\(count) bytes)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
