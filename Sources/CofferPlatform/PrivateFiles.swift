#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a private file operation failed. Descriptions name the path's role and the OS error, never file contents.
public enum PrivateFileError: Error, Equatable, Sendable, CustomStringConvertible {
    case cannotCreateDirectory(path: String, errno: Int32)
    case cannotWrite(path: String, errno: Int32)
    case cannotRead(path: String, errno: Int32)
    case tooLarge(path: String, limit: Int)
    case alreadyExists(path: String)
    case notFound(path: String)
    case insecurePermissions(path: String, mode: UInt32)

    public var description: String {
        switch self {
        case .cannotCreateDirectory(let path, let code):
            return "cannot create directory \(path): \(PrivateFiles.message(for: code))"
        case .cannotWrite(let path, let code):
            return "cannot write \(path): \(PrivateFiles.message(for: code))"
        case .cannotRead(let path, let code):
            return "cannot read \(path): \(PrivateFiles.message(for: code))"
        case .tooLarge(let path, let limit):
            return "\(path) is larger than the \(limit)-byte limit"
        case .alreadyExists(let path):
            return "\(path) already exists"
        case .notFound(let path):
            return "\(path) does not exist"
        case .insecurePermissions(let path, let mode):
            return "\(path) is readable by other users (mode \(String(mode, radix: 8)))"
        }
    }
}

/// Owner-only files and directories, written atomically. The one place Coffer touches file modes and `fsync`:
/// everything that must be private on disk (vault directory, keystore entries, backups, exports) goes through here.
public enum PrivateFiles {
    /// Mode of every directory Coffer creates: owner only.
    public static let directoryMode: UInt32 = 0o700
    /// Mode of every file Coffer creates: owner read/write only.
    public static let fileMode: UInt32 = 0o600

    /// Creates `path` and any missing parents with mode 0700, and tightens an existing final directory to 0700 when
    /// it is this user's own: never a shared one (sticky, as `/tmp` is) or another user's, whose mode is not Coffer's
    /// to change (a lock or a data directory named inside `/tmp` once turned `/tmp` itself to 0700).
    public static func createDirectory(_ path: String) throws(PrivateFileError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += component
            if mkdir(prefix, mode_t(directoryMode)) != 0 && errno != EEXIST {
                throw .cannotCreateDirectory(path: prefix, errno: errno)
            }
            prefix += "/"
        }
        var info = stat()
        guard stat(path, &info) == 0 else { throw .cannotCreateDirectory(path: path, errno: errno) }
        let isShared = UInt32(info.st_mode) & UInt32(S_ISVTX) != 0
        guard !isShared, info.st_uid == geteuid(), UInt32(info.st_mode) & 0o777 != directoryMode else { return }
        if chmod(path, mode_t(directoryMode)) != 0 {
            throw .cannotCreateDirectory(path: path, errno: errno)
        }
    }

    /// Sets `path` to mode 0600 (for files that another library creates, such as SQLite's).
    public static func restrictFile(_ path: String) throws(PrivateFileError) {
        if chmod(path, mode_t(fileMode)) != 0 && errno != ENOENT {
            throw .cannotWrite(path: path, errno: errno)
        }
    }

    /// The permission bits of `path`, or nil when it does not exist.
    public static func mode(of path: String) -> UInt32? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt32(info.st_mode) & 0o7777
    }

    /// Whether `path` exists (file or directory).
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Writes `bytes` to `path` atomically with mode 0600: a temporary file in the same directory, fsync, rename,
    /// fsync of the directory. A crash leaves either the old file or the new one, never a torn one.
    /// With `exclusive`, fails with `.alreadyExists` instead of replacing an existing file (a hard link is the
    /// atomic create-if-absent step, so two processes racing to create the same file agree on one winner).
    public static func write(_ bytes: [UInt8], to path: String, exclusive: Bool = false) throws(PrivateFileError) {
        let directory = parentDirectory(of: path)
        var template = Array("\(directory)/.coffer-tmp-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw .cannotWrite(path: path, errno: errno) }
        let temporaryPath = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var committed = false
        defer {
            if !committed { unlink(temporaryPath) }
        }
        do {
            defer { close(descriptor) }
            guard fchmod(descriptor, mode_t(fileMode)) == 0 else { throw PrivateFileError.cannotWrite(path: path, errno: errno) }
            try writeAll(bytes, to: descriptor, path: path)
            guard fsync(descriptor) == 0 else { throw PrivateFileError.cannotWrite(path: path, errno: errno) }
        } catch let error as PrivateFileError {
            throw error
        } catch {
            throw .cannotWrite(path: path, errno: EIO)
        }
        if exclusive {
            if link(temporaryPath, path) != 0 {
                let code = errno
                throw code == EEXIST ? .alreadyExists(path: path) : .cannotWrite(path: path, errno: code)
            }
        } else if rename(temporaryPath, path) != 0 {
            throw .cannotWrite(path: path, errno: errno)
        } else {
            committed = true
        }
        syncDirectory(directory)
    }

    /// Reads the whole of `path`, refusing files over `limit` bytes (files are hostile input).
    public static func read(_ path: String, limit: Int) throws(PrivateFileError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw code == ENOENT ? .notFound(path: path) : .cannotRead(path: path, errno: code)
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { posixRead(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(path: path, errno: errno)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { throw .tooLarge(path: path, limit: limit) }
        }
        return bytes
    }

    /// Gives the finished file `source` the name `destination` unless that name exists (atomic create-if-absent),
    /// then removes the name `source`.
    public static func publish(_ source: String, as destination: String) throws(PrivateFileError) {
        if link(source, destination) != 0 {
            let code = errno
            throw code == EEXIST ? .alreadyExists(path: destination) : .cannotWrite(path: destination, errno: code)
        }
        unlink(source)
        syncDirectory(parentDirectory(of: destination))
    }

    /// Renames `source` over `destination` atomically and syncs the directory.
    public static func replace(_ destination: String, with source: String) throws(PrivateFileError) {
        guard rename(source, destination) == 0 else { throw .cannotWrite(path: destination, errno: errno) }
        syncDirectory(parentDirectory(of: destination))
    }

    /// A fresh, unused path next to `path` for a temporary file.
    public static func temporarySibling(of path: String) -> String {
        var random = SystemRandomNumberGenerator()
        let suffix = String(random.next() as UInt64, radix: 36)
        return "\(parentDirectory(of: path))/.coffer-tmp-\(suffix)"
    }

    /// Removes `path` if it exists.
    public static func remove(_ path: String) throws(PrivateFileError) {
        if unlink(path) != 0 && errno != ENOENT {
            throw .cannotWrite(path: path, errno: errno)
        }
    }

    /// Removes the empty directory `path` if it exists.
    public static func removeDirectory(_ path: String) throws(PrivateFileError) {
        if rmdir(path) != 0 && errno != ENOENT {
            throw .cannotWrite(path: path, errno: errno)
        }
    }

    /// Creates a new, uniquely named directory with mode 0700 inside `parent` and returns its path: scratch space
    /// no other user can enter, for a file that must exist briefly in the clear (a note open in an editor).
    public static func createScratchDirectory(in parent: String, prefix: String) throws(PrivateFileError) -> String {
        var template = Array("\(parent)/\(prefix)XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard created != nil else { throw .cannotCreateDirectory(path: parent, errno: errno) }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Overwrites each regular file directly in `directory` with zeros, then removes the files and the directory:
    /// the end of scratch space that held a secret. An editor's own files there (swap, backup) go the same way.
    public static func wipeScratchDirectory(_ directory: String) {
        guard let stream = opendir(directory) else { return }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(stream)
        for name in names {
            let path = "\(directory)/\(name)"
            var info = stat()
            if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                let descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
                if descriptor >= 0 {
                    try? writeAll([UInt8](repeating: 0, count: Int(info.st_size)), to: descriptor, path: path)
                    _ = fsync(descriptor)
                    close(descriptor)
                }
            }
            unlink(path)
        }
        rmdir(directory)
    }

    /// The directory part of `path` ("." for a bare name).
    public static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    static func message(for code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String) throws(PrivateFileError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                posixWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw .cannotWrite(path: path, errno: errno)
            }
            offset += written
        }
    }

    private static func syncDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }
}

private func posixRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

private func posixWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}
