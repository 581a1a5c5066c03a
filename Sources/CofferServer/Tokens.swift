import CofferCrypto
import Crypto
import Foundation
import JWTKit
import Synchronization

/// What a verified token says.
struct TokenClaims: JWTPayload, Equatable {
    enum Kind: String, Codable, Sendable {
        case access, refresh
    }

    var iss: String
    /// Who the token is for: `TokenService.audience(of:)` its kind. Access and refresh tokens share the signing keys,
    /// so the audience (as well as `typ`) keeps one from ever standing in for the other; a token without it does not
    /// decode and is refused.
    var aud: String
    var sub: String
    /// The session family: every token of one login shares it, so a family can be revoked as a whole.
    var sid: String
    /// Token id; refresh tokens are tracked by it.
    var jti: String
    var typ: Kind
    var iat: Int64
    var exp: Int64
    /// Not before (RFC 7519 §4.1.5): Coffer's tokens carry none, and one that does is honoured.
    var nbf: Int64?

    /// Claims are checked by `TokenService` against its injectable clock, not here.
    func verify(using algorithm: some JWTAlgorithm) throws {}
}

/// A verified access token.
struct AuthenticatedSession: Sendable {
    let userID: UUID
    let family: UUID
}

/// Signs and verifies Coffer's own tokens (ES256, every key with a `kid`), and verifies Apple identity tokens against
/// a separate key set, so that no key of one kind can ever vouch for a token of the other.
final class TokenService: Sendable {
    static let issuer = "coffer-server"
    static let appleIssuer = "https://appleid.apple.com"

    /// The audience of each token kind: the API for access tokens, the refresh endpoint for refresh tokens.
    static func audience(of kind: TokenClaims.Kind) -> String {
        switch kind {
        case .access: return "coffer-server/api"
        case .refresh: return "coffer-server/refresh"
        }
    }

    private let keys: JWTKeyCollection
    private let currentKeyID: JWKIdentifier
    private let knownKeyIDs: Set<String>
    private let apple: JWTKeyCollection?
    private let appleKeyIDs: Set<String>
    private let appleAudience: String?
    private let clock: @Sendable () -> Date
    private let verified = Mutex(VerifiedTokens())
    let accessLifetime: Int
    let refreshLifetime: Int

    init(signingKeys: SigningKeyStore.Loaded, appleJWKS: JWKS?, appleAudience: String?, configuration: ServerConfiguration) async throws {
        let keys = JWTKeyCollection()
        for key in signingKeys.keys {
            await keys.add(ecdsa: key.privateKey, kid: JWKIdentifier(string: key.id))
        }
        self.keys = keys
        currentKeyID = JWKIdentifier(string: signingKeys.current.id)
        knownKeyIDs = Set(signingKeys.keys.map(\.id))
        if let appleJWKS {
            let apple = JWTKeyCollection()
            let rsaKeys = JWKS(keys: appleJWKS.keys.filter { $0.keyType == .rsa && $0.keyIdentifier != nil })
            try await apple.add(jwks: rsaKeys)
            self.apple = apple
            appleKeyIDs = Set(rsaKeys.keys.compactMap { $0.keyIdentifier?.string })
        } else {
            apple = nil
            appleKeyIDs = []
        }
        self.appleAudience = appleAudience
        clock = configuration.clock
        accessLifetime = configuration.accessTokenLifetime
        refreshLifetime = configuration.refreshTokenLifetime
    }

    /// An access token for `userID` in session `family`.
    func accessToken(userID: UUID, family: UUID) async throws -> String {
        try await sign(userID: userID, family: family, tokenID: UUID(), kind: .access, lifetime: accessLifetime)
    }

    /// A refresh token with id `tokenID`.
    func refreshToken(userID: UUID, family: UUID, tokenID: UUID) async throws -> String {
        try await sign(userID: userID, family: family, tokenID: tokenID, kind: .refresh, lifetime: refreshLifetime)
    }

    var refreshExpiry: Date { clock().addingTimeInterval(TimeInterval(refreshLifetime)) }

    private func sign(userID: UUID, family: UUID, tokenID: UUID, kind: TokenClaims.Kind, lifetime: Int) async throws -> String {
        let now = UnixTime.seconds(clock())
        let claims = TokenClaims(
            iss: Self.issuer, aud: Self.audience(of: kind), sub: userID.lowercasedString,
            sid: family.lowercasedString, jti: tokenID.lowercasedString, typ: kind, iat: now,
            exp: now + Int64(lifetime))
        var header = JWTHeader()
        header.typ = "JWT"
        return ES256Signature.canonical(try await keys.sign(claims, kid: currentKeyID, header: header))
    }

    /// The claims of a token of `kind`, or nil for anything else: wrong algorithm, unknown key, a `crit` header, a
    /// non-canonical (high-S) or bad signature, wrong issuer, audience or type, expired, issued in the future or not
    /// valid yet (`nbf`).
    func verify(_ token: String, kind: TokenClaims.Kind) async -> TokenClaims? {
        guard token.utf8.count <= Self.maximumTokenBytes else { return nil }
        let now = UnixTime.seconds(clock())
        let digest = SHA256.hash(data: Data(token.utf8))
        let claims: TokenClaims
        if let known = verified.withLock({ $0.claims(for: digest) }) {
            claims = known
        } else {
            guard let header = Self.header(of: token), header.alg == "ES256", header.crit == nil, let kid = header.kid,
                knownKeyIDs.contains(kid), ES256Signature.isCanonical(token),
                let checked = try? await keys.verify(token, as: TokenClaims.self)
            else { return nil }
            verified.withLock { $0.insert(checked, for: digest, now: now) }
            claims = checked
        }
        guard claims.iss == Self.issuer, claims.aud == Self.audience(of: kind), claims.typ == kind, claims.exp > now,
            claims.iat <= now + 60, (claims.nbf ?? now) <= now + 60, UUID(uuidString: claims.sub) != nil, UUID(uuidString: claims.sid) != nil,
            UUID(uuidString: claims.jti) != nil
        else { return nil }
        return claims
    }

    /// Whether a token verifies as some other kind than `kind` (to say "wrong token type" rather than "invalid").
    func isValidToken(_ token: String, otherThan kind: TokenClaims.Kind) async -> Bool {
        let other: TokenClaims.Kind = kind == .access ? .refresh : .access
        return await verify(token, kind: other) != nil
    }

    /// A verified Apple identity token's subject and email: RS256 against the configured JWKS, issuer Apple, audience
    /// our client id, not expired.
    func verifyApple(_ token: String) async -> AppleIdentity? {
        guard let apple, let appleAudience else { return nil }
        guard let header = Self.header(of: token), header.alg == "RS256", header.crit == nil, let kid = header.kid,
            appleKeyIDs.contains(kid)
        else { return nil }
        guard let claims = try? await apple.verify(token, as: AppleClaims.self) else { return nil }
        let now = UnixTime.seconds(clock())
        guard claims.iss == Self.appleIssuer, claims.aud.contains(appleAudience), claims.exp > now, claims.iat <= now + 60,
            (claims.nbf ?? now) <= now + 60,
            !claims.sub.isEmpty, claims.sub.utf8.count <= 255
        else { return nil }
        return AppleIdentity(subject: claims.sub, email: claims.email)
    }

    var appleConfigured: Bool { apple != nil && appleAudience != nil }

    /// Longer tokens are refused unread; ours are about 400 bytes, Apple's under 2,000.
    static let maximumTokenBytes = 8192

    struct Header: Decodable {
        var alg: String?
        var kid: String?
        /// Extensions the token says must be understood (RFC 7515 §4.1.11). Coffer understands none, so a token with
        /// this header, whatever it lists, is refused; one whose `crit` is not a list of names does not even decode.
        var crit: [String]?
    }

    /// The token's header, decoded without trusting it.
    static func header(of token: String) -> Header? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, token.utf8.count <= maximumTokenBytes, let data = Data(base64URL: String(parts[0])) else { return nil }
        return try? JSONDecoder().decode(Header.self, from: data)
    }
}

/// Tokens whose header and signature verified, by the SHA-256 of the token (the tokens themselves are not kept), with
/// their claims. A client sends the same access token with every request for its 15 minutes, and the signature check
/// (an ECDSA verification and two JSON decodings) took about 7% of the server's CPU per request; the claims (type,
/// issuer, expiry) are still checked on every use. Signing keys change only with a restart, so an entry never
/// outlives the key that vouched for it. At `capacity`, expired entries go, and all of them if that is not enough.
struct VerifiedTokens {
    static let capacity = 10_000
    private var entries: [SHA256Digest: TokenClaims] = [:]

    func claims(for digest: SHA256Digest) -> TokenClaims? { entries[digest] }

    mutating func insert(_ claims: TokenClaims, for digest: SHA256Digest, now: Int64) {
        if entries.count >= Self.capacity {
            entries = entries.filter { $0.value.exp > now }
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
        }
        entries[digest] = claims
    }
}

/// Who a verified Apple identity token names.
struct AppleIdentity: Sendable {
    let subject: String
    let email: String?
}

/// The claims of an Apple identity token that sign-in needs. `aud` may be a string or an array.
struct AppleClaims: JWTPayload {
    var iss: String
    var sub: String
    var aud: [String]
    var exp: Int64
    var iat: Int64
    var nbf: Int64?
    var email: String?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nbf, email
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decode(String.self, forKey: .iss)
        sub = try container.decode(String.self, forKey: .sub)
        if let single = try? container.decode(String.self, forKey: .aud) {
            aud = [single]
        } else {
            aud = try container.decode([String].self, forKey: .aud)
        }
        exp = try container.decode(Int64.self, forKey: .exp)
        iat = try container.decode(Int64.self, forKey: .iat)
        nbf = try container.decodeIfPresent(Int64.self, forKey: .nbf)
        email = try container.decodeIfPresent(String.self, forKey: .email)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(iss, forKey: .iss)
        try container.encode(sub, forKey: .sub)
        try container.encode(aud, forKey: .aud)
        try container.encode(exp, forKey: .exp)
        try container.encode(iat, forKey: .iat)
        try container.encodeIfPresent(email, forKey: .email)
    }

    func verify(using algorithm: some JWTAlgorithm) throws {}
}

extension Data {
    /// Unpadded base64url.
    func base64URLEncodedString() -> String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes unpadded base64url.
    init?(base64URL text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        self.init(base64Encoded: base64)
    }
}

/// ES256 signatures in their canonical form. An ECDSA signature (r, s) is just as valid as (r, n − s), so every token
/// would have a second spelling that verifies; a token is accepted only with s ≤ n/2 ("low S", as Bitcoin and
/// Ethereum require), and the tokens signed here are brought to it.
enum ES256Signature {
    /// The order n of P-256's group, big-endian.
    static let order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]
    /// ⌊n / 2⌋, big-endian.
    static let halfOrder: [UInt8] = [
        0x7F, 0xFF, 0xFF, 0xFF, 0x80, 0x00, 0x00, 0x00, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xDE, 0x73, 0x7D, 0x56, 0xD3, 0x8B, 0xCF, 0x42, 0x79, 0xDC, 0xE5, 0x61, 0x7E, 0x31, 0x92, 0xA8,
    ]

    /// Whether the token's signature is 64 bytes (r ‖ s) with 0 < s ≤ n/2, spelt in canonical base64url (unpadded,
    /// the unused low bits of its last character zero: otherwise up to 16 spellings decode to the same bytes).
    static func isCanonical(_ token: String) -> Bool {
        guard let signature = signature(of: token),
            token[token.index(after: token.lastIndex(of: ".")!)...] == Data(signature).base64URLEncodedString()
        else { return false }
        let s = Array(signature[32...])
        guard s.contains(where: { $0 != 0 }) else { return false }
        return s == halfOrder || s.lexicographicallyPrecedes(halfOrder)
    }

    /// The token with s replaced by n − s when s > n/2 (the same signature, in its canonical form).
    static func canonical(_ token: String) -> String {
        guard let signature = signature(of: token), !isCanonical(token) else { return token }
        let s = Array(signature[32...])
        var difference = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in stride(from: 31, through: 0, by: -1) {
            var value = Int(order[index]) - Int(s[index]) - borrow
            borrow = value < 0 ? 1 : 0
            if value < 0 { value += 256 }
            difference[index] = UInt8(value)
        }
        let signingInput = token[..<token.lastIndex(of: ".")!]
        return signingInput + "." + Data(signature[..<32] + difference).base64URLEncodedString()
    }

    private static func signature(of token: String) -> [UInt8]? {
        guard let dot = token.lastIndex(of: "."), let data = Data(base64URL: String(token[token.index(after: dot)...])),
            data.count == 64
        else { return nil }
        return Array(data)
    }
}
