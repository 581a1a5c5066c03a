#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive advisory lock (`flock`) on a 0600 file, held across processes for the length of a closure: the
/// key stores whose own API has no create-if-absent (the Secret Service) take it around their search-then-create.
/// The kernel drops the lock when the process dies, so a killed holder never blocks the next one.
public enum FileLock {
    /// Runs `body` while holding the lock on `path` (created 0600, with its directory 0700, when missing).
    public static func withLock<Result, Failure: Error>(
        _ path: String, _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try? PrivateFiles.createDirectory(PrivateFiles.parentDirectory(of: path))
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, mode_t(PrivateFiles.fileMode))
        // Without a lock file the caller still runs: the lock narrows a race, it does not guard data on disk.
        guard descriptor >= 0 else { return try body() }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }
}
