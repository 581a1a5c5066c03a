import CofferCrypto
import Foundation
import GRDB
import GRDBSQLite

extension Database {
    /// Runs one statement through this connection's statement cache. A statement run once per item (a pull's merge,
    /// an import, a rotation) is then parsed and authorised once per connection instead of once per item: preparing
    /// statements took half the CPU time of a 10,000-item pull.
    func run(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    /// The first row `sql` selects, through the statement cache (see `run`).
    func row(_ sql: String, _ arguments: StatementArguments) throws -> Row? {
        try Row.fetchOne(cachedStatement(sql: sql), arguments: arguments)
    }

    /// The first value `sql` selects, through the statement cache (see `run`).
    func value<Value: DatabaseValueConvertible & StatementColumnConvertible>(
        _ type: Value.Type, _ sql: String, _ arguments: StatementArguments
    ) throws -> Value? {
        try Value.fetchOne(cachedStatement(sql: sql), arguments: arguments)
    }

    /// Runs a cached statement that writes one row, binding `values` with SQLite's own calls.
    ///
    /// GRDB's `execute(arguments:)` boxes every argument and nests a closure per value to bind it; for the rows a
    /// pull or an import writes per item (tens of thousands) that cost more than SQLite's own work. This skips
    /// GRDB's bookkeeping around the statement (transaction observers, tracked regions), so it is only for
    /// `INSERT`, `UPDATE` and `DELETE` inside a transaction the vault opened, on a connection nothing observes.
    func write(_ sql: String, _ values: BoundValue...) throws {
        let statement = try cachedStatement(sql: sql)
        let handle = statement.sqliteStatement
        // Leaves a statement that failed before ready to run again; its error was thrown then.
        sqlite3_reset(handle)
        guard values.count == Int(sqlite3_bind_parameter_count(handle)) else {
            throw DatabaseError(resultCode: .SQLITE_RANGE, message: "wrong number of statement arguments", sql: sql)
        }
        for (offset, value) in values.enumerated() {
            let code = value.bind(to: handle, at: Int32(offset + 1))
            guard code == SQLITE_OK else { throw failure(code, sql: sql) }
        }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            let error = failure(code, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
        sqlite3_reset(handle)
    }

    /// What `read` makes of the first row `sql` selects, with `values` bound and the row read with SQLite's own
    /// calls (as `write` binds); nil when it selects nothing. For the few reads an everyday command makes (`coffer
    /// code` reads the header, the slots, a bucket, its head and one item), GRDB's generic fetching cost more than
    /// SQLite's own work.
    func firstRow<Value>(_ sql: String, _ values: BoundValue..., read: (SQLiteStatement) throws -> Value) throws -> Value? {
        var first: Value?
        try eachRow(sql, values) { statement in
            first = try read(statement)
            return false
        }
        return first
    }

    /// What `read` makes of each row `sql` selects (see `firstRow`), leaving out the rows it returns nil for.
    func everyRow<Value>(_ sql: String, _ values: BoundValue..., read: (SQLiteStatement) throws -> Value?) throws -> [Value] {
        var rows: [Value] = []
        try eachRow(sql, values) { statement in
            if let row = try read(statement) { rows.append(row) }
            return true
        }
        return rows
    }

    /// Steps through the rows of a cached statement, calling `body` on each until it returns false.
    private func eachRow(_ sql: String, _ values: [BoundValue], _ body: (SQLiteStatement) throws -> Bool) throws {
        let statement = try cachedStatement(sql: sql)
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        guard values.count == Int(sqlite3_bind_parameter_count(handle)) else {
            throw DatabaseError(resultCode: .SQLITE_RANGE, message: "wrong number of statement arguments", sql: sql)
        }
        for (offset, value) in values.enumerated() {
            let code = value.bind(to: handle, at: Int32(offset + 1))
            guard code == SQLITE_OK else { throw failure(code, sql: sql) }
        }
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_ROW: if try !body(handle) { return }
            case SQLITE_DONE: return
            case let code: throw failure(code, sql: sql)
            }
        }
    }

    private func failure(_ code: Int32, sql: String) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code), message: sqliteConnection.map { String(cString: sqlite3_errmsg($0)) },
            sql: sql)
    }
}

/// A value `Database.write` binds: copied by SQLite (`SQLITE_TRANSIENT`), so nothing needs to outlive the call.
enum BoundValue {
    case integer(Int64)
    case blob(Data?)
    case text(String)

    static func id(_ id: UUID) -> BoundValue { .blob(Data(id.bytes)) }

    func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch self {
        case .integer(let number):
            return sqlite3_bind_int64(statement, index, number)
        case .blob(nil):
            return sqlite3_bind_null(statement, index)
        case .blob(let bytes?):
            // An empty blob is bound as one, not as the NULL its missing base address would bind.
            guard !bytes.isEmpty else { return sqlite3_bind_zeroblob(statement, index, 0) }
            return bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), Self.transient) }
        case .text(var text):
            return text.withUTF8 { utf8 in
                guard let start = utf8.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, Self.transient) }
                return start.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                    sqlite3_bind_text(statement, index, $0, Int32(utf8.count), Self.transient)
                }
            }
        }
    }

    /// SQLite's `SQLITE_TRANSIENT`: copy the value now.
    private static var transient: sqlite3_destructor_type {
        unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
    }
}

extension ItemRow {
    /// The row a statement selecting `ItemRow.columns` stands on, read with SQLite's own column calls, as
    /// `init(stored:)` reads a GRDB row: GRDB decodes each cell through generic code that looks up type metadata,
    /// and a listing of 10,000 items reads 60,000 cells. A malformed id, kind or number is damage.
    init(current statement: SQLiteStatement) throws {
        guard sqlite3_column_type(statement, 0) == SQLITE_BLOB, sqlite3_column_bytes(statement, 0) == 16,
            let idBytes = sqlite3_column_blob(statement, 0)
        else { throw VaultError.tampered("an item id") }
        guard sqlite3_column_type(statement, 1) == SQLITE_TEXT, let kindBytes = sqlite3_column_text(statement, 1) else {
            throw VaultError.tampered("an item kind")
        }
        let kind = String(decoding: UnsafeBufferPointer(start: kindBytes, count: Int(sqlite3_column_bytes(statement, 1))), as: UTF8.self)
        let box = Cell.blob(statement, 5)
        self.init(
            id: UUID(bytes: Array(UnsafeRawBufferPointer(start: idBytes, count: 16))), kind: kind,
            revision: try Cell.integer(statement, 2, "an item revision"), updatedAt: try Cell.integer(statement, 3, "an item time"),
            deleted: try Cell.integer(statement, 4, "an item's deleted flag") != 0, box: box)
    }
}

/// Cells of the row a statement stands on, read with SQLite's own column calls.
enum Cell {
    /// A blob cell's bytes; nil for NULL or a value of another type.
    static func blob(_ statement: SQLiteStatement, _ column: Int32) -> Data? {
        guard sqlite3_column_type(statement, column) == SQLITE_BLOB else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return count == 0 ? Data() : sqlite3_column_blob(statement, column).map { Data(bytes: $0, count: count) }
    }

    /// An integer cell, as GRDB's `Int64` reads one: an integer, or a real with an exact integer value.
    static func integer(_ statement: SQLiteStatement, _ column: Int32, _ what: String) throws -> Int64 {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            return sqlite3_column_int64(statement, column)
        case SQLITE_FLOAT:
            guard let value = Int64(exactly: sqlite3_column_double(statement, column)) else { throw VaultError.tampered(what) }
            return value
        default:
            throw VaultError.tampered(what)
        }
    }
}
