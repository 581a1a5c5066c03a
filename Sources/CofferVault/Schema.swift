import Foundation
import GRDB

/// The vault's SQLite schema: append-only named migrations (docs/FORMAT.md §3). Never edit a migration that has
/// shipped; add a new one.
enum Schema {
    /// Format version written into new vaults and the highest one this build opens.
    static let formatVersion = 1
    static let fileName = "vault.sqlite"

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-initial") { db in
            try db.execute(
                sql: """
                    CREATE TABLE vault (
                        singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
                        vault_id BLOB NOT NULL CHECK (length(vault_id) = 16),
                        format_version INTEGER NOT NULL,
                        key_epoch INTEGER NOT NULL DEFAULT 1,
                        created_at INTEGER NOT NULL
                    );
                    CREATE TABLE slot (
                        id BLOB PRIMARY KEY NOT NULL CHECK (length(id) = 16),
                        type INTEGER NOT NULL,
                        kdf BLOB,
                        salt BLOB NOT NULL,
                        wrapped_key BLOB NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE item (
                        id BLOB PRIMARY KEY NOT NULL CHECK (length(id) = 16),
                        kind TEXT NOT NULL,
                        revision INTEGER NOT NULL CHECK (revision >= 1),
                        updated_at INTEGER NOT NULL,
                        deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
                        box BLOB,
                        CHECK ((deleted = 0) = (box IS NOT NULL))
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v2-sync") { db in
            try db.execute(
                sql: """
                    CREATE TABLE sync_account (
                        singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
                        server TEXT NOT NULL,
                        account TEXT NOT NULL,
                        user_id TEXT NOT NULL,
                        cursor INTEGER NOT NULL DEFAULT 0,
                        last_sync INTEGER
                    );
                    CREATE TABLE sync_item (
                        id BLOB PRIMARY KEY NOT NULL CHECK (length(id) = 16),
                        server_revision INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE sync_conflict (
                        id BLOB PRIMARY KEY NOT NULL CHECK (length(id) = 16),
                        original_id BLOB NOT NULL CHECK (length(original_id) = 16),
                        detected_at INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        // Sealed state of this device's own (never synced): cached places tiles, the last refresh point. Rows are
        // named by an HMAC of their logical name, so the file shows neither names nor what they hold (FORMAT.md §3).
        migrator.registerMigration("v3-local-state") { db in
            try db.execute(
                sql: """
                    CREATE TABLE local_state (
                        name BLOB PRIMARY KEY NOT NULL CHECK (length(name) = 32),
                        box BLOB NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        // Verified sync (docs/FORMAT.md §8.3, §8.6): the newest manifest this device verified, the account slot it
        // knows, the leaf of each server row it holds, and the manifests it verified (to tell a server restored from a
        // backup from one that lies, and to put the history back on it).
        migrator.registerMigration("v4-verified-sync") { db in
            try db.execute(
                sql: """
                    ALTER TABLE sync_account ADD COLUMN device_id BLOB CHECK (device_id IS NULL OR length(device_id) = 16);
                    ALTER TABLE sync_account ADD COLUMN head BLOB;
                    ALTER TABLE sync_account ADD COLUMN account_commitment BLOB
                        CHECK (account_commitment IS NULL OR length(account_commitment) = 32);
                    ALTER TABLE sync_item ADD COLUMN leaf BLOB CHECK (leaf IS NULL OR length(leaf) = 32);
                    CREATE TABLE sync_manifest (
                        epoch INTEGER PRIMARY KEY NOT NULL CHECK (epoch >= 1),
                        body BLOB NOT NULL
                    );
                    """)
        }
        // Master-key rotation of a synced vault (docs/FORMAT.md §8.8): prepared here (the new key sealed under the
        // current one, the re-sealed rows and the new slots), committed on the server, then here in one transaction.
        migrator.registerMigration("v5-sync-rotation") { db in
            try db.execute(
                sql: """
                    CREATE TABLE sync_rotation (
                        singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
                        id BLOB NOT NULL CHECK (length(id) = 16),
                        key_epoch INTEGER NOT NULL CHECK (key_epoch >= 1),
                        master_box BLOB NOT NULL,
                        recovery_box BLOB,
                        manifest BLOB,
                        manifest_epoch INTEGER,
                        created_at INTEGER NOT NULL
                    );
                    CREATE TABLE sync_rotation_slot (
                        id BLOB PRIMARY KEY NOT NULL CHECK (length(id) = 16),
                        type INTEGER NOT NULL,
                        kdf BLOB,
                        salt BLOB NOT NULL,
                        wrapped_key BLOB NOT NULL
                    );
                    CREATE TABLE sync_rotation_item (
                        id BLOB PRIMARY KEY NOT NULL CHECK (length(id) = 16),
                        kind TEXT NOT NULL,
                        revision INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL,
                        deleted INTEGER NOT NULL,
                        box BLOB
                    ) WITHOUT ROWID;
                    """)
        }
        // A count of writes to `item`, kept by SQLite itself, so that a lookup can tell in one read whether the
        // catalogue (docs/FORMAT.md §4) still describes the items, whoever wrote them.
        migrator.registerMigration("v6-item-changes") { db in
            try db.execute(
                sql: """
                    CREATE TABLE item_changes (
                        singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
                        count INTEGER NOT NULL
                    );
                    INSERT INTO item_changes (singleton, count) VALUES (1, 0);
                    CREATE TRIGGER item_inserted AFTER INSERT ON item BEGIN
                        UPDATE item_changes SET count = count + 1 WHERE singleton = 1;
                    END;
                    CREATE TRIGGER item_updated AFTER UPDATE ON item BEGIN
                        UPDATE item_changes SET count = count + 1 WHERE singleton = 1;
                    END;
                    CREATE TRIGGER item_deleted AFTER DELETE ON item BEGIN
                        UPDATE item_changes SET count = count + 1 WHERE singleton = 1;
                    END;
                    """)
        }
        // One device slot per device (docs/FORMAT.md §4): each device slot's name, key store and date, sealed under a
        // key derived from the master key. Slots without a row (vaults written before) are listed unnamed.
        migrator.registerMigration("v7-slot-labels") { db in
            try db.execute(
                sql: """
                    CREATE TABLE slot_label (
                        slot_id BLOB PRIMARY KEY NOT NULL CHECK (length(slot_id) = 16),
                        box BLOB NOT NULL
                    ) WITHOUT ROWID;
                    """)
        }
        return migrator
    }
}
