import CofferAgentWire
import CofferKit
import CofferPlatform
import CofferTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The agent as a user runs it (`coffer agent start`, `code`, `lock`, signals), and as an attacker on the same
/// machine meets it (another uid, hostile bytes, a socket of someone else's, files left behind).
@Suite("Agent, whole processes", .serialized, .offCooperativePool)
struct AgentCLITests {
    static let passphrase = "canary-agent-passphrase-Qx7"
    /// RFC 6238's SHA-1 key, base32.
    static let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
    static let noteText = "canary-note-plaintext-Zq9"
    static let addedText = "canary-added-through-agent-Wp4"
    /// Short, as a PIN or card number is: with its number, within the 15 bytes a Swift string keeps in itself (on
    /// the stack of whichever thread holds it) rather than on the heap.
    static let bulkNoteText = "Hk3qZw-"
    static let nobody = ["--reuid", "65534", "--regid", "65534", "--clear-groups"]
    /// Tests that act as a second user (`setpriv --reuid`) need root; CI runs as root.
    static let canSwitchUser = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")

    /// A CLI with its own runtime and temporary directories, and a passphrase-only vault holding a TOTP token and a
    /// note: made with a device slot, which is then removed with its key, as a user of such a vault would have it.
    struct Session {
        let cli: CLI
        let runtime: String
        let temporary: String

        /// `bulkNotes` more notes, each `bulkNoteText` and its number, come in by import before the device slot goes.
        init(agent: Bool = true, bulkNotes: Int = 0) throws {
            let runtime = try TestSupport.temporaryDirectory("run")
            let temporary = try TestSupport.temporaryDirectory("tmp")
            self.runtime = runtime
            self.temporary = temporary
            cli = try CLI(extraEnvironment: ["XDG_RUNTIME_DIR": runtime, "TMPDIR": temporary])
            let pass = AgentCLITests.passphrase
            try cli.ok(["init", "--passphrase"], input: "\(pass)\n\(pass)\n")
            try cli.ok(["add", "otp", "--issuer", "Example", "--account", "me", "--digits", "8"], input: AgentCLITests.secret + "\n")
            try cli.ok(["add", "note", "Locker"], input: AgentCLITests.noteText)
            if bulkNotes > 0 {
                let notes = (0..<bulkNotes).map { number -> [String: Any] in
                    [
                        "id": UUID().uuidString.lowercased(), "name": "Bulk \(number)", "template": "free", "fields": [Any](), "tags": [Any](),
                        "text": AgentCLITests.bulkNoteText + String(number), "created_at": "2026-01-01T00:00:00Z",
                    ]
                }
                let export: [String: Any] = [
                    "format": "coffer-export", "version": 1, "notes": notes, "cards": [Any](), "otp": [Any](), "credentials": [Any](), "signing_keys": [Any](),
                    "user": ["id": UUID().uuidString.lowercased(), "email": NSNull(), "created_at": "2026-01-01T00:00:00Z"],
                ]
                let file = temporary + "/notes.json"
                try JSONSerialization.data(withJSONObject: export).write(to: URL(fileURLWithPath: file))
                try cli.ok(["import", "--from", "coffer-json", file])
                try FileManager.default.removeItem(atPath: file)
            }
            try cli.ok(["slots", "remove", "device", "--yes"], input: "\(pass)\n")
            for file in try FileManager.default.contentsOfDirectory(atPath: cli.keystoreDirectory) {
                try FileManager.default.removeItem(atPath: cli.keystoreDirectory + "/" + file)
            }
            if agent { try cli.ok(["agent", "start"], input: "\(pass)\n") }
        }

        var socket: String { runtime + "/coffer/agent.sock" }

        func status() throws -> [String: Any] {
            let output = try cli.ok(["agent", "status", "--json"]).standardOutput
            return try #require(try JSONSerialization.jsonObject(with: Data(output)) as? [String: Any])
        }

        func pid() throws -> Int32 { try #require(try status()["pid"] as? Int).int32 }

        func heldVaults() throws -> Int { (try status()["vaults"] as? [Any])?.count ?? -1 }

        func stop() { _ = try? cli.run(["agent", "stop"]) }
    }

    static func oathtool(at unixSeconds: Int? = nil) throws -> String {
        let result = try TestSupport.run("/usr/bin/oathtool", ["--totp", "--base32", "--digits=8", secret])
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func mode(_ path: String) -> UInt32? { PrivateFiles.mode(of: path) }

    static func waitUntil(_ condition: () throws -> Bool) rethrows -> Bool {
        for _ in 0..<200 {
            if try condition() { return true }
            usleep(25_000)
        }
        return false
    }

    @Test("a passphrase-only vault: `code` with no passphrase agrees with oathtool; modes 0700/0600; `lock` locks")
    func session() throws {
        let session = try Session()
        defer { session.stop() }
        #expect(Self.mode(session.runtime + "/coffer") == 0o700)
        #expect(Self.mode(session.socket) == 0o600)
        #expect(try session.heldVaults() == 1)
        // No input: were the passphrase asked for, the command would fail for want of it.
        let before = try Self.oathtool()
        let code = try session.cli.ok(["code", "Example"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let after = try Self.oathtool()
        #expect(code == before || code == after)
        #expect(try session.cli.ok(["show", "Locker", "--json"]).stdout.contains(Self.noteText))
        try session.cli.ok(["add", "note", "Added"], input: Self.addedText)
        #expect(try session.cli.ok(["list"]).stdout.contains("Added"))
        try session.cli.ok(["lock"])
        #expect(try session.heldVaults() == 0)
        let refused = try session.cli.run(["code", "Example"])
        #expect(refused.status == 77, "locked: the passphrase is needed again")
    }

    @Test("at a terminal: the passphrase is typed for `agent start`; a command the agent does not serve says so and asks")
    func terminal() throws {
        let session = try Session(agent: false)
        defer { session.stop() }
        let start = try SyncCLITests.atTerminal(session.cli, ["agent", "start"], answers: [("Passphrase:", Self.passphrase)])
        #expect(start.status == 0, "\(start.transcript)")
        #expect(try session.heldVaults() == 1)
        let edit = try SyncCLITests.atTerminal(session.cli, ["edit", "Locker", "--name", "Box"], answers: [("Passphrase:", Self.passphrase)])
        #expect(edit.status == 0, "\(edit.transcript)")
        #expect(edit.transcript.contains("the agent does not serve this command; the passphrase opens the vault this time"))
        #expect(!edit.transcript.contains(Self.passphrase), "typed without echo")
        #expect(try session.cli.ok(["list"]).stdout.contains("Box"), "served by the agent, which sees the other process's edit")
    }

    @Test("SIGHUP locks and the agent lives on; SIGTERM ends it and removes the socket")
    func signals() throws {
        let session = try Session()
        defer { session.stop() }
        let pid = try session.pid()
        kill(pid, SIGHUP)
        #expect(try Self.waitUntil { try session.heldVaults() == 0 })
        #expect(kill(pid, 0) == 0)
        kill(pid, SIGTERM)
        #expect(Self.waitUntil { kill(pid, 0) != 0 })
        #expect(!PrivateFiles.exists(session.socket))
    }

    /// Each hardening step is checked where the kernel shows it, so that dropping any one line fails here: the core
    /// limit in `/proc/PID/limits`, the dump-excluded buffer as an anonymous mapping marked `dd` in `smaps`, and
    /// `mlockall` as every page locked (the buffer alone locks a few pages; a process that locks nothing shows 0).
    @Test("the idle timer locks a real agent (1 s idle); core files off, the request buffer out of dumps, all memory locked")
    func idleAndLockedMemory() throws {
        let session = try Session(agent: false)
        defer { session.stop() }
        try session.cli.ok(["agent", "start", "--idle", "1s", "--max", "1h"], input: "\(Self.passphrase)\n")
        let pid = try session.pid()
        func kilobytes(_ field: String, of pid: pid_t) throws -> Int {
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
            return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? -1
        }
        let (lockedKB, residentKB) = (try kilobytes("VmLck", of: pid), try kilobytes("VmRSS", of: pid))
        // mlockall is used when the lock limit cannot be hit later: as root (CI) or with no limit.
        let ownLimits = try String(contentsOfFile: "/proc/self/limits", encoding: .utf8)
        let memlockUnlimited =
            ownLimits.split(separator: "\n").first { $0.hasPrefix("Max locked memory") }?
            .split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).dropFirst().first == "unlimited"
        if geteuid() == 0 || memlockUnlimited {
            #expect(lockedKB >= residentKB, "VmLck \(lockedKB) kB of VmRSS \(residentKB) kB: not every page is locked")
            // The comparison: a process that locks nothing shows 0, so the figure above is the agent's doing.
            let plain = Process()
            plain.executableURL = URL(fileURLWithPath: "/bin/sleep")
            plain.arguments = ["5"]
            try plain.run()
            defer { plain.terminate(); plain.waitUntilExit() }
            #expect(try kilobytes("VmLck", of: plain.processIdentifier) == 0, "a process that locks nothing")
        } else {
            #expect(lockedKB > 0, "the request buffer is locked")
        }
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
            .map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2).joined(separator: " ") }
        #expect(core == "0 0", "core file limits: \(core ?? "none")")
        // smaps lists a mapping's header line, then its fields; VmFlags is the last. An anonymous mapping (no path)
        // marked `dd` is the request buffer: the kernel's own `dd` mappings ([vvar], [vdso]) are named.
        // Read to the end: String(contentsOfFile:) stops at the first 4 KiB of a /proc file.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/\(pid)/smaps"))
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        try handle.close()
        var anonymous = false
        var excluded = 0
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), first.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                anonymous = fields.count == 5
            } else if line.hasPrefix("VmFlags:"), anonymous, fields.contains("dd") {
                excluded += 1
            }
        }
        #expect(excluded >= 1, "no anonymous mapping is excluded from core dumps")
        usleep(1_500_000)
        #expect(try session.heldVaults() == 0)
    }

    @Test("malformed, oversized and truncated requests are refused and the agent keeps serving")
    func hostileRequests() throws {
        let session = try Session()
        defer { session.stop() }
        func exchange(_ bytes: [UInt8]) throws -> [UInt8] {
            let socket = try UnixSocket.connect(to: session.socket)
            defer { UnixSocket.close(socket) }
            UnixSocket.setTimeout(socket, milliseconds: 10_000)
            try bytes.withUnsafeBytes { try UnixSocket.send($0, on: socket) }
            var answer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                answer += chunk[0..<count]
            }
            return answer
        }
        func failure(_ answer: [UInt8]) -> AgentFailure.Code? {
            guard answer.count > 4, case .failure(let failure) = try? AgentResponse(decoding: answer.dropFirst(4)) else { return nil }
            return failure.code
        }
        #expect(failure(try exchange(AgentFrame.framed([1, 99]))) == .badRequest)
        #expect(failure(try exchange(AgentFrame.framed([7, 1]))) == .badRequest)
        #expect(failure(try exchange(AgentFrame.framed([1, 3, 1, 0xFF, 0xFF, 0xFF, 0xFF]))) == .badRequest)
        #expect(failure(try exchange([0x7F, 0xFF, 0xFF, 0xFF])) == .badRequest, "a 2 GiB length is refused before reading")
        #expect(try exchange([0, 0, 0, 9, 1]).isEmpty, "a body cut short is dropped when the peer closes")
        var random = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            _ = try exchange(AgentFrame.framed((0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
        }
        #expect(try session.heldVaults() == 1, "still running, still holding the vault")
    }

    @Test("another uid: its connection is closed unanswered even when the modes would let it in", .enabled(if: canSwitchUser, "needs root for setpriv --reuid"))
    func foreignPeerRefused() throws {
        let session = try Session()
        defer { session.stop() }
        // Open every door the file modes close, so that only the agent's SO_PEERCRED check stands.
        for path in [session.runtime, session.runtime + "/coffer"] { chmod(path, 0o755) }
        chmod(session.socket, 0o666)
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.connect(sys.argv[1])
            try:
                s.sendall(bytes.fromhex("000000020101"))
                print(len(s.recv(100)))
            except OSError:
                print("reset")
            """
        let result = try TestSupport.run("/usr/bin/setpriv", Self.nobody + ["/usr/bin/python3", "-c", script, session.socket])
        #expect(result.status == 0, "python as nobody reached the socket: \(result.stderr)")
        let answer = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(answer == "0" || answer == "reset", "nobody got \(answer) bytes")
        // The client itself refuses a socket in a directory open to others; closed again, the agent answers.
        let refused = try session.cli.run(["agent", "status"])
        #expect(refused.status == 69 && refused.stderr.contains("is open to other users"), "\(refused.stderr)")
        for path in [session.runtime, session.runtime + "/coffer"] { chmod(path, 0o700) }
        chmod(session.socket, 0o600)
        #expect(try session.heldVaults() == 1, "the agent serves its own user still")
    }

    @Test(
        "the client sends nothing to a socket whose listener runs as another uid, even with a socket file of ours",
        .enabled(if: canSwitchUser, "needs root for setpriv --reuid"))
    func foreignAgentRefused() throws {
        let session = try Session(agent: false)
        let directory = session.runtime + "/coffer"
        try PrivateFiles.createDirectory(directory)
        chmod(session.runtime, 0o755)
        chmod(directory, 0o777)
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.bind(sys.argv[1])
            s.listen(1)
            print("ready", flush=True)
            c, _ = s.accept()
            c.settimeout(5)
            data = b""
            try:
                while True:
                    chunk = c.recv(4096)
                    if not chunk: break
                    data += chunk
            except OSError:
                pass
            print(len(data), flush=True)
            """
        let fake = Process()
        fake.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        fake.arguments = Self.nobody + ["/usr/bin/python3", "-c", script, session.socket]
        let output = Pipe()
        fake.standardOutput = output
        try fake.run()
        defer { if fake.isRunning { fake.terminate() } }
        #expect(Self.waitUntil { PrivateFiles.exists(session.socket) })
        // The attacker's socket made to look like ours: our directory, our file; only the listener is not us.
        lchown(session.socket, 0, 0)
        chmod(directory, 0o700)
        let result = try session.cli.run(["agent", "start"], input: "\(Self.passphrase)\n")
        #expect(result.status != 0)
        #expect(result.stderr.contains("runs as uid 65534"), "\(result.stderr)")
        fake.waitUntilExit()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        #expect(lines.last == "0", "the fake agent received \(lines.last ?? "nothing")")
    }

    @Test(
        "an agent run by another uid: its /proc environ is root's (not dumpable) and unreadable to that uid",
        .enabled(if: canSwitchUser, "needs root for setpriv --reuid"))
    func notDumpable() throws {
        let runtime = try TestSupport.temporaryDirectory("run")
        chown(runtime, 65534, 65534)
        let agent = Process()
        agent.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        agent.arguments = Self.nobody + [CLI.binary, "agent", "serve"]
        agent.environment = ["XDG_RUNTIME_DIR": runtime, "HOME": runtime, "PATH": "/usr/bin:/bin"]
        agent.standardError = FileHandle.nullDevice
        try agent.run()
        defer { agent.terminate() }
        #expect(Self.waitUntil { PrivateFiles.exists(runtime + "/coffer/agent.sock") })
        let pid = agent.processIdentifier
        var info = stat()
        #expect(stat("/proc/\(pid)/environ", &info) == 0)
        #expect(info.st_uid == 0, "a dumpable process's /proc files would belong to uid 65534")
        let read = try TestSupport.run("/usr/bin/setpriv", Self.nobody + ["/bin/cat", "/proc/\(pid)/environ"])
        #expect(read.status != 0 && read.standardOutput.isEmpty)
        // Its own user's client still talks to it.
        let status = try TestSupport.run(
            "/usr/bin/setpriv", Self.nobody + [CLI.binary, "agent", "status", "--json"],
            environment: ["XDG_RUNTIME_DIR": runtime, "HOME": runtime, "PATH": "/usr/bin:/bin"])
        let report = try JSONSerialization.jsonObject(with: Data(status.standardOutput)) as? [String: Any]
        #expect(status.status == 0 && report?["running"] as? Bool == true && report?["dumpable"] as? Bool == false, "\(status.stderr)")
    }

    @Test("a failed `agent start` (wrong passphrase, or none given) leaves no agent running; a running agent keeps its vaults")
    func failedStartLeavesNoAgent() throws {
        let session = try Session(agent: false)
        let wrong = try session.cli.run(["agent", "start"], input: "not the passphrase\n")
        #expect(wrong.status == 77)
        #expect(try session.status()["running"] as? Bool == false)
        let none = try session.cli.run(["agent", "start"], input: "")
        #expect(none.status != 0)
        #expect(try session.status()["running"] as? Bool == false)
        try session.cli.ok(["agent", "start"], input: "\(Self.passphrase)\n")
        defer { session.stop() }
        #expect(try session.cli.run(["agent", "start"], input: "not the passphrase\n").status == 77)
        #expect(try session.status()["running"] as? Bool == true && session.heldVaults() == 1)
    }

    @Test("without XDG_RUNTIME_DIR the socket is in the user's state directory, so a directory another user made in the temporary directory blocks nothing")
    func noRuntimeDirectory() throws {
        let temporary = try TestSupport.temporaryDirectory("tmp")
        let cli = try CLI(extraEnvironment: ["TMPDIR": temporary])
        try cli.ok(["init", "--passphrase"], input: "\(Self.passphrase)\n\(Self.passphrase)\n")
        try cli.ok(["add", "note", "Locker"], input: Self.noteText)
        try cli.ok(["slots", "remove", "device", "--yes"], input: "\(Self.passphrase)\n")
        // The name the agent used to take, taken first by someone else.
        let squatted = temporary + "/coffer-agent-\(geteuid())"
        try FileManager.default.createDirectory(atPath: squatted, withIntermediateDirectories: true)
        if geteuid() == 0 { chown(squatted, 65534, 65534) }
        try cli.ok(["agent", "start"], input: "\(Self.passphrase)\n")
        defer { _ = try? cli.run(["agent", "stop"]) }
        let directory = cli.home + "/.local/state/coffer/agent"
        #expect(Self.mode(directory) == 0o700 && Self.mode(directory + "/agent.sock") == 0o600)
        #expect(try cli.ok(["show", "Locker"]).stdout.contains(Self.noteText))
        #expect(try cli.ok(["agent", "status"]).stdout.contains(directory + "/agent.sock"))
    }

    static let cardPayload = "CANARY-CARD-5093-1187-4426"
    static let credentialValue = "canary-credential-sk-8jT2mQ"

    @Test("after a whole session no key, passphrase or plaintext is in HOME, the runtime or temporary directory, or the vault")
    func canaryScan() throws {
        let session = try Session()
        defer { session.stop() }
        try session.cli.ok(["code", "Example"])
        try session.cli.ok(["show", "Locker"])
        try session.cli.ok(["add", "note", "Added"], input: Self.addedText)
        try session.cli.ok(["lock"])
        session.stop()
        let keys = try #require(
            try TestSupport.openSSLOracle([["op": "vault_keys", "path": session.cli.vaultFile, "passphrase": Self.passphrase]]).first
                as? [String: String])
        let byteCanaries: [(String, [UInt8])] = [
            ("master key", TestSupport.hex(try #require(keys["master"]))),
            ("items key", TestSupport.hex(try #require(keys["items_key"]))),
            ("OTP secret", Array("12345678901234567890".utf8)),
        ]
        // CanaryScan spells bytes raw, in hex, base64 and escapes; base32 (how OTP secrets travel) is added here, for
        // each of the five offsets a key can start at in a 40-bit group: the key less its first 0–4 bytes, less the
        // last character (which the next byte shares).
        let base32 = byteCanaries.flatMap { _, bytes in
            (0..<5).map { skip in String(Base32.encode(bytes.dropFirst(skip)).dropLast()) }
        }
        let textCanaries = [Self.passphrase, Self.secret, Self.noteText, Self.addedText] + base32
        var files: [String] = []
        for root in [session.cli.home, session.runtime, session.temporary] {
            let enumerator = FileManager.default.enumerator(atPath: root)
            while let relative = enumerator?.nextObject() as? String {
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                    files.append(root + "/" + relative)
                }
            }
        }
        #expect(files.contains(session.cli.vaultFile))
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            for canary in textCanaries {
                #expect(CanaryScan.encodings(of: canary, in: data).isEmpty, "\(canary) in \(file)")
            }
            for (name, bytes) in byteCanaries {
                #expect(CanaryScan.encodings(ofBytes: bytes, in: data).isEmpty, "\(name) in \(file)")
            }
        }
    }
}

extension Int {
    fileprivate var int32: Int32 { Int32(self) }
}
