import CofferCrypto
import CofferServerStore
import CofferSyncAPI
import Crypto
import Foundation
import Logging
import PostgresNIO
import Testing

@Suite("PostgreSQL URLs")
struct PostgresURLTests {
    struct Accepted: Sendable, CustomTestStringConvertible {
        var text: String
        var user: String
        var password: String?
        var host: String
        var port: Int
        var database: String
        var tls: PostgresURL.TLSMode
        var testDescription: String { text }
    }

    @Test(arguments: [
        Accepted(
            text: "postgres://coffer_app@127.0.0.1:54329/coffer", user: "coffer_app", password: nil,
            host: "127.0.0.1", port: 54329, database: "coffer", tls: .disable),
        Accepted(
            text: "postgresql://u:p%40ss%3Aw@db.example.com/coffer", user: "u", password: "p@ss:w",
            host: "db.example.com", port: 5432, database: "coffer", tls: .require),
        Accepted(
            text: "postgres://u@[::1]:5433/d?sslmode=prefer", user: "u", password: nil, host: "::1", port: 5433,
            database: "d", tls: .prefer),
        Accepted(
            text: "postgres://u:@localhost:1/my%20db", user: "u", password: "", host: "localhost", port: 1,
            database: "my db", tls: .disable),
    ])
    func accepts(_ vector: Accepted) throws {
        let url = try PostgresURL(vector.text)
        #expect(url.user == vector.user)
        #expect(url.password == vector.password)
        #expect(url.host == vector.host)
        #expect(url.port == vector.port)
        #expect(url.database == vector.database)
        #expect(url.tls == vector.tls)
    }

    @Test(arguments: [
        ("mysql://u@h/d", PostgresURLError.scheme),
        ("postgres://h:5432/d", .missingUser),
        ("postgres://:secret@h/d", .missingUser),
        ("postgres://u:secret@/d", .missingHost),
        ("postgres://u:secret@h:0/d", .port),
        ("postgres://u:secret@h:65536/d", .port),
        ("postgres://u:secret@h:54x/d", .port),
        ("postgres://u:secret@h:/d", .port),
        ("postgres://u:secret@h", .database),
        ("postgres://u:secret@h/", .database),
        ("postgres://u:secret@h/a/b", .database),
        ("postgres://u:sec%zzret@h/d", .percentEncoding),
        ("postgres://u:sec%ffret@h/d", .percentEncoding),
        ("postgres://u:secret@h/d?sslmode=verify-full", .parameter),
        ("postgres://u:secret@h/d?sslmode=disable&sslmode=require", .parameter),
        ("postgres://u:secret@h/d?password=x", .parameter),
    ])
    func refuses(_ text: String, expected: PostgresURLError) {
        #expect(throws: expected) { try PostgresURL(text) }
        // The description names the rule and never echoes the URL or its password.
        #expect(!expected.description.contains("secret"))
        #expect(!expected.description.contains(text))
    }
}
