import ArgumentParser
import AsyncHTTPClient
import CofferCrypto
import CofferKeystore
@_spi(Sync) import CofferKit
import CofferModel
import CofferServer
import CofferServerStore
import CofferSync
import CofferSyncAPI
import CofferVault
import Foundation
import Logging

/// Verified sync (issue #12): what verification adds to pulling a vault and to a push.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract:
            "Sync of ITEMS items: through the CLI (register and first push; a new device's login and pull), and the library's parts (verification, manifests, rotation).",
        discussion: """
            The CLI part runs the `coffer` beside this bench against a server in this process, on SQLite and on \
            PostgreSQL (a throwaway cluster started with scripts/postgres.sh as root, or the database of \
            COFFER_BENCH_POSTGRES_URL and COFFER_BENCH_POSTGRES_ADMIN_URL).
            """)

    @Argument(help: "Items in the synced vault.") var items = 10_000
    @Option(help: "Runs of each measurement (the median is reported).") var runs = 5
    @Option(help: "cli, library or both.") var part = "both"
    @Option(help: "The CLI part's server store: sqlite, postgres or both.") var backend = "both"
    @OptionGroup var smoke: SmokeOption

    func validate() throws {
        guard (100...200_000).contains(items) else { throw ValidationError("ITEMS must be 100 to 200,000") }
        guard (1...50).contains(runs) else { throw ValidationError("--runs must be 1 to 50") }
        guard ["cli", "library", "both"].contains(part) else { throw ValidationError("--part must be cli, library or both") }
        guard ["sqlite", "postgres", "both"].contains(backend) else { throw ValidationError("--backend must be sqlite, postgres or both") }
    }

    func run() async throws {
        let itemCount = smoke.smoke ? 100 : items
        let runs = smoke.smoke ? 1 : runs
        if part != "library" {
            let backends = backend == "both" ? ["sqlite", "postgres"] : [backend]
            try await SyncCLIBench(itemCount: itemCount, runs: runs, logger: SyncBench.quietLogger).run(backends: backends)
        }
        if part != "cli" { try await SyncBench(itemCount: itemCount, runs: runs).run() }
    }
}

struct SyncBench {
    let itemCount: Int
    let runs: Int
    let logger = SyncBench.quietLogger

    static let quietLogger: Logger = {
        var logger = Logger(label: "coffer-bench")
        logger.logLevel = .error
        return logger
    }()

    static let passphrase = "coffer-bench sync passphrase"

    func run() async throws {
        emit("Verified sync, \(itemCount) notes, SQLite store, server in this process on loopback; medians of \(runs) runs")
        let directory = try temporaryDirectory("sync")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteServerStore(path: directory + "/server.sqlite")
        try await store.migrate()
        try await withBenchServer(store: store, dataDirectory: directory, http: SyncClient.defaultHTTP, logger: logger) { base in
            try await measure(base: base, directory: directory)
        }
    }

    private func location(_ directory: String, _ name: String) -> CofferLocation {
        CofferLocation(vaultDirectory: directory + "/" + name, keystore: InMemoryKeystore())
    }

    private func measure(base: String, directory: String) async throws {
        let client = try SyncClient(server: base, retry: .never)
        let a = try Coffer.initialize(at: location(directory, "a"))
        let contents = try (0..<itemCount).map { index in
            ItemContent.note(try Note(name: "note \(index)", text: String(repeating: "x", count: 200) + " \(index)"))
        }
        _ = try a.vault.addAll(contents)
        let sessionA = SyncSession(coffer: a, client: client)
        let email = "bench-\(UUID().uuidString.prefix(8).lowercased())@bench.invalid"
        try await sessionA.register(email: email, passphrase: Self.passphrase)
        let pushStart = ContinuousClock.now
        let pushed = try await sessionA.sync()
        row("  first push of \(itemCount) items (\(pushed.pushed / SyncLimits.maxPushItems) manifests)", format(ContinuousClock.now - pushStart))

        // A new device pulls everything, verified: the whole sync after login.
        var pulls: [Duration] = []
        var devices: [SyncSession] = []
        for run in 0..<runs {
            let device = try await SyncSession.login(
                location: location(directory, "b\(run)"), client: client, email: email, passphrase: Self.passphrase,
                localPassphrase: nil)
            let start = ContinuousClock.now
            _ = try await device.sync()
            pulls.append(ContinuousClock.now - start)
            devices.append(device)
        }
        // The verification alone on the same rows: every row's leaf, the root, the head's tag.
        let rows = try await allRows(client: client, device: devices[0])
        let head = try verifiedHead(devices[0])
        var verifications: [Duration] = []
        for _ in 0..<max(runs, 5) {
            let start = ContinuousClock.now
            var leaves: [UUID: [UInt8]] = [:]
            leaves.reserveCapacity(rows.count)
            for row in rows { leaves[row.id] = row.leaf }
            guard StateRoot.root(leaves) == head.root, devices[0].coffer.vault.manifestTag(head.body) == head.tag else {
                throw BenchError("the pulled state does not verify")
            }
            verifications.append(ContinuousClock.now - start)
        }
        let pull = median(pulls)
        let verification = median(verifications)
        row("  new device: pull and apply \(itemCount) items", format(pull))
        row(
            "    of which verification (leaves, root, tag)",
            format(verification) + String(format: "  (%.1f%% of the pull; goal ≤ 10%%)", percent(verification, of: pull)))

        // A device that is behind by 100 changes: the chain, and the root over the whole set again.
        var increments: [Duration] = []
        var incrementalVerifications: [Duration] = []
        let ids = try a.vault.items().prefix(100).map(\.id)
        for round in 0..<runs {
            for id in ids { _ = try a.vault.modify(id: id) { $0 = .note(try Note(name: "edited \(round)", text: "changed")) } }
            _ = try await sessionA.sync()
            let device = devices[round % devices.count]
            let known = try device.coffer.vault.syncedRows()
            let start = ContinuousClock.now
            _ = try await device.sync()
            increments.append(ContinuousClock.now - start)
            // The same work on 100 rows of the same size.
            let verifyStart = ContinuousClock.now
            var leaves = known.leaves
            for row in rows.prefix(100) { leaves[row.id] = row.leaf }
            _ = StateRoot.root(leaves)
            incrementalVerifications.append(ContinuousClock.now - verifyStart)
        }
        let increment = median(increments)
        let incrementalVerification = median(incrementalVerifications)
        row("  linked device: pull 100 changes of \(itemCount)", format(increment))
        row(
            "    of which verification (100 leaves, root of all)",
            format(incrementalVerification) + String(format: "  (%.1f%% of the pull)", percent(incrementalVerification, of: increment)))

        // What the manifest adds to a push of one item.
        let item = ItemRow(
            id: UUID(), kind: "note", revision: 1, updatedAt: UnixTime.milliseconds(Date()), deleted: false,
            box: Data(repeating: 0xAB, count: 512))
        let plain = try WireJSON.encoder().encode(PushRequest(items: [PushItem(item: item, baseRevision: 0)]))
        let verified = try WireJSON.encoder().encode(
            PushRequest(items: [PushItem(item: item, baseRevision: 0)], baseEpoch: head.epoch, manifest: head.base64))
        row("  a push of one 512-byte item", "\(plain.count) bytes without a manifest, \(verified.count) with")
        row("    added by verification", "\(verified.count - plain.count) bytes (goal ≤ 1,024)")

        // Rotating the synced vault's master key: every item re-sealed, staged and committed with the new slot; then
        // another device takes the new key at its login and pulls the rotated rows, verified.
        let rotateStart = ContinuousClock.now
        let rotation = try await sessionA.rotateMasterKey(accountPassphrase: Self.passphrase, vaultPassphrase: nil)
        row("  rotate the master key of \(rotation.rotation.itemCount) items", format(ContinuousClock.now - rotateStart))
        let followStart = ContinuousClock.now
        let follower = try await SyncSession.login(
            location: devices[0].coffer.location, client: client, email: email, passphrase: Self.passphrase, localPassphrase: nil)
        _ = try await follower.sync()
        guard try verifiedHead(follower).epoch >= rotation.head.epoch else { throw BenchError("the other device did not follow") }
        row("  another device: take the key, pull them", format(ContinuousClock.now - followStart))
    }

    private func allRows(client: SyncClient, device: SyncSession) async throws -> [ItemRow] {
        guard let account = try device.coffer.vault.syncAccount() else { throw BenchError("the device is not linked") }
        let access = try await client.login(
            LoginRequest(
                email: account.account,
                authKey: try SyncKeys(
                    passphrase: Self.passphrase, kdf: .defaultPBKDF2,
                    salt: try prelogin(client, account.account), limits: .production
                ).authKeyBase64)
        ).accessToken
        var rows: [UUID: ItemRow] = [:]
        var cursor: Int64 = 0
        while true {
            let page = try await client.changes(since: cursor, limit: SyncLimits.maxPageItems, accessToken: access)
            for row in page.items { rows[row.id] = row }
            cursor = page.cursor
            if !page.hasMore { break }
        }
        return Array(rows.values)
    }

    private func prelogin(_ client: SyncClient, _ email: String) async throws -> [UInt8] {
        guard let salt = Data(base64Encoded: try await client.prelogin(email: email).salt) else {
            throw BenchError("prelogin: malformed salt")
        }
        return Array(salt)
    }

    private func median(_ values: [Duration]) -> Duration { values.sorted()[values.count / 2] }

    private func percent(_ part: Duration, of whole: Duration) -> Double {
        100 * seconds(part) / seconds(whole)
    }

    private func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private func format(_ duration: Duration) -> String { String(format: "%.1f ms", seconds(duration) * 1000) }
}

private func verifiedHead(_ device: SyncSession) throws -> Manifest {
    guard let head = try device.verifiedHead()?.manifest else { throw BenchError("the device verified no head") }
    return head
}
