import CofferCrypto
import CofferServerStore
import CofferServerTestSupport
import CofferSyncAPI
import CofferTestSupport
import Crypto
import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import Testing

/// No way around row-level security for the app role: every function it may execute and every table it may touch is
/// taken from the catalogue (so one added later without care fails here) and tried, acting as user A, against user B.
/// The work that spans users belongs to the maintenance role, which can do it and nothing else.
@Suite("PostgreSQL: no back doors around row-level security")
struct PostgresBackDoorTests {
    /// The per-user tables and the column naming their user.
    static let perUserTables = [
        "users": "id", "sessions": "user_id", "refresh_tokens": "user_id", "items": "user_id", "audit_log": "user_id",
        "manifests": "user_id", "rotation_items": "user_id",
    ]
    /// Tables without per-user rows, and why no user's data is in them: rate counters are keyed by hashes and client
    /// addresses (and only the server's transactions reach them), places are public (and only the server writes them).
    static let sharedTables: Set<String> = ["rate_counters", "networks", "locations", "places_version"]

    /// Two accounts that used the server (register, push, a manifest, a failed login, requests), seen through the app
    /// role.
    struct Scene {
        let fixture: PostgresFixture
        let a: Account
        let b: Account
        let now: Date

        struct Account {
            let id: UUID
            let email: String
            let family: UUID
            let items: PushRequest
            let manifest: Data
            /// A row staged for a master-key rotation.
            let staged: Data

            /// Every value of this account a leak would show.
            var markers: [String] {
                [id.uuidString.lowercased(), email, family.uuidString.lowercased()]
                    + items.items.map { $0.item.id.uuidString.lowercased() }
            }
            var boxes: [[UInt8]] { items.items.compactMap { $0.item.box.map(Array.init) } + [Array(manifest), Array(staged)] }
        }
    }

    static func withScene(_ body: @escaping @Sendable (Scene) async throws -> Void) async throws {
        let clock = TestClock()
        try await withServer(.postgres, clock: clock) { api, store in
            let postgres = try #require(store as? PostgresServerStore)
            var accounts: [Scene.Account] = []
            for _ in 0..<2 {
                let account = try await TestAccount.register(api)
                let items = fakeItems(3)
                #expect(try await api.send(.post, "/v1/sync/push", token: account.access, json: items).status == .ok)
                #expect(try await api.send(.get, "/v1/account", token: account.access).status == .ok)
                let wrong = LoginRequest(email: account.email, authKey: Data(count: 32).base64EncodedString())
                #expect(try await api.send(.post, "/v1/auth/login", json: wrong).status == .unauthorized)
                // The store keeps manifests as opaque bytes: random ones stand for a real chain here.
                let manifest = Data((0..<96).map { _ in UInt8.random(in: 0...255) })
                let stored = try await store.push(
                    userID: account.userID, writes: [], manifest: ManifestWrite(baseEpoch: 0, epoch: 1, bytes: manifest),
                    now: clock.now)
                let accepted = if case .accepted = stored { true } else { false }
                #expect(accepted, "the manifest was not stored: \(stored)")
                let staged = Data((0..<64).map { _ in UInt8.random(in: 0...255) })
                let row = ItemRow(id: UUID(), kind: "note", revision: 2, updatedAt: 0, deleted: false, box: staged)
                #expect(
                    try await store.stageRotation(
                        userID: account.userID, rotation: UUID(), writes: [ItemWrite(row: row, baseRevision: 1)], now: clock.now) == 1)
                accounts.append(
                    Scene.Account(
                        id: account.userID, email: account.email, family: try sessionFamily(account.access), items: items,
                        manifest: manifest, staged: staged))
            }
            try await body(Scene(fixture: PostgresFixture(store: postgres), a: accounts[0], b: accounts[1], now: clock.now))
        }
    }

    /// The session family (`sid`) of an access token.
    static func sessionFamily(_ token: String) throws -> UUID {
        var payload = String(token.split(separator: ".")[1])
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        let claims = try JSONSerialization.jsonObject(with: try #require(Data(base64Encoded: payload))) as? [String: Any]
        let sid = try #require(claims?["sid"] as? String)
        return try #require(UUID(uuidString: sid))
    }

    @Test("every table the app role can touch shows, acting as A, nothing of B; B's rows cannot be changed or made")
    func tables() async throws {
        try await Self.withScene { scene in
            let fixture = scene.fixture, a = scene.a, b = scene.b
            let granted = try await fixture.strings(
                """
                SELECT DISTINCT table_name::text FROM information_schema.role_table_grants
                WHERE grantee = current_user AND table_schema = current_schema()
                """, as: nil)
            // Every relation reachable at all, PUBLIC grants included, must be among the granted ones.
            let reachable = try await fixture.strings(
                """
                SELECT c.relname::text FROM pg_class c
                WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
                  AND (has_table_privilege(c.oid, 'SELECT') OR has_table_privilege(c.oid, 'INSERT')
                       OR has_table_privilege(c.oid, 'UPDATE') OR has_table_privilege(c.oid, 'DELETE')
                       OR has_table_privilege(c.oid, 'TRUNCATE') OR has_table_privilege(c.oid, 'REFERENCES')
                       OR has_table_privilege(c.oid, 'TRIGGER'))
                """, as: nil)
            #expect(Set(reachable) == Set(granted))
            #expect(Set(granted).isSuperset(of: Self.perUserTables.keys))

            var visible = Data()
            for table in Set(granted).sorted() {
                guard let userColumn = Self.perUserTables[table] else {
                    #expect(Self.sharedTables.contains(table), "the app role can reach table \(table), which this test does not cover")
                    for row in try await fixture.strings("SELECT t::text FROM \(unescaped: table) t", as: a.id) {
                        visible += Data(row.utf8)
                    }
                    continue
                }
                for row in try await fixture.strings("SELECT t::text FROM \(unescaped: table) t", as: a.id) {
                    visible += Data(row.utf8)
                }
                let privileges = Set(
                    try await fixture.strings(
                        """
                        SELECT privilege_type::text FROM information_schema.role_table_grants
                        WHERE grantee = current_user AND table_schema = current_schema() AND table_name = \(table)
                        """, as: nil))
                if privileges.contains("UPDATE") {
                    let changed = try await fixture.strings(
                        """
                        UPDATE \(unescaped: table) SET \(unescaped: userColumn) = \(unescaped: userColumn)
                        WHERE \(unescaped: userColumn) = \(b.id) RETURNING 'changed'
                        """, as: a.id)
                    #expect(changed.isEmpty, "A changed B's rows of \(table)")
                }
                if privileges.contains("DELETE") {
                    let deleted = try await fixture.strings(
                        "DELETE FROM \(unescaped: table) WHERE \(unescaped: userColumn) = \(b.id) RETURNING 'deleted'", as: a.id)
                    #expect(deleted.isEmpty, "A deleted B's rows of \(table)")
                }
                if privileges.contains("INSERT") {
                    let state = await fixture.sqlState(as: a.id) { connection in
                        _ = try await connection.query(Self.insertion(into: table, for: b), logger: PostgresFixture.logger).collect()
                    }
                    #expect(state == "42501", "A made a row of \(table) for B")
                }
            }
            // A's own rows are there (the view is filtered, not empty), and nothing of B's is, in any spelling.
            #expect(!CanaryScan.encodings(of: a.email, in: visible).isEmpty)
            #expect(!CanaryScan.encodings(ofBytes: try #require(a.boxes.first), in: visible).isEmpty)
            for marker in b.markers {
                #expect(CanaryScan.encodings(of: marker, in: visible).isEmpty, "B's \(marker) is visible to A")
            }
            for box in b.boxes {
                #expect(CanaryScan.encodings(ofBytes: box, in: visible).isEmpty, "a box of B's is visible to A")
            }
            // B's rows are all still there.
            #expect(try await fixture.count("items", as: b.id) == 3)
            #expect(try await fixture.count("sessions", as: b.id) == 1)
            #expect(try await fixture.count("manifests", as: b.id) == 1)
            #expect(try await fixture.count("rotation_items", as: b.id) == 1)
        }
    }

    /// A row of `table` for `account` with every required column.
    static func insertion(into table: String, for account: Scene.Account) -> PostgresQuery {
        switch table {
        case "users":
            return "INSERT INTO users (id, created_at) VALUES (\(UUID()), now())"
        case "sessions":
            return "INSERT INTO sessions (family, user_id, created_at, expires_at) VALUES (\(UUID()), \(account.id), now(), now())"
        case "refresh_tokens":
            return "INSERT INTO refresh_tokens (id, family, user_id, expires_at) VALUES (\(UUID()), \(account.family), \(account.id), now())"
        case "items":
            return """
                INSERT INTO items (user_id, id, kind, revision, updated_at, deleted, box, size, seq, stored_at)
                VALUES (\(account.id), \(UUID()), 'note', 1, 0, false, NULL, 0, 99, now())
                """
        case "manifests":
            return "INSERT INTO manifests (user_id, epoch, body, seq) VALUES (\(account.id), 1000, '\\x00'::bytea, 1000)"
        case "rotation_items":
            return """
                INSERT INTO rotation_items (user_id, rotation_id, id, kind, revision, updated_at, deleted, base_revision, staged_at)
                VALUES (\(account.id), \(UUID()), \(UUID()), 'note', 2, 0, true, 1, now())
                """
        default:
            return "INSERT INTO audit_log (at, kind, user_id) VALUES (now(), 'probe', \(account.id))"
        }
    }

    @Test("statistics of the per-user tables are closed to the app role")
    func statistics() async throws {
        try await Self.withScene { scene in
            let fixture = scene.fixture
            let superuser = try PostgresFixture.urls().admin.replacingOccurrences(of: "://coffer_owner@", with: "://postgres@")
            let tables = Self.perUserTables.keys.sorted()
            let admin = PostgresClient(configuration: try PostgresURL(superuser).configuration, backgroundLogger: PostgresFixture.logger)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await admin.run() }
                defer { group.cancelAll() }
                try await admin.query(PostgresQuery(unsafeSQL: "ANALYZE " + tables.joined(separator: ", ")), logger: PostgresFixture.logger)
                // The statistics exist (most common values, histogram bounds: samples of the columns)…
                var gathered = 0
                for try await count in try await admin.query(
                    "SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() AND tablename::text = ANY(\(tables))",
                    logger: PostgresFixture.logger
                ).decode(Int.self) {
                    gathered = count
                }
                #expect(gathered > 0)
            }
            // …and the app role sees none of them.
            let seen = try await fixture.strings(
                "SELECT attname::text FROM pg_stats WHERE schemaname = current_schema() AND tablename::text = ANY(\(tables))",
                as: scene.a.id)
            #expect(seen.isEmpty)
        }
    }

    /// The functions `probe` knows how to try.
    static let probedFunctions: Set<String> = [
        "coffer_binding()", "coffer_act(uuid,bytea)", "coffer_acting_user()", "coffer_acting_server()",
        "coffer_feed(bigint,integer)", "coffer_authorize(uuid,text,bigint,bigint,integer)",
        "coffer_audit(timestamp with time zone,text,text,text)", "coffer_user_id_by_email(text)",
        "coffer_user_id_by_apple_subject(text)",
    ]

    /// Calls `function` acting as A with B's values (and acting for nobody); fails the test if anything of B's comes
    /// back or is changed.
    static func probe(_ function: String, in scene: Scene) async throws {
        switch function {
        case "coffer_binding()":
            // Not secret: the backend and the transaction's start, which a proof covers.
            let bindings = try await scene.fixture.strings("SELECT coffer_binding()", as: nil)
            #expect(bindings.count == 1 && bindings[0].contains(":"))
        case "coffer_act(uuid,bytea)", "coffer_acting_user()", "coffer_acting_server()":
            // With a proof it cannot make, the claim is refused and nothing acts; the positive controls are the rest of
            // this suite, which acts through the same function.
            let forged = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
            let answers = try await scene.fixture.strings(
                """
                SELECT coffer_act(\(scene.b.id), \(forged))::text || ' ' || coalesce(coffer_acting_user()::text, 'none')
                       || ' ' || coffer_acting_server()::text
                """, as: nil)
            #expect(answers == ["false none false"])
        case "coffer_feed(bigint,integer)":
            let ids = try await scene.fixture.strings("SELECT id::text FROM coffer_feed(0, 1000)", as: scene.a.id)
            #expect(Set(ids) == Set(scene.a.items.items.map { $0.item.id.uuidString.lowercased() }))
            #expect(try await scene.fixture.strings("SELECT id::text FROM coffer_feed(0, 1000)", as: nil).isEmpty)
        case "coffer_authorize(uuid,text,bigint,bigint,integer)":
            let nowMS = Int64(scene.now.timeIntervalSince1970 * 1000)
            let call: PostgresQuery =
                "SELECT session_active::text FROM coffer_authorize(\(scene.b.family), \("probe:\(UUID())"), 0, \(nowMS), 1)"
            #expect(try await scene.fixture.strings(call, as: scene.a.id) == ["false"], "A sees B's session")
            // Acting for nobody, it may not even count: the rate counters are the server's.
            let state = await scene.fixture.sqlState(as: nil) { connection in
                _ = try await connection.query(call, logger: PostgresFixture.logger).collect()
            }
            #expect(state == "42501")
            // The control: B's session is live for B.
            #expect(try await scene.fixture.strings(call, as: scene.b.id) == ["true"])
        case "coffer_audit(timestamp with time zone,text,text,text)":
            let kind = "probe-\(UUID())"
            _ = try await scene.fixture.strings("SELECT 'written' FROM coffer_audit(now(), \(kind), NULL, NULL)", as: scene.a.id)
            let count: PostgresQuery = "SELECT count(*)::text FROM audit_log WHERE kind = \(kind)"
            #expect(try await scene.fixture.strings(count, as: scene.a.id) == ["1"])
            #expect(try await scene.fixture.strings(count, as: scene.b.id) == ["0"], "A wrote into B's audit log")
        case "coffer_user_id_by_email(text)":
            // The one lookup across users: only for a transaction acting for nobody, and only one exact, live email.
            let state = await scene.fixture.sqlState(as: scene.a.id) { connection in
                _ = try await connection.query("SELECT coffer_user_id_by_email(\(scene.b.email))", logger: PostgresFixture.logger)
                    .collect()
            }
            #expect(state == "42501", "A looked up B's id")
            // Nor to the app role acting for nobody without the server's proof.
            let unproven = await scene.fixture.sqlState(as: nil) { connection in
                _ = try await connection.query("SELECT coffer_user_id_by_email(\(scene.b.email))", logger: PostgresFixture.logger)
                    .collect()
            }
            #expect(unproven == "42501", "the app role alone looked up B's id")
            let lookup: (String) async throws -> [String] = { email in
                try await scene.fixture.asServer { connection in
                    var values: [String] = []
                    for try await value in try await connection.query(
                        "SELECT coalesce(coffer_user_id_by_email(\(email))::text, 'none')", logger: PostgresFixture.logger
                    ).decode(String.self) {
                        values.append(value)
                    }
                    return values
                }
            }
            #expect(try await lookup(scene.b.email) == [scene.b.id.uuidString.lowercased()])
            #expect(try await lookup("%") == ["none"])
            #expect(try await lookup("%@example.org") == ["none"])
            #expect(try await lookup(scene.b.email.uppercased()) == ["none"])
        case "coffer_user_id_by_apple_subject(text)":
            let state = await scene.fixture.sqlState(as: scene.a.id) { connection in
                _ = try await connection.query("SELECT coffer_user_id_by_apple_subject('%')", logger: PostgresFixture.logger)
                    .collect()
            }
            #expect(state == "42501")
            let unproven = await scene.fixture.sqlState(as: nil) { connection in
                _ = try await connection.query("SELECT coffer_user_id_by_apple_subject('%')", logger: PostgresFixture.logger)
                    .collect()
            }
            #expect(unproven == "42501")
            let found = try await scene.fixture.asServer { connection in
                var values: [String] = []
                for try await value in try await connection.query(
                    "SELECT coalesce(coffer_user_id_by_apple_subject('%')::text, 'none')", logger: PostgresFixture.logger
                ).decode(String.self) {
                    values.append(value)
                }
                return values
            }
            #expect(found == ["none"])
        default:
            Issue.record("no probe for \(function)")
        }
    }

    @Test("every function the app role can execute is probed, and none gives A anything of B's")
    func functions() async throws {
        try await Self.withScene { scene in
            let fixture = scene.fixture
            let executable = try await fixture.strings(
                """
                SELECT p.oid::regprocedure::text FROM pg_proc p
                WHERE p.pronamespace = current_schema()::regnamespace AND has_function_privilege(p.oid, 'EXECUTE')
                """, as: nil)
            #expect(Set(executable) == Self.probedFunctions, "the functions the app role can execute are not the probed ones")
            for function in executable.sorted() {
                try await Self.probe(function, in: scene)
            }
            // No SECURITY DEFINER function elsewhere runs for the app role either. The migration test's throwaway
            // schemas (`coffer_test_…`, granted to the app role while they live) are the only exception.
            let elsewhere = try await fixture.strings(
                """
                SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                WHERE p.prosecdef AND has_function_privilege(p.oid, 'EXECUTE')
                  AND p.pronamespace <> current_schema()::regnamespace AND n.nspname NOT LIKE 'coffer\\_test\\_%'
                """, as: nil)
            #expect(elsewhere.isEmpty)
        }
    }
}
