import Foundation
import HTTPTypes
import Hummingbird

/// An IPv4 or IPv6 address with a prefix length: `10.0.0.0/8`, `2001:db8::/32`, or one address (`192.0.2.7`).
public struct IPNetwork: Sendable, Equatable, CustomStringConvertible {
    /// The network's address bytes (4 or 16), with the bits past the prefix cleared.
    let bytes: [UInt8]
    let prefix: Int
    public let description: String

    /// Parses `text`; nil for anything else (a host name, a prefix too long for the family, spaces).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = Self.parse(String(parts[0])) else { return nil }
        let bits = address.count * 8
        var prefix = bits
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...bits).contains(given), parts[1].allSatisfy(\.isASCII) else { return nil }
            prefix = given
        }
        self.prefix = prefix
        self.bytes = Self.masked(address, prefix: prefix)
        self.description = text
    }

    /// Whether `address` (text, as a socket or a header gives it) lies in this network.
    public func contains(_ address: String) -> Bool {
        guard let parsed = Self.parse(address), parsed.count == bytes.count else { return false }
        return Self.masked(parsed, prefix: prefix) == bytes
    }

    /// The 4 or 16 bytes of an IPv4 or IPv6 address in text; an IPv4-mapped IPv6 address counts as IPv4. (`inet_pton`
    /// comes with Foundation on Linux and on Apple platforms.)
    static func parse(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return Array(bytes[12...]) }
        return bytes
    }

    private static func masked(_ address: [UInt8], prefix: Int) -> [UInt8] {
        address.enumerated().map { index, byte in
            let kept = min(max(prefix - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(UInt8(0xFF) >> kept)
        }
    }
}

/// The client's address when requests come through a load balancer (`--trusted-proxy`).
///
/// A connection from a trusted proxy carries the client's address in `X-Forwarded-For`, which the proxy appends to
/// (HAProxy's `option forwardfor`). Read from the right, each address a trusted proxy added is skipped; the first one
/// that is not a trusted proxy is the client. Everything left of it was written by the client and is not believed.
/// From any other peer the header is ignored, so a client cannot choose the address its limits are counted under.
struct TrustedProxies: Sendable {
    let networks: [IPNetwork]

    /// At most this many addresses of the header are looked at.
    static let maxHops = 16

    func isTrusted(_ address: String) -> Bool {
        networks.contains { $0.contains(address) }
    }

    /// The client's address for a request from `peer` with these `X-Forwarded-For` values.
    func clientAddress(peer: String?, forwardedFor values: [String]) -> String? {
        guard let peer, isTrusted(peer), !values.isEmpty else { return peer }
        let hops = values.joined(separator: ",").split(separator: ",").suffix(Self.maxHops)
        var client = peer
        for hop in hops.reversed() {
            let address = hop.trimmingCharacters(in: .whitespaces)
            guard IPNetwork.parse(address) != nil else { break }
            client = address
            guard isTrusted(address) else { break }
        }
        return client
    }
}

/// Sets `CofferRequestContext.remoteAddress` to the client's address behind a trusted proxy (`TrustedProxies`).
struct ClientAddressMiddleware: RouterMiddleware {
    let proxies: TrustedProxies

    func handle(
        _ request: Request, context: CofferRequestContext,
        next: (Request, CofferRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.remoteAddress = proxies.clientAddress(
            peer: context.remoteAddress, forwardedFor: request.headers[values: .xForwardedFor])
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
