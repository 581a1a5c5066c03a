#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's resource limits a server sizes itself by.
public enum ProcessLimits {
    /// The soft limit on open file descriptors (`RLIMIT_NOFILE`); nil when unlimited or unknown.
    public static var openFiles: Int? {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    #if canImport(Glibc) || canImport(Musl)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}
