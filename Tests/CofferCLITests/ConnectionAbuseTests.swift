import CofferTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// About 20,000 half-sent requests from one address once used up the server's file descriptors, and `/health` stopped
/// answering until they closed. Here thousands are held open against a real `coffer-server` while a user syncs from
/// another address.
@Suite("Connection abuse", .serialized, .offCooperativePool)
struct ConnectionAbuseTests {
    /// A TCP connection from `source` (a loopback address) to the server, with a request head that never ends.
    static func halfSentRequest(from source: String, port: Int) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0, "socket: errno \(errno)")
        func address(_ text: String, _ port: Int) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, text, &address.sin_addr)
            return address
        }
        var local = address(source, 0)
        var remote = address("127.0.0.1", port)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && connected == 0, "bind/connect: errno \(errno)")
        let head = Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)
        _ = send(descriptor, head, head.count, Int32(MSG_NOSIGNAL))
        return descriptor
    }

    /// Whether the server has closed the connection (end of stream or reset), without waiting.
    static func isClosed(_ descriptor: Int32) -> Bool {
        var byte: UInt8 = 0
        let read = recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        return read == 0 || (read < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }

    /// Polls until `condition` holds or `seconds` pass.
    static func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return condition()
    }

    @Test("2,000 half-sent requests from one address are cut to its share and closed when idle; a user on another syncs throughout")
    func slowConnections() throws {
        try #require(FileManager.default.isExecutableFile(atPath: SyncCLITests.serverBinary), "build coffer-server first (swift build)")
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let count = min(2_000, Int(limit.rlim_cur) / 3)
        try #require(count >= 500, "the open-file limit (\(limit.rlim_cur)) is too low for this test")

        let server = try SyncCLITests.Server(arguments: ["--max-connections-per-address", "64", "--idle-timeout", "3"])
        try server.start()
        defer { server.stop() }
        let user = try CLI()
        try user.ok(["init"])
        try user.ok(["add", "card", "Gym"], input: "MEMBER-0042\n")
        let email = "busy-\(UUID().uuidString.prefix(8).lowercased())@example.org"
        try user.ok(["sync", "register", "--server", server.url, "--email", email], input: "orbit lantern meadow harbour\n")

        var sockets: [Int32] = []
        defer { for descriptor in sockets { close(descriptor) } }
        for _ in 0..<count { sockets.append(try Self.halfSentRequest(from: "127.0.0.2", port: server.port)) }
        // The server keeps 64 of them (the address's share) and closes the rest as it accepts them.
        #expect(
            Self.eventually(10) { sockets.filter { !Self.isClosed($0) }.count <= 64 },
            "\(sockets.filter { !Self.isClosed($0) }.count) of \(count) still open")
        // Meanwhile, from 127.0.0.1: health checks and syncs answer at once.
        for round in 0..<3 {
            let health = try TestSupport.run("/usr/bin/curl", ["-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}", "\(server.url)/health"])
            #expect(health.stdout == "200", "round \(round)")
            try user.ok(["add", "card", "Card \(round)"], input: "CARD-\(round)\n")
            try user.ok(["sync"])
        }
        // A head never finished is closed by the idle timeout (3 s here).
        #expect(Self.eventually(10) { sockets.allSatisfy(Self.isClosed) }, "half-sent requests outlived the idle timeout")
        let other = try CLI()
        try other.ok(["sync", "login", "--server", server.url, "--email", email], input: "orbit lantern meadow harbour\n")
        #expect(try other.ok(["list"]).stdout.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 4)
    }

    @Test("connections over the server's total are closed at once, from any address, and the server serves again when they go")
    func totalCap() throws {
        try #require(FileManager.default.isExecutableFile(atPath: SyncCLITests.serverBinary), "build coffer-server first (swift build)")
        let server = try SyncCLITests.Server(arguments: ["--max-connections", "100", "--max-connections-per-address", "40", "--idle-timeout", "60"])
        try server.start()
        defer { server.stop() }
        var sockets: [Int32] = []
        defer { for descriptor in sockets { close(descriptor) } }
        for source in ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"] {
            for _ in 0..<50 { sockets.append(try Self.halfSentRequest(from: source, port: server.port)) }
        }
        #expect(
            Self.eventually(10) { sockets.filter { !Self.isClosed($0) }.count == 100 },
            "\(sockets.filter { !Self.isClosed($0) }.count) of 200 still open")
        // Full: a newcomer is closed rather than left waiting, and answers come back when the others leave.
        let refused = try TestSupport.run("/usr/bin/curl", ["-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}", "\(server.url)/health"])
        #expect(refused.stdout == "000" && refused.status != 28, "curl: \(refused.status) \(refused.stdout)")
        for descriptor in sockets { close(descriptor) }
        sockets = []
        #expect(
            Self.eventually(5) {
                (try? TestSupport.run("/usr/bin/curl", ["-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}", "\(server.url)/health"]).stdout) == "200"
            })
    }
}
