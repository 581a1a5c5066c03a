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
