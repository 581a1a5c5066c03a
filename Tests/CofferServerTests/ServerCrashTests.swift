import CofferCrypto
import CofferServerTestSupport
import CofferSync
import CofferSyncAPI
import CofferTestSupport
import Foundation
import Synchronization
import Testing

/// The real `coffer-server` process, killed with SIGKILL while clients push batches: every batch is all or nothing,
/// and every acknowledged batch survives.
@Suite("Server crash safety", .serialized)
struct ServerCrashTests {
    /// Batches the pushers tried and those the server acknowledged.
    final class Ledger: Sendable {
        let attempted = Mutex<[[UUID]]>([])
        let acknowledged = Mutex<[[UUID]]>([])
    }

    final class ServerProcess {
        let process = Process()
        let port: Int

        init(backend: Backend, data: String) throws {
            port = TestSupport.unusedPort()
            process.executableURL = URL(fileURLWithPath: serverBinary)
            var arguments = ["--data", data, "--port", "\(port)", "--requests-per-minute", "1000000"]
            if backend == .postgres {
                let environment = ProcessInfo.processInfo.environment
                let url = try #require(environment["COFFER_TEST_POSTGRES_URL"], "export $(scripts/postgres.sh start DIR)")
                let admin = try #require(environment["COFFER_TEST_POSTGRES_ADMIN_URL"])
                arguments += ["--database-url", url, "--admin-database-url", admin]
            }
            process.arguments = arguments
            process.environment = ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no", "COFFER_LOG": "error"]
            process.standardOutput = FileHandle.nullDevice
            errorLog = "\(data)/server-\(port).err"
            guard FileManager.default.createFile(atPath: errorLog, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: errorLog])
            }
            process.standardError = FileHandle(forWritingAtPath: errorLog)
            try process.run()
        }

        /// Where the server's standard error goes, so a server that would not start says why.
        let errorLog: String

        var url: String { "http://127.0.0.1:\(port)" }

        /// Waits until the server answers: up to 90 s. The whole suite starts servers and stores on two cores, and a
        /// PostgreSQL server's start (its migrations, behind the other suites' on the same cluster) once took over 30 s.
        func ready() async throws {
            let client = try SyncClient(server: url, timeout: .seconds(1))
            for _ in 0..<900 where process.isRunning {
                if (try? await client.prelogin(email: "probe@example.org")) != nil { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            let said = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
            let state = process.isRunning ? "still not answering after 90 s" : "exited with status \(process.terminationStatus)"
            Issue.record("coffer-server on port \(port) did not start: \(state); it said: \(said.suffix(500))")
            throw CancellationError()
        }

        func kill() {
            guard process.isRunning else { return }
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        /// A test that fails half-way must not leave a server behind.
        deinit { kill() }
    }

    @Test("SIGKILL during concurrent batch pushes leaves every batch all-or-nothing", arguments: Backend.allCases)
    func killDuringPushes(backend: Backend) async throws {
        try #require(FileManager.default.isExecutableFile(atPath: serverBinary), "build coffer-server first (swift build)")
        let data = try TestSupport.temporaryDirectory("crash")
        var server = try ServerProcess(backend: backend, data: data)
        try await server.ready()
        var client = try SyncClient(server: server.url, timeout: .seconds(5))
        // The real server takes production KDF parameters only.
        let (registration, _) = try TestAccount.registration(kdf: .pbkdf2SHA256(iterations: 210_000))
        var auth = try await client.register(registration)

        let ledger = Ledger()
        for round in 0..<5 {
            let access = auth.accessToken
            let pushClient = client
            let pushers = (0..<4).map { _ in
                Task {
                    while !Task.isCancelled {
                        let batch = fakeItems(40)
                        let ids = batch.items.map(\.item.id)
                        ledger.attempted.withLock { $0.append(ids) }
                        do {
                            _ = try await pushClient.push(batch, accessToken: access)
                            ledger.acknowledged.withLock { $0.append(ids) }
                        } catch {
                            return
                        }
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 150...600)))
            server.kill()
            for pusher in pushers { pusher.cancel() }
            for pusher in pushers { await pusher.value }

            server = try ServerProcess(backend: backend, data: data)
            try await server.ready()
            client = try SyncClient(server: server.url, timeout: .seconds(5))
            auth = try await client.login(LoginRequest(email: registration.email, authKey: registration.authKey))
            _ = round
        }

        var stored = Set<UUID>()
        var cursor: Int64 = 0
        while true {
            let page = try await client.changes(since: cursor, limit: 1000, accessToken: auth.accessToken)
            stored.formUnion(page.items.map(\.id))
            cursor = page.cursor
            if !page.hasMore { break }
        }
        server.kill()

        let batches = ledger.attempted.withLock { $0 }
        let acked = ledger.acknowledged.withLock { $0 }
        #expect(acked.count >= 5, "too few pushes completed to mean anything")
        for batch in batches {
            let present = batch.filter(stored.contains).count
            #expect(present == 0 || present == batch.count, "a batch landed in part: \(present) of \(batch.count)")
        }
        for batch in acked {
            #expect(batch.allSatisfy(stored.contains), "an acknowledged batch was lost")
        }
    }
}
