import CofferSyncAPI
import Foundation

/// wrk (Debian: `apt-get install -y wrk`) as the HTTP load generator, the HTTP side's counterpart of pgbench: a C
/// client that costs the shared cores little, so that what the run measures is the server. The in-process Swift
/// client (`HTTPLoad`) is measured too; on a 2-core machine it takes a large share of the CPU from the server.
///
/// Each of wrk's two threads works through its own half of the accounts' tokens, so no two threads use one account
/// (a user's pushes are serialised by the database). Pushes send a fresh item id per request, made from a per-run
/// tag, the thread and a counter.
struct Wrk: Sendable {
    let executable: String

    static func locate() -> Wrk? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
            .map { "\($0)/wrk" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
            .map(Wrk.init)
    }

    static let threads = 2

    /// The script for pushes of one new item: `body` holds `placeholder` where each request's item id goes.
    static func pushScript(tokens: [String], body: String, placeholder: String, tag: String) -> String {
        let parts = body.components(separatedBy: placeholder)
        precondition(parts.count == 2, "the push body must hold the item id once")
        return script(
            tokens: tokens,
            request: """
                local id = string.format("%s-%04x-4000-8000-%012x", "\(tag)", thread_index or 0, counter)
                return wrk.format("POST", "/v1/sync/push",
                    { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" },
                    [==[\(parts[0])]==] .. id .. [==[\(parts[1])]==])
                """)
    }

    /// The script for pulls of `changes?since=<0|100|200>&limit=100`.
    static func pullScript(tokens: [String]) -> String {
        script(
            tokens: tokens,
            request: """
                local since = (counter % 3) * 100
                return wrk.format("GET", "/v1/sync/changes?since=" .. since .. "&limit=100",
                    { ["Authorization"] = "Bearer " .. token })
                """)
    }

    /// The script for region-refreshes: each request a body of `bodies` in turn.
    static func regionRefreshScript(tokens: [String], bodies: [String]) -> String {
        script(
            tokens: tokens,
            prelude: "local bodies = { \(bodies.map { "[==[\($0)]==]" }.joined(separator: ", ")) }",
            request: """
                return wrk.format("POST", "/v1/region-refresh",
                    { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" },
                    bodies[(counter % #bodies) + 1])
                """)
    }

    /// The script for `GET /health`: the HTTP layer with a trivial handler (no token, no database).
    static let healthScript = """
        function request()
            return wrk.format("GET", "/health")
        end

        """

    private static func script(tokens: [String], prelude: String = "", request: String) -> String {
        """
        \(prelude)
        local tokens = { \(tokens.map { "\"\($0)\"" }.joined(separator: ", ")) }
        counter = 0
        local next_thread = 0
        function setup(thread)
            thread:set("thread_index", next_thread)
            next_thread = next_thread + 1
        end
        function request()
            counter = counter + 1
            local token = tokens[((counter * \(threads) + (thread_index or 0)) % #tokens) + 1]
            \(request)
        end

        """
    }

    /// Runs `script` against `base` with `connections` connections for `seconds`.
    func run(script: String, base: String, connections: Int, seconds: Int) async throws -> LoadResult {
        let directory = NSTemporaryDirectory() + "coffer-bench-wrk-\(UUID().uuidString)"
        // Private: the script holds the bench accounts' bearer tokens.
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let scriptPath = directory + "/script.lua"
        try Data(script.utf8).write(to: URL(fileURLWithPath: scriptPath))
        let output = directory + "/out"
        let status = try await PGBench.spawn(
            executable,
            arguments: [
                "-t", "\(min(Self.threads, connections))", "-c", "\(connections)", "-d", "\(seconds)s", "--timeout", "30s",
                "--latency", "-s", scriptPath, base,
            ],
            output: output)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        func value(after prefix: String) -> Substring? {
            lines.first { $0.hasPrefix(prefix) }.map { $0.dropFirst(prefix.count).drop { $0 == " " } }
        }
        guard status == 0, let rate = value(after: "Requests/sec:").flatMap({ Double($0) }),
            let p50 = value(after: "50%").flatMap(Self.seconds), let p99 = value(after: "99%").flatMap(Self.seconds)
        else {
            throw BenchError("wrk failed (status \(status)): \(lines.last ?? "no output")")
        }
        let rejected = value(after: "Non-2xx or 3xx responses:").flatMap { Int($0) } ?? 0
        // "Socket errors: connect 0, read 0, write 0, timeout 0", printed only when one is not 0.
        let socketErrors =
            value(after: "Socket errors:").map { line in
                line.split(separator: ",").compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
            } ?? 0
        return LoadResult(
            count: Int((rate * Double(seconds)).rounded()), errors: rejected + socketErrors,
            firstError: rejected > 0 ? "non-2xx answers" : socketErrors > 0 ? "socket errors: \(value(after: "Socket errors:") ?? "")" : nil,
            seconds: Double(seconds), p50: p50, p99: p99)
    }

    /// wrk's "1.23ms" / "850.00us" / "1.02s".
    private static func seconds(_ text: Substring) -> Double? {
        for (suffix, scale) in [("us", 1e-6), ("ms", 1e-3), ("s", 1.0)] where text.hasSuffix(suffix) {
            return Double(text.dropLast(suffix.count)).map { $0 * scale }
        }
        return nil
    }
}
