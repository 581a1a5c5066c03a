@_spi(Sync) import CofferKit
import CofferTestSupport
import CofferVault
import Foundation
import Testing

/// `coffer sync` end to end: two `coffer` homes ("devices") and a real `coffer-server` process on 127.0.0.1.
@Suite("coffer sync", .serialized, .offCooperativePool)
struct SyncCLITests {
    static let serverBinary: String = {
        let sibling = URL(fileURLWithPath: CLI.binary).deletingLastPathComponent().appendingPathComponent("coffer-server").path
        return FileManager.default.isExecutableFile(atPath: sibling)
            ? sibling : TestSupport.repositoryRoot.appendingPathComponent(".build/debug/coffer-server").path
    }()

    /// A `coffer-server` on a fixed port and data directory, restartable.
    final class Server {
        let data: String
        let port = TestSupport.unusedPort()
        /// Flags beyond the data directory and port.
        let arguments: [String]
        private var process: Process?

        init(arguments: [String] = []) throws {
            data = try TestSupport.temporaryDirectory("sync-server")
            self.arguments = arguments
        }

        var url: String { "http://127.0.0.1:\(port)" }

        func start() throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: SyncCLITests.serverBinary)
            process.arguments = ["--data", data, "--port", "\(port)"] + arguments
            process.environment = ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no", "COFFER_LOG": "error"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            self.process = process
            for _ in 0..<100 {
                let probe = try TestSupport.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "\(url)/health"])
                if probe.stdout == "200" { return }
                Thread.sleep(forTimeInterval: 0.1)
            }
            Issue.record("coffer-server did not start")
        }

        func stop() {
            guard let process else { return }
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            self.process = nil
        }

        /// Kills the server as a power cut would: no shutdown, transactions in flight lost.
        func crash() {
            guard let process else { return }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            self.process = nil
        }

        deinit { stop() }
    }

    static func names(_ cli: CLI) throws -> [String] {
        let list = try cli.ok(["list", "--json"]).stdout
        let items = try #require(try JSONSerialization.jsonObject(with: Data(list.utf8)) as? [[String: Any]])
        return items.compactMap { $0["name"] as? String }.sorted()
    }

    @Test("register on one device, log in on another, sync both ways, offline queue, logout")
    func twoDevices() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.serverBinary), "build coffer-server first (swift build)")
        let server = try Server()
        try server.start()
        let passphrase = "sync velvet thistle copper \(UUID().uuidString.prefix(6))"
        let email = "cli-\(UUID().uuidString.prefix(8).lowercased())@example.org"

        let a = try CLI()
        try a.ok(["init"])
        try a.ok(["add", "note", "Written on A"], input: "hello from A\n")
        try a.ok(["add", "credential", "Deploy key"], input: "secret-value-\(UUID().uuidString)\n")
        let register = try a.ok(["sync", "register", "--server", server.url, "--email", email], input: "\(passphrase)\n")
        #expect(register.stdout.isEmpty)

        let b = try CLI()
        let wrong = try b.run(["sync", "login", "--server", server.url, "--email", email], input: "not the passphrase\n")
        #expect(wrong.status == 77 && wrong.stderr == "coffer: error: the sync server refused this email and passphrase\n", "\(wrong.stderr)")
        #expect(!wrong.stderr.contains("not the passphrase"))
        try b.ok(["sync", "login", "--server", server.url, "--email", email], input: "\(passphrase)\n")
        #expect(try Self.names(b) == ["Deploy key", "Written on A"])
        #expect(try b.ok(["show", "Written on A"]).stdout.contains("hello from A"))

        try b.ok(["add", "note", "Written on B"], input: "hello from B\n")
        try b.ok(["sync"])
        try a.ok(["sync"])
        #expect(try Self.names(a) == ["Deploy key", "Written on A", "Written on B"])

        let status = try b.ok(["sync", "status", "--json"]).stdout
        let json = try #require(try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])
        #expect(json["account"] as? String == email && json["online"] as? Bool == true && json["pending"] as? Int == 0)
        #expect(json["server_items"] as? Int == 3)

        // Offline: the change waits, the error says so, and the next sync sends it.
        server.stop()
        try a.ok(["add", "note", "Offline note"], input: "queued\n")
        let offline = try a.run(["sync"])
        #expect(offline.status == 69 && offline.stderr.contains("coffer: error: cannot reach the sync server"))
        #expect(offline.stderr.contains("coffer: hint: local changes stay queued"))
        #expect(try a.ok(["sync", "status", "--json"]).stdout.contains("\"pending\" : 1"))
        try server.start()
        try a.ok(["sync"])
        try b.ok(["sync"])
        #expect(try Self.names(b).contains("Offline note"))

        // A synced vault's key is rotated through the server, with the sync passphrase: a wrong one changes nothing
        // anywhere, and the other device syncs on as before.
        let rotate = try a.run(["rotate-key"], input: "not the passphrase\n")
        #expect(rotate.status == 77 && rotate.stderr.hasPrefix("coffer: error: "))
        #expect(!rotate.stderr.contains("not the passphrase"))
        try b.ok(["sync"])
        try a.ok(["sync"])

        try b.ok(["sync", "logout"])
        let unlinked = try b.run(["sync"])
        #expect(unlinked.status == 64 && unlinked.stderr.contains("not linked"))
        #expect(try Self.names(b).contains("Written on A"), "logout keeps the items")

        // A third device, linked with the fingerprint it was told to expect, stays linked through a revoke.
        let statusA = try JSONSerialization.jsonObject(with: Data(try a.ok(["sync", "status", "--json"]).stdout.utf8)) as? [String: Any]
        let fingerprint = try #require((statusA?["verified"] as? [String: Any])?["fingerprint"] as? String)
        let c = try CLI()
        try c.ok(["sync", "login", "--server", server.url, "--email", email, "--expect", fingerprint], input: "\(passphrase)\n")
        let statusC = try c.ok(["sync", "status"]).stdout
        #expect(statusC.contains("fingerprint \(fingerprint)"))

        // Revoke deletes the server's copies; the next sync from A uploads everything again.
        #expect(try a.run(["sync", "revoke"]).status == 64)
        try a.ok(["sync", "revoke", "--yes"])
        let restatus = try a.ok(["sync", "status", "--json"]).stdout
        #expect(restatus.contains("\"server_items\" : 0"))
        try a.ok(["sync"])
        #expect(try a.ok(["sync", "status", "--json"]).stdout.contains("\"server_items\" : 4"))

        // C sees a history that does not continue the one it verified, says so, and changes nothing; told the new
        // fingerprint (read on A), it adopts the new state.
        let refused = try c.run(["sync"])
        #expect(refused.status == 76 && refused.stderr.hasPrefix("coffer: error: ") && refused.stderr.contains("adopt"))
        #expect(try Self.names(c).contains("Written on A"))
        let renewed = try JSONSerialization.jsonObject(with: Data(try a.ok(["sync", "status", "--json"]).stdout.utf8)) as? [String: Any]
        let newFingerprint = try #require((renewed?["verified"] as? [String: Any])?["fingerprint"] as? String)
        #expect(try c.run(["sync", "adopt"]).status == 64)
        try c.ok(["sync", "adopt", "--expect", newFingerprint])
        #expect(try c.ok(["sync", "status"]).stdout.contains("fingerprint \(newFingerprint)"))
        #expect(try Self.names(c) == Self.names(a))
        server.stop()
    }

    /// Runs `coffer ARGUMENTS` on a pseudo-terminal (util-linux `script`), typing each answer once its prompt shows.
    static func atTerminal(
        _ cli: CLI, _ arguments: [String], answers: [(prompt: String, answer: String)]
    ) throws -> (status: Int32, transcript: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", ([CLI.binary] + arguments).joined(separator: " "), "/dev/null"]
        process.environment = cli.environment
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        var transcript = Data()
        for (prompt, answer) in answers {
            let deadline = Date().addingTimeInterval(120)
            while !String(decoding: transcript, as: UTF8.self).contains(prompt), Date() < deadline {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                transcript += chunk
            }
            // The prompt is written just before the terminal is made silent, which drops what was typed ahead.
            Thread.sleep(forTimeInterval: 0.5)
            input.fileHandleForWriting.write(Data((answer + "\n").utf8))
        }
        transcript += output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try? input.fileHandleForWriting.close()
        return (process.terminationStatus, String(decoding: transcript, as: UTF8.self))
    }

    /// The verified head's epoch on a device, from `coffer sync status --json`.
    static func verifiedEpoch(_ cli: CLI) throws -> Int64? {
        let status = try cli.ok(["sync", "status", "--json"]).stdout
        let object = try #require(try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])
        return (object["verified"] as? [String: Any])?["epoch"] as? Int64
    }

    @Test("SIGKILL of `coffer rotate-key` on a synced vault, or of the server under it, at any moment loses nothing; other devices follow")
    func killRotation() async throws {
        try Self.killRotationRun()
    }

    static func killRotationRun() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.serverBinary), "build coffer-server first (swift build)")
        let server = try Server()
        try server.start()
        defer { server.stop() }
        let passphrase = "rotation orbit marble lantern \(UUID().uuidString.prefix(6))"
        let email = "rotate-\(UUID().uuidString.prefix(8).lowercased())@example.org"
        let a = try CLI()
        // Enough items that a rotation takes a while: re-sealing, staging in batches, the commit.
        let coffer = try Coffer.initialize(at: CofferLocation.standard(environment: a.environment))
        _ = try coffer.vault.addAll(try (0..<1500).map { .note(try Note(name: "note-\($0)", text: "body \($0)")) })
        try a.ok(["sync", "register", "--server", server.url, "--email", email], input: "\(passphrase)\n")
        let b = try CLI()
        try b.ok(["sync", "login", "--server", server.url, "--email", email], input: "\(passphrase)\n")
        let names = try Self.names(a)
        #expect(names.count == 1500)

        var clientKills = 0, serverKills = 0, finished = 0
        let startEpoch = try #require(try Self.verifiedEpoch(a))
        // Kills land within the time a whole rotation takes on this machine, measured first, so that they fall
        // inside it on a fast machine and a slow one alike.
        let clock = ContinuousClock()
        let whole = try clock.measure { try a.ok(["rotate-key"], input: "\(passphrase)\n") }
        // A rotation that still finished before its kill shortens the window for the next.
        var window = max(UInt32(whole / .microseconds(1)), 50_000)
        for attempt in 0..<14 {
            let (process, _) = try a.start(["rotate-key"], input: "\(passphrase)\n")
            let delay = UInt32.random(in: window / 10..<window * 9 / 10)
            usleep(delay)
            if attempt % 3 == 2 {
                // The server dies under the rotation, and comes back.
                server.crash()
                process.waitUntilExit()
                serverKills += 1
                try server.start()
            } else {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                if process.terminationReason == .uncaughtSignal { clientKills += 1 } else { window = max(delay, 50_000) }
            }
            if process.terminationReason == .exit && process.terminationStatus == 0 { finished += 1 }
            // The next sync finishes a rotation the server took, or drops one it did not; nothing is lost either way.
            try a.ok(["sync"])
            #expect(try Self.names(a) == names)
            #expect(try a.ok(["show", "note-7"]).stdout.contains("body 7"))
        }
        #expect(clientKills >= 5 && serverKills >= 4)
        // Let one rotation run to its end, so the other device has a key change to follow whatever the kills did.
        try a.ok(["rotate-key"], input: "\(passphrase)\n")
        #expect(try #require(try Self.verifiedEpoch(a)) > startEpoch)

        let stale = try b.run(["sync"])
        #expect(stale.status == 77 && stale.stderr.contains("coffer sync login"))
        #expect(try Self.names(b) == names)
        // At a terminal, `coffer sync` asks for the sync passphrase itself, takes the new key and goes on.
        let terminal = try Self.atTerminal(b, ["sync"], answers: [("Sync passphrase:", passphrase)])
        #expect(terminal.status == 0, "\(terminal.transcript)")
        #expect(terminal.transcript.contains("your sync passphrase takes the new one"))
        #expect(terminal.transcript.contains("1500 items re-encrypted here"))
        #expect(!terminal.transcript.contains(passphrase))
        try b.ok(["sync"])
        #expect(try Self.names(b) == names)
        #expect(try b.ok(["show", "note-1499"]).stdout.contains("body 1499"))
        let c = try CLI()
        try c.ok(["sync", "login", "--server", server.url, "--email", email], input: "\(passphrase)\n")
        #expect(try Self.names(c) == names)
        let statusA = try a.ok(["sync", "status"]).stdout, statusC = try c.ok(["sync", "status"]).stdout
        let fingerprint = { (text: String) in text.split(separator: "\n").first { $0.contains("fingerprint") } }
        #expect(fingerprint(statusA) != nil && fingerprint(statusA) == fingerprint(statusC))
    }

    /// Issue 31: after the server's database went back to a backup, the first sync said "log in again" (exit 77) and
    /// only the sync after a new login named the restore. The server knows the refresh token is its own and no longer
    /// recorded, and says so; the device reports it as the state problem it is, and nothing changes here.
    @Test("a server restored from a backup: the first sync names the restore (76), and after a new login the state is reported as a restore")
    func restoredDatabase() throws {
        let server = try Server()
        try server.start()
        let passphrase = "restore velvet thistle \(UUID().uuidString.prefix(6))"
        let email = "restore-\(UUID().uuidString.prefix(8).lowercased())@example.org"
        let a = try CLI()
        try a.ok(["init"])
        try a.ok(["add", "note", "Before the backup"], input: "kept\n")
        try a.ok(["sync", "register", "--server", server.url, "--email", email], input: "\(passphrase)\n")
        try a.ok(["sync"])
        server.stop()
        let files = ["server.sqlite", "server.sqlite-wal", "server.sqlite-shm"]
        let backup = try TestSupport.temporaryDirectory("sync-backup")
        for file in files where FileManager.default.fileExists(atPath: "\(server.data)/\(file)") {
            try FileManager.default.copyItem(atPath: "\(server.data)/\(file)", toPath: "\(backup)/\(file)")
        }
        try server.start()
        try a.ok(["add", "note", "After the backup"], input: "newer\n")
        try a.ok(["sync"])
        try a.ok(["sync"])
        server.stop()
        for file in files {
            try? FileManager.default.removeItem(atPath: "\(server.data)/\(file)")
            if FileManager.default.fileExists(atPath: "\(backup)/\(file)") {
                try FileManager.default.copyItem(atPath: "\(backup)/\(file)", toPath: "\(server.data)/\(file)")
            }
        }
        try server.start()
        defer { server.stop() }
        let before = try Self.names(a)
        let first = try a.run(["sync"])
        #expect(first.status == 76, "\(first.stderr)")
        #expect(first.stderr.contains("restored from a backup or rolled back"), "\(first.stderr)")
        #expect(first.stderr.contains("coffer sync login"), "\(first.stderr)")
        #expect(try Self.names(a) == before)
        // Signing in again checks the server's state at once, and names it: a state this device verified before.
        let login = try a.run(["sync", "login", "--server", server.url, "--email", email], input: "\(passphrase)\n")
        #expect(login.status == 76 && login.stderr.contains("coffer sync republish"), "\(login.stderr)")
        try a.ok(["sync", "republish"])
        try a.ok(["sync"])
        #expect(try Self.names(a) == before)
    }

}
