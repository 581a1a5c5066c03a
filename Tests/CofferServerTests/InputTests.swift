import CofferCrypto
import CofferServer
import CofferServerStore
import CofferServerTestSupport
import CofferSyncAPI
import CofferTestSupport
import Crypto
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import Testing

/// Inputs taken exactly: emails in one Unicode form, token audiences, malformed HTTP, pushes an account may not make,
/// and the date forms of CardOnCue's clients.
@Suite("Exact inputs")
struct InputTests {
    /// One address in its two Unicode forms, with the combining accent spelled out.
    static func address(_ tag: String) -> (nfc: String, nfd: String) {
        ("jos\u{E9}-\(tag)@example.org", "jose\u{301}-\(tag)@example.org")
    }

    static func tag() -> String { String(UUID().uuidString.prefix(8)).lowercased() }

    // MARK: Emails

    @Test("an email's NFC and NFD forms are one account: register, login, pre-login and the failed-login limit", arguments: Backend.allCases)
    func emailForms(backend: Backend) async throws {
        try await withServer(backend) { api, store in
            let (nfc, nfd) = Self.address(Self.tag())
            #expect(!nfc.utf8.elementsEqual(nfd.utf8))
            let account = try await TestAccount.register(api, email: nfd.uppercased())
            // Stored, and answered, in NFC lower case.
            let stored = try #require(try await store.user(id: account.userID)?.email)
            #expect(stored.utf8.elementsEqual(nfc.utf8))
            #expect(account.auth.user.email.map { Array($0.utf8) } == Array(nfc.utf8))

            let (again, _) = try TestAccount.registration(email: nfc)
            let duplicate = try await api.send(.post, "/v1/auth/register", json: again)
            #expect(duplicate.status == .conflict && duplicate.error?.error == "account_exists")

            for form in [nfc, nfd, nfd.uppercased(), " \(nfc) "] {
                let login = try await api.send(.post, "/v1/auth/login", json: LoginRequest(email: form, authKey: account.authKey))
                #expect(login.status == .ok, "login as \(Array(form.unicodeScalars))")
                #expect(try login.decode(AuthResponse.self).user.id == account.auth.user.id)
                let prelogin = try await api.send(.post, "/v1/auth/prelogin", json: PreloginRequest(email: form))
                #expect(try prelogin.decode(PreloginResponse.self).salt == account.slot.salt)
            }

            // An unknown address gets one stand-in salt whatever its form.
            let (unknownNFC, unknownNFD) = Self.address(Self.tag())
            let fakeNFC = try await api.send(.post, "/v1/auth/prelogin", json: PreloginRequest(email: unknownNFC))
            let fakeNFD = try await api.send(.post, "/v1/auth/prelogin", json: PreloginRequest(email: unknownNFD))
            #expect(fakeNFC.status == .ok && fakeNFC.body == fakeNFD.body)

            // Failed logins in either form count against the one account.
            let wrongKey = Data(count: 32).base64EncodedString()
            for form in [nfc, nfd, nfc, nfd, nfd.uppercased()] {
                let answer = try await api.send(.post, "/v1/auth/login", json: LoginRequest(email: form, authKey: wrongKey))
                #expect(answer.status == .unauthorized)
            }
            let limited = try await api.send(.post, "/v1/auth/login", json: LoginRequest(email: nfc, authKey: account.authKey))
            #expect(limited.status == .tooManyRequests)
        }
    }

    /// Users whose emails were stored before NFC, written straight into the database: created order, id, email,
    /// deleted.
    struct LegacyUsers {
        let tag = InputTests.tag()
        let ids = (0..<6).map { _ in UUID() }
        /// "ậ" as two different orders of its combining marks; both are "\u{1EAD}" in NFC.
        var rows: [(id: UUID, email: String, deleted: Bool)] {
            [
                (ids[0], "jose\u{301}-\(tag)@example.org", false),
                (ids[1], "zoe\u{308}-\(tag)@example.org", false),
                (ids[2], "zo\u{EB}-\(tag)@example.org", false),
                (ids[3], "rene\u{301}-\(tag)@example.org", true),
                (ids[4], "a\u{323}\u{302}-\(tag)@example.org", false),
                (ids[5], "a\u{302}\u{323}-\(tag)@example.org", false),
            ]
        }

        /// What the migration must leave.
        func check(_ store: any ServerStore) async throws {
            func email(_ index: Int) async throws -> [UInt8] { Array(try #require(try await store.user(id: ids[index])?.email).utf8) }
            // A lone decomposed address is rewritten, and logs in under its NFC form.
            #expect(try await store.userID(email: "jos\u{E9}-\(tag)@example.org") == ids[0])
            // An older decomposed twin of a live NFC account keeps its text: the NFC account keeps the address.
            #expect(try await email(1) == Array(rows[1].email.utf8))
            #expect(try await store.userID(email: "zo\u{EB}-\(tag)@example.org") == ids[2])
            // A deleted row is rewritten (the unique index covers live accounts only).
            #expect(try await email(3) == Array("ren\u{E9}-\(tag)@example.org".utf8))
            // Of two decomposed twins, the older gets the address.
            #expect(try await store.userID(email: "\u{1EAD}-\(tag)@example.org") == ids[4])
            #expect(try await email(5) == Array(rows[5].email.utf8))
        }
    }

    @Test("SQLite: emails stored before NFC are rewritten by migration s5")
    func sqliteEmailMigration() async throws {
        let path = try TestSupport.temporaryDirectory("email-migration") + "/server.sqlite"
        let legacy = LegacyUsers()
        try await Backend.sqlite.withStore(sqliteFile: path) { _ in }
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in
            for (index, row) in legacy.rows.enumerated() {
                try db.execute(
                    sql: "INSERT INTO users (id, email, created_at, deleted_at) VALUES (?, ?, ?, ?)",
                    arguments: [
                        row.id.uuidString.lowercased(), row.email, 1_700_000_000_000 + index,
                        row.deleted ? 1_700_000_100_000 : nil,
                    ])
            }
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 's5-email-nfc'")
        }
        try queue.close()
        try await Backend.sqlite.withStore(sqliteFile: path) { store in try await legacy.check(store) }
    }

    @Test("PostgreSQL: emails stored before NFC are rewritten by migration 7")
    func postgresEmailMigration() async throws {
        let (appURL, adminURL) = try PostgresFixture.urls()
        let schema = "coffer_test_\(UUID().uuidString.lowercased().prefix(8))"
        var app = try PostgresURL(appURL).configuration
        var owner = try PostgresURL(adminURL).configuration
        app.options.additionalStartupParameters = [("search_path", schema)]
        owner.options.additionalStartupParameters = [("search_path", schema)]
        let logger = PostgresFixture.logger
        let admin = PostgresClient(configuration: owner, backgroundLogger: logger)
        let appRole = PostgresFixture.quoted(try PostgresURL(appURL).user)
        let legacy = LegacyUsers()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await admin.run() }
            defer { group.cancelAll() }
            try await admin.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(schema)"), logger: logger)
            do {
                try await admin.query(PostgresQuery(unsafeSQL: "GRANT USAGE ON SCHEMA \(schema) TO \(appRole)"), logger: logger)
                let store = PostgresServerStore(configuration: app, migrationConfiguration: owner, logger: logger)
                group.addTask { await store.run() }
                try await store.migrate()
                for (index, row) in legacy.rows.enumerated() {
                    let created = Double(1_700_000_000 + index)
                    let deleted: Double? = row.deleted ? 1_700_000_100 : nil
                    try await admin.query(
                        """
                        INSERT INTO users (id, email, created_at, deleted_at)
                        VALUES (\(row.id), \(row.email), to_timestamp(\(created)), to_timestamp(\(deleted)))
                        """, logger: logger)
                }
                try await admin.query("DELETE FROM schema_migrations WHERE version = 7", logger: logger)
                try await store.migrate()
                try await legacy.check(store)
            } catch {
                _ = try? await admin.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(schema) CASCADE"), logger: logger)
                throw error
            }
            try await admin.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(schema) CASCADE"), logger: logger)
        }
    }

    // MARK: Token audience

    @Test("access and refresh tokens carry their own audience; none, another or the other kind's is refused", arguments: Backend.allCases)
    func audience(backend: Backend) async throws {
        try await withServer(backend) { api, _ in
            let account = try await TestAccount.register(api)
            let key = try TokenTests.serverKey(api.dataDirectory)
            let access = try TokenTests.parts(account.access), refresh = try TokenTests.parts(account.refresh)
            #expect(access.claims["aud"] as? String == "coffer-server/api")
            #expect(refresh.claims["aud"] as? String == "coffer-server/refresh")
            func resign(_ parts: TokenTests.Parts, aud: Any?) throws -> String {
                var claims = parts.claims
                claims["aud"] = aud
                return try TokenTests.token(header: parts.header, claims: claims) { try TokenTests.canonicalSignature(key, $0) }
            }
            // The harness is sound: the same claims re-signed verify.
            #expect(try await api.send(.get, "/v1/account", token: try resign(access, aud: "coffer-server/api")).status == .ok)
            let audiences: [(String, Any?)] = [
                ("none", nil), ("another", "someone-else"), ("the refresh audience", "coffer-server/refresh"),
                ("a list", ["coffer-server/api"]), ("empty", ""),
            ]
            for (name, aud) in audiences {
                let answer = try await api.send(.get, "/v1/account", token: try resign(access, aud: aud))
                #expect(answer.status == .unauthorized && answer.error?.error == "unauthorized", "access token, audience \(name)")
            }
            let refreshAudiences: [(String, Any?)] = [("none", nil), ("the access audience", "coffer-server/api")]
            for (name, aud) in refreshAudiences {
                let answer = try await api.send(
                    .post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: try resign(refresh, aud: aud)))
                #expect(answer.status == .unauthorized, "refresh token, audience \(name)")
            }
            // Refused before the store saw them: the real refresh token is still current.
            #expect(try await api.send(.post, "/v1/auth/refresh", json: RefreshRequest(refreshToken: account.refresh)).status == .ok)
        }
    }

    // MARK: Pushes an account may not make

    @Test("an account made through Sign in with Apple, sync off, cannot push; its cards work", arguments: Backend.allCases)
    func appleAccountCannotPush(backend: Backend) async throws {
        let signer = try CardsAndIsolationTests.AppleSigner()
        let clock = TestClock()
        let jwks = try signer.jwks(directory: try CofferTestSupportDirectory.make())
        try await withServer(
            backend, clock: clock,
            configure: {
                $0.appleJWKSPath = jwks
                $0.appleAudience = "app.coffer.ios"
            }
        ) { api, store in
            let now = Int(clock.now.timeIntervalSince1970)
            let subject = "001234.\(UUID().uuidString.lowercased())"
            let token = try signer.token(
                claims: ["iss": "https://appleid.apple.com", "aud": "app.coffer.ios", "sub": subject, "iat": now, "exp": now + 300])
            let (nfc, nfd) = Self.address(Self.tag())
            let signIn = try await api.send(
                .post, "/v1/auth/apple", json: AppleAuthRequest(identityToken: token, userIdentifier: subject, email: nfd))
            let auth = try signIn.decode(AuthResponse.self)
            #expect(auth.user.preferences.syncEnabled == false)
            // The email Apple passed on is kept in the same form as every other.
            #expect(auth.user.email.map { Array($0.utf8) } == Array(nfc.utf8))

            let push = try await api.send(.post, "/v1/sync/push", token: auth.accessToken, json: fakeItems(1))
            #expect(push.status == .forbidden && push.error?.error == "sync_disabled")
            let userID = try #require(UUID(uuidString: auth.user.id))
            #expect(try await store.changes(userID: userID, since: 0, limit: 10).items.isEmpty)
            _ = try await CardsAndIsolationTests.createCard(api, auth.accessToken)
        }
    }

    @Test("a sync push never replaces or deletes a card made through /v1/cards", arguments: Backend.allCases)
    func pushCannotReplaceCard(backend: Backend) async throws {
        try await withServer(backend) { api, store in
            let account = try await TestAccount.register(api)
            let card = try await CardsAndIsolationTests.createCard(api, account.access)
            let id = try #require((card["id"] as? String).flatMap(UUID.init(uuidString:)))
            let stored = try #require(try await store.item(userID: account.userID, id: id))

            var replace = fakeItems(2, revision: stored.revision + 1, base: stored.revision)
            replace.items[1].item.id = id
            var delete = PushRequest(items: [
                PushItem(
                    item: ItemRow(id: id, kind: "note", revision: stored.revision + 1, updatedAt: 1_700_000_000_000, deleted: true, box: nil),
                    baseRevision: stored.revision)
            ])
            for (name, body) in [("replace", replace), ("delete", delete)] {
                let answer = try await api.send(.post, "/v1/sync/push", token: account.access, json: body)
                #expect(answer.status == .forbidden && answer.error?.error == "protected_item", "\(name)")
            }
            delete.items[0].baseRevision = 0
            #expect(try await api.send(.post, "/v1/sync/push", token: account.access, json: delete).status == .forbidden)
            #expect(try await store.item(userID: account.userID, id: id) == stored)
            #expect(try await store.item(userID: account.userID, id: replace.items[0].item.id) == nil, "all or nothing")
            let after = try await api.send(.get, "/v1/cards/\(id.uuidString.lowercased())", token: account.access)
            #expect(after.status == .ok && after.json?["name"] as? String == "Costco")
        }
    }

    // MARK: CardOnCue dates

    static func cardBody(_ dates: [String: Any]) throws -> Data {
        var body: [String: Any] = ["name": "Library", "barcode_type": "qr", "payload_encrypted": CardsAndIsolationTests.payload]
        body.merge(dates) { $1 }
        return try JSONSerialization.data(withJSONObject: body)
    }

    @Test("card dates: seconds since 2001 (JSONEncoder's default) or ISO 8601, on create and patch", arguments: Backend.allCases)
    func cardDates(backend: Backend) async throws {
        try await withServer(backend) { api, _ in
            let account = try await TestAccount.register(api)
            let created = try await api.send(
                .post, "/v1/cards", token: account.access,
                raw: try Self.cardBody([
                    "valid_from": 757_382_400.75, "valid_to": "2031-06-01T12:00:00Z",
                ]))
            #expect(created.status == .created, "\(String(decoding: created.body, as: UTF8.self))")
            #expect(created.json?["valid_from"] as? String == "2025-01-01T00:00:00Z")
            #expect(created.json?["valid_to"] as? String == "2031-06-01T12:00:00Z")
            let id = try #require(created.json?["id"] as? String)

            // What CardOnCue's iOS client sends: its own encoder, default date strategy, snake-case keys.
            struct IOSPatch: Encodable {
                var validFrom: Date
                var validTo: Date
            }
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            let to = Date(timeIntervalSinceReferenceDate: 820_454_400.5)
            let patch = try encoder.encode(IOSPatch(validFrom: Date(timeIntervalSinceReferenceDate: -86_400), validTo: to))
            #expect(String(decoding: patch, as: UTF8.self).contains("820454400.5"))
            let patched = try await api.send(.patch, "/v1/cards/\(id)", token: account.access, raw: patch)
            #expect(patched.status == .ok, "\(String(decoding: patched.body, as: UTF8.self))")
            #expect(patched.json?["valid_from"] as? String == "2000-12-31T00:00:00Z")
            #expect(patched.json?["valid_to"] as? String == "2027-01-01T00:00:00Z")

            let iso = try await api.send(
                .patch, "/v1/cards/\(id)", token: account.access,
                raw: try JSONSerialization.data(withJSONObject: ["valid_from": "2025-01-15T10:30:00.250+01:00", "valid_to": NSNull()]))
            #expect(iso.json?["valid_from"] as? String == "2025-01-15T09:30:00Z" && iso.json?["valid_to"] is NSNull)
        }
    }

    @Test("card dates that are neither form are a 400 naming the field", arguments: Backend.allCases)
    func badCardDates(backend: Backend) async throws {
        try await withServer(backend) { api, _ in
            let account = try await TestAccount.register(api)
            let created = try await api.send(.post, "/v1/cards", token: account.access, raw: try Self.cardBody([:]))
            let id = try #require(created.json?["id"] as? String)
            let bad: [Any] = ["tomorrow", "2025-13-01T00:00:00Z", "", true, 1e300, -1e13, ["2025-01-01T00:00:00Z"], ["seconds": 1]]
            for value in bad {
                for field in ["valid_from", "valid_to"] {
                    let create = try await api.send(.post, "/v1/cards", token: account.access, raw: try Self.cardBody([field: value]))
                    #expect(create.status == .badRequest && create.error?.details?.field == field, "create \(field) = \(value)")
                    let patch = try await api.send(
                        .patch, "/v1/cards/\(id)", token: account.access, raw: try JSONSerialization.data(withJSONObject: [field: value]))
                    #expect(patch.status == .badRequest && patch.error?.details?.field == field, "patch \(field) = \(value)")
                }
            }
            let list = try await api.send(.get, "/v1/cards", token: account.access)
            #expect(list.json?["count"] as? Int == 1)
        }
    }
}
