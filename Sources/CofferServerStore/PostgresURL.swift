import CofferCrypto
import Foundation
import PostgresNIO

/// Why a PostgreSQL URL was refused. Descriptions name the rule and never repeat the URL, which may hold a password.
public enum PostgresURLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL does not start with `postgres://` or `postgresql://`.
    case scheme
    /// There is no user name before `@`.
    case missingUser
    /// There is no host after `@`.
    case missingHost
    /// The port is not a number from 1 to 65535.
    case port
    /// There is no database name after the host, or it holds a `/`.
    case database
    /// A `%` escape is malformed or decodes to something other than UTF-8.
    case percentEncoding
    /// A query parameter other than `sslmode` (with `disable`, `prefer` or `require`), or a repeated one.
    case parameter

    public var description: String {
        switch self {
        case .scheme: return "a PostgreSQL URL must start with postgres:// or postgresql://"
        case .missingUser: return "a PostgreSQL URL must name a user (postgres://user@host:port/database)"
        case .missingHost: return "a PostgreSQL URL must name a host (postgres://user@host:port/database)"
        case .port: return "the port of a PostgreSQL URL must be a number from 1 to 65535"
        case .database: return "a PostgreSQL URL must end with one database name (postgres://user@host:port/database)"
        case .percentEncoding: return "a PostgreSQL URL holds a malformed %-escape"
        case .parameter: return "a PostgreSQL URL may only carry sslmode=disable, prefer or require"
        }
    }
}

/// The parts of `postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require]`.
///
/// `sslmode` defaults to `disable` for a loopback host and to `require` (with certificate verification) for any
/// other, so that a remote database is never reached in clear text by accident.
public struct PostgresURL: Sendable, Equatable {
    public enum TLSMode: String, Sendable, Equatable {
        case disable, prefer, require
    }

    public var user: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String
    public var tls: TLSMode

    /// Parses `text` strictly: anything this type does not understand is an error rather than a guess.
    public init(_ text: String) throws(PostgresURLError) {
        var rest: Substring
        if text.hasPrefix("postgres://") {
            rest = text.dropFirst("postgres://".count)
        } else if text.hasPrefix("postgresql://") {
            rest = text.dropFirst("postgresql://".count)
        } else {
            throw .scheme
        }

        var query: Substring?
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        guard let slash = rest.firstIndex(of: "/") else { throw .database }
        let authority = rest[..<slash]
        let path = rest[rest.index(after: slash)...]
        guard !path.isEmpty, !path.contains("/") else { throw .database }
        database = try Self.decode(path)
        guard !database.isEmpty else { throw .database }

        // The password may hold a percent-encoded `@`, never a raw one, so the last `@` ends the user part.
        guard let at = authority.lastIndex(of: "@") else { throw .missingUser }
        let userInfo = authority[..<at]
        let hostPort = authority[authority.index(after: at)...]
        if let colon = userInfo.firstIndex(of: ":") {
            user = try Self.decode(userInfo[..<colon])
            password = try Self.decode(userInfo[userInfo.index(after: colon)...])
        } else {
            user = try Self.decode(userInfo)
            password = nil
        }
        guard !user.isEmpty else { throw .missingUser }

        var portText: Substring?
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw .missingHost }
            host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .port }
                portText = after.dropFirst()
            }
        } else if let colon = hostPort.firstIndex(of: ":") {
            host = String(hostPort[..<colon])
            portText = hostPort[hostPort.index(after: colon)...]
        } else {
            host = String(hostPort)
        }
        guard !host.isEmpty, !host.contains("%") else { throw .missingHost }
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let number = Int(portText), (1...65535).contains(number)
            else { throw .port }
            port = number
        } else {
            port = 5432
        }

        let loopback = host == "127.0.0.1" || host == "::1" || host == "localhost"
        var mode: TLSMode?
        if let query, !query.isEmpty {
            for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, parts[0] == "sslmode", mode == nil,
                    let value = TLSMode(rawValue: String(parts[1]))
                else { throw .parameter }
                mode = value
            }
        }
        tls = mode ?? (loopback ? .disable : .require)
    }

    /// A client configuration for this URL.
    public var configuration: PostgresClient.Configuration {
        let clientTLS: PostgresClient.Configuration.TLS
        switch tls {
        case .disable: clientTLS = .disable
        case .prefer: clientTLS = .prefer(.makeClientConfiguration())
        case .require: clientTLS = .require(.makeClientConfiguration())
        }
        return PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: clientTLS)
    }

    private static func decode(_ part: Substring) throws(PostgresURLError) -> String {
        guard part.contains("%") else { return String(part) }
        var bytes: [UInt8] = []
        var index = part.utf8.startIndex
        let utf8 = part.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let high = utf8.index(after: index)
                guard high < utf8.endIndex else { throw .percentEncoding }
                let low = utf8.index(after: high)
                guard low < utf8.endIndex, let h = Hex.value(of: utf8[high]), let l = Hex.value(of: utf8[low]) else {
                    throw .percentEncoding
                }
                bytes.append(h << 4 | l)
                index = utf8.index(after: low)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .percentEncoding }
        return text
    }
}
