import CofferTestSupport
import Foundation
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
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "\(directory)/key.pem",
             "-out", "\(directory)/cert.pem", "-subj", "/CN=localhost", "-days", "1"])
        try #require(openssl.status == 0, "openssl is needed (apt-get install openssl)")
        let port = Int.random(in: 20_000...60_000)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServerCrashTests.binary)
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
                "/usr/bin/curl", ["-s", "--cacert", "\(directory)/cert.pem", "--resolve", "localhost:\(port):127.0.0.1", "-D", "-",
                                  "-o", "/dev/null", "https://localhost:\(port)/health"])
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

    @Test("configuration mistakes are one clear line and a non-zero exit", arguments: [
        (["--tls-cert", "/nonexistent.pem"], "TLS: give both a certificate and a key, or neither"),
        (["--tls-cert", "/nonexistent.pem", "--tls-key", "/nonexistent.pem"], "TLS: cannot load the certificate or key"),
        (["--database-url", "postgres://app@host:99999/db"], "the port of a PostgreSQL URL must be a number from 1 to 65535"),
        (["--apple-jwks", "/nonexistent.json", "--apple-audience", "x"], "Apple JWKS: cannot read a JWKS from /nonexistent.json"),
        (["--database-url", "postgres://app@127.0.0.1/db", "--database-connections", "0"],
         "database connections must be a number from 1 to 1000"),
    ])
    func configurationErrors(arguments: [String], message: String) throws {
        let directory = try Self.temporary()
        let result = try TestSupport.run(
            ServerCrashTests.binary, ["--data", "\(directory)/data", "--port", "\(Int.random(in: 20_000...60_000))"] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no"])
        #expect(result.status == 78)
        #expect(result.stderr == "coffer-server: error: \(message)\n")
    }
}
