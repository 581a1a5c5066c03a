#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The running program, and whether a program installed beside it may be run.
public enum Executables {
    /// The path of this process's executable, symbolic links resolved; nil when the system cannot say (Linux without
    /// /proc).
    public static func current() -> String? {
        #if canImport(Darwin)
        var size: UInt32 = 0
        _ = _NSGetExecutablePath(nil, &size)
        var path = [CChar](repeating: 0, count: Int(size) + 1)
        guard _NSGetExecutablePath(&path, &size) == 0, let resolved = realpath(path, nil) else { return nil }
        #else
        guard let resolved = realpath("/proc/self/exe", nil) else { return nil }
        #endif
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether `path` may be run as a program installed with this one: a regular file that this user can execute,
    /// which, like the directory holding it, is owned by root or by this user and writable by no one else (what ssh's
    /// StrictModes asks of its files). A program another user could have put or changed there would get the vault.
    public static func isTrustedProgram(_ path: String) -> Bool {
        guard access(path, X_OK) == 0, let file = status(path), file.st_mode & S_IFMT == S_IFREG, ownedAndGuarded(file),
            let directory = status(PrivateFiles.parentDirectory(of: path)), ownedAndGuarded(directory)
        else { return false }
        return true
    }

    private static func status(_ path: String) -> stat? {
        var info = stat()
        return stat(path, &info) == 0 ? info : nil
    }

    private static func ownedAndGuarded(_ info: stat) -> Bool {
        (info.st_uid == 0 || info.st_uid == geteuid()) && info.st_mode & (S_IWGRP | S_IWOTH) == 0
    }
}
