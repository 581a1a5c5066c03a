import CofferPlatform
import Foundation
import GRDB

/// An SQLite database another app keeps its tokens in (Google Authenticator's `databases`, Microsoft Authenticator's
/// `PhoneFactor`), read through SQLite itself. The file is hostile: it is opened read-only from a private copy
/// (memory-backed `/dev/shm` when there is one; overwritten and removed afterwards), with SQLite's defences for
/// untrusted databases on (`trusted_schema` off, so the schema cannot run functions; every cell's size checked), and
/// only plain `SELECT`s of named tables are run. A copy in WAL mode is read as its main file (what the user copied).
enum SQLiteFile {
    static let header = Array("SQLite format 3\0".utf8)

    static func looksLikeSQLite(_ bytes: [UInt8]) -> Bool { bytes.starts(with: header) }

    /// The rows of `table` (every column), or nil when the database has no such table or the table lacks one of
    /// `columns` (another app's table of the same name).
    static func rows(of table: String, requiring columns: Set<String>, in bytes: [UInt8], format: String) throws(InteropError) -> [Row]? {
        guard bytes.count >= 100, looksLikeSQLite(bytes) else { throw .malformedFile("\(format)'s file is an SQLite database, and this is not one") }
        var copy = bytes
        // Header bytes 18 and 19 (write and read format) 2 mean WAL: 1 reads the file alone, without a -wal or -shm.
        if copy[18] == 2 { copy[18] = 1 }
        if copy[19] == 2 { copy[19] = 1 }
        let scratchParent = PrivateFiles.exists("/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let directory: String
        do {
            directory = try PrivateFiles.createScratchDirectory(in: scratchParent, prefix: "coffer-import.")
        } catch {
            throw .readerUnavailable("cannot make a private copy of the database: \(error)")
        }
        defer { PrivateFiles.wipeScratchDirectory(directory) }
        let path = directory + "/database.sqlite"
        do {
            try PrivateFiles.write(copy, to: path)
        } catch {
            throw .readerUnavailable("cannot make a private copy of the database: \(error)")
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON; PRAGMA query_only = ON")
        }
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in
                guard try db.tableExists(table), columns.isSubset(of: Set(try db.columns(in: table).map(\.name))) else { return nil }
                return try Row.fetchAll(db, sql: "SELECT * FROM \(table.quotedDatabaseIdentifier) LIMIT \(entryLimit + 1)")
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
            throw .malformedFile("the SQLite database is damaged")
        } catch {
            throw .malformedFile("the SQLite database cannot be read")
        }
    }

    /// The most rows read from a table: far above any real app's.
    static let entryLimit = 100_000
}

extension Row {
    /// The column's text, or nil when it is missing or NULL (a number is read as its text).
    func text(_ column: String) -> String? {
        guard hasColumn(column) else { return nil }
        let value: DatabaseValue = self[column]
        switch value.storage {
        case .string(let text): return text
        case .int64(let number): return String(number)
        case .blob(let data): return String(data: data, encoding: .utf8)
        default: return nil
        }
    }

    /// The column's whole number, or nil when it is missing, NULL or not a number.
    func integer(_ column: String) -> Int64? {
        guard hasColumn(column) else { return nil }
        let value: DatabaseValue = self[column]
        switch value.storage {
        case .int64(let number): return number
        case .string(let text): return Int64(text.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }
}
