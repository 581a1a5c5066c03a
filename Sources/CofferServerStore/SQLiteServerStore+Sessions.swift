import CofferCrypto
import CofferSyncAPI
import Foundation
import GRDB

extension SQLiteServerStore {
    // MARK: Sessions

    public func createSession(userID: UUID, family: UUID, tokenID: UUID, now: Date, expiresAt: Date) async throws(ServerStoreError) {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO sessions (family, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [Self.key(family), Self.key(userID), UnixTime.milliseconds(now), UnixTime.milliseconds(expiresAt)])
            try db.execute(
                sql: "INSERT INTO refresh_tokens (id, family, user_id, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [Self.key(tokenID), Self.key(family), Self.key(userID), UnixTime.milliseconds(expiresAt)])
        }
    }

    public func liveSessionCount(userID: UUID, now: Date) async throws(ServerStoreError) -> Int {
        try await read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM sessions WHERE user_id = ? AND revoked = 0 AND expires_at > ?",
                arguments: [Self.key(userID), UnixTime.milliseconds(now)]) ?? 0
        }
    }

    public func rotateRefreshToken(
        userID: UUID, family: UUID, tokenID: UUID, newTokenID: UUID, retryKeyDigest: [UInt8]?, now: Date, expiresAt: Date
    ) async throws(ServerStoreError) -> RefreshOutcome {
        try await write { db -> RefreshOutcome in
            let user = Self.key(userID), familyKey = Self.key(family)
            guard
                let session = try Row.fetchOne(
                    db, sql: "SELECT expires_at, revoked FROM sessions WHERE family = ? AND user_id = ?",
                    arguments: [familyKey, user])
            else { return .lost }
            let revoked: Bool = session["revoked"]
            guard
                let token = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT used_at, expires_at, successor, retry_key_hash FROM refresh_tokens
                        WHERE id = ? AND family = ? AND user_id = ?
                        """,
                    arguments: [Self.key(tokenID), familyKey, user])
            else { return revoked ? .invalid : .lost }
            if revoked { return .invalid }
            let nowMS = UnixTime.milliseconds(now), expiresMS = UnixTime.milliseconds(expiresAt)
            if (token["used_at"] as Int64?) != nil {
                if let retryKeyDigest, let stored = token["retry_key_hash"] as Data?,
                    ConstantTime.equal(Array(stored), retryKeyDigest),
                    let successorKey = token["successor"] as String?, let successor = UUID(uuidString: successorKey),
                    (session["expires_at"] as Int64) > nowMS,
                    try Bool.fetchOne(
                        db,
                        sql: "SELECT 1 FROM refresh_tokens WHERE id = ? AND family = ? AND used_at IS NULL AND expires_at > ?",
                        arguments: [successorKey, familyKey, nowMS]) ?? false
                {
                    try db.execute(sql: "UPDATE refresh_tokens SET expires_at = ? WHERE id = ?", arguments: [expiresMS, successorKey])
                    try db.execute(sql: "UPDATE sessions SET expires_at = ? WHERE family = ?", arguments: [expiresMS, familyKey])
                    return .retried(successor: successor)
                }
                try db.execute(sql: "UPDATE sessions SET revoked = 1 WHERE family = ?", arguments: [familyKey])
                return .reused
            }
            guard (token["expires_at"] as Int64) > nowMS, (session["expires_at"] as Int64) > nowMS else { return .invalid }
            try db.execute(
                sql: "UPDATE refresh_tokens SET used_at = ?, successor = ?, retry_key_hash = ? WHERE id = ?",
                arguments: [nowMS, Self.key(newTokenID), retryKeyDigest.map { Data($0) }, Self.key(tokenID)])
            try db.execute(
                sql: "INSERT INTO refresh_tokens (id, family, user_id, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [Self.key(newTokenID), familyKey, user, expiresMS])
            try db.execute(sql: "UPDATE sessions SET expires_at = ? WHERE family = ?", arguments: [expiresMS, familyKey])
            return .rotated
        }
    }

    public func authorize(
        userID: UUID, family: UUID, counter key: String, requests: Int, window: Int, now: Date
    ) async throws(ServerStoreError) -> Authorization {
        let start = CounterWindow.start(now, window: window)
        let (count, active) = try await write { db in
            let count = try Self.increment(db, key: key, start: start, by: max(requests, 1))
            let active =
                try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT 1 FROM sessions JOIN users ON users.id = sessions.user_id
                        WHERE sessions.family = ? AND sessions.user_id = ? AND sessions.revoked = 0
                          AND sessions.expires_at > ? AND users.deleted_at IS NULL
                        """,
                    arguments: [Self.key(family), Self.key(userID), UnixTime.milliseconds(now)]) ?? false
            return (count, active)
        }
        return Authorization(counter: Self.counterState(count: count, start: start, window: window), sessionActive: active)
    }

    public func revokeSession(userID: UUID, family: UUID) async throws(ServerStoreError) {
        try await write { db in
            try db.execute(
                sql: "UPDATE sessions SET revoked = 1 WHERE family = ? AND user_id = ?",
                arguments: [Self.key(family), Self.key(userID)])
        }
    }

    public func revokeSessions(userID: UUID, keeping: UUID?) async throws(ServerStoreError) {
        try await write { db in
            try db.execute(
                sql: "UPDATE sessions SET revoked = 1 WHERE user_id = ? AND family IS NOT ?",
                arguments: [Self.key(userID), keeping.map(Self.key)])
        }
    }

    // MARK: Protection

    public func increment(counter key: String, window: Int, now: Date) async throws(ServerStoreError) -> CounterState {
        let start = CounterWindow.start(now, window: window)
        let count = try await write { db in try Self.increment(db, key: key, start: start, by: 1) }
        return Self.counterState(count: count, start: start, window: window)
    }

    static func increment(_ db: Database, key: String, start: Int64, by requests: Int) throws -> Int {
        try Int.fetchOne(
            db,
            sql: """
                INSERT INTO rate_counters (key, window_start, count) VALUES (?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET
                    count = CASE WHEN rate_counters.window_start = excluded.window_start
                                 THEN rate_counters.count + excluded.count ELSE excluded.count END,
                    window_start = excluded.window_start
                RETURNING count
                """,
            arguments: [key, start, requests]) ?? requests
    }

    static func counterState(count: Int, start: Int64, window: Int) -> CounterState {
        CounterState(count: count, windowEnds: UnixTime.date(seconds: start + Int64(window)))
    }

    public func counter(_ key: String, window: Int, now: Date) async throws(ServerStoreError) -> CounterState {
        let start = CounterWindow.start(now, window: window)
        let count = try await read { db in
            try Int.fetchOne(
                db, sql: "SELECT count FROM rate_counters WHERE key = ? AND window_start = ?", arguments: [key, start]) ?? 0
        }
        return Self.counterState(count: count, start: start, window: window)
    }

    public func audit(_ event: AuditEvent) async throws(ServerStoreError) {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO audit_log (at, kind, user_id, address, detail) VALUES (?, ?, ?, ?, ?)",
                arguments: [UnixTime.milliseconds(event.at), event.kind.rawValue, event.userID.map(Self.key), event.address, event.detail])
        }
    }

    public func auditEvents(userID: UUID, limit: Int) async throws(ServerStoreError) -> [AuditEvent] {
        try await auditEvents(of: userID, limit: limit)
    }

    public func auditEvents(limit: Int) async throws(ServerStoreError) -> [AuditEvent] {
        try await auditEvents(of: nil, limit: limit)
    }

    /// `userID`'s events, or everyone's when nil.
    func auditEvents(of userID: UUID?, limit: Int) async throws(ServerStoreError) -> [AuditEvent] {
        try await read { db in
            let rows: [Row]
            if let userID {
                rows = try Row.fetchAll(
                    db, sql: "SELECT * FROM audit_log WHERE user_id = ? ORDER BY id DESC LIMIT ?",
                    arguments: [Self.key(userID), limit])
            } else {
                rows = try Row.fetchAll(db, sql: "SELECT * FROM audit_log ORDER BY id DESC LIMIT ?", arguments: [limit])
            }
            return rows.compactMap { row -> AuditEvent? in
                guard let kind = AuditEvent.Kind(rawValue: row["kind"]) else { return nil }
                return AuditEvent(
                    at: UnixTime.date(milliseconds: row["at"]), kind: kind, userID: (row["user_id"] as String?).flatMap(UUID.init(uuidString:)),
                    address: row["address"], detail: row["detail"])
            }
        }
    }
}
