import CofferServerStore
import CofferServerTestSupport
import CofferTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

/// At trace level postgres-nio prints the first and last 32 bytes of every result row in hex, and statement
/// parameters as text. The store hands the driver a logger that withholds both; this shows the leak is real (the
/// canary scan finds it through a driver given the logger as it is) and that the store's lines hold none of it.
@Suite("PostgreSQL driver logs")
struct PostgresDriverLogTests {
    @Test("unfiltered, the driver's trace lines hold row bytes the canary scan finds; the store's hold none")
    func rowBytes() async throws {
        let (url, adminURL) = try PostgresFixture.urls()
        // Eight characters: the start of the email fits the 32 bytes of a row's start that the driver prints.
        let marker = "m" + UUID().uuidString.lowercased().prefix(7)
        let id = UUID()
        let filtered = LogCollector()
        let store = try PostgresServerStore(
            url: url, migrationURL: adminURL, maintenanceURL: try PostgresFixture.maintenanceURL(),
            logger: filtered.logger("postgres"))
        let raw = LogCollector()
        let client = PostgresClient(configuration: try PostgresURL(url).configuration, backgroundLogger: raw.logger("postgres"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await store.run() }
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await store.migrate()
            try await store.createUser(NewUser(id: id, email: "\(marker)@example.org", createdAt: Date()))
            #expect(try await store.userID(email: "\(marker)@example.org") == id)
            #expect(try await store.user(id: id)?.email == "\(marker)@example.org")

            // The same row read through a driver whose logger passes everything.
            let key = try await PostgresFixture.serverKey()
            try await client.withTransaction(logger: raw.logger("postgres")) { connection in
                #expect(try await PostgresFixture.act(connection, as: .user(id), key: key))
                for try await (_, email) in try await connection.query(
                    "SELECT id, email FROM users WHERE id = \(id)", logger: raw.logger("postgres")
                ).decode((UUID, String).self) {
                    #expect(email.hasPrefix(marker))
                }
            }
        }
        #expect(CanaryScan.encodings(of: marker, in: Data(raw.text.utf8)).contains("hex"), "the scan misses the driver's row dump")
        // The store's driver lines are there, with their messages; their data is not.
        #expect(filtered.text.contains("Backend message received"))
        #expect(filtered.text.contains("<withheld>"))
        #expect(CanaryScan.encodings(of: marker, in: Data(filtered.text.utf8)).isEmpty, "the store's driver logs hold the email")
    }
}
