import ArgumentParser
import CofferPlatform
import Foundation

/// Coffer's benchmark program: each subcommand measures one part of Coffer against the goal its issue sets and
/// against a peer or a raw floor measured on the same machine in the same run.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer-bench",
        abstract: "Measures Coffer against its speed goals and against peers, in one run on this machine.",
        discussion: "Build with -c release; debug figures mean nothing.",
        subcommands: [
            VaultCommand.self, BarcodeCommand.self, ServerCommand.self, PlacesCommand.self, SyncCommand.self, CLICommand.self,
            AgentBenchCommand.self, ScanBenchCommand.self, KeystoreBenchCommand.self,
        ],
        defaultSubcommand: VaultCommand.self)

    /// A failed measurement ends in one line, `coffer-bench: error: …`, with exit status 1; usage errors keep
    /// ArgumentParser's message and status 64.
    static func main() async {
        // As the products do, so that what is measured is what they run.
        AllocatorTuning.reuseLargeBlocks()
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch let error as BenchError {
            FileHandle.standardError.write(Data("coffer-bench: error: \(error)\n".utf8))
            Foundation.exit(1)
        } catch {
            exit(withError: error)
        }
    }
}

/// `--smoke`, on every subcommand: each measurement once, briefly and on small inputs, so that CI can check in seconds
/// that a bench still runs end to end. A bench that only ever runs by hand rots (`server --backend postgres` once
/// called a SQL function with a signature it had lost); the figures of a smoke run mean nothing.
struct SmokeOption: ParsableArguments {
    @Flag(help: "Run each measurement once, briefly, on small inputs: checks that the bench works (CI); its figures mean nothing.")
    var smoke = false
}

struct VaultCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vault",
        abstract: "KDF, AEAD and vault operations against OpenSSL (Python cryptography) and the goals of issue #2.")

    @Argument(help: "Items in the vault to measure.")
    var items = 10_000
    @OptionGroup var smoke: SmokeOption

    func validate() throws {
        guard (1...1_000_000).contains(items) else { throw ValidationError("ITEMS must be 1 to 1,000,000") }
    }

    func run() throws { try VaultBench(itemCount: smoke.smoke ? 100 : items, smoke: smoke.smoke).run() }
}

struct BarcodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "barcode", abstract: "Barcode encoding and rendering rates.")

    @OptionGroup var smoke: SmokeOption

    func run() throws { try BarcodeBench(smoke: smoke.smoke).run() }
}

/// Sync-server speed (issue #4).
///
/// For each backend, coffer-server runs in this process on a free loopback port and `clients` concurrent clients
/// (each its own account and token) hammer it for `seconds` per scenario: pushing one new 512-byte item per request,
/// and pulling `changes?since=<cursor>&limit=100` from an account of 300 items. The load comes from wrk, a C client
/// in its own process, and, for comparison, from an in-process Swift client that shares the cores with the server.
/// Next to it, the raw floor of the same work: on PostgreSQL pgbench sending the statements the server sends per
/// request (read from PostgresServerStore.swift), taking turns with wrk for `rounds` rounds; on SQLite the store
/// methods a request calls, in process. Last, the cost of a pull of 10 changes for an account of 1,000 and of 20,000
/// items, which must not grow with the vault.
///
/// PostgreSQL comes from COFFER_BENCH_POSTGRES_URL / COFFER_BENCH_POSTGRES_ADMIN_URL (else COFFER_TEST_POSTGRES_URL /
/// COFFER_TEST_POSTGRES_ADMIN_URL); without them a throwaway cluster is started with scripts/postgres.sh.
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Sync-server push and pull throughput against pgbench running the same SQL.",
        discussion: """
            Needs wrk (Debian: apt-get install -y wrk) and, for PostgreSQL, pgbench. PostgreSQL comes from \
            COFFER_BENCH_POSTGRES_URL and COFFER_BENCH_POSTGRES_ADMIN_URL (else the COFFER_TEST_ pair); without \
            them a throwaway cluster is started with scripts/postgres.sh.
            """)

    @Option(help: "Seconds each measurement runs (1 to 600).")
    var seconds = 10

    @Option(help: "Concurrent clients (1 to 90).")
    var clients = 32

    @Option(help: "Turns wrk and pgbench take; their medians are compared (1 to 9).")
    var rounds = 3

    @Option(help: "sqlite, postgres or all.")
    var backend = "all"

    @Option(help: "push, pull, scaling or all.")
    var scenario = "all"

    @OptionGroup var smoke: SmokeOption

    func validate() throws {
        guard (1...600).contains(seconds) else { throw ValidationError("--seconds must be 1 to 600") }
        guard (1...90).contains(clients) else { throw ValidationError("--clients must be 1 to 90") }
        guard (1...9).contains(rounds) else { throw ValidationError("--rounds must be 1 to 9") }
        guard ["sqlite", "postgres", "all"].contains(backend) else {
            throw ValidationError("--backend must be sqlite, postgres or all")
        }
        guard scenario == "all" || BenchScenario(rawValue: scenario) != nil else {
            throw ValidationError("--scenario must be push, pull, scaling or all")
        }
    }

    func run() async throws {
        let options = ServerBenchOptions(
            seconds: smoke.smoke ? 1 : seconds, clients: smoke.smoke ? 2 : clients,
            backends: backend == "all" ? ["sqlite", "postgres"] : [backend], rounds: smoke.smoke ? 1 : rounds,
            scenarios: BenchScenario(rawValue: scenario).map { [$0] } ?? Set(BenchScenario.allCases), smoke: smoke.smoke)
        try await ServerBenchRun(options: options).run()
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}
