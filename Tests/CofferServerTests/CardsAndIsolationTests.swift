import CofferCrypto
import CofferServer
import CofferServerStore
import CofferServerTestSupport
import CofferSyncAPI
import Crypto
import CryptoExtras
import Foundation
import HTTPTypes
import Testing

/// The CardOnCue-compatible face, Sign in with Apple, and the cross-user matrix.
@Suite("CardOnCue face and isolation")
struct CardsAndIsolationTests {
    static let payload = "bm9uY2U=:Y2lwaGVydGV4dA==:dGFn"

    static func createCard(
        _ api: APIClient, _ token: String, name: String = "Costco", tags: [String] = ["membership"], networks: [String] = ["costco"]
    ) async throws -> [String: Any] {
        let body: [String: Any] = [
            "name": name, "barcode_type": "code128", "payload_encrypted": payload, "tags": tags, "network_ids": networks,
            "valid_to": "2030-01-01T00:00:00Z", "metadata": ["preferredForNetwork_costco": "true"],
        ]
        let answer = try await api.send(.post, "/v1/cards", token: token, raw: try JSONSerialization.data(withJSONObject: body))
        try #require(answer.status == .created, "\(String(decoding: answer.body, as: UTF8.self))")
        return try #require(answer.json)
    }

    @Test("cards: create 201, list with filters, get, patch, delete 204 archives", arguments: Backend.allCases)
    func cards(backend: Backend) async throws {
        try await withServer(backend) { api, _ in
            let account = try await TestAccount.register(api)
            let costco = try await Self.createCard(api, account.access)
            let library = try await Self.createCard(api, account.access, name: "SFPL", tags: ["library"], networks: ["sfpl"])
            #expect(costco["payload_encrypted"] as? String == Self.payload && costco["one_time"] as? Bool == false)
            #expect(costco["archived_at"] is NSNull && costco["valid_from"] is NSNull && costco["user_id"] as? String == account.auth.user.id)
            let id = try #require(costco["id"] as? String)

            func list(_ query: String) async throws -> [String] {
                let answer = try await api.send(.get, "/v1/cards\(query)", token: account.access)
                let json = try #require(answer.json)
                let cards = try #require(json["cards"] as? [[String: Any]])
                #expect(json["count"] as? Int == cards.count)
                return cards.compactMap { $0["name"] as? String }.sorted()
            }
            #expect(try await list("") == ["Costco", "SFPL"])
            #expect(try await list("?network_id=sfpl") == ["SFPL"])
            #expect(try await list("?tags=membership") == ["Costco"])
            #expect(try await list("?tags=membership,library").isEmpty)

            let patch: [String: Any] = ["name": "Costco Wholesale", "tags": ["grocery"], "valid_to": NSNull()]
            let patched = try await api.send(.patch, "/v1/cards/\(id)", token: account.access, raw: try JSONSerialization.data(withJSONObject: patch))
            #expect(patched.status == .ok)
            #expect(patched.json?["name"] as? String == "Costco Wholesale" && patched.json?["valid_to"] is NSNull)
            #expect(patched.json?["network_ids"] as? [String] == ["costco"])
            for forbidden in ["payload_encrypted", "barcode_type", "used_at"] {
                let answer = try await api.send(
                    .patch, "/v1/cards/\(id)", token: account.access, raw: try JSONSerialization.data(withJSONObject: [forbidden: "x"]))
                #expect(answer.status == .badRequest && answer.error?.details?.field == forbidden)
            }

            #expect(try await api.send(.delete, "/v1/cards/\(id)", token: account.access).status == .noContent)
            #expect(try await list("") == ["SFPL"])
            #expect(try await list("?include_archived=true") == ["Costco Wholesale", "SFPL"])
            #expect(try await api.send(.get, "/v1/cards/\(id)", token: account.access).json?["archived_at"] is String)

            let missing = try await api.send(.get, "/v1/cards/\(UUID())", token: account.access)
            #expect(missing.status == .notFound && missing.error == ErrorBody(error: "not_found", message: "Card not found"))
            #expect(try await api.send(.get, "/v1/cards/not-a-uuid", token: account.access).status == .notFound)
            let badType = try await api.send(
                .post, "/v1/cards", token: account.access,
                raw: try JSONSerialization.data(withJSONObject: ["name": "x", "barcode_type": "datamatrix", "payload_encrypted": "p"]))
            #expect(badType.status == .badRequest && badType.error?.message.hasPrefix("Invalid barcode_type. Must be one of: qr, code128") == true)
            let missingField = try await api.send(.post, "/v1/cards", token: account.access, raw: Data(#"{"name":"x"}"#.utf8))
            #expect(missingField.status == .badRequest && missingField.error?.details?.field == "payload_encrypted")

            // A card without a barcode: barcode_type left out or null, and left out of every answer.
            var numbered: [String] = []
            for body in [#"{"name":"Gym","payload_encrypted":"p"}"#, #"{"name":"Pool","barcode_type":null,"payload_encrypted":"p"}"#] {
                let created = try await api.send(.post, "/v1/cards", token: account.access, raw: Data(body.utf8))
                #expect(created.status == .created && created.json?.keys.contains("barcode_type") == false)
                #expect(created.json?["valid_from"] is NSNull, "the other unset members are still written as null")
                numbered.append(try #require(created.json?["id"] as? String))
            }
            let fetched = try await api.send(.get, "/v1/cards/\(numbered[0])", token: account.access)
            #expect(fetched.status == .ok && fetched.json?.keys.contains("barcode_type") == false)

            let export = try await api.send(.get, "/v1/user/export", token: account.access)
            let json = try #require(export.json)
            #expect((json["user"] as? [String: Any])?["email"] as? String == account.email)
            let exported = try #require(json["cards"] as? [[String: Any]])
            #expect(exported.count == 4)
            #expect(exported.first?["payload"] as? String == Self.payload)
            #expect(exported.filter { $0["barcode_type"] == nil }.compactMap { $0["name"] as? String }.sorted() == ["Gym", "Pool"])
            _ = library
        }
    }

    @Test("user B, with every kind of token, can read, change or delete nothing of user A's", arguments: Backend.allCases)
    func crossUserMatrix(backend: Backend) async throws {
        try await withServer(backend) { api, store in
            let alice = try await TestAccount.register(api)
            let bob = try await TestAccount.register(api)
            let aliceItems = fakeItems(3)
            _ = try await api.send(.post, "/v1/sync/push", token: alice.access, json: aliceItems)
            let card = try await Self.createCard(api, alice.access)
            let cardID = try #require(card["id"] as? String)
            let itemID = aliceItems.items[0].item.id
            let before = try await Self.snapshot(api, alice)

            var overwrite = fakeItems(1, revision: 2, base: 1)
            overwrite.items[0].item.id = itemID
            let patch = try JSONSerialization.data(withJSONObject: ["name": "pwned"])
            let bobTokens = ["bob access": bob.access, "bob refresh": bob.refresh, "alice refresh": alice.refresh]
            for (tokenName, token) in bobTokens {
                let requests: [(HTTPRequest.Method, String, Data?)] = [
                    (.get, "/v1/cards/\(cardID)", nil), (.patch, "/v1/cards/\(cardID)", patch), (.delete, "/v1/cards/\(cardID)", nil),
                    (.get, "/v1/cards", nil), (.get, "/v1/sync/changes?since=0", nil), (.get, "/v1/user/export", nil),
                    (.get, "/v1/account", nil), (.post, "/v1/sync/push", try WireJSON.encoder().encode(overwrite)),
                    (.delete, "/v1/sync/items", nil), (.post, "/v1/auth/logout", nil),
                    (
                        .post, "/v1/account/passphrase",
                        try WireJSON.encoder().encode(PassphraseChangeRequest(authKey: alice.authKey, newAuthKey: bob.authKey, slot: bob.slot))
                    ),
                ]
                for (method, path, body) in requests {
                    let answer = try await api.send(method, path, token: token, raw: body)
                    let text = String(decoding: answer.body, as: UTF8.self)
                    #expect(
                        !text.contains(cardID) && !text.contains(itemID.uuidString.lowercased()) && !text.contains(alice.email),
                        "\(tokenName) \(method) \(path) leaked Alice's data")
                    if tokenName != "bob access" {
                        #expect(answer.status == .unauthorized, "\(tokenName) \(method) \(path)")
                    } else if path.contains(cardID) {
                        #expect(answer.status == .notFound, "\(tokenName) \(method) \(path)")
                    }
                }
            }
            let after = try await Self.snapshot(api, alice)
            #expect(after == before)
            // Bob's push of Alice's id made (and his revoke then deleted) Bob's own row only.
            #expect(try await store.item(userID: alice.userID, id: itemID)?.revision == 1)
            #expect(try await store.user(id: alice.userID)?.authHash == (try await store.user(id: alice.userID))?.authHash)
            #expect(try await api.send(.post, "/v1/auth/login", json: LoginRequest(email: alice.email, authKey: alice.authKey)).status == .ok)
        }
    }

    /// Everything Alice can see, as bytes.
    static func snapshot(_ api: APIClient, _ account: TestAccount) async throws -> [Data] {
        var result: [Data] = []
        for path in ["/v1/sync/changes?since=0", "/v1/cards?include_archived=true"] {
            let answer = try await api.send(.get, path, token: account.access)
            #expect(answer.status == .ok)
            result.append(answer.body)
        }
        return result
    }

    // MARK: Sign in with Apple

    struct AppleSigner {
        let key: _RSA.Signing.PrivateKey
        let kid: String

        init() throws {
            key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            kid = "apple-test-\(UUID().uuidString.prefix(6))"
        }

        /// A JWKS file holding the public key.
        func jwks(directory: String) throws -> String {
            let primitives = try key.publicKey.getKeyPrimitives()
            let n = primitives.modulus, e = primitives.publicExponent
            let json: [String: Any] = [
                "keys": [
                    [
                        "kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
                        "n": TokenTests.base64URL(n), "e": TokenTests.base64URL(e),
                    ]
                ]
            ]
            let path = "\(directory)/apple-jwks.json"
            try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: path))
            return path
        }

        func token(claims: [String: Any], alg: String = "RS256", kid: String? = nil) throws -> String {
            try TokenTests.token(header: ["alg": alg, "kid": kid ?? self.kid], claims: claims) { input in
                try key.signature(for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5).rawRepresentation
            }
        }
    }

    @Test("Sign in with Apple: verified against the JWKS, issuer, audience and expiry; finds or creates the user", arguments: Backend.allCases)
    func apple(backend: Backend) async throws {
        let signer = try AppleSigner()
        let clock = TestClock()
        let directory = try CofferTestSupportDirectory.make()
        let jwks = try signer.jwks(directory: directory)
        try await withServer(
            backend, clock: clock,
            configure: {
                $0.appleJWKSPath = jwks
                $0.appleAudience = "app.coffer.ios"
            }
        ) { api, _ in
            let now = Int(clock.now.timeIntervalSince1970)
            let subject = "001234.\(UUID().uuidString.lowercased())"
            let good: [String: Any] = ["iss": "https://appleid.apple.com", "aud": "app.coffer.ios", "sub": subject, "iat": now, "exp": now + 300]
            func signIn(_ token: String, user: String? = subject) async throws -> APIClient.Answer {
                try await api.send(
                    .post, "/v1/auth/apple",
                    json: AppleAuthRequest(
                        identityToken: token, userIdentifier: user, email: nil,
                        fullName: .init(givenName: "Ada", familyName: "Lovelace")))
            }
            let first = try await signIn(try signer.token(claims: good))
            #expect(first.status == .ok)
            let auth = try first.decode(AuthResponse.self)
            #expect(auth.user.fullName == "Ada Lovelace" && auth.user.email == "\(subject)@privaterelay.appleid.com")
            #expect(auth.user.preferences == UserInfo.Preferences(syncEnabled: false, notificationRadiusMeters: 100))
            let second = try await signIn(try signer.token(claims: good)).decode(AuthResponse.self)
            #expect(second.user.id == auth.user.id)
            #expect(try await api.send(.get, "/v1/cards", token: second.accessToken).status == .ok)

            var refused: [String: String] = [:]
            var claims = good; claims["aud"] = "someone.else"
            refused["wrong audience"] = try signer.token(claims: claims)
            claims = good; claims["iss"] = "https://evil.example"
            refused["wrong issuer"] = try signer.token(claims: claims)
            claims = good; claims["exp"] = now - 1
            refused["expired"] = try signer.token(claims: claims)
            refused["unknown kid"] = try signer.token(claims: good, kid: "other")
            let modulus = try signer.key.publicKey.getKeyPrimitives().modulus
            refused["HS256 keyed with the modulus"] = try TokenTests.token(header: ["alg": "HS256", "kid": signer.kid], claims: good) {
                Data(HMAC<SHA256>.authenticationCode(for: $0, using: SymmetricKey(data: modulus)))
            }
            refused["alg none"] = try TokenTests.token(header: ["alg": "none", "kid": signer.kid], claims: good) { _ in Data() }
            let other = try AppleSigner()
            refused["another key"] = try TokenTests.token(header: ["alg": "RS256", "kid": signer.kid], claims: good) { input in
                try other.key.signature(for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5).rawRepresentation
            }
            for (name, token) in refused {
                #expect(try await signIn(token).status == .unauthorized, "\(name)")
            }
            #expect(try await signIn(try signer.token(claims: good), user: "someone-else").status == .unauthorized)
        }
    }
}

enum CofferTestSupportDirectory {
    static func make() throws -> String {
        let path = NSTemporaryDirectory() + "coffer-apple-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
