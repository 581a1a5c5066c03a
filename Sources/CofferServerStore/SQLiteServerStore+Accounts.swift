import CofferCrypto
import CofferSyncAPI
import Foundation
import GRDB

extension SQLiteServerStore {
    // MARK: Accounts

    public func createUser(_ user: NewUser) async throws(ServerStoreError) {
        let slot = try user.slot.map(Self.encodeSlot)
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO users (id, email, apple_subject, full_name, created_at, auth_hash, vault_id, slot)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    Self.key(user.id), user.email, user.appleSubject, user.fullName, UnixTime.milliseconds(user.createdAt),
                    user.authHash, user.vaultID.map(Self.key), slot,
                ])
        }
    }

    public func user(id: UUID) async throws(ServerStoreError) -> UserRecord? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM users WHERE id = ?", arguments: [Self.key(id)]).map(Self.userRecord)
        }
    }

    public func userID(email: String) async throws(ServerStoreError) -> UUID? {
        let id = try await read { db in
            try String.fetchOne(db, sql: "SELECT id FROM users WHERE email = ? AND deleted_at IS NULL", arguments: [email])
        }
        return id.flatMap(UUID.init(uuidString:))
    }

    public func userID(appleSubject: String) async throws(ServerStoreError) -> UUID? {
        let id = try await read { db in
            try String.fetchOne(
                db, sql: "SELECT id FROM users WHERE apple_subject = ? AND deleted_at IS NULL", arguments: [appleSubject])
        }
        return id.flatMap(UUID.init(uuidString:))
    }

    public func replaceCredentials(
        userID: UUID, authHash: String, slot: WrappedSlot, manifest: ManifestWrite?
    ) async throws(ServerStoreError) -> PushOutcome {
        let encoded = try Self.encodeSlot(slot)
        return try await write { db -> PushOutcome in
            let user = Self.key(userID)
            guard
                let cursor = try Int64.fetchOne(
                    db, sql: "SELECT change_seq FROM users WHERE id = ? AND deleted_at IS NULL", arguments: [user])
            else { throw ServerStoreError.notFound }
            // The slot is part of the verified state: the head commits to its parameters.
            if let refusal = try Self.checkHead(db, user: user, manifest: manifest, writesStateRows: true) { return refusal }
            try db.execute(sql: "UPDATE users SET auth_hash = ?, slot = ? WHERE id = ?", arguments: [authHash, encoded, user])
            try Self.insert(db, user: user, manifest: manifest, sequence: cursor)
            return .accepted(cursor: cursor)
        }
    }

    /// Refuses a manifest that does not extend the stored head, and a state change without one once a head exists.
    static func checkHead(
        _ db: Database, user: String, manifest: ManifestWrite?, writesStateRows: Bool
    ) throws -> PushOutcome? {
        let head = try Int64.fetchOne(db, sql: "SELECT max(epoch) FROM manifests WHERE user_id = ?", arguments: [user]) ?? 0
        if let manifest {
            return manifest.baseEpoch == head ? nil : .staleHead(epoch: head)
        }
        return head > 0 && writesStateRows ? .manifestRequired : nil
    }

    static func insert(_ db: Database, user: String, manifest: ManifestWrite?, sequence: Int64) throws {
        for entry in manifest?.manifests ?? [] {
            try db.execute(
                sql: "INSERT INTO manifests (user_id, epoch, body, seq) VALUES (?, ?, ?, ?)",
                arguments: [user, entry.epoch, entry.bytes, sequence])
        }
    }

    public func softDeleteUser(id: UUID, at date: Date) async throws(ServerStoreError) {
        let changed = try await write { db in
            try db.execute(
                sql: "UPDATE users SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL",
                arguments: [UnixTime.milliseconds(date), Self.key(id)])
            let changed = db.changesCount
            try db.execute(sql: "UPDATE sessions SET revoked = 1 WHERE user_id = ?", arguments: [Self.key(id)])
            return changed
        }
        guard changed == 1 else { throw .notFound }
    }

    public func purgeUsers(deletedBefore cutoff: Date) async throws(ServerStoreError) -> Int {
        try await write { db in
            try db.execute(
                sql: "DELETE FROM users WHERE deleted_at IS NOT NULL AND deleted_at < ?", arguments: [UnixTime.milliseconds(cutoff)])
            return db.changesCount
        }
    }
}
