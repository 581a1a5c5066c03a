import CofferServer
import CofferServerStore
import CofferServerTestSupport
import CofferSyncAPI
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import Synchronization
import Testing

/// Forged, expired, confused and replayed tokens: every one is refused, and a replayed refresh token ends its family.
@Suite("Tokens")
struct TokenTests {
    struct Parts {
        var header: [String: Any]
        var claims: [String: Any]
        var signature: String
    }

    static func parts(_ token: String) throws -> Parts {
        let pieces = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        func json(_ text: String) throws -> [String: Any] {
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            let data = try #require(Data(base64Encoded: base64))
            return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }
        return Parts(header: try json(pieces[0]), claims: try json(pieces[1]), signature: pieces[2])
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func encode(_ object: [String: Any]) throws -> String {
        base64URL(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    /// A token assembled by hand, signed by `sign` over `header.payload`.
    static func token(header: [String: Any], claims: [String: Any], sign: (Data) throws -> Data) throws -> String {
        let input = "\(try encode(header)).\(try encode(claims))"
        return "\(input).\(base64URL(try sign(Data(input.utf8))))"
    }

    /// P-256's group order n, big-endian: (r, s) and (r, n − s) are both valid signatures of the same message.
    static let order = Array(Data(base64Encoded: "/////wAAAAD//////////7zm+q2nF56E87nKwvxjJVE=")!)

    static func bytes(base64URL text: String) throws -> [UInt8] {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Array(try #require(Data(base64Encoded: base64)))
    }

    /// n − s, big-endian.
    static func negate(_ s: some Collection<UInt8>) -> [UInt8] {
        let s = Array(s)
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in stride(from: 31, through: 0, by: -1) {
            let value = Int(order[index]) - Int(s[index]) - borrow
            borrow = value < 0 ? 1 : 0
            result[index] = UInt8((value + 256) % 256)
        }
        return result
    }

    /// Whether s ≤ n/2: s ≤ n − s.
    static func isLowS(_ signature: [UInt8]) -> Bool {
        let s = Array(signature[32...])
        return !negate(s).lexicographicallyPrecedes(s)
    }

    /// A P-256 signature of `data` in its canonical (low-S) form, as the server signs and requires.
    static func canonicalSignature(_ key: P256.Signing.PrivateKey, _ data: Data) throws -> Data {
        let raw = Array(try key.signature(for: data).rawRepresentation)
        return Data(isLowS(raw) ? raw : Array(raw[..<32]) + negate(raw[32...]))
    }

    static func serverKey(_ dataDirectory: String) throws -> P256.Signing.PrivateKey {
        let directory = "\(dataDirectory)/signing-keys"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: directory).sorted().last)
        return try P256.Signing.PrivateKey(pemRepresentation: String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8))
    }

    @Test("forged and misused access tokens are refused", arguments: Backend.allCases)
    func forgedAccessTokens(backend: Backend) async throws {
        let clock = TestClock()
        try await withServer(backend, clock: clock) { api, _ in
            let account = try await TestAccount.register(api)
            let real = try Self.parts(account.access)
            #expect(real.header["alg"] as? String == "ES256" && real.header["kid"] != nil)
            let serverKey = try Self.serverKey(api.dataDirectory)
            // The same claims under the real key verify (the harness itself is sound).
            let resigned = try Self.token(header: real.header, claims: real.claims) { try Self.canonicalSignature(serverKey, $0) }
            #expect(try await api.send(.get, "/v1/account", token: resigned).status == .ok)

            var forged: [String: String] = [:]
            forged["alg none"] = try Self.token(header: ["alg": "none", "typ": "JWT", "kid": real.header["kid"]!], claims: real.claims) { _ in Data() }
            forged["alg none, no signature part"] = "\(try Self.encode(["alg": "none"])).\(try Self.encode(real.claims))."
            let stranger = P256.Signing.PrivateKey()
            forged["wrong key, same kid"] = try Self.token(header: real.header, claims: real.claims) { try stranger.signature(for: $0).rawRepresentation }
            let publicPEM = Data(serverKey.publicKey.pemRepresentation.utf8)
            forged["HS256 keyed with the public key"] = try Self.token(
                header: ["alg": "HS256", "typ": "JWT", "kid": real.header["kid"]!], claims: real.claims
            ) { Data(HMAC<SHA256>.authenticationCode(for: $0, using: SymmetricKey(data: publicPEM))) }
            forged["unknown kid"] = try Self.token(header: ["alg": "ES256", "typ": "JWT", "kid": "k-unknown"], claims: real.claims) {
                try Self.canonicalSignature(serverKey, $0)
            }
            var tampered = real.claims
            tampered["sub"] = UUID().uuidString.lowercased()
            forged["tampered subject, old signature"] = "\(try Self.encode(real.header)).\(try Self.encode(tampered)).\(real.signature)"
            var wrongIssuer = real.claims
            wrongIssuer["iss"] = "someone-else"
            forged["wrong issuer"] = try Self.token(header: real.header, claims: wrongIssuer) { try Self.canonicalSignature(serverKey, $0) }
            var future = real.claims
            future["iat"] = (real.claims["iat"] as! Int) + 3600
            future["exp"] = (real.claims["exp"] as! Int) + 3600
            forged["issued in the future"] = try Self.token(header: real.header, claims: future) { try Self.canonicalSignature(serverKey, $0) }
            // The real token's second spelling: (r, n − s) verifies under P-256 (checked here), and is refused.
            let signingInput = String(account.access[..<account.access.lastIndex(of: ".")!])
            let realSignature = try Self.bytes(base64URL: real.signature)
            // Compared as Bools: a failed expectation prints its operands, and a token's signature has no place in test output.
            let signedLowS = Self.isLowS(realSignature)
            #expect(signedLowS, "the server signs in canonical form")
            let malleated = Data(realSignature[..<32] + Self.negate(realSignature[32...]))
            #expect(
                serverKey.publicKey.isValidSignature(
                    try P256.Signing.ECDSASignature(rawRepresentation: malleated), for: Data(signingInput.utf8)))
            forged["high-S copy of the real token"] = "\(signingInput).\(Self.base64URL(malleated))"
            // The same bytes spelt with the last character's unused bits set: base64 decoders often ignore them.
            let last = real.signature.last!
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            let sextet = alphabet.firstIndex(of: last)!
            forged["non-canonical base64 of the real signature"] = "\(signingInput).\(real.signature.dropLast())\(alphabet[sextet | 0b1111])"
            // A critical header this server does not understand, and a token not valid for an hour yet.
            forged["crit header"] = try Self.token(header: real.header.merging(["crit": ["exp"]]) { $1 }, claims: real.claims) {
                try Self.canonicalSignature(serverKey, $0)
            }
            forged["crit header, not a list"] = try Self.token(header: real.header.merging(["crit": "exp"]) { $1 }, claims: real.claims) {
                try Self.canonicalSignature(serverKey, $0)
            }
            forged["nbf in an hour"] = try Self.token(header: real.header, claims: real.claims.merging(["nbf": (real.claims["iat"] as! Int) + 3600]) { $1 }) {
                try Self.canonicalSignature(serverKey, $0)
            }
            let notBeforeNow = try Self.token(header: real.header, claims: real.claims.merging(["nbf": real.claims["iat"] as! Int]) { $1 }) {
                try Self.canonicalSignature(serverKey, $0)
            }
            #expect(try await api.send(.get, "/v1/account", token: notBeforeNow).status == .ok, "an nbf that has passed is fine")
            forged["refresh token as access token"] = account.refresh
            forged["garbage"] = "not.a.token"
            // Twice each: the second time, a token whose signature verified comes from the server's cache of verified
            // tokens, and its claims must be checked all the same.
            for _ in 0..<2 {
                for (name, token) in forged {
                    let answer = try await api.send(.get, "/v1/account", token: token)
                    #expect(answer.status == .unauthorized, "\(name)")
                    #expect(answer.error?.error == "unauthorized", "\(name)")
                }
            }
            #expect(try await api.send(.get, "/v1/account", token: account.refresh).error?.message == "Invalid token type (expected access token)")

            // An access token used as a refresh token.
            #expect(try await api.send(.post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: account.access)).status == .unauthorized)

            // Expiry follows the server's clock, also for a token verified (and cached) a moment before.
            clock.advance(15 * 60 - 1)
            #expect(try await api.send(.get, "/v1/account", token: account.access).status == .ok)
            clock.advance(2)
            #expect(try await api.send(.get, "/v1/account", token: account.access).status == .unauthorized)
        }
    }

    @Test("a refresh token used twice revokes its whole family", arguments: Backend.allCases)
    func refreshReuse(backend: Backend) async throws {
        try await withServer(backend) { api, store in
            let account = try await TestAccount.register(api)
            let first = try await api.send(.post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: account.refresh))
            let rotated = try first.decode(AuthResponse.self)
            #expect(rotated.refreshToken != account.refresh)
            let replay = try await api.send(.post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: account.refresh))
            #expect(replay.status == .unauthorized)
            // The thief's replay also kills the legitimate holder's newer tokens of that family.
            #expect(try await api.send(.post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: rotated.refreshToken)).status == .unauthorized)
            #expect(try await api.send(.get, "/v1/account", token: rotated.accessToken).status == .unauthorized)
            #expect(try await store.auditEvents(userID: account.userID, limit: 10).contains { $0.kind == .refreshReused })
            // Other families live on.
            let other = try await account.login(api)
            #expect(try await api.send(.get, "/v1/account", token: other.accessToken).status == .ok)
        }
    }

    /// A signer leaves s high about half the time: 40 tokens all canonical would otherwise happen once in 2^40.
    @Test("every token the server signs is in canonical (low-S) form, so none is refused as a second spelling")
    func signsCanonically() async throws {
        try await withServer(.sqlite) { api, _ in
            let account = try await TestAccount.register(api)
            var refresh = account.refresh
            for _ in 0..<20 {
                let answer = try await api.send(.post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: refresh)).decode(AuthResponse.self)
                for token in [answer.accessToken, answer.refreshToken] {
                    let lowS = Self.isLowS(try Self.bytes(base64URL: String(token[token.index(after: token.lastIndex(of: ".")!)...])))
                    #expect(lowS)
                }
                #expect(try await api.send(.get, "/v1/account", token: answer.accessToken).status == .ok)
                refresh = answer.refreshToken
            }
        }
    }

    @Test("refresh tokens expire after 7 days", arguments: Backend.allCases)
    func refreshExpiry(backend: Backend) async throws {
        let clock = TestClock()
        try await withServer(backend, clock: clock) { api, _ in
            let account = try await TestAccount.register(api)
            clock.advance(7 * 24 * 3600 + 1)
            #expect(try await api.send(.post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: account.refresh)).status == .unauthorized)
        }
    }

    @Test("signing keys rotate: new tokens carry the new kid, old tokens still verify until retired", arguments: [Backend.sqlite])
    func keyRotation(backend: Backend) async throws {
        let clock = TestClock()
        let configuration = try testConfiguration(clock: clock)
        let data = configuration.dataDirectory
        let final = configuration
        try await backend.withStore { store in
            let before = try await Self.issue(configuration: final, store: store)
            let newKey = try SigningKeyStore.rotate(dataDirectory: data, now: clock.now + 1, retireAfter: 7 * 24 * 3600)
            let after = try await Self.issue(configuration: final, store: store, check: before.access)
            #expect(try Self.parts(after.access).header["kid"] as? String == newKey)
            #expect(try Self.parts(before.access).header["kid"] as? String != newKey)
            #expect(after.oldStillValid)
        }
    }

    /// Starts a server on `configuration`, registers, and reports whether `check` (an older token) still works.
    static func issue(configuration: ServerConfiguration, store: any ServerStore, check: String? = nil) async throws -> (access: String, oldStillValid: Bool) {
        let router = try await CofferServerApplication.router(configuration: configuration, store: store, logger: LogCollector().logger())
        let result = Mutex<(String, Bool)>(("", false))
        try await Application(router: router).test(.router) { client in
            let api = APIClient(client: client, dataDirectory: configuration.dataDirectory)
            let account = try await TestAccount.register(api)
            var valid = false
            if let check { valid = try await api.send(.get, "/v1/account", token: check).status == .ok }
            result.withLock { $0 = (account.access, valid) }
        }
        return result.withLock { $0 }
    }
}
