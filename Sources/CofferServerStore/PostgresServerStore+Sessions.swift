import CofferCrypto
import CofferSyncAPI
import Foundation
import PostgresNIO

extension PostgresServerStore {
    // MARK: Sessions

    public func createSession(
        userID: UUID, family: UUID, tokenID: UUID, now: Date, expiresAt: Date
    ) async throws(ServerStoreError) {
        try await transaction(acting: .user(userID)) { [self] connection in
            try await connection.rows(
                """
                INSERT INTO sessions (family, user_id, created_at, expires_at)
                VALUES (\(family), \(userID), \(unescaped: Self.timestamp(UnixTime.milliseconds(now))),
                        \(unescaped: Self.timestamp(UnixTime.milliseconds(expiresAt))))
                """, logger: logger)
            try await connection.rows(
                """
                INSERT INTO refresh_tokens (id, family, user_id, expires_at)
                VALUES (\(tokenID), \(family), \(userID), \(unescaped: Self.timestamp(UnixTime.milliseconds(expiresAt))))
                """, logger: logger)
        }
    }

    public func liveSessionCount(userID: UUID, now: Date) async throws(ServerStoreError) -> Int {
        try await transaction(acting: .user(userID)) { [self] connection in
            try await connection.rows(
                """
                SELECT count(*) FROM sessions
                WHERE user_id = \(userID) AND NOT revoked AND expires_at > \(unescaped: Self.timestamp(UnixTime.milliseconds(now)))
                """, logger: logger
            ).first?.decode(Int.self) ?? 0
        }
    }

    public func rotateRefreshToken(
        userID: UUID, family: UUID, tokenID: UUID, newTokenID: UUID, retryKeyDigest: [UInt8]?, now: Date, expiresAt: Date
    ) async throws(ServerStoreError) -> RefreshOutcome {
        let nowMS = UnixTime.milliseconds(now)
        let expiresMS = UnixTime.milliseconds(expiresAt)
        let digest = retryKeyDigest.map { Data($0) }
        return try await transaction(acting: .user(userID)) { [self] connection -> RefreshOutcome in
            // Locking the family first serialises every presentation of its tokens: of two concurrent rotations
            // with the same token, the second sees `used_at` set and revokes the family, or retries.
            guard
                case let (sessionExpires, revoked)? = try await connection.rows(
                    """
                    SELECT \(unescaped: Self.milliseconds("expires_at")), revoked FROM sessions
                    WHERE family = \(family) AND user_id = \(userID) FOR UPDATE
                    """, logger: logger
                ).first?.decode((Int64, Bool).self)
            else { return .lost }
            guard
                case let (used, tokenExpires, successor, stored)? = try await connection.rows(
                    """
                    SELECT used_at IS NOT NULL, \(unescaped: Self.milliseconds("expires_at")), successor, retry_key_hash
                    FROM refresh_tokens
                    WHERE id = \(tokenID) AND family = \(family) AND user_id = \(userID) FOR UPDATE
                    """, logger: logger
                ).first?.decode((Bool, Int64, UUID?, Data?).self)
            else { return revoked ? .invalid : .lost }
            if revoked { return .invalid }
            if used {
                if let retryKeyDigest, let stored, ConstantTime.equal(Array(stored), retryKeyDigest), let successor,
                    sessionExpires > nowMS,
                    try await !connection.rows(
                        """
                        SELECT 1 FROM refresh_tokens
                        WHERE id = \(successor) AND family = \(family) AND used_at IS NULL
                          AND expires_at > \(unescaped: Self.timestamp(nowMS))
                        """, logger: logger
                    ).isEmpty
                {
                    try await connection.rows(
                        """
                        UPDATE refresh_tokens SET expires_at = \(unescaped: Self.timestamp(expiresMS)) WHERE id = \(successor)
                        """, logger: logger)
                    try await connection.rows(
                        """
                        UPDATE sessions SET expires_at = \(unescaped: Self.timestamp(expiresMS)) WHERE family = \(family)
                        """, logger: logger)
                    return .retried(successor: successor)
                }
                try await connection.rows("UPDATE sessions SET revoked = true WHERE family = \(family)", logger: logger)
                return .reused
            }
            guard tokenExpires > nowMS, sessionExpires > nowMS else { return .invalid }
            try await connection.rows(
                """
                UPDATE refresh_tokens
                SET used_at = \(unescaped: Self.timestamp(nowMS)), successor = \(newTokenID), retry_key_hash = \(digest)
                WHERE id = \(tokenID)
                """, logger: logger)
            try await connection.rows(
                """
                INSERT INTO refresh_tokens (id, family, user_id, expires_at)
                VALUES (\(newTokenID), \(family), \(userID), \(unescaped: Self.timestamp(expiresMS)))
                """, logger: logger)
            try await connection.rows(
                """
                UPDATE sessions SET expires_at = \(unescaped: Self.timestamp(expiresMS)) WHERE family = \(family)
                """, logger: logger)
            return .rotated
        }
    }

    public func authorize(
        userID: UUID, family: UUID, counter key: String, requests: Int, window: Int, now: Date
    ) async throws(ServerStoreError) -> Authorization {
        let start = CounterWindow.start(now, window: window)
        let requests = Int32(clamping: max(requests, 1))
        let row = try await transaction(acting: .user(userID)) { [self] connection in
            try await connection.rows(
                "SELECT * FROM coffer_authorize(\(family), \(key), \(start), \(UnixTime.milliseconds(now)), \(requests))",
                logger: logger
            ).first?.decode((Int, Bool).self)
        }
        guard let (count, active) = row else { throw .unavailable("authorize returned no row") }
        return Authorization(
            counter: CounterState(count: count, windowEnds: Self.windowEnd(start: start, window: window)), sessionActive: active)
    }

    public func revokeSession(userID: UUID, family: UUID) async throws(ServerStoreError) {
        try await transaction(acting: .user(userID)) { [self] connection in
            try await connection.rows(
                "UPDATE sessions SET revoked = true WHERE family = \(family) AND user_id = \(userID)", logger: logger)
        }
    }

    public func revokeSessions(userID: UUID, keeping: UUID?) async throws(ServerStoreError) {
        try await transaction(acting: .user(userID)) { [self] connection in
            try await connection.rows(
                """
                UPDATE sessions SET revoked = true
                WHERE user_id = \(userID) AND family IS DISTINCT FROM \(keeping)::uuid
                """, logger: logger)
        }
    }

    // MARK: Protection

    public func increment(counter key: String, window: Int, now: Date) async throws(ServerStoreError) -> CounterState {
        let start = CounterWindow.start(now, window: window)
        let count = try await transaction(acting: .server) { [self] connection in
            try await connection.rows(
                """
                INSERT INTO rate_counters (key, window_start, count) VALUES (\(key), \(start), 1)
                ON CONFLICT (key) DO UPDATE SET
                    count = CASE WHEN rate_counters.window_start = EXCLUDED.window_start
                                 THEN rate_counters.count + 1 ELSE 1 END,
                    window_start = EXCLUDED.window_start
                RETURNING count
                """, logger: logger
            ).first?.decode(Int.self) ?? 1
        }
        return CounterState(count: count, windowEnds: Self.windowEnd(start: start, window: window))
    }

    public func counter(_ key: String, window: Int, now: Date) async throws(ServerStoreError) -> CounterState {
        let start = CounterWindow.start(now, window: window)
        let count = try await transaction(acting: .server) { [self] connection in
            try await connection.rows(
                "SELECT count FROM rate_counters WHERE key = \(key) AND window_start = \(start)", logger: logger
            ).first?.decode(Int.self) ?? 0
        }
        return CounterState(count: count, windowEnds: Self.windowEnd(start: start, window: window))
    }

    /// An event of a user is written in a transaction acting for that user (`coffer_audit` takes the user from it).
    public func audit(_ event: AuditEvent) async throws(ServerStoreError) {
        if let userID = event.userID {
            try await transaction(acting: .user(userID)) { [self] connection in
                try await connection.rows(Self.auditStatement(event), logger: logger)
            }
        } else {
            try await shared { [self] client in try await client.rows(Self.auditStatement(event), logger: logger) }
        }
    }

    public func auditEvents(userID: UUID, limit: Int) async throws(ServerStoreError) -> [AuditEvent] {
        let rows = try await transaction(acting: .user(userID)) { [self] connection in
            try await connection.rows(
                """
                SELECT \(unescaped: Self.milliseconds("at")), kind, user_id, address, detail FROM audit_log
                WHERE user_id = \(userID) ORDER BY id DESC LIMIT \(max(limit, 0))
                """, logger: logger
            ).map { try $0.decode(AuditRow.self) }
        }
        return Self.auditEvents(rows)
    }
}
