import ArgumentParser
import AsyncHTTPClient
import CofferPlaces
import CofferServer
import CofferServerStore
import CofferSync
import CofferSyncAPI
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Places speed (issue #11): with `locations` stores (clustered around 300 towns of the continental US, the rest
/// spread evenly), for each backend: the import; building tiles of geohash-4 cells; region-refresh over HTTP under
/// `clients` concurrent clients against the same query run directly (SQLite: the store call in process; PostgreSQL:
/// pgbench); then, on the client, choosing regions from a 100,000-location tile and `coffer near` as a whole process.
struct PlacesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "places",
        abstract: "Places import, tiles, region-refresh under load, client-side region choice and `coffer near`.")

    @Option(help: "Locations to import (1,000 to 2,000,000).") var locations = 1_000_000
    @Option(help: "Seconds each load runs (1 to 600).") var seconds = 10
    @Option(help: "Concurrent clients.") var clients = 32
    @Option(help: "sqlite, postgres or both.") var backend = "both"
    @OptionGroup var smoke: SmokeOption

    func validate() throws {
        guard (1_000...2_000_000).contains(locations) else { throw ValidationError("--locations must be 1,000 to 2,000,000") }
        guard (1...600).contains(seconds) else { throw ValidationError("--seconds must be 1 to 600") }
        guard (1...256).contains(clients) else { throw ValidationError("--clients must be 1 to 256") }
        guard ["sqlite", "postgres", "both"].contains(backend) else { throw ValidationError("--backend must be sqlite, postgres or both") }
    }

    func run() async throws {
        try await PlacesBench(
            locationCount: smoke.smoke ? 1_000 : locations, seconds: smoke.smoke ? 1 : seconds,
            clients: smoke.smoke ? 2 : clients, backend: backend, smoke: smoke.smoke
        ).run()
    }
}

struct PlacesBench: Sendable {
    let locationCount: Int
    let seconds: Int
    let clients: Int
    let backend: String
    /// `--smoke`: short warm-ups, fewer samples and a smaller dense tile.
    let smoke: Bool
    var warmup: Double { smoke ? 0.2 : 1 }
    let logger: Logger = {
        var logger = Logger(label: "coffer-bench")
        logger.logLevel = .error
        return logger
    }()

    /// The continental US, where the positions of the loads are drawn.
    static let area = (south: 25.0, north: 49.0, west: -124.0, east: -67.0)

    func run() async throws {
        emit(
            "coffer-bench places: \(locationCount) locations, \(clients) clients, \(seconds) s per load, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        let (networks, locations) = Self.places(count: locationCount)
        if backend != "postgres" { try await sqlite(networks, locations) }
        if backend != "sqlite" { try await postgres(networks, locations) }
        try clientSide(networks, locations)
        try nearProcess(networks, locations)
    }

    // MARK: Data

    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func places(count: Int) -> ([Network], [Location]) {
        var random = SplitMix(state: 2026)
        let networks = (0..<200).map { Network(id: "chain-\($0)", name: "Chain \($0)", defaultRadius: 60 + ($0 % 10) * 20) }
        let towns = (0..<300).map { _ in
            (Double.random(in: area.south...area.north, using: &random), Double.random(in: area.west...area.east, using: &random))
        }
        let locations = (0..<count).map { index -> Location in
            let latitude: Double
            let longitude: Double
            if index % 10 < 6 {
                let town = towns[Int.random(in: 0..<towns.count, using: &random)]
                latitude = town.0 + Double.random(in: -0.3...0.3, using: &random)
                longitude = town.1 + Double.random(in: -0.4...0.4, using: &random)
            } else {
                latitude = Double.random(in: area.south...area.north, using: &random)
                longitude = Double.random(in: area.west...area.east, using: &random)
            }
            return Location(
                id: "loc-\(index)", networkID: networks[Int.random(in: 0..<networks.count, using: &random)].id,
                name: "Store \(index)", address: "\(index) Main Street", point: GeoPoint(latitude: latitude, longitude: longitude)!,
                radius: index % 4 == 0 ? nil : Int.random(in: 50...300, using: &random))
        }
        return (networks, locations)
    }

    static func position(_ random: inout SplitMix) -> GeoPoint {
        GeoPoint(
            latitude: Double.random(in: area.south...area.north, using: &random),
            longitude: Double.random(in: area.west...area.east, using: &random))!
    }

    // MARK: Backends

    private func sqlite(_ networks: [Network], _ locations: [Location]) async throws {
        let directory = NSTemporaryDirectory() + "coffer-bench-places-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store: SQLiteServerStore
        do {
            store = try SQLiteServerStore(path: directory + "/server.sqlite")
        } catch {
            throw BenchError("cannot open the SQLite store: \(error)")
        }
        emit("SQLite (one file, WAL, synchronous = FULL; R*Tree)")
        try await measure(store, networks, locations, pgbenchURL: nil)
    }

    private func postgres(_ networks: [Network], _ locations: [Location]) async throws {
        try await withBenchPostgres(connections: clients, logger: logger) { store, appURL, throwaway in
            emit("PostgreSQL (GiST over point(lon, lat), \(clients) connections\(throwaway ? ", throwaway cluster with fsync=off" : ""))")
            try await measure(store, networks, locations, pgbenchURL: appURL)
        }
    }

    private func measure(_ store: any ServerStore, _ networks: [Network], _ locations: [Location], pgbenchURL: String?) async throws {
        try await store.migrate()
        // Import: one transaction, as `coffer-server places import` does.
        let started = Date()
        _ = try await store.importPlaces(PlaceImport(networks: networks, locations: locations), replacing: false, now: Date())
        let importSeconds = Date().timeIntervalSince(started)
        row("  import of \(locations.count) locations", String(format: "%.1f s (%.0f locations/s)", importSeconds, Double(locations.count) / importSeconds))

        // Tiles: the cells of 100 random stores (where people are), built from the store each time.
        var random = SplitMix(state: 7)
        let directory = try await store.networks()
        var times: [Double] = []
        var sizes: [Int] = []
        var counts: [Int] = []
        let cellCount = smoke ? 10 : 100
        for _ in 0..<cellCount {
            let cell = Geohash.encode(locations[Int.random(in: 0..<locations.count, using: &random)].point, precision: 4)
            let begin = DispatchTime.now().uptimeNanoseconds
            let found = try await store.locations(in: Geohash.box(cell)!.halo(radius: RegionRules.searchRadius))
            let tile = try PlaceTile.encode(kind: .cell, cell: cell, radius: 50_000, dataVersion: 1, networks: directory, locations: found)
            times.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e6)
            sizes.append(tile.bytes.count)
            counts.append(found.count)
        }
        times.sort()
        counts.sort()
        row(
            "  tile build, \(cellCount) cells (target p50 ≤ 20 ms)",
            String(
                format: "p50 %.1f ms   p99 %.1f ms   median %d locations, %d KiB padded", percentile(times, 50), percentile(times, 99),
                counts[counts.count / 2], sizes.sorted()[sizes.count / 2] / 1024))

        // Region-refresh over HTTP, `clients` accounts at once, positions all over the area, three networks each.
        let dataDirectory = try temporaryDirectory("places-server")
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        var httpConfiguration = HTTPClient.Configuration()
        httpConfiguration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: clients * 2)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: httpConfiguration)
        defer { http.shutdown(queue: .global()) { _ in } }
        var measured: LoadResult?
        var floors: [(String, LoadResult)] = []
        let serverStart = Date()
        try await withBenchServer(store: store, dataDirectory: dataDirectory, http: http, logger: logger) { base in
            row("  server start, places index read from the store", String(format: "%.1f s", Date().timeIntervalSince(serverStart)))
            let registrar = try Registrar()
            let sync = try SyncClient(server: base, http: http, retry: .never)
            var tokens: [String] = []
            for index in 0..<clients {
                tokens.append(try await sync.register(try registrar.request(email: "places-\(UUID().uuidString.prefix(8))-\(index)@bench.invalid")).accessToken)
            }
            let bodies: [Data] = (0..<4_096).map { _ in
                let position = Self.position(&random)
                let networks = (0..<3).map { _ in "\"chain-\(Int.random(in: 0..<200, using: &random))\"" }.joined(separator: ",")
                return Data(#"{"lat":\#(position.latitude),"lon":\#(position.longitude),"user_networks":[\#(networks)],"max_regions":20}"#.utf8)
            }
            let load = HTTPLoad(http: http, base: base)
            let accessTokens = tokens
            measured = try await concurrentLoad(clients: clients, seconds: seconds, warmup: warmup) { worker, iteration in
                _ = try await load.send(.POST, "/v1/region-refresh", token: accessTokens[worker], body: bodies[(worker * 97 + iteration) % bodies.count])
            }
            // The same load from wrk (a C client in its own process), and the HTTP layer alone with a trivial handler.
            if let wrk = Wrk.locate() {
                let script = Wrk.regionRefreshScript(tokens: tokens, bodies: bodies.map { String(decoding: $0, as: UTF8.self) })
                _ = try await wrk.run(script: script, base: base, connections: clients, seconds: 1)
                floors.append(("  region-refresh over HTTP, wrk (target p99 ≤ 10 ms)", try await wrkRun(wrk, base: base, script: script)))
                floors.append(("  floor: GET /health over HTTP, wrk", try await wrkRun(wrk, base: base, script: Wrk.healthScript)))
            } else {
                emit("  wrk: not installed (Debian: apt-get install -y wrk); the in-process client's figure stands alone")
            }
        }
        // The same wrk load on a server that checks every request's session in the store (as before SessionGate).
        if let wrk = Wrk.locate() {
            let tokenless = try temporaryDirectory("places-server-checked")
            defer { try? FileManager.default.removeItem(atPath: tokenless) }
            try await withBenchServer(store: store, dataDirectory: tokenless, http: http, logger: logger, sessionCheckInterval: 0) { base in
                let registrar = try Registrar()
                let sync = try SyncClient(server: base, http: http, retry: .never)
                var tokens: [String] = []
                for index in 0..<clients {
                    tokens.append(
                        try await sync.register(try registrar.request(email: "checked-\(UUID().uuidString.prefix(8))-\(index)@bench.invalid")).accessToken)
                }
                let bodies: [Data] = (0..<4_096).map { _ in
                    let position = Self.position(&random)
                    return Data(
                        #"{"lat":\#(position.latitude),"lon":\#(position.longitude),"user_networks":["chain-1","chain-2","chain-3"],"max_regions":20}"#.utf8)
                }
                let script = Wrk.regionRefreshScript(tokens: tokens, bodies: bodies.map { String(decoding: $0, as: UTF8.self) })
                _ = try await wrk.run(script: script, base: base, connections: clients, seconds: 1)
                floors.append(("  the same, every request's session checked in the store", try await wrkRun(wrk, base: base, script: script)))
            }
        }
        guard let overHTTP = measured else { throw BenchError("region-refresh over HTTP was not measured") }
        row("  region-refresh over HTTP, in-process client (p99 ≤ 10 ms)", overHTTP.summary)
        for (label, result) in floors { row(label, result.summary + wrkShare(result)) }
        let server = floors.first?.1 ?? overHTTP

        let positions: [(GeoPoint, Set<String>)] = (0..<4_096).map { _ in
            (Self.position(&random), Set((0..<3).map { _ in "chain-\(Int.random(in: 0..<200, using: &random))" }))
        }
        let direct: LoadResult
        if let pgbenchURL {
            guard let pgbench = PGBench.locate() else { throw BenchError("pgbench not found (apt-get install postgresql-client)") }
            direct = try await pgbench.run(script: Self.pgbenchScript, variables: [:], url: pgbenchURL, clients: clients, seconds: seconds)
            row("  the same query through pgbench", direct.summary)
        } else {
            direct = try await concurrentLoad(clients: clients, seconds: seconds, warmup: warmup) { worker, iteration in
                let (position, networks) = positions[(worker * 97 + iteration) % positions.count]
                _ = try await store.regions(position, userNetworks: networks, radius: RegionRules.searchRadius, limit: 20)
            }
            row("  the same store call in process", direct.summary)
        }
        row("  server (\(floors.isEmpty ? "in-process client" : "wrk")) / direct (target ≥ 0.50)", String(format: "%.2f", server.rate / direct.rate))

        // What the server does instead of that query: its memory index, read from the store as the server reads it.
        let building = Date()
        var builder = PlaceIndex.Builder(networks: try await store.networks(), version: try await store.placesVersion())
        var after: String?
        while true {
            let page = try await store.locationsPage(after: after, limit: 10_000)
            for location in page { builder.add(location) }
            guard page.count == 10_000, let last = page.last else { break }
            after = last.id
        }
        let index = builder.build()
        row("  memory index: read and built", String(format: "%.1f s, %d locations", Date().timeIntervalSince(building), index.count))
        let fromIndex = try await concurrentLoad(clients: clients, seconds: seconds, warmup: warmup) { worker, iteration in
            let (position, networks) = positions[(worker * 97 + iteration) % positions.count]
            _ = index.regions(at: position, userNetworks: networks)
        }
        row("  the server's memory index call in process", fromIndex.summary)
        // Every region-refresh is authenticated: a session check that counts the request (a write, for rate limits
        // shared by instances), whatever answers the places question.
        let families = (0..<clients).map { _ in (UUID(), UUID()) }
        let authorize = try await concurrentLoad(clients: clients, seconds: seconds, warmup: warmup) { worker, _ in
            let (user, family) = families[worker]
            _ = try await store.authorize(userID: user, family: family, counter: "bench:\(family)", requests: 1, window: 60, now: Date())
        }
        row("  floor: the request check (store.authorize) in process", authorize.summary)
    }

    /// The server under wrk: CPU time per request of this process (the server) and of wrk.
    private func wrkRun(_ wrk: Wrk, base: String, script: String) async throws -> LoadResult {
        let before = ServerBenchRun.processorSeconds(), childrenBefore = Self.childrenProcessorSeconds()
        var result = try await wrk.run(script: script, base: base, connections: clients, seconds: seconds)
        result.processorSecondsPerRequest = (ServerBenchRun.processorSeconds() - before) / Double(max(result.count, 1))
        result.driverSecondsPerRequest = (Self.childrenProcessorSeconds() - childrenBefore) / Double(max(result.count, 1))
        return result
    }

    private func wrkShare(_ result: LoadResult) -> String {
        result.driverSecondsPerRequest.map { String(format: " (server), wrk %.2f ms/req", $0 * 1000) } ?? ""
    }

    /// User and system CPU time of the processes this one started and waited for (wrk, pgbench), in seconds.
    static func childrenProcessorSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The statement PostgresServerStore sends for a region-refresh (`candidates`), with a random position over the
    /// area and three random networks; the search box is computed in SQL from the position instead of being bound.
    static let pgbenchScript = """
        \\set lat_e6 random(25000000, 49000000)
        \\set lon_e6 random(-124000000, -67000000)
        \\set n1 random(0, 199)
        \\set n2 random(0, 199)
        \\set n3 random(0, 199)
        SELECT l.id, l.network_id, l.name, l.address, l.lat, l.lon, l.radius, l.phone, l.hours, n.id, n.wikidata, n.name,
               n.canonical_names, n.category, n.is_large_area, n.default_radius, n.tags, d.distance, d.priority
        FROM locations l JOIN networks n ON n.id = l.network_id,
        LATERAL (SELECT 2 * 6371000 * asin(least(1, sqrt(
                    power(sin(radians(l.lat - :lat_e6 / 1e6) / 2), 2)
                    + cos(radians(:lat_e6 / 1e6)) * cos(radians(l.lat)) * power(sin(radians(l.lon - :lon_e6 / 1e6) / 2), 2))))
                AS distance,
                CASE WHEN l.network_id = ANY(ARRAY['chain-' || :n1, 'chain-' || :n2, 'chain-' || :n3]) THEN 1 ELSE 2 END AS priority) d
        WHERE point(l.lon, l.lat) <@ box(
                point(:lon_e6 / 1e6 - degrees(asin(sin(50000.0 / 6371000) / cos(radians(:lat_e6 / 1e6)))), :lat_e6 / 1e6 - 0.4497),
                point(:lon_e6 / 1e6 + degrees(asin(sin(50000.0 / 6371000) / cos(radians(:lat_e6 / 1e6)))), :lat_e6 / 1e6 + 0.4497))
          AND d.distance <= 50001
        ORDER BY d.priority, d.distance, l.id COLLATE "C"
        LIMIT 28;
        """

    // MARK: Client side

    private func clientSide(_ networks: [Network], _ locations: [Location]) throws {
        emit("Client")
        // A dense metropolitan tile: the 100,000 locations nearest one town's centre.
        let denseCount = smoke ? 10_000 : 100_000
        let centre = GeoPoint(latitude: 40.7, longitude: -74.0)!
        var random = SplitMix(state: 11)
        let dense = (0..<denseCount).map { index in
            Location(
                id: "metro-\(index)", networkID: networks[index % networks.count].id, name: "Metro \(index)",
                point: GeoPoint(
                    latitude: centre.latitude + Double.random(in: -0.6...0.6, using: &random),
                    longitude: centre.longitude + Double.random(in: -0.8...0.8, using: &random))!)
        }
        let tile = try PlaceTile.encode(kind: .cell, cell: "dr5r", radius: 50_000, dataVersion: 1, networks: networks, locations: dense)
        var decode: [Double] = []
        var choose: [Double] = []
        for index in 0..<(smoke ? 20 : 200) {
            var begin = DispatchTime.now().uptimeNanoseconds
            let read = try PlaceTile(bytes: tile.bytes)
            decode.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e6)
            let position = GeoPoint(
                latitude: centre.latitude + Double.random(in: -0.3...0.3, using: &random),
                longitude: centre.longitude + Double.random(in: -0.3...0.3, using: &random))!
            let user: Set<String> = ["chain-\(index % 200)", "chain-\((index * 7) % 200)"]
            begin = DispatchTime.now().uptimeNanoseconds
            let regions = read.regions(at: position, userNetworks: user)
            choose.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e6)
            if regions.count != 20 { throw BenchError("a dense tile gave \(regions.count) regions") }
        }
        decode.sort()
        choose.sort()
        row(
            "  regions from a \(denseCount.formatted())-location tile (≤ 5 ms)",
            String(format: "p50 %.2f ms   p99 %.2f ms", percentile(choose, 50), percentile(choose, 99)))
        row("  reading and checking that tile (\(tile.bytes.count >> 20) MiB)", String(format: "p50 %.2f ms", percentile(decode, 50)))
    }

    /// `coffer near` as a whole process (the release binary beside this one), with places in the vault: the
    /// locations of one tile's halo imported, and 20 cards on their networks.
    private func nearProcess(_ networks: [Network], _ locations: [Location]) throws {
        let coffer = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("coffer").path
        do {
            try CLIBench.requireBinaries()
        } catch {
            emit("  coffer near: skipped (\(error))")
            return
        }
        let home = NSTemporaryDirectory() + "coffer-bench-near-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: home) }
        let environment = ["HOME": home, "XDG_DATA_HOME": home + "/data", "PATH": "/usr/bin:/bin", "NO_COLOR": "1"]
        func run(_ arguments: [String], input: String = "") throws -> Double {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: coffer)
            process.arguments = arguments
            process.environment = environment
            let stdin = Pipe()
            process.standardInput = stdin
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let begin = DispatchTime.now().uptimeNanoseconds
            try process.run()
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw BenchError("coffer \(arguments.first ?? "") failed (\(process.terminationStatus))") }
            return Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e6
        }
        let centre = GeoPoint(latitude: 40.7, longitude: -74.0)!
        let halo = Geohash.box(Geohash.encode(centre, precision: 4))!.halo(radius: 50_000)
        let nearby = locations.filter { location in halo.contains { $0.contains(location.point) } }
        var networksCSV = "id,name,category,default_radius_meters\n"
        for network in networks { networksCSV += "\(network.id),\(network.name),other,\(network.defaultRadius)\n" }
        try Data(networksCSV.utf8).write(to: URL(fileURLWithPath: home + "/networks.csv"))
        var lines = ""
        for location in nearby {
            lines +=
                #"{"type":"Feature","id":"\#(location.id)","properties":{"brand":"x","ref":"\#(location.id)","name":"\#(location.name)"},"geometry":{"type":"Point","coordinates":[\#(location.point.longitude),\#(location.point.latitude)]}}"#
                + "\n"
        }
        try _ = run(["init"])
        try _ = run(["places", "import", home + "/networks.csv"])
        try Data(lines.utf8).write(to: URL(fileURLWithPath: home + "/stores.geojsonseq"))
        try _ = run(["places", "import", "--network", "chain-0", home + "/stores.geojsonseq"])
        for index in 0..<(smoke ? 2 : 20) {
            try _ = run(["add", "card", "Card \(index)", "--symbology", "code128", "--network", "chain-0"], input: "\(100_000 + index)\n")
        }
        var times: [Double] = []
        for _ in 0..<(smoke ? 1 : 21) { times.append(try run(["near", "--at", "40.71,-74.01"])) }
        times.sort()
        row(
            "  coffer near as a process, \(nearby.count) places (≤ 50 ms)",
            String(format: "median %.1f ms   best %.1f ms", percentile(times, 50), times[0]))
    }
}

/// The `percent`th percentile of `sorted` (ascending, not empty), by the nearest-rank rule.
private func percentile(_ sorted: [Double], _ percent: Int) -> Double {
    sorted[min(sorted.count - 1, sorted.count * percent / 100)]
}
