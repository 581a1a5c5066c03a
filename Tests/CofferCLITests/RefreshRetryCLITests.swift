import CofferTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `coffer sync` whose refresh answer never arrives: the server rotated the refresh token, and the device was killed,
/// or the network dropped the answer, before it stored the new one. The same run (a dropped answer) or the next
/// `coffer sync` (a killed one) must go on without a new login (docs/FORMAT.md §8.2, §8.3), while a copied refresh
/// token alone still ends the session.
@Suite("coffer sync survives a lost refresh answer", .serialized, .offCooperativePool)
struct RefreshRetryCLITests {
    @Test("the refresh answer is lost after the server rotated the token; the next sync goes on with no login", arguments: RefreshCutProxy.Cut.allCases)
    func lostAnswer(cut: RefreshCutProxy.Cut) throws {
        try #require(FileManager.default.isExecutableFile(atPath: SyncCLITests.serverBinary), "build coffer-server first (swift build)")
        let server = try SyncCLITests.Server()
        try server.start()
        defer { server.stop() }
        let proxy = try RefreshCutProxy(upstreamPort: server.port)
        defer { proxy.stop() }
        let passphrase = "retry harbour quiver lantern \(UUID().uuidString.prefix(6))"
        let email = "retry-\(UUID().uuidString.prefix(8).lowercased())@example.org"
        let a = try CLI(), b = try CLI()
        try a.ok(["init"])
        try a.ok(["add", "note", "Before the cut"], input: "first\n")
        try a.ok(["sync", "register", "--server", proxy.url, "--email", email], input: "\(passphrase)\n")
        try b.ok(["sync", "login", "--server", proxy.url, "--email", email], input: "\(passphrase)\n")
        try a.ok(["add", "note", "After the cut"], input: "second\n")
        #expect(try Self.entry(a).first == UInt8(ascii: "e"), "an idle entry holds the token alone")

        proxy.arm(cut)
        switch cut {
        case .dropAnswer:
            // The same run sends the refresh again with its retry key (a connection closed before the answer is a
            // server going away, and a refresh with its key is safe to resend), and goes on.
            let lost = try a.run(["sync"])
            #expect(lost.status == 0, "\(lost.stderr)")
            #expect(lost.stderr == "coffer: the sync server went away, retrying…\n")
            #expect(proxy.cuts == 1)
            #expect(try Self.entry(a).first == UInt8(ascii: "e"), "the answer's token replaced the retry key")
        case .killClient:
            let (process, _) = try a.start(["sync"])
            let swallowed = proxy.waitForCut(seconds: 60)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try #require(swallowed, "the proxy saw no refresh")
            #expect(process.terminationReason == .uncaughtSignal)
            // The retry key went into the key store before the request, beside the token the server has now spent.
            let pending = try Self.entry(a)
            #expect(pending.count > 33 && pending.first == 0x01)
        }

        // Before retry keys, this sync presented a spent token: the server revoked the session (exit 77, log in again).
        let retried = try a.run(["sync"])
        #expect(retried.status == 0, "\(retried.stderr)")
        #expect(retried.stdout.isEmpty && retried.stderr.isEmpty)
        #expect(try Self.entry(a).first == UInt8(ascii: "e"), "the answer's token replaced the retry key")
        // The session really goes on: the re-issued token rotates as any other, and the other device sees the change.
        try a.ok(["sync"])
        try b.ok(["sync"])
        #expect(try SyncCLITests.names(b) == ["After the cut", "Before the cut"])
        let audit = try TestSupport.run(SyncCLITests.serverBinary, ["audit", "--data", server.data])
        #expect(audit.stdout.contains("refresh_retried") && !audit.stdout.contains("refresh_reused"), "\(audit.stdout)")
        #expect(proxy.cuts == 1)
    }

    @Test("two `coffer sync` at once on one device both keep the session")
    func concurrentSyncs() throws {
        try #require(FileManager.default.isExecutableFile(atPath: SyncCLITests.serverBinary), "build coffer-server first (swift build)")
        let server = try SyncCLITests.Server()
        try server.start()
        defer { server.stop() }
        let a = try CLI()
        try a.ok(["init"])
        let email = "twice-\(UUID().uuidString.prefix(8).lowercased())@example.org"
        try a.ok(["sync", "register", "--server", server.url, "--email", email], input: "twice copper meadow lantern 41\n")
        // Before the refresh lock, most such pairs drew two keys for one token and the second ended the session.
        for _ in 0..<10 {
            let first = try a.start(["sync"]).0, second = try a.start(["sync"]).0
            first.waitUntilExit()
            second.waitUntilExit()
            #expect(first.terminationStatus != 77 && second.terminationStatus != 77)
        }
        try a.ok(["sync"])
        let audit = try TestSupport.run(SyncCLITests.serverBinary, ["audit", "--data", server.data])
        #expect(!audit.stdout.contains("refresh_reused"))
    }

    @Test("a copied refresh token without its device's retry key still ends the session")
    func copiedToken() throws {
        try #require(FileManager.default.isExecutableFile(atPath: SyncCLITests.serverBinary), "build coffer-server first (swift build)")
        let server = try SyncCLITests.Server()
        try server.start()
        defer { server.stop() }
        let a = try CLI()
        try a.ok(["init"])
        let email = "thief-\(UUID().uuidString.prefix(8).lowercased())@example.org"
        try a.ok(["sync", "register", "--server", server.url, "--email", email], input: "thief copper meadow lantern 93\n")
        let copied = String(decoding: try Self.entry(a), as: UTF8.self)
        try a.ok(["sync"])
        // The thief presents the copy after the device used it, with a key of its own and then with none.
        for key in [String?.some("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"), nil] {
            var body: [String: String] = ["refresh_token": copied]
            body["retry_key"] = key
            let answer = try TestSupport.run(
                "/usr/bin/curl",
                [
                    "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "content-type: application/json", "--data-binary", "@-",
                    "\(server.url)/v1/auth/refresh",
                ],
                input: Array(try JSONSerialization.data(withJSONObject: body)))
            #expect(answer.stdout == "401")
        }
        let after = try a.run(["sync"])
        #expect(after.status == 77 && after.stderr.contains("coffer sync login"), "\(after.stderr)")
        let audit = try TestSupport.run(SyncCLITests.serverBinary, ["audit", "--data", server.data])
        #expect(audit.stdout.contains("refresh_reused") && !audit.stdout.contains("refresh_retried"))
    }

    /// The device's `vault-<vault id>-sync` entry in the file key store, without the store's `CKS1` header.
    static func entry(_ cli: CLI) throws -> [UInt8] {
        let directory = cli.keystoreDirectory
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: directory).first { $0.hasSuffix("-sync.key") })
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(name)")))
        try #require(bytes.starts(with: Array("CKS1".utf8)))
        return Array(bytes.dropFirst(4))
    }
}

/// A TCP proxy in front of a `coffer-server` that passes everything through, except that once armed it forwards the
/// next `POST /v1/auth/refresh`, reads the server's whole answer, and never delivers it: it closes the client's
/// connection (`dropAnswer`: a network that lost the answer) or holds it until the test kills the client
/// (`killClient`: a process killed after the server rotated the token).
final class RefreshCutProxy: Sendable {
    enum Cut: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case dropAnswer, killClient
        var testDescription: String { rawValue }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let state = Mutex<(armed: Cut?, cuts: Int, stopped: Bool)>((nil, 0, false))
    private let cutSeen = DispatchSemaphore(value: 0)

    init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw Failure(description: "socket failed") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 32) == 0 else {
            close(listener)
            throw Failure(description: "cannot listen on 127.0.0.1")
        }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: local.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// How many refresh answers were withheld.
    var cuts: Int { state.withLock { $0.cuts } }

    /// Withholds the answer to the next refresh.
    func arm(_ cut: Cut) {
        state.withLock { $0.armed = cut }
    }

    /// Waits until a refresh answer has been withheld.
    func waitForCut(seconds: Double) -> Bool {
        cutSeen.wait(timeout: .now() + seconds) == .success
    }

    func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr = in_addr(s_addr: inet_addr("127.0.0.1"))
        return address
    }

    /// One proxied connection: both sockets close when both directions are done.
    private final class Connection: Sendable {
        let client: Int32
        let server: Int32
        let cut = Mutex<Cut?>(nil)
        private let open = Mutex(2)

        init(client: Int32, server: Int32) {
            self.client = client
            self.server = server
        }

        func finish() {
            guard
                open.withLock({ count -> Bool in
                    count -= 1
                    return count == 0
                })
            else { return }
            close(client)
            close(server)
        }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if state.withLock({ $0.stopped }) { return }
                continue
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(client)
                close(server)
                continue
            }
            let connection = Connection(client: client, server: server)
            Thread { [self] in pumpRequests(connection) }.start()
            Thread { [self] in pumpAnswers(connection) }.start()
        }
    }

    private static let refreshRequest = Array("POST /v1/auth/refresh ".utf8)

    private func pumpRequests(_ connection: Connection) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var tail: [UInt8] = []
        while true {
            let count = read(connection.client, &buffer, buffer.count)
            if count <= 0 { break }
            let chunk = Array(buffer[0..<count])
            let window = tail + chunk
            tail = Array(window.suffix(Self.refreshRequest.count - 1))
            if Self.contains(window, Self.refreshRequest),
                let cut = state.withLock({ state -> Cut? in
                    defer { state.armed = nil }
                    return state.armed
                })
            {
                // Marked before the request reaches the server, so its answer is never forwarded.
                connection.cut.withLock { $0 = cut }
            }
            if !Self.writeAll(connection.server, chunk) { break }
        }
        shutdown(connection.server, Int32(SHUT_WR))
        connection.finish()
    }

    private func pumpAnswers(_ connection: Connection) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var withheld: [UInt8] = []
        var signalled = false
        while true {
            let count = read(connection.server, &buffer, buffer.count)
            if count <= 0 { break }
            let chunk = Array(buffer[0..<count])
            guard let cut = connection.cut.withLock({ $0 }) else {
                if !Self.writeAll(connection.client, chunk) { break }
                continue
            }
            withheld += chunk
            if !signalled, Self.isWholeAnswer(withheld) {
                signalled = true
                state.withLock { $0.cuts += 1 }
                if cut == .dropAnswer { shutdown(connection.client, Int32(SHUT_RDWR)) }
                cutSeen.signal()
            }
        }
        shutdown(connection.client, Int32(SHUT_RDWR))
        connection.finish()
    }

    private static func writeAll(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// Whether `bytes` hold an HTTP answer's head and its whole `Content-Length` body.
    private static func isWholeAnswer(_ bytes: [UInt8]) -> Bool {
        let separator = Array("\r\n\r\n".utf8)
        guard
            let end = (0...max(bytes.count - separator.count, 0)).first(where: {
                bytes.count >= $0 + separator.count && bytes[$0..<($0 + separator.count)].elementsEqual(separator)
            })
        else { return false }
        let head = String(decoding: bytes[0..<end], as: UTF8.self).lowercased()
        let length =
            head.split(separator: "\r\n").lazy.compactMap { line -> Int? in
                guard line.hasPrefix("content-length:") else { return nil }
                return Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
            }.first ?? 0
        return bytes.count >= end + separator.count + length
    }
}
