import CofferCrypto
import CofferServerStore
import CofferServerTestSupport
import CofferSync
import CofferSyncAPI
import CofferTestSupport
import Foundation
import GRDB
import HTTPTypes
import Testing

/// A device that lost the answer to its refresh presents the spent token again with its retry key and keeps its
/// session; a copied token without the key is still a replay that ends the family (docs/FORMAT.md §8.2, §8.3, §8.5).
@Suite("Refresh retries")
struct RefreshRetryTests {
    static let token = "eyJhbGciOiJFUzI1NiJ9.e30.c2ln"

    /// Key bytes: the golden vector (0, 1, …, 31) and random ones.
    static let keys: [[UInt8]] = [Array(0..<32)] + (0..<8).map { _ in SystemRandom().bytes(32) }

    @Test("key store entry, wire text and digest match docs/FORMAT.md, read by Python", arguments: keys)
    func keystoreEntryGolden(keyBytes: [UInt8]) throws {
        let key = try #require(RefreshRetryKey(bytes: keyBytes))
        let oracle = try #require(
            try TestSupport.openSSLOracle([["op": "refresh_retry", "key": Self.hex(keyBytes), "token": Self.token]]).first as? [String: String])
        #expect(key.base64URL == oracle["wire"])
        #expect(Self.hex(key.digest) == oracle["digest"])
        let refreshing = SyncTokenEntry(refreshToken: Self.token, retryKey: key)
        #expect(Self.hex(refreshing.secret.bytes) == oracle["entry"])
        #expect(Self.hex(SyncTokenEntry(refreshToken: Self.token).secret.bytes) == oracle["idle_entry"])
        // Both forms read back; the idle form is also what versions before retry keys stored.
        let entryHex = try #require(oracle["entry"])
        let read = try #require(SyncTokenEntry(SecretBytes(Self.bytes(entryHex))))
        #expect(read.refreshToken == Self.token && read.retryKey?.bytes == keyBytes)
        let idle = try #require(SyncTokenEntry(SecretBytes(Array(Self.token.utf8))))
        #expect(idle.refreshToken == Self.token && idle.retryKey == nil)
        #expect(RefreshRetryKey(base64URL: key.base64URL)?.bytes == keyBytes)
        if keyBytes == Array(0..<32) {
            #expect(key.base64URL == "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
            #expect(Self.hex(key.digest) == "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd")
            #expect(Self.hex(refreshing.secret.bytes) == "01" + Self.hex(keyBytes) + "65794a68624763694f694a46557a49314e694a392e6533302e63326c6e")
        }
    }

    @Test("entries that are neither form are refused, and the key never shows in a description")
    func malformedEntries() {
        #expect(SyncTokenEntry(SecretBytes([UInt8]())) == nil)
        #expect(SyncTokenEntry(SecretBytes([0x01] + Array(repeating: 7, count: 32))) == nil, "a retry key without a token")
        #expect(SyncTokenEntry(SecretBytes([0x01] + Array(repeating: 7, count: 10))) == nil)
        let key = RefreshRetryKey(bytes: Array(repeating: 0xAB, count: 32))!
        #expect("\(key)" == "RefreshRetryKey(redacted)" && String(reflecting: key) == "RefreshRetryKey(redacted)")
        #expect(Mirror(reflecting: key).children.isEmpty)
        #expect(RefreshRetryKey(bytes: Array(repeating: 1, count: 31)) == nil)
    }

    @Test("the request's JSON: retry_key only when sent")
    func wireGolden() throws {
        let key = RefreshRetryKey(bytes: Array(0..<32))!
        let with = String(decoding: try WireJSON.encoder().encode(RefreshRequest(refreshToken: "t", retryKey: key.base64URL)), as: UTF8.self)
        #expect(with == #"{"refresh_token":"t","retry_key":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"}"#)
        let without = String(decoding: try WireJSON.encoder().encode(RefreshRequest(refreshToken: "t")), as: UTF8.self)
        #expect(without == #"{"refresh_token":"t"}"#)
        let decoded = try WireJSON.decoder().decode(RefreshRequest.self, from: Data(#"{"refresh_token":"t"}"#.utf8))
        #expect(decoded.retryKey == nil)
    }

    static let badKeys = [
        "", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8A",
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+",
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd/h8", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9",
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd h8", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8\n",
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHé",
    ]

    @Test("a malformed retry key is a 400 naming the field, and spends nothing", arguments: badKeys)
    func malformedKey(text: String) async throws {
        #expect(RefreshRetryKey(base64URL: text) == nil)
        try await withServer(.sqlite) { api, _ in
            let account = try await TestAccount.register(api)
            let answer = try await api.send(.post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: account.refresh, retryKey: text))
            #expect(answer.status == .badRequest && answer.error?.details?.field == "retry_key")
            #expect(text.isEmpty || !(answer.error?.message ?? "").contains(text))
            #expect(try await api.send(.post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: account.refresh)).status == .ok)
        }
    }

    @Test("a lost answer: the same key gets the same successor, newly signed; once it is used, the old token is a replay", arguments: Backend.allCases)
    func retryOverHTTP(backend: Backend) async throws {
        try await withServer(backend) { api, store in
            let account = try await TestAccount.register(api)
            let key = RefreshRetryKey(random: SystemRandom()).base64URL
            let request = RefreshRequest(refreshToken: account.refresh, retryKey: key)
            let lost = try await api.send(.post, "/v1/auth/refresh", json: request).decode(AuthResponse.self)
            let again = try await api.send(.post, "/v1/auth/refresh", json: request)
            #expect(again.status == .ok)
            let retried = try again.decode(AuthResponse.self)
            let (lostClaims, retriedClaims) = (try TokenTests.parts(lost.refreshToken), try TokenTests.parts(retried.refreshToken))
            #expect(retriedClaims.claims["jti"] as? String == lostClaims.claims["jti"] as? String)
            #expect(retriedClaims.claims["sid"] as? String == lostClaims.claims["sid"] as? String)
            #expect(retried.refreshToken != lost.refreshToken && retried.accessToken != lost.accessToken)
            #expect(try await api.send(.get, "/v1/account", token: retried.accessToken).status == .ok)
            let events = try await store.auditEvents(userID: account.userID, limit: 10).map(\.kind)
            #expect(events.contains(.refreshRetried) && !events.contains(.refreshReused))

            // The retried successor is the family's token: it rotates, and then the first token is a replay.
            let next = try await api.send(.post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: retried.refreshToken))
            #expect(next.status == .ok)
            let pair = try next.decode(AuthResponse.self)
            #expect(try await api.send(.post, "/v1/auth/refresh", json: request).status == .unauthorized)
            #expect(try await api.send(.get, "/v1/account", token: pair.accessToken).status == .unauthorized)
            #expect(try await store.auditEvents(userID: account.userID, limit: 10).contains { $0.kind == .refreshReused })
        }
    }

    @Test("a thief with a copied token and no key, or a wrong key, ends the family", arguments: Backend.allCases)
    func thief(backend: Backend) async throws {
        try await withServer(backend) { api, _ in
            for thiefKey in [nil, RefreshRetryKey(random: SystemRandom()).base64URL] {
                let account = try await TestAccount.register(api)
                let honest = try await api.send(
                    .post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: account.refresh, retryKey: RefreshRetryKey(random: SystemRandom()).base64URL)
                ).decode(AuthResponse.self)
                let stolen = try await api.send(.post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: account.refresh, retryKey: thiefKey))
                #expect(stolen.status == .unauthorized)
                #expect(try await api.send(.post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: honest.refreshToken)).status == .unauthorized)
                #expect(try await api.send(.get, "/v1/account", token: honest.accessToken).status == .unauthorized)
            }
        }
    }

    @Test("the store keeps SHA-256 of the key with the spent token, as Python computes it")
    func storedDigest() async throws {
        let path = try TestSupport.temporaryDirectory("retry-store") + "/server.sqlite"
        let keyBytes = SystemRandom().bytes(32)
        let key = try #require(RefreshRetryKey(bytes: keyBytes))
        let (family, first) = (UUID(), UUID())
        try await Backend.sqlite.withStore(sqliteFile: path) { store in
            let user = try await StoreConformanceTests.newUser(store)
            let now = StoreConformanceTests.now
            try await store.createSession(userID: user, family: family, tokenID: first, now: now, expiresAt: now + 60)
            _ = try await store.rotateRefreshToken(
                userID: user, family: family, tokenID: first, newTokenID: UUID(), retryKeyDigest: key.digest, now: now, expiresAt: now + 60)
        }
        let stored = try await DatabaseQueue(path: path).read { db in
            try Data.fetchOne(db, sql: "SELECT retry_key_hash FROM refresh_tokens WHERE id = ?", arguments: [first.uuidString.lowercased()])
        }
        let oracle = try #require(
            try TestSupport.openSSLOracle([["op": "refresh_retry", "key": Self.hex(keyBytes), "token": "t"]]).first as? [String: String])
        #expect(stored.map { Self.hex(Array($0)) } == oracle["digest"])
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }
}
