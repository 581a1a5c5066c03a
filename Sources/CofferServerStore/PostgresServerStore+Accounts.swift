import CofferCrypto
import CofferSyncAPI
import Foundation
import PostgresNIO

extension PostgresServerStore {
    // MARK: Accounts

    public func createUser(_ user: NewUser) async throws(ServerStoreError) {
        let slot = try user.slot.map(Self.encodeSlot)
        try await transaction(acting: .user(user.id)) { [self] connection in
            try await connection.rows(
                """
                INSERT INTO users (id, email, apple_subject, full_name, created_at, auth_hash, vault_id, slot)
                VALUES (\(user.id), \(user.email), \(user.appleSubject), \(user.fullName),
                        \(unescaped: Self.timestamp(UnixTime.milliseconds(user.createdAt))), \(user.authHash), \(user.vaultID), \(slot))
                """, logger: logger)
        }
    }

    public func user(id: UUID) async throws(ServerStoreError) -> UserRecord? {
        let row = try await transaction(acting: .user(id)) { [self] connection in
            try await connection.rows(
                """
                SELECT id, email, apple_subject, full_name, \(unescaped: Self.milliseconds("created_at")),
                       \(unescaped: Self.milliseconds("deleted_at")), auth_hash, vault_id, slot
                FROM users WHERE id = \(id)
                """, logger: logger
            ).first?.decode((UUID, String?, String?, String?, Int64, Int64?, String?, UUID?, String?).self)
        }
        guard case let (id, email, appleSubject, fullName, createdAt, deletedAt, authHash, vaultID, slotText)? = row else {
            return nil
        }
        var slot: WrappedSlot?
        if let slotText {
            do {
                slot = try WireJSON.decoder().decode(WrappedSlot.self, from: Data(slotText.utf8))
            } catch {
                throw .unavailable("malformed slot")
            }
        }
        return UserRecord(
            id: id, email: email, appleSubject: appleSubject, fullName: fullName, createdAt: UnixTime.date(milliseconds: createdAt),
            deletedAt: deletedAt.map { UnixTime.date(milliseconds: $0) }, authHash: authHash, vaultID: vaultID, slot: slot)
    }

    public func userID(email: String) async throws(ServerStoreError) -> UUID? {
        try await transaction(acting: .server) { [self] connection in
            try await connection.rows("SELECT coffer_user_id_by_email(\(email))", logger: logger).first?.decode(UUID?.self) ?? nil
        }
    }

    public func userID(appleSubject: String) async throws(ServerStoreError) -> UUID? {
        try await transaction(acting: .server) { [self] connection in
            try await connection.rows("SELECT coffer_user_id_by_apple_subject(\(appleSubject))", logger: logger)
                .first?.decode(UUID?.self) ?? nil
        }
    }

    public func replaceCredentials(
        userID: UUID, authHash: String, slot: WrappedSlot, manifest: ManifestWrite?
    ) async throws(ServerStoreError) -> PushOutcome {
        let encoded = try Self.encodeSlot(slot)
        do {
            return try await rawTransaction(acting: .user(userID)) { [self] connection -> PushOutcome in
                // Locks the user's row, as a push does, so a push and a passphrase change cannot both extend one head.
                guard
                    let cursor = try await connection.rows(
                        "SELECT change_seq FROM users WHERE id = \(userID) AND deleted_at IS NULL FOR UPDATE", logger: logger
                    ).first?.decode(Int64.self)
                else { throw ServerStoreError.notFound }
                // The slot is part of the verified state: the head commits to its parameters.
                if let refusal = try await checkHead(connection, userID: userID, manifest: manifest, writesStateRows: true) {
                    return refusal
                }
                try await connection.rows(
                    "UPDATE users SET auth_hash = \(authHash), slot = \(encoded) WHERE id = \(userID)", logger: logger)
                try await insert(connection, userID: userID, manifest: manifest, sequence: cursor)
                return .accepted(cursor: cursor)
            }
        } catch let error as PostgresTransactionError {
            if let refusal = error.closureError as? ServerStoreError { throw refusal }
            throw Self.mapped(error, context: "passphrase change failed")
        } catch {
            throw Self.mapped(error, context: "passphrase change failed")
        }
    }

    /// Refuses a manifest that does not extend the stored head, and a state change without one once a head exists.
    func checkHead(
        _ connection: PostgresConnection, userID: UUID, manifest: ManifestWrite?, writesStateRows: Bool
    ) async throws -> PushOutcome? {
        let head =
            try await connection.rows(
                "SELECT coalesce(max(epoch), 0) FROM manifests WHERE user_id = \(userID)", logger: logger
            ).first?.decode(Int64.self) ?? 0
        if let manifest {
            return manifest.baseEpoch == head ? nil : .staleHead(epoch: head)
        }
        return head > 0 && writesStateRows ? .manifestRequired : nil
    }

    func insert(_ connection: PostgresConnection, userID: UUID, manifest: ManifestWrite?, sequence: Int64) async throws {
        for entry in manifest?.manifests ?? [] {
            try await connection.rows(
                """
                INSERT INTO manifests (user_id, epoch, body, seq)
                VALUES (\(userID), \(entry.epoch), \(entry.bytes), \(sequence))
                """, logger: logger)
        }
    }

    public func softDeleteUser(id: UUID, at date: Date) async throws(ServerStoreError) {
        let changed = try await transaction(acting: .user(id)) { [self] connection in
            let changed = try await connection.rows(
                """
                UPDATE users SET deleted_at = \(unescaped: Self.timestamp(UnixTime.milliseconds(date)))
                WHERE id = \(id) AND deleted_at IS NULL RETURNING 1
                """, logger: logger
            ).count
            try await connection.rows("UPDATE sessions SET revoked = true WHERE user_id = \(id)", logger: logger)
            return changed
        }
        guard changed == 1 else { throw .notFound }
    }
}
