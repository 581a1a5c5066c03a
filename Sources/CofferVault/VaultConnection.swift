import CofferPlatform
import Foundation
import GRDB
import Synchronization

/// The vault file's SQLite connection: how it is opened, kept private, put in WAL mode, migrated and closed.
extension Vault {
    /// Keeps the vault directory 0700 and its files 0600 even if something loosened them.
    static func restrictModes(directory: String) throws(VaultError) {
        try wrap { () throws(PrivateFileError) in
            try PrivateFiles.createDirectory(directory)
            for suffix in ["", "-wal", "-shm"] { try PrivateFiles.restrictFile(databasePath(in: directory) + suffix) }
        }
    }

    /// Statements run on each new connection before Coffer's own settings: in tests, an SQLite built with other
    /// defaults (`synchronous = OFF`, `secure_delete = OFF`), so that the settings Coffer relies on are shown to be
    /// its own and not the build's. Empty otherwise.
    package static let connectionPreamble = Mutex<[String]>([])

    /// Removes a database file and the journal files SQLite may have left beside it.
    static func removeDatabaseFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? PrivateFiles.remove(path + suffix) }
    }

    static func openDatabase(_ path: String, options: VaultOptions, readonly: Bool = false) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.busyMode = .timeout(options.busyTimeout)
        configuration.readonly = readonly
        // WAL is a property of the file, set once below when a vault is made. Asking GRDB for it on every open would
        // write a transaction and sync the disk each time the WAL file is absent, as it is after the last close:
        // then even reading a code would write.
        configuration.journalMode = .default
        // The vault's schema declares no foreign keys (VaultTests checks), so GRDB's `PRAGMA foreign_keys = ON` on
        // every connection would only cost each command a statement.
        configuration.foreignKeysEnabled = false
        configuration.prepareDatabase { db in
            for statement in Vault.connectionPreamble.withLock({ $0 }) { try db.execute(sql: statement) }
            // Acknowledged writes survive power loss, not only process crashes.
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA secure_delete = ON")
            // The catalogue is one large value: reading it through a memory map costs one fault per page, not a
            // system call per page.
            try db.execute(sql: "PRAGMA mmap_size = 268435456")
        }
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// Puts a vault file in WAL mode, once: a file's journal mode stays.
    static func useWriteAheadLog(_ database: DatabaseQueue) throws {
        try database.writeWithoutTransaction { db in
            if try String.fetchOne(db, sql: "PRAGMA journal_mode") != "wal" {
                guard try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") == "wal" else {
                    throw VaultError.storage("the vault cannot use write-ahead logging here")
                }
            }
        }
    }

    /// Applies pending migrations, refusing a vault that a newer Coffer migrated further.
    static func runMigrations(_ database: DatabaseQueue) throws {
        let migrator = Schema.migrator
        let known = Set(migrator.migrations)
        let applied = try database.read { db in try migrator.appliedIdentifiers(db) }
        guard applied.isSubset(of: known) else { throw VaultError.unknownMigrations }
        if applied.count < known.count {
            try migrator.migrate(database)
        }
    }

    /// Closes the vault file of a process that is about to end: SQLite checkpoints its log and removes the -wal and
    /// -shm files now, as it does when the vault is released. The closed connection is then kept until the process
    /// ends, because releasing it has libdispatch start a thread (to run the destructors of GRDB's queue-specific
    /// values), which cost `coffer code` about 0.3 ms of its 6. Reading or writing through this vault afterwards
    /// throws `.storage`; a close that fails leaves what a process that exits without closing leaves, which SQLite recovers.
    public func closeBeforeExit() {
        guard closed.compareExchange(expected: false, desired: true, ordering: .sequentiallyConsistent).exchanged else { return }
        try? database.close()
        Self.closedBeforeExit.withLock { $0.append(database) }
    }

    /// Throws once `closeBeforeExit` closed the connection (GRDB would crash on it).
    func requireOpen() throws(VaultError) {
        guard !closed.load(ordering: .sequentiallyConsistent) else { throw .storage("the vault was closed") }
    }

    private static let closedBeforeExit = Mutex<[DatabaseQueue]>([])
}
