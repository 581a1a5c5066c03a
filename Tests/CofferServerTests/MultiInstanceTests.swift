@_spi(Testing) import CofferCrypto
@_spi(Sync) import CofferKit
import CofferServerTestSupport
import CofferSync
import CofferSyncAPI
import CofferTestSupport
import CofferVault
import Foundation
import Testing

/// Two `coffer-server` processes on one PostgreSQL database, clients spread over both: everything shared between
/// instances lives in the database (rate-limit counters, refresh-token families, items and manifests), and the
/// instances share one data directory (signing keys and server secret), as the README says to deploy them.
@Suite("Two server instances on one PostgreSQL")
struct MultiInstanceTests {
    final class Instance {
        let port = TestSupport.unusedPort()
        private let process = Process()

        init(data: String, urls: (app: String, admin: String), requestsPerMinute: Int) throws {
            process.executableURL = URL(fileURLWithPath: serverBinary)
            process.arguments = [
                "serve", "--data", data, "--port", "\(port)", "--database-url", urls.app, "--admin-database-url", urls.admin,
                "--requests-per-minute", "\(requestsPerMinute)", "--database-connections", "4",
                // The per-address budget before login counts in the cluster every PostgreSQL test shares, from
                // 127.0.0.1: this test's low limit is for its token only.
                "--address-requests-per-minute", "100000",
            ]
            process.environment = ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no", "COFFER_LOG": "error"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        var url: String { "http://127.0.0.1:\(port)" }

        func waitUntilServing() async throws {
            for _ in 0..<200 {
                let probe = try TestSupport.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "\(url)/health"])
                if probe.stdout == "200" { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("coffer-server did not start on port \(port)")
        }

        deinit {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Whether the instance refuses a request of this session with 429; other failures are thrown.
    static func refused(_ client: SyncClient, _ token: String) async throws -> Bool {
        let outcome: Result<AccountResponse, SyncClientError>
        do {
            outcome = .success(try await client.account(accessToken: token))
        } catch {
            outcome = .failure(error)
        }
        switch outcome {
        case .success: return false
        case .failure(.server(status: 429, _, _)): return true
        case .failure(let error): throw error
        }
    }

    @Test("sync, refresh-token families and rate limits hold across instances")
    func twoInstances() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let app = environment["COFFER_TEST_POSTGRES_URL"], let admin = environment["COFFER_TEST_POSTGRES_ADMIN_URL"] else {
            Issue.record("PostgreSQL tests need COFFER_TEST_POSTGRES_URL and COFFER_TEST_POSTGRES_ADMIN_URL: run `export $(scripts/postgres.sh start DIR)`")
            return
        }
        let data = try TestSupport.temporaryDirectory("instances")
        let limit = 20
        // The first instance creates the keys and migrates; the second starts on what the first made.
        let first = try Instance(data: data, urls: (app, admin), requestsPerMinute: limit)
        try await first.waitUntilServing()
        let second = try Instance(data: data, urls: (app, admin), requestsPerMinute: limit)
        try await second.waitUntilServing()
        let one = try SyncClient(server: first.url)
        let two = try SyncClient(server: second.url)

        // Sync: a device on each instance; both verify every state the other made.
        let a = try Coffer.initialize(at: try SyncTesting.location())
        let note = try a.vault.add(try SyncTesting.note("Shared", "written through the first"))
        let sessionA = SyncSession(coffer: a, client: one)
        let email = "instances-\(UUID().uuidString.prefix(8).lowercased())@example.org"
        // A real server takes production stretching only.
        try await sessionA.register(email: email, passphrase: SyncTesting.passphrase, kdf: .defaultPBKDF2)
        _ = try await sessionA.sync()
        let b = try await SyncSession.login(
            location: try SyncTesting.location(), client: two, email: email, passphrase: SyncTesting.passphrase,
            localPassphrase: nil)
        _ = try await b.sync()
        _ = try b.coffer.vault.modify(id: note.id) { $0 = try SyncTesting.note("Shared", "edited through the second") }
        _ = try a.vault.add(try SyncTesting.note("Other", "through the first"))
        _ = try await b.sync()
        _ = try await sessionA.sync()
        _ = try await b.sync()
        #expect(try SyncTesting.contents(a) == SyncTesting.contents(b.coffer))
        #expect(try sessionA.verifiedHead()?.manifest == b.verifiedHead()?.manifest)

        // Refresh-token families: rotated on one instance, a reuse on the other revokes the whole family.
        let prelogin = try await one.prelogin(email: email)
        let keys = try SyncKeys(
            passphrase: SyncTesting.passphrase, kdf: try prelogin.kdf.kdf(limits: .production),
            salt: Array(try #require(Data(base64Encoded: prelogin.salt))), limits: .production)
        let login = try await one.login(LoginRequest(email: email, authKey: keys.authKeyBase64))
        let rotated = try await two.refresh(login.refreshToken)
        await #expect(throws: SyncClientError.self) { _ = try await one.refresh(login.refreshToken) }
        await #expect(throws: SyncClientError.self) { _ = try await two.refresh(rotated.refreshToken) }

        // Rate limits: one token's requests alternate between the instances; the limit counts them together, so the
        // first refusal comes from an instance that has itself served fewer than the limit.
        let session = try await two.login(LoginRequest(email: email, authKey: keys.authKeyBase64))
        var served = [0, 0]
        var refusedBy: Int?
        for request in 0..<(3 * limit) {
            let instance = request % 2
            if try await Self.refused(instance == 0 ? one : two, session.accessToken) {
                refusedBy = instance
                break
            }
            served[instance] += 1
        }
        let refusing = try #require(refusedBy, "no request was refused")
        // A window that ends during the loop restarts the count, so the refusal comes after at most two windows' worth.
        #expect(served[refusing] < limit && served[0] + served[1] <= 2 * limit)
    }
}
