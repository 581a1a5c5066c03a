extension PostgresSchema {
    /// Migrations 6 onwards, each appended when released (see `PostgresSchema`): manifests, NFC emails, rotations,
    /// request counts, refresh retries, proven identity.
    static let laterMigrations: [Migration] = [
        // Vault-state manifests (docs/FORMAT.md §8.6), stored at the feed position of the push that brought them.
        Migration(
            version: 6,
            statements: [
                """
                CREATE TABLE manifests (
                    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    epoch bigint NOT NULL CHECK (epoch >= 1),
                    body bytea NOT NULL,
                    seq bigint NOT NULL,
                    PRIMARY KEY (user_id, epoch)
                )
                """
            ] + rowLevelSecurity(table: "manifests", userColumn: "user_id")),
        // Emails are compared in NFC (`AccountEmail`); rows stored before that are rewritten, or an account
        // registered with a decomposed address could no longer log in. The same rule as the SQLite store's: a
        // deleted row always, a live row unless a live account already holds the canonical address, and of several
        // live rows with one canonical address the oldest. `normalize` needs a UTF8 database; in any other encoding
        // no row is touched.
        Migration(
            version: 7,
            statements: [
                """
                DO $$
                BEGIN
                    IF current_setting('server_encoding') <> 'UTF8' THEN RETURN; END IF;
                    UPDATE users SET email = normalize(email, NFC)
                    WHERE email IS NOT NULL AND deleted_at IS NOT NULL AND email IS NOT NFC NORMALIZED;
                    UPDATE users u SET email = c.canonical
                    FROM (
                        SELECT DISTINCT ON (normalize(email, NFC)) id, normalize(email, NFC) AS canonical
                        FROM users
                        WHERE email IS NOT NULL AND deleted_at IS NULL AND email IS NOT NFC NORMALIZED
                        ORDER BY normalize(email, NFC), created_at, id
                    ) c
                    WHERE u.id = c.id
                      AND NOT EXISTS (SELECT 1 FROM users o WHERE o.email = c.canonical AND o.deleted_at IS NULL);
                END
                $$
                """
            ]),
        // Rows of master-key rotations, staged until their commit (docs/FORMAT.md §8.8).
        Migration(
            version: 8,
            statements: [
                """
                CREATE TABLE rotation_items (
                    user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    rotation_id uuid NOT NULL,
                    id uuid NOT NULL,
                    kind text NOT NULL,
                    revision bigint NOT NULL,
                    updated_at bigint NOT NULL,
                    deleted boolean NOT NULL,
                    box bytea,
                    base_revision bigint NOT NULL,
                    staged_at timestamptz NOT NULL,
                    PRIMARY KEY (user_id, rotation_id, id)
                )
                """
            ] + rowLevelSecurity(table: "rotation_items", userColumn: "user_id")),
        // The request check counts the requests a server admitted from memory since its last check, not one
        // (`SessionGate` in CofferServer): the counter grows by `p_requests`.
        Migration(
            version: 9,
            statements: [
                "DROP FUNCTION coffer_authorize(uuid, text, bigint, bigint)",
                """
                CREATE FUNCTION coffer_authorize(
                    p_family uuid, p_counter text, p_window_start bigint, p_now_ms bigint, p_requests integer
                ) RETURNS TABLE (request_count integer, session_active boolean)
                LANGUAGE plpgsql VOLATILE SET search_path = {schema}, pg_temp
                AS $$
                BEGIN
                    IF p_requests < 1 THEN
                        RAISE EXCEPTION 'coffer_authorize counts at least one request';
                    END IF;
                    INSERT INTO rate_counters AS c (key, window_start, count) VALUES (p_counter, p_window_start, p_requests)
                    ON CONFLICT (key) DO UPDATE SET
                        count = CASE WHEN c.window_start = EXCLUDED.window_start THEN c.count + EXCLUDED.count
                                     ELSE EXCLUDED.count END,
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
                "REVOKE ALL ON FUNCTION coffer_authorize(uuid, text, bigint, bigint, integer) FROM PUBLIC",
            ]),
        // Refresh retries (docs/FORMAT.md §8.5): a spent token names the token it was exchanged for and keeps the
        // SHA-256 of the retry key its device sent. The table's row-level security covers the new columns.
        Migration(
            version: 10,
            statements: [
                """
                ALTER TABLE refresh_tokens
                    ADD COLUMN successor uuid,
                    ADD COLUMN retry_key_hash bytea CHECK (retry_key_hash IS NULL OR octet_length(retry_key_hash) = 32)
                """
            ]),
        // Whom a transaction acts for is proved, not claimed (issue 31). Before this, `app.user_id` was trusted as set:
        // the app role alone (a leaked password, a second service sharing it) could look an id up by email, set it and
        // read or overwrite that account's rows, reset failed-login counters and write the public places.
        //
        // Now a transaction acts for a user, or as the server for nobody, only with `app.proof` = HMAC-SHA256 under the
        // server key of the transaction's binding (backend pid and start time, `coffer_binding()`) and its claim
        // (docs/FORMAT.md §8.5). The key is made here, kept in a table only the owner reads, and handed to the server
        // when it migrates as the owner; the app role can neither read it nor call the function that uses it. A proof
        // is good for one transaction of one backend, so one seen anywhere cannot be replayed. The policies compare
        // with `(SELECT coffer_acting_user())`, which PostgreSQL evaluates once per statement.
        Migration(
            version: 11,
            statements: [
                """
                CREATE TABLE coffer_server_key (
                    singleton integer PRIMARY KEY CHECK (singleton = 1),
                    key bytea NOT NULL CHECK (octet_length(key) = 32),
                    inner_pad bytea NOT NULL CHECK (octet_length(inner_pad) = 64),
                    outer_pad bytea NOT NULL CHECK (octet_length(outer_pad) = 64)
                )
                """,
                "REVOKE ALL ON coffer_server_key FROM PUBLIC",
                // 244 random bits (two version-4 UUIDs, from the server's strong random source) hashed to 32 bytes, and
                // HMAC's two padded keys (RFC 2104) computed once, since SQL has no XOR of byte strings.
                """
                DO $$
                DECLARE
                    k bytea := sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8'));
                    inner_pad bytea := decode(repeat('36', 64), 'hex');
                    outer_pad bytea := decode(repeat('5c', 64), 'hex');
                BEGIN
                    FOR n IN 0..31 LOOP
                        inner_pad := set_byte(inner_pad, n, get_byte(k, n) # 54);
                        outer_pad := set_byte(outer_pad, n, get_byte(k, n) # 92);
                    END LOOP;
                    INSERT INTO coffer_server_key (singleton, key, inner_pad, outer_pad) VALUES (1, k, inner_pad, outer_pad);
                END
                $$
                """,
                """
                CREATE FUNCTION coffer_binding() RETURNS text
                LANGUAGE sql STABLE SET search_path = {schema}, pg_temp
                AS $$
                    SELECT pg_backend_pid()::text || ':'
                        || ((extract(epoch FROM transaction_timestamp()) * 1000000)::bigint)::text
                $$
                """,
                // Whether `app.proof` proves `p_claim` in this transaction. Compared through SHA-256, so the time the
                // comparison takes says nothing about how much of a guessed proof was right.
                """
                CREATE FUNCTION coffer_proves(p_claim text) RETURNS boolean
                LANGUAGE sql STABLE SECURITY DEFINER SET search_path = {schema}, pg_temp
                AS $$
                    SELECT coalesce(
                        sha256(decode(NULLIF(current_setting('app.proof', true), ''), 'hex'))
                            = sha256(sha256(k.outer_pad || sha256(k.inner_pad || convert_to(
                                'coffer/v1/postgres-act' || chr(10) || coffer_binding() || chr(10) || p_claim, 'UTF8')))),
                        false)
                    FROM coffer_server_key k
                $$
                """,
                """
                CREATE FUNCTION coffer_acting_user() RETURNS uuid
                LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = {schema}, pg_temp
                AS $$
                DECLARE
                    claimed uuid := \(currentUser);
                BEGIN
                    IF claimed IS NOT NULL AND coffer_proves('user:' || claimed::text) THEN
                        RETURN claimed;
                    END IF;
                    RETURN NULL;
                END
                $$
                """,
                // True in a transaction the server opened: acting for a proven user, or for nobody with the server's proof.
                """
                CREATE FUNCTION coffer_acting_server() RETURNS boolean
                LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = {schema}, pg_temp
                AS $$
                BEGIN
                    IF \(currentUser) IS NULL THEN
                        RETURN coffer_proves('server');
                    END IF;
                    RETURN coffer_acting_user() IS NOT NULL;
                END
                $$
                """,
                // The server's first statement in each transaction: sets the claim and its proof, and answers whether the
                // database accepts them (false: this server holds another key).
                """
                CREATE FUNCTION coffer_act(p_user uuid, p_proof bytea) RETURNS boolean
                LANGUAGE plpgsql VOLATILE SET search_path = {schema}, pg_temp
                AS $$
                BEGIN
                    PERFORM set_config('app.user_id', coalesce(p_user::text, ''), true);
                    PERFORM set_config('app.proof', encode(p_proof, 'hex'), true);
                    RETURN coffer_acting_server();
                END
                $$
                """,
            ]
                + PostgresSchema.perUserTables.map { table, column in
                    "ALTER POLICY \(table)_own ON \(table) USING (\(column) = \(actingUser))"
                        + (table == "audit_log" ? "" : " WITH CHECK (\(column) = \(actingUser))")
                }
                + [
                    // The rate counters: read and written only in the server's transactions (the app role alone could read
                    // every failed-login counter and reset it).
                    "ALTER TABLE rate_counters ENABLE ROW LEVEL SECURITY",
                    "ALTER TABLE rate_counters FORCE ROW LEVEL SECURITY",
                    """
                    CREATE POLICY rate_counters_server ON rate_counters
                    USING ((SELECT coffer_acting_server())) WITH CHECK ((SELECT coffer_acting_server()))
                    """,
                    "CREATE POLICY rate_counters_owner ON rate_counters TO CURRENT_USER USING (true) WITH CHECK (true)",
                ]
                + ["networks", "locations", "places_version"].flatMap { table in
                    // Places are public to read; only the server (an operator's import) and the owner write them.
                    [
                        "ALTER TABLE \(table) ENABLE ROW LEVEL SECURITY",
                        "CREATE POLICY \(table)_read ON \(table) FOR SELECT USING (true)",
                        """
                        CREATE POLICY \(table)_server ON \(table)
                        USING ((SELECT coffer_acting_server())) WITH CHECK ((SELECT coffer_acting_server()))
                        """,
                    ]
                }
                + [
                    """
                    CREATE OR REPLACE FUNCTION coffer_authorize(
                        p_family uuid, p_counter text, p_window_start bigint, p_now_ms bigint, p_requests integer
                    ) RETURNS TABLE (request_count integer, session_active boolean)
                    LANGUAGE plpgsql VOLATILE SET search_path = {schema}, pg_temp
                    AS $$
                    BEGIN
                        IF p_requests < 1 THEN
                            RAISE EXCEPTION 'coffer_authorize counts at least one request';
                        END IF;
                        INSERT INTO rate_counters AS c (key, window_start, count) VALUES (p_counter, p_window_start, p_requests)
                        ON CONFLICT (key) DO UPDATE SET
                            count = CASE WHEN c.window_start = EXCLUDED.window_start THEN c.count + EXCLUDED.count
                                         ELSE EXCLUDED.count END,
                            window_start = EXCLUDED.window_start
                        RETURNING c.count INTO request_count;
                        session_active := EXISTS (
                            SELECT 1 FROM sessions s JOIN users u ON u.id = s.user_id
                            WHERE s.family = p_family AND s.user_id = \(actingUser) AND NOT s.revoked
                              AND s.expires_at > TIMESTAMPTZ 'epoch' + p_now_ms * INTERVAL '1 millisecond'
                              AND u.deleted_at IS NULL);
                        RETURN NEXT;
                    END
                    $$
                    """,
                    """
                    CREATE OR REPLACE FUNCTION coffer_feed(p_since bigint, p_limit integer)
                    RETURNS TABLE (id uuid, kind text, revision bigint, updated_at bigint, deleted boolean, box bytea, seq bigint)
                    LANGUAGE sql STABLE SET search_path = {schema}, pg_temp
                    AS $$
                        SELECT i.id, i.kind, i.revision, i.updated_at, i.deleted, i.box, i.seq
                        FROM items i WHERE i.user_id = \(actingUser) AND i.seq > p_since ORDER BY i.seq LIMIT p_limit
                    $$
                    """,
                    """
                    CREATE OR REPLACE FUNCTION coffer_audit(p_at timestamptz, p_kind text, p_address text, p_detail text)
                    RETURNS void
                    LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = {schema}, pg_temp
                    AS $$
                        INSERT INTO audit_log (at, kind, user_id, address, detail)
                        VALUES (p_at, p_kind, \(actingUser), p_address, p_detail)
                    $$
                    """,
                    // The lookups answer the server only, in a transaction it opened for nobody: to anyone else holding
                    // the app role, an email no longer yields an id.
                    """
                    CREATE OR REPLACE FUNCTION coffer_user_id_by_email(p_email text) RETURNS uuid
                    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = {schema}, pg_temp
                    AS $$
                    BEGIN
                        IF \(currentUser) IS NOT NULL OR NOT coffer_proves('server') THEN
                            RAISE EXCEPTION 'an account lookup outside the server''s own transaction' USING ERRCODE = '42501';
                        END IF;
                        RETURN (SELECT u.id FROM users u WHERE u.email = p_email AND u.deleted_at IS NULL);
                    END
                    $$
                    """,
                    """
                    CREATE OR REPLACE FUNCTION coffer_user_id_by_apple_subject(p_subject text) RETURNS uuid
                    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = {schema}, pg_temp
                    AS $$
                    BEGIN
                        IF \(currentUser) IS NOT NULL OR NOT coffer_proves('server') THEN
                            RAISE EXCEPTION 'an account lookup outside the server''s own transaction' USING ERRCODE = '42501';
                        END IF;
                        RETURN (SELECT u.id FROM users u WHERE u.apple_subject = p_subject AND u.deleted_at IS NULL);
                    END
                    $$
                    """,
                    "REVOKE ALL ON FUNCTION coffer_binding() FROM PUBLIC",
                    "REVOKE ALL ON FUNCTION coffer_proves(text) FROM PUBLIC",
                    "REVOKE ALL ON FUNCTION coffer_acting_user() FROM PUBLIC",
                    "REVOKE ALL ON FUNCTION coffer_acting_server() FROM PUBLIC",
                    "REVOKE ALL ON FUNCTION coffer_act(uuid, bytea) FROM PUBLIC",
                ]),
    ]
}
