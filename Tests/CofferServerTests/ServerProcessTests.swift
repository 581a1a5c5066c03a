import CofferPlatform
@testable import CofferServer
import CofferServerTestSupport
import CofferTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing

/// The `coffer-server` executable's own behaviour: TLS, configuration errors, file modes.
@Suite("coffer-server process")
struct ServerProcessTests {
    static func temporary() throws -> String { try TestSupport.temporaryDirectory("server-process") }

    @Test("serves HTTPS with the configured certificate and key; data files are private")
    func tls() async throws {
        let directory = try Self.temporary()
        let openssl = try TestSupport.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "\(directory)/key.pem",
                "-out", "\(directory)/cert.pem", "-subj", "/CN=localhost", "-days", "1",
            ])
        try #require(openssl.status == 0, "openssl is needed (apt-get install openssl)")
        let port = TestSupport.unusedPort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: serverBinary)
        process.arguments = ["--data", "\(directory)/data", "--port", "\(port)", "--tls-cert", "\(directory)/cert.pem", "--tls-key", "\(directory)/key.pem"]
        process.environment = ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        var headers = ""
        for _ in 0..<100 {
            let probe = try TestSupport.run(
                "/usr/bin/curl",
                [
                    "-s", "--cacert", "\(directory)/cert.pem", "--resolve", "localhost:\(port):127.0.0.1", "-D", "-",
                    "-o", "/dev/null", "https://localhost:\(port)/health",
                ])
            if probe.status == 0 { headers = probe.stdout; break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(headers.hasPrefix("HTTP/1.1 200"))
        #expect(headers.lowercased().contains("strict-transport-security: max-age=31536000"))
        let plain = try TestSupport.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/health"])
        #expect(plain.stdout != "200", "plain HTTP must not be served when TLS is configured")

        for file in ["server.sqlite", "server-secret"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: "\(directory)/data/\(file)")
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0, "\(file) is readable by others")
        }
        let keys = try FileManager.default.contentsOfDirectory(atPath: "\(directory)/data/signing-keys")
        #expect(keys.count == 1)
    }

    @Test(
        "configuration mistakes are one clear line and a non-zero exit",
        arguments: [
            (["--tls-cert", "/nonexistent.pem"], "TLS: give both a certificate and a key, or neither"),
            (["--tls-cert", "/nonexistent.pem", "--tls-key", "/nonexistent.pem"], "TLS: cannot load the certificate or key"),
            (["--database-url", "postgres://app@host:99999/db"], "the port of a PostgreSQL URL must be a number from 1 to 65535"),
            (["--apple-jwks", "/nonexistent.json", "--apple-audience", "x"], "Apple JWKS: cannot read a JWKS from /nonexistent.json"),
            (
                ["--database-url", "postgres://app@127.0.0.1/db", "--database-connections", "0"],
                "database connections must be a number from 1 to 1000"
            ),
            (
                ["--database-url", "postgres://app@127.0.0.1/db", "--maintenance-database-url", "postgres://app:x@127.0.0.1/db"],
                "the maintenance database role must not be the server's role"
            ),
            (
                ["--web-vault", "--host", "0.0.0.0"],
                "the web vault needs TLS (--tls-cert and --tls-key) unless the server listens on loopback (127.0.0.1 or ::1)"
            ),
            (["--web-vault-dir", "/nonexistent"], "the web vault directory /nonexistent has no index.html"),
        ])
    func configurationErrors(arguments: [String], message: String) throws {
        let directory = try Self.temporary()
        let result = try TestSupport.run(
            serverBinary, ["--data", "\(directory)/data", "--port", "\(TestSupport.unusedPort())"] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no"])
        #expect(result.status == 78)
        #expect(result.stderr == "coffer-server: error: \(message)\n")
    }

    @Test("a usage error reads like every other: one `coffer-server: error:` line, then the usage; exit 64")
    func usageErrors() throws {
        let result = try TestSupport.run(
            serverBinary, ["serve", "--data-dir", "/tmp/x"], environment: ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("coffer-server: error: Unknown option '--data-dir'\nUsage: coffer-server serve"))
        #expect(!result.stderr.contains("Error: "))
        let help = try TestSupport.run(serverBinary, ["--help"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(help.status == 0 && help.stdout.hasPrefix("OVERVIEW: Coffer's zero-knowledge sync server."))
        let version = try TestSupport.run(serverBinary, ["--version"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(version.status == 0 && version.stdout == CofferVersion.current + "\n", "the one version every Coffer program reports")
        for count in ["0", "257"] {
            let loops = try TestSupport.run(serverBinary, ["serve", "--event-loops", count], environment: ["PATH": "/usr/bin:/bin"])
            #expect(loops.status == 64)
            #expect(loops.stderr.hasPrefix("coffer-server: error: --event-loops must be 1 to 256\n"))
        }
    }

    @Test("event loop groups are made once per size and kept: a server started again reuses its threads")
    func eventLoopGroups() {
        let one = EventLoopGroups.shared(threads: 1)
        #expect(one === EventLoopGroups.shared(threads: 1))
        #expect(Array(one.makeIterator()).count == 1)
        #expect(Array(EventLoopGroups.shared(threads: 3).makeIterator()).count == 3)
        #expect(EventLoopGroups.shared(threads: 0) === one)
        #expect(ServerConfiguration.defaultEventLoops == max(1, System.coreCount / 2))
    }

    @Test("purge and audit: on SQLite as they are, on PostgreSQL only as the maintenance role")
    func maintenanceCommands() throws {
        let directory = try Self.temporary()
        let environment = ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no"]
        let data = ["--data", "\(directory)/data"]
        #expect(try TestSupport.run(serverBinary, ["rotate-signing-key"] + data, environment: environment).status == 0)
        let sqliteAudit = try TestSupport.run(serverBinary, ["audit"] + data, environment: environment)
        #expect(sqliteAudit.status == 0)
        #expect(sqliteAudit.stdout.hasSuffix("\tsigning_key_rotated\t-\t-\tadmin\n"))
        let sqlitePurge = try TestSupport.run(serverBinary, ["purge"] + data, environment: environment)
        #expect(sqlitePurge.status == 0 && sqlitePurge.stdout == "0\n")

        let (app, admin) = try PostgresFixture.urls()
        let postgres = data + ["--database-url", app, "--admin-database-url", admin]
        for (command, message) in [
            ("purge", "purging on PostgreSQL needs --maintenance-database-url"),
            ("audit", "reading the audit log on PostgreSQL needs --maintenance-database-url"),
        ] {
            let refused = try TestSupport.run(serverBinary, [command] + postgres, environment: environment)
            #expect(refused.status == 78)
            #expect(refused.stderr == "coffer-server: error: \(message)\n")
        }
        let maintenance = postgres + ["--maintenance-database-url", try PostgresFixture.maintenanceURL()]
        #expect(try TestSupport.run(serverBinary, ["rotate-signing-key"] + postgres, environment: environment).status == 0)
        let audit = try TestSupport.run(serverBinary, ["audit", "--limit", "1000"] + maintenance, environment: environment)
        #expect(audit.status == 0, "\(audit.stderr)")
        #expect(audit.stdout.contains("\tsigning_key_rotated\t-\t-\tadmin\n"))
        let purge = try TestSupport.run(serverBinary, ["purge"] + maintenance, environment: environment)
        #expect(purge.status == 0 && Int(purge.stdout.dropLast()) != nil, "\(purge.stderr)")
    }
}
