import CofferCrypto
import CofferServerTestSupport
import CofferSync
import CofferSyncAPI
import CofferTestSupport
import Foundation
import NIOSSL
import Testing

/// The sync client's public-key pinning against a real `coffer-server` over TLS. The expected pins are computed by
/// openssl, not by the code under test.
@Suite("sync client key pinning", .serialized)
struct PinningTests {
    /// A self-signed certificate for localhost and 127.0.0.1 with a fresh P-256 key, and its pin as openssl computes it.
    struct Certificate {
        let certificate: String
        let key: String
        let pin: String

        init(directory: String, name: String) throws {
            certificate = "\(directory)/\(name)-cert.pem"
            key = "\(directory)/\(name)-key.pem"
            let made = try TestSupport.run(
                "/usr/bin/openssl",
                [
                    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", certificate,
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-days", "1",
                ])
            try #require(made.status == 0, "openssl is needed (apt-get install openssl): \(made.stderr)")
            let digest = try TestSupport.run(
                "/bin/sh",
                [
                    "-c", "openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
                    "sh", certificate,
                ])
            try #require(digest.status == 0, "\(digest.stderr)")
            pin = digest.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            try #require(Data(base64Encoded: pin)?.count == 32)
        }
    }

    /// `coffer-server` over TLS on a random port of 127.0.0.1, with a certificate that can change between runs.
    final class TLSServer {
        let data: String
        let port = TestSupport.unusedPort()
        private var process: Process?

        init(data: String) {
            self.data = data
        }

        var url: String { "https://localhost:\(port)" }

        func start(_ certificate: Certificate, trusting tls: TLSConfiguration) async throws {
            stop()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: serverBinary)
            process.arguments = [
                "--data", data, "--port", "\(port)", "--tls-cert", certificate.certificate, "--tls-key", certificate.key,
                "--requests-per-minute", "1000000",
            ]
            process.environment = ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no", "COFFER_LOG": "error"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            self.process = process
            let probe = try SyncClient(server: url, timeout: .seconds(2), pin: ServerKeyPin(certificate.pin), tls: tls)
            for _ in 0..<100 {
                if (try? await probe.prelogin(email: "probe@example.org")) != nil { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("coffer-server did not start over TLS")
            throw CancellationError()
        }

        func stop() {
            guard let process, process.isRunning else { return }
            process.terminate()
            process.waitUntilExit()
        }

        deinit { stop() }
    }

    /// A client configuration that trusts the test certificates (and only them).
    static func trusting(_ certificates: [Certificate]) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try certificates.flatMap { try NIOSSLCertificate.fromPEMFile($0.certificate) })
        return tls
    }

    static func registration() throws -> RegisterRequest {
        try TestAccount.registration(kdf: .pbkdf2SHA256(iterations: 210_000)).0
    }

    @Test("the right pin connects; a wrong one fails naming both keys, and the request never reaches the server")
    func rightAndWrongPin() async throws {
        let directory = try TestSupport.temporaryDirectory("pinning")
        let certificate = try Certificate(directory: directory, name: "a")
        let tls = try Self.trusting([certificate])
        let server = TLSServer(data: "\(directory)/data")
        try await server.start(certificate, trusting: tls)
        defer { server.stop() }

        let right = try #require(ServerKeyPin(certificate.pin))
        #expect(right.description == "sha256//" + certificate.pin)
        let wrong = try #require(ServerKeyPin("sha256//" + Data(repeating: 7, count: 32).base64EncodedString()))
        let registration = try Self.registration()

        let refused = try SyncClient(server: server.url, pin: wrong, tls: tls)
        await #expect(throws: SyncClientError.pinMismatch(expected: wrong.description, presented: right.description)) {
            _ = try await refused.register(registration)
        }
        let message = SyncClientError.pinMismatch(expected: wrong.description, presented: right.description).description
        #expect(!message.contains("\n") && message.contains(wrong.description) && message.contains(right.description))
        await #expect(throws: SyncClientError.pinMismatch(expected: wrong.description, presented: right.description)) {
            _ = try await refused.presentedKey()
        }

        // Registering now creates the account: the refused request was never sent.
        let pinned = try SyncClient(server: server.url, pin: right, tls: tls)
        let auth = try await pinned.register(registration)
        #expect(try await pinned.account(accessToken: auth.accessToken).vaultID == registration.vaultID)
        #expect(try await pinned.presentedKey() == right)
    }

    @Test("certificate validation still applies to a pinned client: the right key from an untrusted certificate is refused")
    func validationStillApplies() async throws {
        let directory = try TestSupport.temporaryDirectory("pinning-untrusted")
        let certificate = try Certificate(directory: directory, name: "a")
        let server = TLSServer(data: "\(directory)/data")
        try await server.start(certificate, trusting: try Self.trusting([certificate]))
        defer { server.stop() }
        let other = try Certificate(directory: directory, name: "other")
        let client = try SyncClient(server: server.url, pin: ServerKeyPin(certificate.pin), tls: try Self.trusting([other]))
        await #expect(throws: SyncClientError.transport("TLS handshake failed")) {
            _ = try await client.prelogin(email: "ada@example.org")
        }
    }

    @Test("trust on first use pins the key presented, refuses a changed key afterwards, and re-pinning accepts the new one")
    func firstUseAndRepin() async throws {
        let directory = try TestSupport.temporaryDirectory("pinning-tofu")
        let first = try Certificate(directory: directory, name: "first")
        let second = try Certificate(directory: directory, name: "second")
        #expect(first.pin != second.pin)
        let tls = try Self.trusting([first, second])
        let server = TLSServer(data: "\(directory)/data")
        try await server.start(first, trusting: tls)
        defer { server.stop() }

        let pinned = try await SyncClient(server: server.url, tls: tls).presentedKey()
        #expect(pinned.description == "sha256//" + first.pin)
        let registration = try Self.registration()
        let client = try SyncClient(server: server.url, pin: pinned, tls: tls)
        _ = try await client.register(registration)

        // The server's key changes (planned or not): the pinned client refuses it.
        try await server.start(second, trusting: tls)
        let login = LoginRequest(email: registration.email, authKey: registration.authKey)
        await #expect(throws: SyncClientError.pinMismatch(expected: "sha256//" + first.pin, presented: "sha256//" + second.pin)) {
            _ = try await client.login(login)
        }
        // Re-pinning: the new key (told by the operator, or taken now on purpose) is accepted from then on.
        let renewed = try await SyncClient(server: server.url, tls: tls).presentedKey()
        #expect(renewed.description == "sha256//" + second.pin)
        let repinned = try SyncClient(server: server.url, pin: renewed, tls: tls)
        #expect(try await repinned.login(login).vaultID == registration.vaultID)
    }

    @Test("pins: parsed with or without sha256//, 32 bytes only; refused for http servers")
    func parsing() throws {
        let digest = Data((0..<32).map { UInt8($0) }).base64EncodedString()
        #expect(ServerKeyPin(digest) == ServerKeyPin("sha256//" + digest))
        #expect(ServerKeyPin(digest)?.sha256 == Array(0..<32))
        #expect(ServerKeyPin(Data(count: 31).base64EncodedString()) == nil)
        #expect(ServerKeyPin("sha1//" + digest) == nil)
        #expect(ServerKeyPin("not base64") == nil)
        #expect(throws: SyncClientError.pinNeedsHTTPS) { try SyncClient(server: "http://127.0.0.1:8443", pin: ServerKeyPin(digest)) }
    }
}
