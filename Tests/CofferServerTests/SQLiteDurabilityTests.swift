import CofferTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

@testable import CofferServerStore

/// The server's SQLite store sets `synchronous = FULL` itself: every connection first runs `synchronous = OFF`, as an
/// SQLite built with that default would, and the store's connections must still read FULL (see the vault's
/// `DurabilitySettingsTests`).
@Suite("The SQLite store's durability is its own setting")
struct SQLiteDurabilityTests {
    @Test("under a build defaulting to synchronous OFF, the store's writer and readers read FULL")
    func synchronousFull() async throws {
        SQLiteServerStore.connectionPreamble.withLock { $0 = ["PRAGMA synchronous = OFF"] }
        defer { SQLiteServerStore.connectionPreamble.withLock { $0 = [] } }
        let path = try TestSupport.temporaryDirectory("store-durability") + "/server.sqlite"
        let store = try SQLiteServerStore(path: path)
        let written = try await store.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        let read = try await store.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(written == 2, "writer \(String(describing: written))")
        #expect(read == 2, "reader \(String(describing: read))")
    }
}
