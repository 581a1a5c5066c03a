import CofferPlaces
import Foundation
import NIOCore
import NIOPosix

/// Why positions stopped or never came. Descriptions name the source, never a position.
public enum PositionSourceError: Error, Sendable, CustomStringConvertible {
    case cannotConnect(String)
    case unreadable(String)

    public var description: String {
        switch self {
        case .cannotConnect(let what): return "cannot reach \(what)"
        case .unreadable(let what): return "cannot read \(what)"
        }
    }
}

/// gpsd's JSON protocol over TCP (default port 2947): `?WATCH` then one report per line; TPV reports with a fix
/// become positions. The stream ends when gpsd closes the connection.
public struct GPSDSource: Sendable {
    public static let defaultPort = 2947
    public let host: String
    public let port: Int

    public init(host: String = "127.0.0.1", port: Int = GPSDSource.defaultPort) {
        self.host = host
        self.port = port
    }

    /// `HOST:PORT`, `HOST`, `:PORT` or `[v6]:PORT`; nil when malformed.
    public init?(address: String) {
        var host = "127.0.0.1"
        var port = Self.defaultPort
        var rest = Substring(address)
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            rest = rest[rest.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let value = Int(rest.dropFirst()) else { return nil }
                port = value
            }
        } else if let colon = rest.lastIndex(of: ":") {
            if colon != rest.startIndex { host = String(rest[..<colon]) }
            guard let value = Int(rest[rest.index(after: colon)...]) else { return nil }
            port = value
        } else if !rest.isEmpty {
            host = String(rest)
        }
        guard (1...65_535).contains(port), !host.isEmpty, host.utf8.count <= 255 else { return nil }
        self.init(host: host, port: port)
    }

    public var description: String { "gpsd at \(host):\(port)" }

    public func fixes() -> AsyncThrowingStream<PositionFix, any Error> {
        let (stream, continuation) = AsyncThrowingStream<PositionFix, any Error>.makeStream()
        let task = Task {
            do {
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connectTimeout(.seconds(5))
                    .connect(host: host, port: port) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                        }
                    }
                try await channel.executeThenClose { inbound, outbound in
                    try await outbound.write(ByteBuffer(string: GPSDReport.watchCommand))
                    var lines = LineSplitter()
                    for try await buffer in inbound {
                        for line in try lines.feed(buffer.readableBytesView) {
                            if let fix = GPSDReport.parse(String(decoding: line, as: UTF8.self)) { continuation.yield(fix) }
                        }
                    }
                }
                continuation.finish()
            } catch is CancellationError {
                continuation.finish()
            } catch let error as PositionSourceError {
                continuation.finish(throwing: error)
            } catch {
                continuation.finish(throwing: PositionSourceError.cannotConnect(description))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

/// Positions from a file or standard input: NMEA sentences, gpsd JSON or `lat,lon` lines, read to the end.
public struct LineSource: Sendable {
    /// A path, or nil for standard input.
    public let path: String?

    public init(path: String?) {
        self.path = path
    }

    public var description: String { path.map { "the file \($0)" } ?? "standard input" }

    public func fixes() -> AsyncThrowingStream<PositionFix, any Error> {
        let (stream, continuation) = AsyncThrowingStream<PositionFix, any Error>.makeStream()
        let path = path
        let description = description
        // A blocking reader on its own thread: standard input may be a terminal or a pipe that never ends.
        let thread = Thread {
            let handle: FileHandle
            if let path {
                guard let opened = FileHandle(forReadingAtPath: path) else {
                    continuation.finish(throwing: PositionSourceError.unreadable(description))
                    return
                }
                handle = opened
            } else {
                handle = FileHandle.standardInput
            }
            var lines = LineSplitter()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                do {
                    for line in try lines.feed(chunk) {
                        if let fix = PositionLine.parse(String(decoding: line, as: UTF8.self)) { continuation.yield(fix) }
                    }
                } catch {
                    continuation.finish(throwing: error)
                    return
                }
            }
            for line in lines.rest() {
                if let fix = PositionLine.parse(String(decoding: line, as: UTF8.self)) { continuation.yield(fix) }
            }
            continuation.finish()
        }
        thread.start()
        return stream
    }
}

/// Splits bytes into lines (LF or CRLF), refusing a line longer than 64 KiB: positions are short, and a source
/// that never sends a newline must not grow memory without bound.
struct LineSplitter {
    static let maximumLine = 64 * 1024
    private var pending: [UInt8] = []

    mutating func feed(_ bytes: some Sequence<UInt8>) throws(PositionSourceError) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        for byte in bytes {
            if byte == 0x0A {
                if pending.last == 0x0D { pending.removeLast() }
                lines.append(pending)
                pending.removeAll(keepingCapacity: true)
            } else {
                pending.append(byte)
                if pending.count > Self.maximumLine { throw .unreadable("a line longer than 64 KiB") }
            }
        }
        return lines
    }

    func rest() -> [[UInt8]] {
        pending.isEmpty ? [] : [pending]
    }
}
