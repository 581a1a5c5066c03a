#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The kernel's CSPRNG, read straight into a buffer.
public enum SystemEntropy {
    /// Fills `buffer` through `getentropy` (getrandom(2) on Linux), 256 bytes a call: a box's 12-byte nonce is one
    /// system call, where `SystemRandomNumberGenerator` makes one per 8 bytes.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            let take = min(256, buffer.count - offset)
            // getentropy fails only for a length above 256 or a bad address, neither possible here; a kernel without
            // getrandom predates what Coffer supports.
            precondition(getentropy(base + offset, take) == 0, "the kernel's random source failed")
            offset += take
        }
    }
}
