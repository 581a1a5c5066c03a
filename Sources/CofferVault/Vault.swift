import CofferCrypto
import CofferModel
import CofferPlatform
import Crypto
import Foundation
import GRDB
import Synchronization

/// Knobs a vault is opened with. Production code uses the defaults; tests inject cheap KDF limits, a fixed clock or
/// a deterministic random source.
public struct VaultOptions: Sendable {
    public var limits: KDFLimits
    public var random: any RandomSource
    public var clock: @Sendable () -> Date
    /// How long a write waits for another process's write to finish before failing.
    public var busyTimeout: TimeInterval

    public init(
        limits: KDFLimits = .production, random: any RandomSource = SystemRandom(),
        clock: @escaping @Sendable () -> Date = { Date() }, busyTimeout: TimeInterval = 10
    ) {
        self.limits = limits
        self.random = random
        self.clock = clock
        self.busyTimeout = busyTimeout
    }
}

/// How to open a vault: one secret for one slot type.
public enum UnlockMethod: Sendable {
    case deviceKey(SecretBytes)
    case passphrase(String)
    case recoveryCode(String)
}

/// A slot as listed to users.
public struct SlotInfo: Sendable, Equatable {
    public let id: UUID
    public let type: SlotType
    public let kdf: PassphraseKDF?
    /// A device slot's name, key store and date; nil for other slots and for device slots made before labels.
    public var device: DeviceLabel?

    init(id: UUID, type: SlotType, kdf: PassphraseKDF?, device: DeviceLabel? = nil) {
        self.id = id
        self.type = type
        self.kdf = kdf
        self.device = device
    }
}

/// An unlocked vault: a directory (0700) holding `vault.sqlite` (0600), whose items are sealed under keys derived
/// from the master key. Safe to share between threads and to use from several processes at once: every write is an
/// immediate SQLite transaction in WAL mode.
public final class Vault: @unchecked Sendable {
    /// Directory holding the vault file.
    public let directory: String
    public let vaultID: UUID
    /// When the vault was created.
    public let createdAt: Date
    /// The slot this vault was opened with (a device slot tells which device this is).
    public let openedSlotID: UUID
    let vaultIDBytes: [UInt8]
    let database: DatabaseQueue
    let options: VaultOptions
    /// Replaced only by master-key rotation.
    private let keys: Mutex<Keys>
    /// Set by `closeBeforeExit`: the connection is closed, and GRDB must not be asked to use it.
    let closed = Atomic<Bool>(false)

    struct Keys {
        let master: SecretBytes
        /// Prepared once: every item box of the vault is sealed and opened with it.
        let items: BoxKey
        let epoch: Int64

        init(master: SecretBytes, items: SymmetricKey, epoch: Int64) throws(VaultError) {
            self.master = master
            do { self.items = try BoxKey(items) } catch { throw .crypto(error) }
            self.epoch = epoch
        }
    }

    /// Path of the vault file inside `directory`.
    public static func databasePath(in directory: String) -> String { "\(directory)/\(Schema.fileName)" }

    /// Whether a vault exists in `directory`.
    public static func exists(in directory: String) -> Bool { PrivateFiles.exists(databasePath(in: directory)) }

    private init(directory: String, header: Header, database: DatabaseQueue, keys: Keys, openedSlotID: UUID, options: VaultOptions) {
        self.directory = directory
        self.openedSlotID = openedSlotID
        self.createdAt = UnixTime.date(milliseconds: header.createdAt)
        let vaultID = header.vaultID
        self.vaultIDBytes = vaultID
        self.vaultID = UUID(bytes: vaultID)
        self.database = database
        self.keys = Mutex(keys)
        self.options = options
    }

    // MARK: Create and open

    /// Creates a new vault in `directory` with a fresh master key (or `masterKey`, when a device joins a synced vault),
    /// a device slot when `deviceKey` is given (labelled `deviceLabel`) and a passphrase slot when `passphrase` is. The file appears
    /// atomically, complete, or not at all.
    public static func create(
        in directory: String, vaultID: UUID = UUID(), masterKey existingMasterKey: SecretBytes? = nil,
        deviceKey: SecretBytes?, deviceLabel: DeviceLabel? = nil, passphrase: String? = nil,
        kdf: PassphraseKDF = .defaultPBKDF2, options: VaultOptions = VaultOptions()
    ) throws(VaultError) -> Vault {
        guard deviceKey != nil || passphrase != nil else { throw .noSlot(.device) }
        let path = databasePath(in: directory)
        try wrap { () throws(PrivateFileError) in try PrivateFiles.createDirectory(directory) }
        guard !PrivateFiles.exists(path) else { throw .alreadyExists(path: directory) }
        let temporary = PrivateFiles.temporarySibling(of: path)
        defer { removeDatabaseFiles(temporary) }
        let vaultID = vaultID.bytes
        if let existingMasterKey, existingMasterKey.count != 32 { throw .tampered("the master key") }
        let masterKey = existingMasterKey ?? SecretBytes(randomCount: 32, using: options.random)
        do {
            try wrap { () throws(PrivateFileError) in try PrivateFiles.write([], to: temporary) }
            let database = try openDatabase(temporary, options: options)
            try useWriteAheadLog(database)
            try runMigrations(database)
            try database.write { db in
                try db.execute(
                    sql: "INSERT INTO vault (singleton, vault_id, format_version, key_epoch, created_at) VALUES (1, ?, ?, 1, ?)",
                    arguments: [Data(vaultID), Schema.formatVersion, UnixTime.milliseconds(options.clock())])
                if let deviceKey {
                    let slot = try insertSlot(
                        db, type: .device, secret: deviceKey, kdf: nil, masterKey: masterKey, vaultID: vaultID, options: options)
                    if let deviceLabel {
                        try insertLabel(db, deviceLabel, slotID: slot.id.bytes, master: masterKey, vaultID: vaultID)
                    }
                }
                if let passphrase {
                    let secret = try Passphrase.bytes(passphrase)
                    try insertSlot(db, type: .passphrase, secret: secret, kdf: kdf, masterKey: masterKey, vaultID: vaultID, options: options)
                }
            }
            // Fold the WAL into the file so it is self-contained before it is published.
            try database.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            try database.close()
            try wrap { () throws(PrivateFileError) in try PrivateFiles.publish(temporary, as: path) }
        } catch let error as VaultError {
            throw error
        } catch {
            throw mapped(error)
        }
        return try open(in: directory, unlock: deviceKey.map(UnlockMethod.deviceKey) ?? .passphrase(passphrase ?? ""), options: options)
    }

    /// Opens and unlocks the vault in `directory`.
    public static func open(in directory: String, unlock: UnlockMethod, options: VaultOptions = VaultOptions()) throws(VaultError) -> Vault {
        try openLocked(in: directory, options: options).unlock(unlock)
    }

    /// Opens the vault file in `directory` without unlocking it: its id (to find the device key) is read on the
    /// connection the vault is then unlocked through, so that opening a vault opens its file once. Nothing is
    /// written until `unlock`; a file Coffer did not make (no migration record or no vault header) is refused here.
    public static func openLocked(in directory: String, options: VaultOptions = VaultOptions()) throws(VaultError) -> LockedVault {
        let path = databasePath(in: directory)
        guard PrivateFiles.exists(path) else { throw .notFound(path: directory) }
        do {
            try restrictModes(directory: directory)
            let database = try openDatabase(path, options: options)
            let id = try database.read { db in try readID(db) }
            return LockedVault(vaultID: id, directory: directory, database: database, options: options)
        } catch let error as VaultError {
            throw error
        } catch {
            throw mapped(error)
        }
    }

    /// The vault's id, from a file that has Coffer's migration record and header.
    static func readID(_ db: Database) throws -> UUID {
        // One query, not GRDB's `tableExists`, which loads the schema description of the whole file first.
        let tables = try db.firstRow("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('grdb_migrations', 'vault')") {
            try Cell.integer($0, 0, "the schema")
        }
        guard tables == 2 else { throw VaultError.notAVault }
        guard let id = try db.firstRow("SELECT vault_id FROM vault WHERE singleton = 1", read: { Cell.blob($0, 0) }) ?? nil, id.count == 16 else {
            throw VaultError.tampered("the vault header")
        }
        return UUID(bytes: Array(id))
    }

    /// Unlocks the vault of an opened file (`LockedVault.unlock`): write-ahead logging, pending migrations, then the
    /// slot `unlock` names.
    static func unlock(_ locked: LockedVault, _ unlock: UnlockMethod) throws(VaultError) -> Vault {
        let directory = locked.directory, database = locked.database, options = locked.options
        do {
            let type = try UnlockRequest(unlock).type
            let migrations = Set(Schema.migrator.migrations)
            // One read for a vault that needs nothing done (WAL on, every migration applied): each GRDB access costs
            // `coffer code` a noticeable share of its few milliseconds.
            let ready = try database.read { db -> (Header, [StoredSlot])? in
                guard try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal",
                    try Set(String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")) == migrations
                else { return nil }
                return (try readHeader(db), try readSlots(db, limits: options.limits, type: type))
            }
            let header: Header, slots: [StoredSlot]
            if let ready {
                (header, slots) = ready
            } else {
                try useWriteAheadLog(database)
                try runMigrations(database)
                (header, slots) = try database.read { db in (try readHeader(db), try readSlots(db, limits: options.limits, type: type)) }
            }
            let (master, slotID) = try unlockMasterKey(slots: slots, unlock: unlock, vaultID: header.vaultID, options: options)
            let keys = try Keys(master: master, items: KeySchedule.itemsKey(masterKey: master, vaultID: header.vaultID), epoch: header.epoch)
            return Vault(directory: directory, header: header, database: database, keys: keys, openedSlotID: slotID, options: options)
        } catch let error as VaultError {
            throw error
        } catch {
            throw mapped(error)
        }
    }

    /// The id of the vault in `directory`, read without unlocking it (to find its device key).
    /// Reads through one read-only connection, so that finding the key of a vault writes and syncs nothing; the
    /// migrations run when the vault is opened.
    public static func peekID(in directory: String, options: VaultOptions = VaultOptions()) throws(VaultError) -> UUID {
        let path = databasePath(in: directory)
        guard PrivateFiles.exists(path) else { throw .notFound(path: directory) }
        do {
            try restrictModes(directory: directory)
            let database = try openDatabase(path, options: options, readonly: true)
            defer { try? database.close() }
            return try database.read { db in try readID(db) }
        } catch let error as VaultError {
            throw error
        } catch {
            throw mapped(error)
        }
    }

    struct Header {
        let vaultID: [UInt8]
        let epoch: Int64
        let createdAt: Int64
    }

    static func readHeader(_ db: Database) throws -> Header {
        let header = try db.firstRow("SELECT vault_id, format_version, key_epoch, created_at FROM vault WHERE singleton = 1") { row in
            let version = try Cell.integer(row, 1, "the vault header")
            guard version <= Schema.formatVersion else {
                throw VaultError.newerFormat(found: Int(clamping: version), supported: Schema.formatVersion)
            }
            guard let vaultID = Cell.blob(row, 0), vaultID.count == 16 else { throw VaultError.tampered("the vault header") }
            return Header(
                vaultID: Array(vaultID), epoch: try Cell.integer(row, 2, "the vault header"), createdAt: try Cell.integer(row, 3, "the vault header"))
        }
        guard let header else { throw VaultError.tampered("the vault header") }
        return header
    }

    struct StoredSlot {
        let header: SlotHeader
        let wrapped: Data
    }

    /// The slots, optionally only those of one type. Only the returned slots are validated, so a damaged slot of
    /// another type cannot keep the owner out.
    static func readSlots(_ db: Database, limits: KDFLimits, type wanted: SlotType? = nil) throws -> [StoredSlot] {
        try db.everyRow("SELECT id, type, kdf, salt, wrapped_key FROM slot ORDER BY type, id") { row in
            let typeValue = try Cell.integer(row, 1, "a slot")
            guard let type = UInt8(exactly: typeValue).flatMap(SlotType.init(rawValue:)) else {
                if wanted != nil { return nil }
                throw VaultError.tampered("a slot")
            }
            if let wanted, type != wanted { return nil }
            guard let id = Cell.blob(row, 0), let salt = Cell.blob(row, 3), let wrapped = Cell.blob(row, 4) else {
                throw VaultError.tampered("a slot")
            }
            let kdf = try Cell.blob(row, 2).map { encoded throws(CofferCryptoError) in
                try PassphraseKDF(encoded: Array(encoded), limits: limits)
            }
            let header = SlotHeader(slotID: Array(id), type: type, kdf: kdf, salt: Array(salt))
            try header.validate(limits: limits)
            return StoredSlot(header: header, wrapped: wrapped)
        }
    }

    /// Unwraps the master key with the first of `slots` (all of the unlock method's type) that `unlock` opens; returns
    /// it with that slot's id.
    static func unlockMasterKey(
        slots: [StoredSlot], unlock: UnlockMethod, vaultID: [UInt8], options: VaultOptions
    ) throws -> (SecretBytes, UUID) {
        let request = try UnlockRequest(unlock)
        let candidates = slots
        guard !candidates.isEmpty else { throw VaultError.noSlot(request.type) }
        for slot in candidates {
            let kek = try slot.header.keyEncryptionKey(secret: request.secret, limits: options.limits)
            if let master = try? slot.header.unwrap(slot.wrapped, vaultID: vaultID, kek: kek) {
                return (master, UUID(bytes: slot.header.slotID))
            }
        }
        throw request.failure
    }

    /// An unlock method resolved to the slot type it opens, the slot secret, and the error for a wrong secret.
    struct UnlockRequest {
        let type: SlotType
        let secret: SecretBytes
        let failure: VaultError

        init(_ unlock: UnlockMethod) throws {
            switch unlock {
            case .deviceKey(let key):
                type = .device
                secret = key
                failure = .deviceKeyMismatch
            case .passphrase(let text):
                type = .passphrase
                secret = try Passphrase.bytes(text)
                failure = .wrongPassphrase
            case .recoveryCode(let text):
                guard let parsed = try? RecoveryCode.parse(text) else { throw VaultError.wrongRecoveryCode }
                type = .recovery
                secret = parsed
                failure = .wrongRecoveryCode
            }
        }
    }

    @discardableResult
    static func insertSlot(
        _ db: Database, type: SlotType, secret: SecretBytes, kdf: PassphraseKDF?, masterKey: SecretBytes,
        vaultID: [UInt8], options: VaultOptions
    ) throws -> SlotInfo {
        let (header, wrapped) = try makeSlot(type: type, secret: secret, kdf: kdf, masterKey: masterKey, vaultID: vaultID, options: options)
        try db.execute(
            sql: "INSERT INTO slot (id, type, kdf, salt, wrapped_key) VALUES (?, ?, ?, ?, ?)",
            arguments: [Data(header.slotID), Int(type.rawValue), header.kdf.map { Data($0.encoded) }, Data(header.salt), wrapped])
        return SlotInfo(id: UUID(bytes: header.slotID), type: type, kdf: header.kdf)
    }

    /// A new slot of `type` for `secret`, wrapping `masterKey`: its header and wrapped key.
    static func makeSlot(
        type: SlotType, secret: SecretBytes, kdf: PassphraseKDF?, masterKey: SecretBytes, vaultID: [UInt8], options: VaultOptions
    ) throws -> (header: SlotHeader, wrapped: Data) {
        let header = SlotHeader.new(type, kdf: kdf, random: options.random)
        let kek = try header.keyEncryptionKey(secret: secret, limits: options.limits)
        return (header, try header.wrap(masterKey: masterKey, vaultID: vaultID, kek: kek))
    }

    // MARK: Keys

    var currentKeys: Keys { keys.withLock { $0 } }

    /// Runs `body` in an immediate write transaction after checking that no other process rotated the key.
    func writeTransaction<Result>(_ body: (Database, Keys) throws -> Result) throws(VaultError) -> Result {
        try requireOpen()
        do {
            return try database.writeWithoutTransaction { db in
                var result: Result?
                try db.inTransaction(.immediate) {
                    let keys = currentKeys
                    let epoch = try Int64.fetchOne(db, sql: "SELECT key_epoch FROM vault WHERE singleton = 1")
                    guard epoch == keys.epoch else { throw VaultError.keyRotatedElsewhere }
                    result = try body(db, keys)
                    return .commit
                }
                guard let result else { throw VaultError.storage("transaction produced no result") }
                return result
            }
        } catch let error as VaultError {
            throw error
        } catch {
            throw Self.mapped(error)
        }
    }

    /// Runs `body` in a read transaction, after checking that no other process rotated the key since this one
    /// unlocked (boxes sealed under a newer key would otherwise look tampered with).
    func read<Result>(_ body: (Database, Keys) throws -> Result) throws(VaultError) -> Result {
        try requireOpen()
        do {
            return try database.read { db in
                let keys = currentKeys
                let epoch = try db.firstRow("SELECT key_epoch FROM vault WHERE singleton = 1") { try Cell.integer($0, 0, "the vault header") }
                guard epoch == keys.epoch else { throw VaultError.keyRotatedElsewhere }
                return try body(db, keys)
            }
        } catch let error as VaultError {
            throw error
        } catch {
            throw Self.mapped(error)
        }
    }

    func replaceKeys(_ new: Keys) {
        keys.withLock { $0 = new }
    }

    // MARK: Helpers

    static func mapped(_ error: any Error) -> VaultError {
        switch error {
        case let error as VaultError: return error
        case let error as CofferCryptoError: return .crypto(error)
        case let error as ModelError: return .model(error)
        case let error as PrivateFileError: return .file(error)
        case let error as DatabaseError:
            if error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
                return .tampered("the vault file")
            }
            // The SQLite message names the failure class; never the SQL arguments, which may hold boxes.
            return .storage(error.message ?? "SQLite error \(error.resultCode.rawValue)")
        default: return .storage(String(describing: type(of: error)))
        }
    }

    static func wrap<Result>(_ body: () throws(PrivateFileError) -> Result) throws(VaultError) -> Result {
        do {
            return try body()
        } catch {
            throw .file(error)
        }
    }
}

extension Row {
    /// The integer in column `index`; `.tampered(what)` for any other storage class (never a crash).
    func integer(_ index: Int, _ what: String) throws -> Int64 {
        guard let value = Int64.fromDatabaseValue(self[index] as DatabaseValue) else { throw VaultError.tampered(what) }
        return value
    }

    /// The blob in column `index`, or nil.
    func blob(_ index: Int) -> Data? {
        let value = self[index] as DatabaseValue
        guard case .blob(let data) = value.storage else { return nil }
        return data
    }

    /// The text in column `index`, or nil.
    func text(_ index: Int) -> String? {
        let value = self[index] as DatabaseValue
        guard case .string(let text) = value.storage else { return nil }
        return text
    }
}

/// A vault file opened but not unlocked (`Vault.openLocked`): its id, to find the key that unlocks it.
public struct LockedVault {
    public let vaultID: UUID
    let directory: String
    let database: DatabaseQueue
    let options: VaultOptions

    /// Unlocks the vault with `unlock`, on the connection already open; may be tried again with another secret.
    public func unlock(_ unlock: UnlockMethod) throws(VaultError) -> Vault {
        try Vault.unlock(self, unlock)
    }
}
