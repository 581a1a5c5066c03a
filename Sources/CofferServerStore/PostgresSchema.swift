import Foundation
/// The PostgreSQL schema as append-only numbered migrations. A released migration is never edited: a change is a new
/// entry at the end. `{schema}` stands for the quoted schema the owner migrates into (pinned in every SECURITY DEFINER
/// function's `search_path`, with `pg_temp` last so that a temporary object cannot shadow a table).
///
/// Every per-user table has row-level security enabled and forced, with two permissive policies:
/// - `*_own` for every role: the row's user is the transaction's proven user, `coffer_acting_user()` (since migration
///   11; before it, `app.user_id` as set). Each per-user transaction sets `app.user_id` and `app.proof` through
///   `coffer_act`. `NULLIF(…, '')` because a pooled connection that once set the variable reads it back as the empty
///   string, not NULL, after the transaction ends: that must match no row, not fail.
/// - `*_owner` for the owner role only (`TO CURRENT_USER` while migrating), which the SECURITY DEFINER functions below
///   need for the few lookups that cross users by design. The app role is not the owner and not a member of it, so
///   this policy never applies to requests.
enum PostgresSchema {
    struct Migration: Sendable {
        var version: Int
        var statements: [String]
    }

    /// The `pg_advisory_xact_lock` key that serialises concurrent `migrate()` calls ("Coffer" in ASCII).
    static let migrationLockKey: Int64 = 0x436F_6666_6572

    static let currentUser = "NULLIF(current_setting('app.user_id', true), '')::uuid"

    /// Every migration, in order.
    static let migrations = firstMigrations + laterMigrations

    /// Migrations 1 to 5: the tables, row-level security and the functions as first released.
    static let firstMigrations: [Migration] = [
        Migration(
            version: 1,
            statements: [
                """
                CREATE TABLE users (
                    id uuid PRIMARY KEY,
                    email text,
                    apple_subject text,
                    full_name text,
                    created_at timestamptz NOT NULL,
                    deleted_at timestamptz,
                    auth_hash text,
                    vault_id uuid,
                    slot text,
                    change_seq bigint NOT NULL DEFAULT 0
                )
                """,
                "CREATE UNIQUE INDEX users_live_email ON users (email) WHERE email IS NOT NULL AND deleted_at IS NULL",
                """
                CREATE UNIQUE INDEX users_live_apple ON users (apple_subject)
                    WHERE apple_subject IS NOT NULL AND deleted_at IS NULL
                """,
                "CREATE INDEX users_deleted ON users (deleted_at) WHERE deleted_at IS NOT NULL",
                """
                CREATE TABLE sessions (
                    family uuid PRIMARY KEY,
                    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    created_at timestamptz NOT NULL,
                    expires_at timestamptz NOT NULL,
                    revoked boolean NOT NULL DEFAULT false
                )
                """,
                "CREATE INDEX sessions_user ON sessions (user_id)",
                """
                CREATE TABLE refresh_tokens (
                    id uuid PRIMARY KEY,
                    family uuid NOT NULL REFERENCES sessions (family) ON DELETE CASCADE,
                    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    expires_at timestamptz NOT NULL,
                    used_at timestamptz
                )
                """,
                "CREATE INDEX refresh_tokens_family ON refresh_tokens (family)",
                "CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id)",
                """
                CREATE TABLE items (
                    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    id uuid NOT NULL,
                    kind text NOT NULL,
                    revision bigint NOT NULL,
                    updated_at bigint NOT NULL,
                    deleted boolean NOT NULL,
                    box bytea,
                    size integer NOT NULL,
                    meta text,
                    seq bigint NOT NULL,
                    stored_at timestamptz NOT NULL,
                    PRIMARY KEY (user_id, id)
                )
                """,
                "CREATE INDEX items_feed ON items (user_id, seq)",
                """
                CREATE TABLE rate_counters (
                    key text PRIMARY KEY,
                    window_start bigint NOT NULL,
                    count integer NOT NULL
                )
                """,
                """
                CREATE TABLE audit_log (
                    id bigserial PRIMARY KEY,
                    at timestamptz NOT NULL,
                    kind text NOT NULL,
                    user_id uuid,
                    address text,
                    detail text
                )
                """,
                "CREATE INDEX audit_log_user ON audit_log (user_id, id)",
            ]
                + rowLevelSecurity(table: "users", userColumn: "id")
                + rowLevelSecurity(table: "sessions", userColumn: "user_id")
                + rowLevelSecurity(table: "refresh_tokens", userColumn: "user_id")
                + rowLevelSecurity(table: "items", userColumn: "user_id")
                + rowLevelSecurity(table: "audit_log", userColumn: "user_id", readOnly: true)
                + [
                    """
                    CREATE FUNCTION coffer_user_id_by_email(p_email text) RETURNS uuid
                    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = {schema}, pg_temp
                    AS $$ SELECT u.id FROM users u WHERE u.email = p_email AND u.deleted_at IS NULL $$
                    """,
                    """
                    CREATE FUNCTION coffer_user_id_by_apple_subject(p_subject text) RETURNS uuid
                    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = {schema}, pg_temp
                    AS $$ SELECT u.id FROM users u WHERE u.apple_subject = p_subject AND u.deleted_at IS NULL $$
                    """,
                    """
                    CREATE FUNCTION coffer_purge_users(p_cutoff timestamptz) RETURNS integer
                    LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = {schema}, pg_temp
                    AS $$
                        WITH purged AS (
                            DELETE FROM users u WHERE u.deleted_at IS NOT NULL AND u.deleted_at < p_cutoff RETURNING 1
                        )
                        SELECT count(*)::integer FROM purged
                    $$
                    """,
                    """
                    CREATE FUNCTION coffer_audit(p_at timestamptz, p_kind text, p_user uuid, p_address text, p_detail text)
                    RETURNS void
                    LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = {schema}, pg_temp
                    AS $$
                        INSERT INTO audit_log (at, kind, user_id, address, detail)
                        VALUES (p_at, p_kind, p_user, p_address, p_detail)
                    $$
                    """,
                    """
                    CREATE FUNCTION coffer_audit_events(p_limit integer)
                    RETURNS TABLE (at_ms bigint, kind text, user_id uuid, address text, detail text)
                    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = {schema}, pg_temp
                    AS $$
                        SELECT (extract(epoch FROM a.at) * 1000)::bigint, a.kind, a.user_id, a.address, a.detail
                        FROM audit_log a ORDER BY a.id DESC LIMIT p_limit
                    $$
                    """,
                    "REVOKE ALL ON FUNCTION coffer_user_id_by_email(text) FROM PUBLIC",
                    "REVOKE ALL ON FUNCTION coffer_user_id_by_apple_subject(text) FROM PUBLIC",
                    "REVOKE ALL ON FUNCTION coffer_purge_users(timestamptz) FROM PUBLIC",
                    "REVOKE ALL ON FUNCTION coffer_audit(timestamptz, text, uuid, text, text) FROM PUBLIC",
                    "REVOKE ALL ON FUNCTION coffer_audit_events(integer) FROM PUBLIC",
                ]),
        // The two calls on every request's path, authorizing it and reading a page of changes, in one round trip
        // each instead of four or five (BEGIN, set_config, the queries, COMMIT): a pull is two statements. Both run
        // with the caller's rights: they set `app.user_id` for their own transaction, and row-level security
        // applies to every row they touch.
        Migration(
            version: 2,
            statements: [
                """
                CREATE FUNCTION coffer_authorize(
                    p_user uuid, p_family uuid, p_counter text, p_window_start bigint, p_now_ms bigint
                ) RETURNS TABLE (request_count integer, session_active boolean)
                LANGUAGE plpgsql VOLATILE SET search_path = {schema}, pg_temp
                AS $$
                BEGIN
                    PERFORM set_config('app.user_id', p_user::text, true);
                    INSERT INTO rate_counters AS c (key, window_start, count) VALUES (p_counter, p_window_start, 1)
                    ON CONFLICT (key) DO UPDATE SET
                        count = CASE WHEN c.window_start = EXCLUDED.window_start THEN c.count + 1 ELSE 1 END,
                        window_start = EXCLUDED.window_start
                    RETURNING c.count INTO request_count;
                    session_active := EXISTS (
                        SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id
                        WHERE s.family = p_family AND s.user_id = p_user AND NOT s.revoked
                          AND s.expires_at > TIMESTAMPTZ 'epoch' + p_now_ms * INTERVAL '1 millisecond'
                          AND u.deleted_at IS NULL);
                    RETURN NEXT;
                END
                $$
                """,
                """
                CREATE FUNCTION coffer_changes(p_user uuid, p_since bigint, p_limit integer)
                RETURNS TABLE (
                    id uuid, kind text, revision bigint, updated_at bigint, deleted boolean, box bytea, meta text, seq bigint,
                    stored_at_ms bigint)
                LANGUAGE plpgsql VOLATILE SET search_path = {schema}, pg_temp
                AS $$
                BEGIN
                    PERFORM set_config('app.user_id', p_user::text, true);
                    RETURN QUERY
                        SELECT i.id, i.kind, i.revision, i.updated_at, i.deleted, i.box, i.meta, i.seq,
                               (extract(epoch FROM i.stored_at) * 1000)::bigint
                        FROM items i WHERE i.user_id = p_user AND i.seq > p_since ORDER BY i.seq LIMIT p_limit;
                END
                $$
                """,
                "REVOKE ALL ON FUNCTION coffer_authorize(uuid, uuid, text, bigint, bigint) FROM PUBLIC",
                "REVOKE ALL ON FUNCTION coffer_changes(uuid, bigint, integer) FROM PUBLIC",
            ]),
        // The change feed as this version reads it: what a syncing client receives and nothing more (the server-side
        // metadata and the stored time are never part of a page, and each row has two cells less to decode).
        // `coffer_changes` stays for servers older than this migration that still run against the same database
        // while instances are upgraded one by one.
        Migration(
            version: 3,
            statements: [
                """
                CREATE FUNCTION coffer_feed(p_user uuid, p_since bigint, p_limit integer)
                RETURNS TABLE (id uuid, kind text, revision bigint, updated_at bigint, deleted boolean, box bytea, seq bigint)
                LANGUAGE plpgsql VOLATILE SET search_path = {schema}, pg_temp
                AS $$
                BEGIN
                    PERFORM set_config('app.user_id', p_user::text, true);
                    RETURN QUERY
                        SELECT i.id, i.kind, i.revision, i.updated_at, i.deleted, i.box, i.seq
                        FROM items i WHERE i.user_id = p_user AND i.seq > p_since ORDER BY i.seq LIMIT p_limit;
                END
                $$
                """,
                "REVOKE ALL ON FUNCTION coffer_feed(uuid, bigint, integer) FROM PUBLIC",
            ]),
        // Places: public data, the same for every user, so no row-level security. Locations are found through a GiST
        // index over `point(lon, lat)` (PostgreSQL's own R-tree over GiST: no extension to install); queries give
        // boxes in degrees, as the SQLite store's R*Tree does, and exact distances decide.
        Migration(
            version: 4,
            statements: [
                """
                CREATE TABLE networks (
                    id text PRIMARY KEY,
                    wikidata text,
                    name text NOT NULL,
                    canonical_names text[] NOT NULL,
                    category text NOT NULL,
                    is_large_area boolean NOT NULL,
                    default_radius integer NOT NULL,
                    tags text[] NOT NULL,
                    updated_at timestamptz NOT NULL
                )
                """,
                "CREATE INDEX networks_wikidata ON networks (wikidata) WHERE wikidata IS NOT NULL",
                """
                CREATE TABLE locations (
                    id text PRIMARY KEY,
                    network_id text NOT NULL REFERENCES networks (id) ON DELETE CASCADE,
                    name text NOT NULL,
                    address text,
                    lat double precision NOT NULL,
                    lon double precision NOT NULL,
                    radius integer,
                    phone text,
                    hours text
                )
                """,
                "CREATE INDEX locations_network ON locations (network_id, id)",
                "CREATE INDEX locations_geo ON locations USING gist (point(lon, lat))",
                """
                CREATE TABLE places_version (
                    singleton integer PRIMARY KEY CHECK (singleton = 1),
                    version bigint NOT NULL
                )
                """,
            ]),
        // No back doors around row-level security (issue 12). Before this, the app role could call functions that
        // took the user as a parameter (`coffer_authorize`, `coffer_changes`, `coffer_feed`: any account's items
        // for a guessed id) or crossed every user (`coffer_audit_events`, `coffer_purge_users` with any cutoff).
        // Now a function that acts for a user takes that user from `app.user_id` only; the work that spans users
        // (purge, reading the whole audit log) belongs to the maintenance role, which the request path never holds.
        // The old functions are dropped, not kept beside the new ones: servers older than this migration stop
        // working against the database once it has run (upgrade every instance together).
        Migration(
            version: 5,
            statements: [
                "DROP FUNCTION coffer_changes(uuid, bigint, integer)",
                "DROP FUNCTION coffer_feed(uuid, bigint, integer)",
                "DROP FUNCTION coffer_authorize(uuid, uuid, text, bigint, bigint)",
                "DROP FUNCTION coffer_audit(timestamptz, text, uuid, text, text)",
                "DROP FUNCTION coffer_audit_events(integer)",
                "DROP FUNCTION coffer_purge_users(timestamptz)",
                "DROP FUNCTION coffer_user_id_by_email(text)",
                "DROP FUNCTION coffer_user_id_by_apple_subject(text)",
                """
                CREATE FUNCTION coffer_authorize(p_family uuid, p_counter text, p_window_start bigint, p_now_ms bigint)
                RETURNS TABLE (request_count integer, session_active boolean)
                LANGUAGE plpgsql VOLATILE SET search_path = {schema}, pg_temp
                AS $$
                BEGIN
                    INSERT INTO rate_counters AS c (key, window_start, count) VALUES (p_counter, p_window_start, 1)
                    ON CONFLICT (key) DO UPDATE SET
                        count = CASE WHEN c.window_start = EXCLUDED.window_start THEN c.count + 1 ELSE 1 END,
                        window_start = EXCLUDED.window_start
                    RETURNING c.count INTO request_count;
                    session_active := EXISTS (
                        SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id
                        WHERE s.family = p_family AND s.user_id = \(currentUser) AND NOT s.revoked
                          AND s.expires_at > TIMESTAMPTZ 'epoch' + p_now_ms * INTERVAL '1 millisecond'
                          AND u.deleted_at IS NULL);
                    RETURN NEXT;
                END
                $$
                """,
                """
                CREATE FUNCTION coffer_feed(p_since bigint, p_limit integer)
                RETURNS TABLE (id uuid, kind text, revision bigint, updated_at bigint, deleted boolean, box bytea, seq bigint)
                LANGUAGE sql STABLE SET search_path = {schema}, pg_temp
                AS $$
                    SELECT i.id, i.kind, i.revision, i.updated_at, i.deleted, i.box, i.seq
                    FROM items i WHERE i.user_id = \(currentUser) AND i.seq > p_since ORDER BY i.seq LIMIT p_limit
                $$
                """,
                // The audit log is append-only for everyone but its owner, so rows go in through this function; the
                // row's user is the transaction's (none for events of no account).
                """
                CREATE FUNCTION coffer_audit(p_at timestamptz, p_kind text, p_address text, p_detail text) RETURNS void
                LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = {schema}, pg_temp
                AS $$
                    INSERT INTO audit_log (at, kind, user_id, address, detail)
                    VALUES (p_at, p_kind, \(currentUser), p_address, p_detail)
                $$
                """,
                // Login has no user yet, so finding the account by its email is the one lookup that crosses users; an
                // account id is what a transaction acts as, so this is the only way the app role can learn one (ids
                // are random; tables, statistics and the other functions show only the transaction's own user). It
                // answers one exact email of a live account, never a pattern or a list, and only to a transaction that
                // acts for nobody: a request acting for a user has no reason to look up another.
                """
                CREATE FUNCTION coffer_user_id_by_email(p_email text) RETURNS uuid
                LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = {schema}, pg_temp
                AS $$
                BEGIN
                    IF \(currentUser) IS NOT NULL THEN
                        RAISE EXCEPTION 'an account lookup inside a user''s transaction' USING ERRCODE = '42501';
                    END IF;
                    RETURN (SELECT u.id FROM users u WHERE u.email = p_email AND u.deleted_at IS NULL);
                END
                $$
                """,
                // The same for Sign in with Apple, whose subject the server has verified in Apple's signed token. The
                // subject is an opaque, app-specific identifier: it cannot be guessed the way an email can.
                """
                CREATE FUNCTION coffer_user_id_by_apple_subject(p_subject text) RETURNS uuid
                LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = {schema}, pg_temp
                AS $$
                BEGIN
                    IF \(currentUser) IS NOT NULL THEN
                        RAISE EXCEPTION 'an account lookup inside a user''s transaction' USING ERRCODE = '42501';
                    END IF;
                    RETURN (SELECT u.id FROM users u WHERE u.apple_subject = p_subject AND u.deleted_at IS NULL);
                END
                $$
                """,
                // Maintenance only (granted to the maintenance role alone).
                """
                CREATE FUNCTION coffer_purge_users(p_cutoff timestamptz) RETURNS integer
                LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = {schema}, pg_temp
                AS $$
                    WITH purged AS (
                        DELETE FROM users u WHERE u.deleted_at IS NOT NULL AND u.deleted_at < p_cutoff RETURNING 1
                    )
                    SELECT count(*)::integer FROM purged
                $$
                """,
                """
                CREATE FUNCTION coffer_audit_events(p_limit integer)
                RETURNS TABLE (at_ms bigint, kind text, user_id uuid, address text, detail text)
                LANGUAGE sql STABLE SECURITY DEFINER SET search_path = {schema}, pg_temp
                AS $$
                    SELECT (extract(epoch FROM a.at) * 1000)::bigint, a.kind, a.user_id, a.address, a.detail
                    FROM audit_log a ORDER BY a.id DESC LIMIT p_limit
                $$
                """,
                "REVOKE ALL ON FUNCTION coffer_authorize(uuid, text, bigint, bigint) FROM PUBLIC",
                "REVOKE ALL ON FUNCTION coffer_feed(bigint, integer) FROM PUBLIC",
                "REVOKE ALL ON FUNCTION coffer_audit(timestamptz, text, text, text) FROM PUBLIC",
                "REVOKE ALL ON FUNCTION coffer_user_id_by_email(text) FROM PUBLIC",
                "REVOKE ALL ON FUNCTION coffer_user_id_by_apple_subject(text) FROM PUBLIC",
                "REVOKE ALL ON FUNCTION coffer_purge_users(timestamptz) FROM PUBLIC",
                "REVOKE ALL ON FUNCTION coffer_audit_events(integer) FROM PUBLIC",
            ]),
    ]

    /// The tables holding one user's rows, and the column naming that user.
    static let perUserTables: KeyValuePairs<String, String> = [
        "users": "id", "sessions": "user_id", "refresh_tokens": "user_id", "items": "user_id", "audit_log": "user_id",
        "manifests": "user_id", "rotation_items": "user_id",
    ]

    /// The user a transaction acts for, as the policies and functions read it since migration 11: proved, evaluated once
    /// per statement.
    static let actingUser = "(SELECT coffer_acting_user())"

    /// Signatures of the functions the app role may execute: the request path's. Each takes its user from
    /// `app.user_id`; the lookups by email and Apple subject are the only ones that cross users, and only for a
    /// transaction acting for nobody. The migration that creates a function revokes it from PUBLIC itself, by name:
    /// a released migration never changes, and these lists do.
    static let appFunctions = [
        "coffer_binding()",
        "coffer_act(uuid, bytea)",
        "coffer_acting_user()",
        "coffer_acting_server()",
        "coffer_authorize(uuid, text, bigint, bigint, integer)",
        "coffer_feed(bigint, integer)",
        "coffer_audit(timestamptz, text, text, text)",
        "coffer_user_id_by_email(text)",
        "coffer_user_id_by_apple_subject(text)",
    ]

    /// Signatures of the functions only the maintenance role may execute: the work that spans users.
    static let maintenanceFunctions = [
        "coffer_purge_users(timestamptz)",
        "coffer_audit_events(integer)",
        "coffer_audit(timestamptz, text, text, text)",
    ]

    /// What the app role may do; granted again by every `migrate()`, so a new app role only needs a restart.
    static func grants(appRole role: String) -> [String] {
        [
            "GRANT SELECT, INSERT, UPDATE, DELETE ON users, sessions, refresh_tokens, items TO \(role)",
            "GRANT SELECT ON audit_log TO \(role)",
            "GRANT SELECT, INSERT, UPDATE ON rate_counters TO \(role)",
            "GRANT SELECT, INSERT, UPDATE, DELETE ON networks, locations, places_version TO \(role)",
            "GRANT SELECT, INSERT, DELETE ON manifests TO \(role)",
            "GRANT SELECT, INSERT, UPDATE, DELETE ON rotation_items TO \(role)",
        ] + appFunctions.map { "GRANT EXECUTE ON FUNCTION \($0) TO \(role)" }
    }

    /// What the maintenance role may do: its functions, and no table at all.
    static func grants(maintenanceRole role: String) -> [String] {
        maintenanceFunctions.map { "GRANT EXECUTE ON FUNCTION \($0) TO \(role)" }
    }

    static func rowLevelSecurity(table: String, userColumn: String, readOnly: Bool = false) -> [String] {
        let own = "\(userColumn) = \(currentUser)"
        return [
            "ALTER TABLE \(table) ENABLE ROW LEVEL SECURITY",
            "ALTER TABLE \(table) FORCE ROW LEVEL SECURITY",
            readOnly
                ? "CREATE POLICY \(table)_own ON \(table) FOR SELECT USING (\(own))"
                : "CREATE POLICY \(table)_own ON \(table) USING (\(own)) WITH CHECK (\(own))",
            "CREATE POLICY \(table)_owner ON \(table) TO CURRENT_USER USING (true) WITH CHECK (true)",
        ]
    }

    /// `name` as a quoted SQL identifier.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
