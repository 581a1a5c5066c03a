#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The session and controlling terminal this process belongs to.
public enum ProcessSession {
    /// Starts a new session with this process as its leader (`setsid`), without a controlling terminal: what a
    /// process that must outlive the terminal it was started from (the agent, the clipboard restorer) does first.
    /// Fails harmlessly when this process already leads a process group.
    public static func detachFromTerminal() {
        _ = setsid()
    }
}
