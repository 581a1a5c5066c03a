import Foundation

/// Helpers shared by Coffer's test targets.
public enum TestSupport {
    /// Bytes of a hex string (test vectors are trusted, well-formed input).
    public static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var high: UInt8?
        for character in text.utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = character - UInt8(ascii: "A") + 10
            default: continue
            }
            if let pending = high {
                bytes.append(pending << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return bytes
    }

    /// Lower-case hex of `bytes`.
    public static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The repository root (this file is Tests/CofferTestSupport/TestSupport.swift).
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A fresh private temporary directory.
    public static func temporaryDirectory(_ name: String = "coffer-test") throws -> String {
        let path = NSTemporaryDirectory() + "\(name)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return path
    }

    /// The installed program `tool` (in /usr/bin, /bin or /usr/local/bin), or nil.
    public static func which(_ tool: String) -> String? {
        for directory in ["/usr/bin", "/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: "\(directory)/\(tool)") {
            return "\(directory)/\(tool)"
        }
        return nil
    }

    /// Output of a finished process.
    public struct ProcessResult: Sendable {
        public let status: Int32
        public let standardOutput: [UInt8]
        public let standardError: [UInt8]

        public var stdout: String { String(decoding: standardOutput, as: UTF8.self) }
        public var stderr: String { String(decoding: standardError, as: UTF8.self) }
    }

    /// The path of the executable `name` built next to this test bundle (or in `.build/debug`).
    public static func builtExecutable(_ name: String) -> String {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = bundle.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return repositoryRoot.appendingPathComponent(".build/debug/\(name)").path
    }

    /// Runs `executable` with `arguments`, feeding `input` on stdin.
    public static func run(
        _ executable: String, _ arguments: [String], input: [UInt8] = [], environment: [String: String]? = nil
    ) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let errorData = ErrorCollector(stderr.fileHandleForReading)
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ProcessResult(status: process.terminationStatus, standardOutput: Array(output), standardError: errorData.wait())
    }

    /// Reads a pipe to its end on a background thread.
    final class ErrorCollector: @unchecked Sendable {
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            Thread { [self] in
                data = handle.readDataToEndOfFile()
                done.signal()
            }.start()
        }

        func wait() -> [UInt8] {
            done.wait()
            return Array(data)
        }
    }

    public enum OracleError: Error, CustomStringConvertible {
        case unavailable(String)
        case failed(String)

        public var description: String {
            switch self {
            case .unavailable(let what): return "outside oracle unavailable: \(what)"
            case .failed(let detail): return "outside oracle failed: \(detail)"
            }
        }
    }

    /// Runs the oracle script `name` (in Tests/oracles) with `input` as JSON on standard input and returns its JSON
    /// array. Fails, never skips, when Python or the script's package is missing: CI installs them.
    public static func pythonOracle(_ name: String, input: Any) throws -> [Any] {
        let script = repositoryRoot.appendingPathComponent("Tests/oracles/\(name)").path
        let python = ProcessInfo.processInfo.environment["COFFER_PYTHON"] ?? "python3"
        let result: ProcessResult
        do {
            result = try run("/usr/bin/env", [python, script], input: Array(try JSONSerialization.data(withJSONObject: input)))
        } catch {
            throw OracleError.unavailable("python3 for \(name) (pip install -r Tests/oracles/requirements.txt)")
        }
        guard result.status == 0 else {
            throw OracleError.failed("\(name) exit \(result.status): \(result.stderr.suffix(400))")
        }
        guard let answers = try JSONSerialization.jsonObject(with: Data(result.standardOutput), options: [.fragmentsAllowed]) as? [Any] else {
            throw OracleError.failed("\(name) did not answer with a JSON array")
        }
        return answers
    }

    /// Sends requests to Tests/oracles/openssl_oracle.py (Python `cryptography`/`hashlib`, i.e. OpenSSL) and
    /// returns its answers. Fails, never skips, when Python or the package is missing: CI installs them.
    public static func openSSLOracle(_ requests: [[String: Any]]) throws -> [Any] {
        let script = repositoryRoot.appendingPathComponent("Tests/oracles/openssl_oracle.py").path
        let python = ProcessInfo.processInfo.environment["COFFER_PYTHON"] ?? "python3"
        let input = try JSONSerialization.data(withJSONObject: requests)
        let result: ProcessResult
        do {
            result = try run("/usr/bin/env", [python, script], input: Array(input))
        } catch {
            throw OracleError.unavailable("python3 with the cryptography package (pip install cryptography)")
        }
        guard result.status == 0 else {
            throw OracleError.failed("exit \(result.status): \(result.stderr.suffix(400))")
        }
        guard let answers = try JSONSerialization.jsonObject(with: Data(result.standardOutput), options: [.fragmentsAllowed]) as? [Any] else {
            throw OracleError.failed("not a JSON array")
        }
        return answers
    }
}

/// SplitMix64: a tiny seeded generator, so corpora and property tests reproduce from their seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` pseudo-random bytes, drawn from `alphabet` when one is given.
    public mutating func bytes(_ count: Int, from alphabet: [UInt8]? = nil) -> [UInt8] {
        (0..<count).map { _ in
            if let alphabet { return alphabet[Int(next() % UInt64(alphabet.count))] }
            return UInt8(truncatingIfNeeded: next())
        }
    }
}

extension TestSupport {
    /// A loopback TCP port no one is listening on, for a server a test starts.
    ///
    /// Taken below Linux's ephemeral range (32768–60999 by default), where the kernel never places the local end of an
    /// outgoing connection: a random port in that range was now and then already held by one of the suite's own client
    /// connections, and the server under test then failed to bind. Checked by binding it once.
    public static func unusedPort() -> Int {
        while true {
            let port = Int.random(in: 20_000..<32_768)
            if portIsFree(port) { return port }
        }
    }

    /// A loopback port that refuses every connection until `release(socket)`: the socket holds it, bound but not
    /// listening, so no other test's server can take it meanwhile (a port only checked free once was, now and then,
    /// and a "refused" connection then waited 81 s on that server).
    public static func refusingPort() throws -> (port: Int, socket: Int32) {
        #if canImport(Glibc)
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard socket >= 0 else { throw OracleError.failed("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 && getsockname(socket, pointer, &length) == 0
            }
        }
        guard bound else {
            close(socket)
            throw OracleError.failed("bind: errno \(errno)")
        }
        return (Int(UInt16(bigEndian: address.sin_port)), socket)
    }

    /// A port on 127.0.0.1 that takes connections and never answers, as a frozen server does: the socket listens (the
    /// kernel completes the handshake) but nothing accepts or reads. Give it back with `release`.
    public static func silentPort() throws -> (port: Int, socket: Int32) {
        let (port, socket) = try refusingPort()
        guard listen(socket, 64) == 0 else {
            close(socket)
            throw OracleError.failed("listen: errno \(errno)")
        }
        return (port, socket)
    }

    /// Gives back a port `refusingPort` or `silentPort` held.
    public static func release(_ socket: Int32) {
        close(socket)
    }

    private static func portIsFree(_ port: Int) -> Bool {
        #if canImport(Glibc)
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return bound == 0
    }
}
