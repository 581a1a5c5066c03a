import CofferServer
import CofferServerTestSupport
import CofferSyncAPI
import CofferTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Malformed HTTP over a real socket: the parser's refusals carry the JSON error body and the security headers.
@Suite("Malformed HTTP")
struct MalformedHTTPTests {
    /// A raw answer: status code, lower-cased header names, body.
    struct RawAnswer {
        var status: Int
        var headers: [String: String]
        var body: Data

        var error: ErrorBody? { try? WireJSON.decoder().decode(ErrorBody.self, from: body) }
    }

    struct SocketError: Error {}

    /// Sends `bytes` to the server on 127.0.0.1:`port` and reads until it closes the connection (`closed`) or 10
    /// seconds pass without a byte. The blocking calls run on a thread of their own: on the concurrency pool they
    /// could hold up the in-process server's own tasks.
    static func exchange(_ bytes: [UInt8], port: Int) async throws -> (received: [UInt8], closed: Bool) {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try blockingExchange(bytes, port: port) }) }.start()
        }
    }

    private static func blockingExchange(_ bytes: [UInt8], port: Int) throws -> (received: [UInt8], closed: Bool) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError() }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw SocketError() }
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // The server may answer and close before reading everything (oversized headers).
            if count <= 0 { break }
            sent += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { return (received, true) }
            if count < 0 { return (received, errno == ECONNRESET) }
            received += buffer[..<count]
        }
    }

    /// The answers in `bytes`, in order (each has a Content-Length).
    static func answers(_ bytes: [UInt8]) throws -> [RawAnswer] {
        var rest = bytes[...]
        var result: [RawAnswer] = []
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        while !rest.isEmpty {
            let end = try #require(rest.indices.first { rest[$0...].starts(with: separator) }, "no end of head")
            let lines = String(decoding: rest[..<end], as: UTF8.self).components(separatedBy: "\r\n")
            let status = try #require(Int(lines[0].split(separator: " ")[1]))
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
            }
            let length = try #require(headers["content-length"].flatMap(Int.init), "no Content-Length")
            let bodyStart = end + separator.count
            result.append(RawAnswer(status: status, headers: headers, body: Data(rest[bodyStart..<bodyStart + length])))
            rest = rest[(bodyStart + length)...]
        }
        return result
    }

    /// Runs `body` with the port of a live server built as `coffer-server` builds it.
    static func withLiveServer(_ body: @escaping @Sendable (Int) async throws -> Void) async throws {
        let configuration = try testConfiguration(clock: TestClock(Date()))
        try await DedicatedExecutor.run {
            try await Backend.sqlite.withStore { store in
                let app = try await CofferServerApplication.build(configuration: configuration, store: store, logger: LogCollector().logger())
                try await app.test(.live) { client in
                    try await body(try #require(client.port))
                }
            }
        }
    }

    static func expectRefusal(_ answer: RawAnswer, status: Int, code: String, _ name: String) {
        #expect(answer.status == status, "\(name)")
        #expect(answer.error?.error == code && answer.error?.message.isEmpty == false, "\(name)")
        #expect(answer.headers["content-type"]?.hasPrefix("application/json") == true, "\(name)")
        #expect(answer.headers["strict-transport-security"] == "max-age=31536000; includeSubDomains", "\(name)")
        #expect(answer.headers["x-content-type-options"] == "nosniff", "\(name)")
        #expect(answer.headers["x-frame-options"] == "DENY", "\(name)")
        #expect(answer.headers["cache-control"] == "no-store", "\(name)")
        #expect(answer.headers["referrer-policy"] == "no-referrer", "\(name)")
    }

    @Test("garbage, oversized headers and bad chunks answer 400/431 with the JSON body and headers, then close")
    func parserErrors() async throws {
        try await Self.withLiveServer { port in
            let big = String(repeating: "a", count: 100 * 1024)
            let chunked =
                "POST /v1/auth/prelogin HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n"
            let cases: [(String, String, Int, String)] = [
                ("garbage request line", "\u{1}\u{2} nonsense\r\n\r\n", 400, "invalid_request"),
                ("no HTTP version", "GET /health\r\n\r\n", 400, "invalid_request"),
                ("header without a colon", "GET /health HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n", 400, "invalid_request"),
                ("oversized header", "GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: \(big)\r\n\r\n", 431, "headers_too_large"),
                ("bad chunk size", chunked + "zz\r\n{}\r\n0\r\n\r\n", 400, "invalid_request"),
                ("bad chunk size after a good chunk", chunked + "2\r\n{}\r\nnope\r\n", 400, "invalid_request"),
                // A coding before chunked would reach the route still gzipped: 501, read no further.
                (
                    "gzip, chunked", chunked.replacingOccurrences(of: "chunked\r\n", with: "gzip, chunked\r\n") + "2\r\n{}\r\n0\r\n\r\n",
                    501, "not_implemented"
                ),
                ("gzip alone", chunked.replacingOccurrences(of: "chunked\r\n", with: "gzip\r\n") + "{}", 501, "not_implemented"),
                // The parser refuses chunked applied twice (RFC 9112 §6.1) as malformed.
                (
                    "chunked twice", chunked.replacingOccurrences(of: "chunked\r\n", with: "chunked, chunked\r\n") + "2\r\n{}\r\n0\r\n\r\n",
                    400, "invalid_request"
                ),
            ]
            for (name, request, status, code) in cases {
                let (received, closed) = try await Self.exchange(Array(request.utf8), port: port)
                #expect(closed, "\(name): the connection stays open")
                let answers = try Self.answers(received)
                try #require(answers.count == 1, "\(name): \(answers.map(\.status))")
                Self.expectRefusal(answers[0], status: status, code: code, name)
            }
        }
    }

    @Test("plain chunked bodies are read as ever")
    func chunkedBody() async throws {
        try await Self.withLiveServer { port in
            let body = #"{"email":"chunk@example.org"}"#
            let request =
                "POST /v1/auth/prelogin HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Transfer-Encoding: Chunked\r\nConnection: close\r\n\r\n" + String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\n0\r\n\r\n"
            let (received, _) = try await Self.exchange(Array(request.utf8), port: port)
            #expect(try Self.answers(received).map(\.status) == [200])
        }
    }

    /// The parser reads chunk extensions and drops them, so they count towards no body limit; a request may take only
    /// so many raw bytes (twice its route's body limit, and its head), after which the connection is closed.
    @Test("chunk extensions, or a body cut into tiny chunks, past a request's raw byte budget close the connection unanswered")
    func chunkExtensionFlood() async throws {
        try await Self.withLiveServer { port in
            let body = #"{"email":"chunk@example.org"}"#
            let head =
                "POST /v1/auth/prelogin HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            let tail = String(body.utf8.count, radix: 16) + "\r\n" + body + "\r\n0\r\n\r\n"
            let budget = 2 * SyncLimits.maxBodyBytes + (1 << 20)
            // A zero-byte body is never sent: the extension rides on the first chunk, then the real body follows.
            let flood = "1;x=" + String(repeating: "y", count: budget) + "\r\n{\r\n"
            let (received, closed) = try await Self.exchange(Array((head + flood + tail).utf8), port: port)
            #expect(closed)
            #expect(received.isEmpty, "answered: \(String(decoding: received.prefix(200), as: UTF8.self))")
            // The same request with an extension of a sane size is read as ever.
            let modest = "1;x=" + String(repeating: "y", count: 4096) + "\r\n{\r\n"
            let fine = String(body.utf8.count - 1, radix: 16) + "\r\n" + body.dropFirst() + "\r\n0\r\n\r\n"
            let (answered, _) = try await Self.exchange(Array((head + modest + fine).utf8), port: port)
            #expect(try Self.answers(answered).map(\.status) == [200])
        }
    }

    @Test("a malformed request after a good one on the same connection is answered after it, in order")
    func pipelined() async throws {
        try await Self.withLiveServer { port in
            let good = "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"
            let (received, closed) = try await Self.exchange(Array((good + good + "BAD\u{7F} / HTTP/1.1\r\n\r\n").utf8), port: port)
            #expect(closed)
            let answers = try Self.answers(received)
            #expect(answers.map(\.status) == [200, 200, 400])
            if answers.count == 3 { Self.expectRefusal(answers[2], status: 400, code: "invalid_request", "pipelined") }
        }
    }
}
