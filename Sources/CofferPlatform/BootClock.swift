#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Milliseconds on a clock that keeps counting while the machine is suspended: `CLOCK_BOOTTIME` on Linux,
/// `CLOCK_MONOTONIC` on Apple systems (which counts sleep there; `CLOCK_UPTIME_RAW` does not). The one place that
/// chooses it: a clock that stops during suspend would keep a vault unlocked through a night with the lid closed.
public enum BootClock {
    public static func milliseconds() -> UInt64 {
        var now = timespec()
        #if canImport(Darwin)
        clock_gettime(CLOCK_MONOTONIC, &now)
        #else
        clock_gettime(CLOCK_BOOTTIME, &now)
        #endif
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
    }
}
