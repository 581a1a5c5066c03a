#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Memory that held a secret.
public enum SecureMemory {
    /// Overwrites `memory` with zeros through the C library's call for it (`explicit_bzero`, `memset_s`), which the
    /// optimiser may not drop as a dead store.
    public static func zero(_ memory: UnsafeMutableRawBufferPointer) {
        guard let base = memory.baseAddress, memory.count > 0 else { return }
        #if canImport(Darwin)
        _ = memset_s(base, memory.count, 0, memory.count)
        #else
        explicit_bzero(base, memory.count)
        #endif
    }
}
