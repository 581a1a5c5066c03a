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

extension PostgresBackDoorTests {
    /// What issue 31 did with the app role alone: looked B's id up by email, set `app.user_id` to it, read B's rows and
    /// could overwrite B's auth hash, read and reset the failed-login counters, and write the public places.
    @Test("the app role alone, with any setting it can make, acts for nobody: no lookup, no claim, no replay, no counter, no place")
    func appRoleAloneActsForNobody() async throws {
        try await Self.withScene { scene in
            let fixture = scene.fixture, b = scene.b
            let key = try await PostgresFixture.serverKey()
            let tables = Self.perUserTables.sorted { $0.key < $1.key }
            /// B's rows visible in each per-user table, and how many of B's users rows an update could change, in a
            /// transaction where `claim` ran first.
            func reach(_ claim: @escaping @Sendable (PostgresConnection) async throws -> Void) async throws -> [String: Int] {
                try await fixture.inTransaction(as: nil) { connection in
                    try await claim(connection)
                    var seen: [String: Int] = [:]
                    for (table, column) in tables {
                        for try await count in try await connection.query(
                            "SELECT count(*) FROM \(unescaped: table) WHERE \(unescaped: column) = \(b.id)", logger: PostgresFixture.logger
                        ).decode(Int.self) {
                            seen[table] = count
                        }
                    }
                    var changed = 0
                    for try await _ in try await connection.query(
                        "UPDATE users SET auth_hash = 'attacker' WHERE id = \(b.id) RETURNING 1", logger: PostgresFixture.logger)
                    {
                        changed += 1
                    }
                    seen["users updated"] = changed
                    for try await count in try await connection.query(
                        "SELECT count(*) FROM coffer_feed(0, 1000)", logger: PostgresFixture.logger
                    ).decode(Int.self) {
                        seen["feed"] = count
                    }
                    return seen
                }
            }
            let nothing = Dictionary(uniqueKeysWithValues: tables.map { ($0.key, 0) } + [("users updated", 0), ("feed", 0)])
            let claimB: @Sendable (String) -> PostgresQuery = { proof in
                "SELECT set_config('app.user_id', \(b.id.uuidString.lowercased()), true), set_config('app.proof', \(proof), true)"
            }

            // The claim alone, as before issue 31, and with proofs the app role can make.
            let claimOnly = try await reach { connection in
                _ = try await connection.query(
                    "SELECT set_config('app.user_id', \(b.id.uuidString.lowercased()), true)", logger: PostgresFixture.logger
                ).collect()
            }
            #expect(claimOnly == nothing)
            let randomProof = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).map { String(format: "%02x", $0) }.joined()
            let randomlyProven = try await reach { connection in
                _ = try await connection.query(claimB(randomProof), logger: PostgresFixture.logger).collect()
            }
            #expect(randomlyProven == nothing)
            // A proof under another key, and a real proof of another transaction (its binding), replayed.
            let wrongKey = SymmetricKey(size: .bits256)
            let underWrongKey = try await reach { connection in
                let accepted = try await PostgresFixture.act(connection, as: .user(b.id), key: wrongKey)
                #expect(!accepted)
            }
            #expect(underWrongKey == nothing)
            let earlier = try await fixture.strings("SELECT coffer_binding()", as: nil)[0]
            let replayed = try await reach { connection in
                let accepted = try await PostgresFixture.act(connection, as: .user(b.id), key: key, binding: earlier)
                #expect(!accepted)
            }
            #expect(replayed == nothing)
            // A real proof replayed on the same backend in its next transaction.
            let replayedOnBackend = try await reach { connection in
                let accepted = try await PostgresFixture.act(connection, as: .user(b.id), key: key)
                #expect(accepted)
                var proof = ""
                for try await value in try await connection.query(
                    "SELECT current_setting('app.proof')", logger: PostgresFixture.logger
                ).decode(String.self) {
                    proof = value
                }
                try await connection.query("COMMIT", logger: PostgresFixture.logger)
                try await connection.query("BEGIN", logger: PostgresFixture.logger)
                _ = try await connection.query(claimB(proof), logger: PostgresFixture.logger).collect()
            }
            #expect(replayedOnBackend == nothing)
            // A's own valid proof does not act for B when the claim is changed after it.
            let switched = try await reach { connection in
                let accepted = try await PostgresFixture.act(connection, as: .user(scene.a.id), key: key)
                #expect(accepted)
                _ = try await connection.query(
                    "SELECT set_config('app.user_id', \(b.id.uuidString.lowercased()), true)", logger: PostgresFixture.logger
                ).collect()
            }
            #expect(switched == nothing)
            // The control: the server key proves B in this transaction, and B's rows are all there.
            let proven = try await reach { connection in
                let accepted = try await PostgresFixture.act(connection, as: .user(b.id), key: key)
                #expect(accepted)
            }
            #expect(proven["items"] == 3 && proven["sessions"] == 1 && proven["manifests"] == 1 && proven["users updated"] == 1)

            // The key and the function that uses it are closed to the app role; so is becoming the owner.
            for statement in [
                "SELECT key FROM coffer_server_key", "SELECT coffer_proves('server')",
                "SET ROLE \(PostgresFixture.quoted(try PostgresURL(try PostgresFixture.urls().admin).user))",
            ] {
                let state = await fixture.sqlState(as: nil) { connection in
                    _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: PostgresFixture.logger).collect()
                }
                #expect(state == "42501", "\(statement)")
            }

            // The rate counters (the failed-login counts among them): unseen, and neither reset nor made.
            let counters = try await fixture.strings("SELECT count(*)::text FROM rate_counters", as: nil)
            #expect(counters == ["0"])
            #expect(
                try await fixture.asServer { connection in
                    try await connection.query("SELECT 1 FROM rate_counters LIMIT 1", logger: PostgresFixture.logger).collect().count
                } == 1, "the server sees no counter: the check above proves nothing")
            #expect(try await fixture.strings("UPDATE rate_counters SET count = 0 RETURNING key", as: nil).isEmpty)
            for statement in [
                "INSERT INTO rate_counters (key, window_start, count) VALUES ('probe', 0, 0)", "DELETE FROM rate_counters",
            ] {
                let state = await fixture.sqlState(as: nil) { connection in
                    _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: PostgresFixture.logger).collect()
                }
                #expect(state == "42501", "\(statement)")
            }

            // The places: read by anyone, written only by the server.
            for statement in [
                "INSERT INTO networks (id, name, canonical_names, category, is_large_area, default_radius, tags, updated_at) VALUES ('probe', 'Probe', '{}', 'other', false, 100, '{}', now())",
                "INSERT INTO places_version (singleton, version) VALUES (1, 1) ON CONFLICT (singleton) DO UPDATE SET version = 0",
            ] {
                let state = await fixture.sqlState(as: nil) { connection in
                    _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: PostgresFixture.logger).collect()
                }
                #expect(state == "42501", "\(statement)")
            }
            for table in ["networks", "locations", "places_version"] {
                #expect(try await fixture.strings("DELETE FROM \(unescaped: table) RETURNING 'deleted'", as: nil).isEmpty)
                _ = try await fixture.strings("SELECT count(*)::text FROM \(unescaped: table)", as: nil)
            }
        }
    }

    @Test("the maintenance role purges and reads the whole audit log; the app role can do neither")
    func maintenance() async throws {
        try await Self.withScene { scene in
            let fixture = scene.fixture, a = scene.a, b = scene.b
            for user in [a.id, nil] as [UUID?] {
                for call in [
                    "SELECT coffer_purge_users(now() + INTERVAL '100 years')", "SELECT * FROM coffer_audit_events(10)",
                ] {
                    let state = await fixture.sqlState(as: user) { connection in
                        _ = try await connection.query(PostgresQuery(unsafeSQL: call), logger: PostgresFixture.logger).collect()
                    }
                    #expect(state == "42501", "the app role ran \(call)")
                }
            }

            try await withMaintenance(of: fixture.store) { store in
                let maintenance = try #require(store as? PostgresMaintenanceStore)
                // It may run its three functions and touch no table.
                var functions: [String] = []
                for try await name in try await maintenance.client.query(
                    """
                    SELECT p.oid::regprocedure::text FROM pg_proc p
                    WHERE p.pronamespace = current_schema()::regnamespace AND has_function_privilege(p.oid, 'EXECUTE')
                    """, logger: PostgresFixture.logger
                ).decode(String.self) {
                    functions.append(name)
                }
                #expect(
                    Set(functions) == [
                        "coffer_purge_users(timestamp with time zone)", "coffer_audit_events(integer)",
                        "coffer_audit(timestamp with time zone,text,text,text)",
                    ])
                var tables = -1
                for try await count in try await maintenance.client.query(
                    """
                    SELECT count(*) FROM pg_class c
                    WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
                      AND (has_table_privilege(c.oid, 'SELECT') OR has_table_privilege(c.oid, 'INSERT')
                           OR has_table_privilege(c.oid, 'UPDATE') OR has_table_privilege(c.oid, 'DELETE'))
                    """, logger: PostgresFixture.logger
                ).decode(Int.self) {
                    tables = count
                }
                #expect(tables == 0)

                // The whole log: both accounts' events.
                let events = try await maintenance.auditEvents(limit: 100_000)
                #expect(events.contains { $0.userID == a.id && $0.kind == .loginFailed })
                #expect(events.contains { $0.userID == b.id && $0.kind == .loginFailed })
                await #expect(throws: ServerStoreError.self) {
                    try await maintenance.audit(AuditEvent(at: scene.now, kind: .accountPurged, userID: a.id, address: nil))
                }

                try await fixture.store.softDeleteUser(id: a.id, at: scene.now)
                #expect(try await maintenance.purgeUsers(deletedBefore: scene.now.addingTimeInterval(1)) >= 1)
                #expect(try await fixture.store.user(id: a.id) == nil)
                #expect(try await fixture.store.user(id: b.id) != nil)
            }
        }
    }
}
