import AsyncHTTPClient
import CofferCrypto
import CofferKit
import CofferServer
import CofferServerStore
import CofferSync
import CofferSyncAPI
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: pgbench

/// The pgbench scripts: one pgbench transaction is one request's database work, statement for statement.
///
/// The statements are PostgresServerStore's, in the order ServerCore issues them, with the same transaction
/// boundaries postgres-nio draws (`BEGIN` and `COMMIT` are round trips of their own there too), sent in pgbench's
/// extended protocol as postgres-nio sends them. Each transaction first proves whom it acts for, as the store does
/// (docs/FORMAT.md §8.5): `coffer_binding()`, then `coffer_act` with the HMAC of the binding and the claim. Every
/// request starts with `authorize` (the rate counter and the session check). A push then runs `push`: the change_seq
/// update that locks the user's row, the head-manifest check, the SELECT … FOR UPDATE of the pushed ids, the quota
/// sum, the item upsert. A pull runs `changes`: `coffer_feed` (at most 101 rows by seq).
///
/// What differs, by necessity: the ids come from pgbench's client number (`<tag>-0000-4000-8000-<n>` for account n,
/// `<tag>-0001-…` for its session family), built with `||` and `lpad` in the statement instead of bound as values;
/// "now" and the rate window are fixed for the run; the pushed box is the same 512 bytes each time, sent as text. The
/// proof's HMAC-SHA256, which the server computes in Swift, is computed in the statement from PostgreSQL's own
/// `sha256` and the key's inner and outer pads (RFC 2104), given as variables: two hashes of about 100 bytes, which
/// the database does here and not when the server runs.
enum PGBenchScript {
    enum Scenario { case push, pull }

    static func userPrefix(_ tag: String) -> String { "\(tag)-0000-4000-8000-" }
    static func familyPrefix(_ tag: String) -> String { "\(tag)-0001-4000-8000-" }

    static func variables(runTag: String, offset: Int, now: Date, box: Data, actingKey: Data) -> [String: String] {
        let milliseconds = UnixTime.milliseconds(now)
        // RFC 2104: the key padded to SHA-256's 64-byte block, XORed with 0x36 (inner) and 0x5c (outer).
        let padded = Array(actingKey) + Array(repeating: 0, count: 64 - actingKey.count)
        return [
            "user_prefix": userPrefix(runTag), "family_prefix": familyPrefix(runTag), "offset": "\(offset)",
            "now_ms": "\(milliseconds)", "window_start": "\(CounterWindow.start(now, window: 60))", "n": "0",
            "box": "\\x" + Hex.encode(box),
            "inner_pad": "\\x" + Hex.encode(padded.map { $0 ^ 0x36 }),
            "outer_pad": "\\x" + Hex.encode(padded.map { $0 ^ 0x5C }),
        ]
    }

    static func text(_ scenario: Scenario) -> String {
        let user = "(:user_prefix || lpad(:uid::text, 12, '0'))"
        let family = "(:family_prefix || lpad(:uid::text, 12, '0'))"
        let timestamp = "(TIMESTAMPTZ 'epoch' + :now_ms::bigint * INTERVAL '1 millisecond')"
        let claim = "convert_to('coffer/v1/postgres-act' || chr(10) || :binding || chr(10) || 'user:' || \(user), 'UTF8')"
        let proof = "sha256(:outer_pad::bytea || sha256(:inner_pad::bytea || \(claim)))"
        // PostgresServerStore.rawTransaction: the binding, then the proof for the request's user.
        let begin = [
            "BEGIN;",
            "SELECT coffer_binding() AS binding \\gset",
            "SELECT coffer_act(\(user)::uuid, \(proof));",
        ]
        var lines = ["\\set uid :client_id + :offset"]
        switch scenario {
        case .push: lines.append("\\set n :n + 1")
        case .pull: lines.append("\\set since random(0, 2) * 100")
        }
        // ServerCore.authenticate → store.authorize(counter: "token:<hash of sid>", window: 60, requests: 1).
        lines +=
            begin + [
                """
                SELECT * FROM coffer_authorize(\(family)::uuid, 'token:' || \(family), :window_start::bigint, :now_ms::bigint, 1);
                """,
                "COMMIT;",
            ]
        switch scenario {
        case .push:
            // ServerCore.push → store.push (applyPush), without a manifest: the bench's accounts keep none.
            let item = "(:item_prefix || lpad(:client_id::text, 4, '0') || '-4000-8000-' || lpad(:n::text, 12, '0'))::uuid"
            lines +=
                begin + [
                    """
                    UPDATE users SET change_seq = change_seq + 1
                    WHERE id = \(user)::uuid AND deleted_at IS NULL RETURNING change_seq \\gset
                    """,
                    "SELECT coalesce(max(epoch), 0) FROM manifests WHERE user_id = \(user)::uuid;",
                    """
                    SELECT id, kind, revision, updated_at, deleted, box, meta, seq, (extract(epoch FROM stored_at) * 1000)::bigint
                    FROM items WHERE user_id = \(user)::uuid AND id = ANY(ARRAY[\(item)]) FOR UPDATE;
                    """,
                    "SELECT coalesce(sum(size), 0)::bigint FROM items WHERE user_id = \(user)::uuid AND NOT deleted;",
                    """
                    INSERT INTO items (user_id, id, kind, revision, updated_at, deleted, box, size, meta, seq, stored_at)
                    VALUES (\(user)::uuid, \(item), 'note', 1, :now_ms, false, :box::bytea, 512, NULL, :change_seq, \(timestamp))
                    ON CONFLICT (user_id, id) DO UPDATE SET kind = EXCLUDED.kind, revision = EXCLUDED.revision,
                        updated_at = EXCLUDED.updated_at, deleted = EXCLUDED.deleted, box = EXCLUDED.box,
                        size = EXCLUDED.size, meta = EXCLUDED.meta, seq = EXCLUDED.seq,
                        stored_at = EXCLUDED.stored_at;
                    """,
                    "COMMIT;",
                ]
        case .pull:
            // ServerCore.changes → store.changes(since:limit: 100), which fetches limit + 1 rows.
            lines +=
                begin + [
                    "SELECT * FROM coffer_feed(:since::bigint, 101);",
                    "COMMIT;",
                ]
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// pgbench, run against the app role with `-n -M extended -c N -j 2 -T seconds`, per-transaction log for latencies.
struct PGBench: Sendable {
    let executable: String

    static func locate() -> PGBench? {
        let candidates =
            ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .sorted { $0.compare($1, options: .numeric) == .orderedDescending }
            .map { "/usr/lib/postgresql/\($0)/bin/pgbench" }
            + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/pgbench" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }.map(PGBench.init)
    }

    func run(script: String, variables: [String: String], url: String, clients: Int, seconds: Int) async throws -> LoadResult {
        let directory = NSTemporaryDirectory() + "coffer-bench-pgbench-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scriptPath = directory + "/script.sql"
        try Data(script.utf8).write(to: URL(fileURLWithPath: scriptPath))
        // Each run pushes fresh item ids, so a second run inserts as the first did instead of updating its rows.
        var variables = variables
        variables["item_prefix"] = String(UUID().lowercasedString.prefix(8)) + "-"
        var arguments = [
            "-n", "-M", "extended", "-c", "\(clients)", "-j", "\(min(2, clients))", "-T", "\(seconds)", "-f", scriptPath,
            "-l", "--log-prefix", directory + "/log",
        ]
        for (name, value) in variables.sorted(by: { $0.key < $1.key }) { arguments += ["-D", "\(name)=\(value)"] }
        // Any user of the machine can read a command line: the password goes to pgbench through PGPASSWORD.
        let (target, password) = try Self.splitPassword(url)
        arguments.append(target)
        let output = directory + "/out"
        let status = try await Self.spawn(
            executable, arguments: arguments, output: output, environment: password.map { ["PGPASSWORD": $0] } ?? [:])
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard status == 0, let tpsLine = text.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
            let tps = Double(tpsLine.dropFirst(6).prefix { $0 != " " })
        else {
            let reason = text.split(separator: "\n").first { $0.contains("error") || $0.contains("ERROR") || $0.contains("FATAL") }
            throw BenchError("pgbench failed (status \(status)): \(reason.map(String.init) ?? "see its output")")
        }
        let failed =
            text.split(separator: "\n").first { $0.hasPrefix("number of failed transactions:") }
            .flatMap { $0.split(separator: " ").dropFirst(4).first.flatMap { Int($0) } } ?? 0
        var latencies: [Double] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory) where file.hasPrefix("log") {
            let log = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
            for line in log.split(separator: "\n") {
                // client_id transaction_no latency_us script_no epoch epoch_us
                let fields = line.split(separator: " ")
                if fields.count >= 3, let microseconds = Double(fields[2]) { latencies.append(microseconds / 1e6) }
            }
        }
        latencies.sort()
        // pgbench's own rate (connection time excluded) rather than the log's count, so it is pgbench's number.
        var result = LoadResult(
            errors: failed, firstError: failed > 0 ? "failed transactions" : nil, seconds: Double(seconds),
            sortedLatencies: latencies)
        result.count = Int((tps * Double(seconds)).rounded())
        return result
    }

    /// `url` without its password (and with the TLS mode Coffer chose for it, which libpq's default would not be),
    /// and the password.
    static func splitPassword(_ url: String) throws -> (url: String, password: String?) {
        let parsed: PostgresURL
        do {
            parsed = try PostgresURL(url)
        } catch {
            throw BenchError("PostgreSQL URL: \(error)")
        }
        guard let password = parsed.password else { return (url, nil) }
        let user = parsed.user.addingPercentEncoding(withAllowedCharacters: .urlUserAllowed) ?? parsed.user
        let database = parsed.database.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? parsed.database
        let host = parsed.host.contains(":") ? "[\(parsed.host)]" : parsed.host
        return ("postgres://\(user)@\(host):\(parsed.port)/\(database)?sslmode=\(parsed.tls.rawValue)", password)
    }

    /// Runs a process with stdout and stderr to `output` and returns its exit status, waiting on a dispatch thread
    /// rather than one of the concurrency pool's. posix_spawn directly: the child must start with no signal blocked
    /// and default handlers, or it inherits this process's threads' masks (NIO's, the pool's), and then pgbench's
    /// `-T` alarm never fires and a PostgreSQL started through pg_ctl cannot be stopped.
    static func spawn(_ executable: String, arguments: [String], output: String, environment: [String: String] = [:]) async throws -> Int32 {
        let descriptor = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw BenchError("cannot write \(output)") }
        defer { close(descriptor) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, descriptor, 1)
        posix_spawn_file_actions_adddup2(&actions, descriptor, 2)
        // Nothing else of this process's may leak in: wrk sizes its event loop for the descriptors it opens itself
        // and fails to connect on any numbered above that. glibc's closefrom action is not in Swift's Glibc module.
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGALRM, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw BenchError("cannot start \(executable) (errno \(spawned))") }
        let child = pid
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var status: Int32 = 0
                while waitpid(child, &status, 0) < 0 && errno == EINTR {}
                // WIFEXITED / WEXITSTATUS; a signal death reads as 128 + signal, as shells report it.
                continuation.resume(returning: status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F))
            }
        }
    }
}

/// A PostgreSQL cluster of scripts/postgres.sh in a temporary directory, for runs without database URLs.
struct ThrowawayCluster: Sendable {
    let script: String
    let directory: String
    let appURL: String
    let adminURL: String

    static func start() async throws -> ThrowawayCluster {
        guard let script = locateScript() else {
            throw BenchError("scripts/postgres.sh was not found (run from the repository)")
        }
        let directory = "/tmp/coffer-bench-pg-\(UUID().uuidString.prefix(8))"
        let port = try freeLoopbackPort()
        let output = NSTemporaryDirectory() + "coffer-bench-pg-\(UUID().uuidString).out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let status = try await PGBench.spawn(
            "/usr/bin/env", arguments: ["bash", script, "start", directory], output: output,
            environment: ["COFFER_PG_PORT": "\(port)"])
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        guard status == 0, let app = values["COFFER_TEST_POSTGRES_URL"], let admin = values["COFFER_TEST_POSTGRES_ADMIN_URL"] else {
            try? FileManager.default.removeItem(atPath: directory)
            let reason = text.split(separator: "\n").last.map(String.init) ?? "no output"
            throw BenchError("scripts/postgres.sh could not start a cluster: \(reason)")
        }
        return ThrowawayCluster(script: script, directory: directory, appURL: app, adminURL: admin)
    }

    func stop() async throws {
        let output = NSTemporaryDirectory() + "coffer-bench-pg-\(UUID().uuidString).out"
        defer { try? FileManager.default.removeItem(atPath: output) }
        _ = try await PGBench.spawn("/usr/bin/env", arguments: ["bash", script, "stop", directory], output: output)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// scripts/postgres.sh in the working directory or above the executable (`.build*/…/coffer-bench`).
    private static func locateScript() -> String? {
        var candidates = [FileManager.default.currentDirectoryPath + "/scripts/postgres.sh"]
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            candidates.append(directory.appendingPathComponent("scripts/postgres.sh").path)
            directory = directory.deletingLastPathComponent()
        }
        return candidates.first { FileManager.default.isReadableFile(atPath: $0) }
    }
}
