import CCofferPlatform

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a local socket operation failed. Descriptions name the path and the OS error, never what was sent.
public enum SocketError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Nothing listens at the path (no agent running).
    case notRunning(path: String)
    /// The socket, or its directory, belongs to another user or is open to others: never talked to.
    case foreignOwner(path: String, uid: UInt32)
    case insecureDirectory(path: String, mode: UInt32)
    /// The peer at the other end runs as another user.
    case foreignPeer(uid: UInt32)
    case pathTooLong(path: String)
    case system(operation: String, errno: Int32)
    /// The other end closed the connection or sent more than the limit, or took longer than the timeout.
    case closed
    case tooLarge(limit: Int)

    public var description: String {
        switch self {
        case .notRunning(let path): return "no agent is listening at \(path)"
        case .foreignOwner(let path, let uid): return "\(path) belongs to uid \(uid), not to this user"
        case .insecureDirectory(let path, let mode): return "\(path) is open to other users (mode \(String(mode, radix: 8)))"
        case .foreignPeer(let uid): return "the other end of the socket runs as uid \(uid), not as this user"
        case .pathTooLong(let path): return "the socket path \(path) is too long"
        case .system(let operation, let code): return "\(operation): \(PrivateFiles.message(for: code))"
        case .closed: return "the connection closed early"
        case .tooLarge(let limit): return "a message is larger than the \(limit)-byte limit"
        }
    }
}

/// Unix-domain stream sockets between processes of one user: the listening side in a private directory, and both
/// sides checking the other's uid (`SO_PEERCRED` on Linux, `getpeereid` on Darwin) before trusting it.
public enum UnixSocket {
    /// This process's effective uid.
    public static var currentUID: UInt32 { UInt32(geteuid()) }

    /// Creates `directory` 0700 if missing and checks that it is ours and closed to others.
    public static func preparePrivateDirectory(_ directory: String) throws(SocketError) {
        do {
            try PrivateFiles.createDirectory(directory)
        } catch {
            throw .system(operation: "cannot create \(directory)", errno: EACCES)
        }
        try requireOwned(directory, allowedModeBits: 0o700)
    }

    /// Binds and listens at `path` (mode 0600), replacing a stale socket there. The file is created 0600 under a
    /// umask, so there is no moment when another user could connect.
    public static func listen(at path: String, backlog: Int32 = 16) throws(SocketError) -> Int32 {
        var address = try socketAddress(path)
        let descriptor = socket(AF_UNIX, socketStream, 0)
        guard descriptor >= 0 else { throw .system(operation: "socket", errno: errno) }
        setCloseOnExec(descriptor)
        unlink(path)
        let previous = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(previous)
        guard bound == 0 else {
            let code = errno
            close(descriptor)
            throw .system(operation: "cannot listen at \(path)", errno: code)
        }
        chmod(path, 0o600)
        // Non-blocking, so a connection that went away between poll and accept cannot leave accept waiting.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        guard systemListen(descriptor, backlog) == 0 else {
            let code = errno
            close(descriptor)
            throw .system(operation: "cannot listen at \(path)", errno: code)
        }
        return descriptor
    }

    /// Accepts one connection and returns it with the peer's uid; a connection from another uid is closed at once
    /// and reported as `.foreignPeer`.
    public static func accept(_ listener: Int32) throws(SocketError) -> Int32 {
        let connection = systemAccept(listener)
        guard connection >= 0 else { throw .system(operation: "accept", errno: errno) }
        setCloseOnExec(connection)
        _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) & ~O_NONBLOCK)
        do throws(SocketError) {
            let uid = try peerUID(connection)
            guard uid == currentUID else { throw SocketError.foreignPeer(uid: uid) }
        } catch {
            close(connection)
            throw error
        }
        return connection
    }

    /// Connects to the socket at `path` after checking that it and its directory belong to this user, then checks
    /// the listening process's uid: nothing is sent to a socket another user could have put there.
    public static func connect(to path: String) throws(SocketError) -> Int32 {
        try requireOwned(PrivateFiles.parentDirectory(of: path), allowedModeBits: 0o700)
        var info = stat()
        guard lstat(path, &info) == 0 else { throw .notRunning(path: path) }
        guard UInt32(info.st_uid) == currentUID else { throw .foreignOwner(path: path, uid: UInt32(info.st_uid)) }
        var address = try socketAddress(path)
        let descriptor = socket(AF_UNIX, socketStream, 0)
        guard descriptor >= 0 else { throw .system(operation: "socket", errno: errno) }
        setCloseOnExec(descriptor)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { systemConnect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(descriptor)
            throw code == ECONNREFUSED || code == ENOENT ? .notRunning(path: path) : .system(operation: "cannot connect to \(path)", errno: code)
        }
        do throws(SocketError) {
            let uid = try peerUID(descriptor)
            guard uid == currentUID else { throw SocketError.foreignPeer(uid: uid) }
        } catch {
            close(descriptor)
            throw error
        }
        return descriptor
    }

    /// The uid of the process at the other end of `descriptor`.
    public static func peerUID(_ descriptor: Int32) throws(SocketError) -> UInt32 {
        var uid: UInt32 = 0
        guard coffer_peer_uid(descriptor, &uid) == 0 else { throw .system(operation: "reading the peer's uid", errno: errno) }
        return uid
    }

    /// Gives reads and writes on `descriptor` a time limit, so a peer that stops half-way cannot hold the other side.
    public static func setTimeout(_ descriptor: Int32, milliseconds: Int) {
        var value = timeval(tv_sec: milliseconds / 1000, tv_usec: .init((milliseconds % 1000) * 1000))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes all of `bytes`.
    public static func send(_ bytes: UnsafeRawBufferPointer, on descriptor: Int32) throws(SocketError) {
        var offset = 0
        while offset < bytes.count {
            let written = systemSend(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw errno == EPIPE || errno == ECONNRESET || errno == EAGAIN ? .closed : .system(operation: "send", errno: errno)
            }
            offset += written
        }
    }

    /// Fills `buffer` completely, or throws `.closed` when the peer ends first (or the timeout passes).
    public static func receive(into buffer: UnsafeMutableRawBufferPointer, on descriptor: Int32) throws(SocketError) {
        var offset = 0
        while offset < buffer.count {
            let count = recv(descriptor, buffer.baseAddress! + offset, buffer.count - offset, 0)
            if count < 0 {
                if errno == EINTR { continue }
                throw .closed
            }
            if count == 0 { throw .closed }
            offset += count
        }
    }

    /// Closes `descriptor`.
    public static func close(_ descriptor: Int32) {
        _ = systemClose(descriptor)
    }

    private static func requireOwned(_ path: String, allowedModeBits: UInt32) throws(SocketError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw .notRunning(path: path) }
        guard UInt32(info.st_uid) == currentUID else { throw .foreignOwner(path: path, uid: UInt32(info.st_uid)) }
        let mode = UInt32(info.st_mode) & 0o7777
        guard mode & ~allowedModeBits == 0 else { throw .insecureDirectory(path: path, mode: mode) }
    }

    private static func socketAddress(_ path: String) throws(SocketError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw .pathTooLong(path: path) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        return address
    }

    private static func setCloseOnExec(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    }

    #if canImport(Glibc) || canImport(Musl)
    private static let socketStream = Int32(SOCK_STREAM.rawValue)
    #else
    private static let socketStream = SOCK_STREAM
    #endif
}

// The system calls whose names the methods above reuse.
private func systemListen(_ descriptor: Int32, _ backlog: Int32) -> Int32 { listen(descriptor, backlog) }
private func systemAccept(_ descriptor: Int32) -> Int32 { accept(descriptor, nil, nil) }
private func systemConnect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(descriptor, address, length)
}
private func systemSend(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc) || canImport(Musl)
    send(descriptor, buffer, count, Int32(MSG_NOSIGNAL))
    #else
    send(descriptor, buffer, count, 0)
    #endif
}
private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
