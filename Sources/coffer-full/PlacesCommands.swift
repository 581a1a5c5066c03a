import ArgumentParser
import CofferCLI
import CofferCue
import CofferKit
import CofferSync
import Dispatch
import Foundation
import Synchronization

/// `coffer places`: where the vault's places come from (a server's public tiles, or files imported here).
struct PlacesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "places",
        abstract: "Store networks and locations for on-cue cards: from a server's public tiles, or imported here.",
        discussion: """
            A server learns at most the coarse cell (about 40 × 20 km) whose tile is fetched, never a position; \
            `--pack-at` fetches a whole region (about 1,250 × 625 km) once, so that not even the cell is asked for.

            Examples:
              coffer places from https://cards.example.org   # a server's places
              coffer places import stores.geojson             # or no server at all
              coffer places import --network costco costco.csv
              coffer places status
            """,
        subcommands: [PlacesCommand.From.self, PlacesCommand.Import.self, PlacesCommand.Status.self, PlacesCommand.Clear.self])
}

extension PlacesCommand {
    struct From: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "from", abstract: "Use a coffer-server's public places (its directory of networks, and tiles as needed).",
            discussion: """
                No account is needed: the server's places are public. Only the directory of networks is fetched now; \
                tiles follow when a position needs them.

                Examples:
                  coffer places from https://cards.example.org
                  coffer places from https://cards.example.org --pack-at 37.77,-122.42
                """)

        @OptionGroup var vaultOption: VaultOption
        @Argument(help: "Server URL (https://, or http:// on loopback).") var server: String
        @Option(help: ArgumentHelp("Also fetch the wide pack (a geohash-2 cell) holding this position now.", valueName: "lat,lon"))
        var packAt: String?

        func run() async throws {
            let coffer = try vaultOption.open()
            let client: PlacesClient
            do {
                client = try PlacesClient(server: server)
            } catch {
                throw CLIError.usage(error.description)
            }
            let pack = try packAt.map { text in Geohash.encode(try PositionArgument.parse(text), precision: 2) }
            let networks = try await client.networks()
            var packTile: PlaceTile?
            if let pack, case .tile(let found, _) = try await client.tile(pack, kind: .pack, etag: nil) { packTile = found }
            let fetched = (networks: networks, pack: packTile)
            guard let url = URL(string: client.server) else { throw CLIError.usage("the server must be an http:// or https:// URL") }
            try coffer.places.useServer(url, directory: fetched.networks)
            if let tile = fetched.pack { try coffer.places.storeTile(tile, etag: nil, fetchedAt: Date()) }
            if SecretInput.shared.interactive {
                Output.note("Using \(Output.count(fetched.networks.count, "network")) from \(client.server)"
                    + (fetched.pack.map { ", and \(Output.count($0.locationCount, "location")) of the region" } ?? ""))
            }
        }
    }
}

extension PlacesCommand {
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import places files into the vault (CardOnCue CSV, GeoJSON, GeoJSON sequence, Overpass JSON).",
            discussion: """
                Networks first, then their locations: a locations CSV needs --network. Each file is one transaction.

                Examples:
                  coffer places import networks.csv
                  coffer places import --network costco costco.csv
                  coffer places import stores.geojson overpass.json
                """)

        @OptionGroup var vaultOption: VaultOption
        @Option(help: "The network the file's locations belong to.") var network: String?
        @Flag(help: "Remove the network's locations that the file no longer holds.") var replace = false
        @Option(help: "The file's format when detection is not enough: \(PlaceFormat.allCases.map(\.rawValue).joined(separator: ", ")).")
        var format: String?
        @Argument(help: "Files, in order.") var files: [String]

        func validate() throws {
            if let format, PlaceFormat(rawValue: format) == nil { throw ValidationError("unknown format \(format)") }
            if let network, !Network.isSlug(network) { throw ValidationError("--network must be a network id (a–z, 0–9 and -)") }
        }

        func run() throws {
            let coffer = try vaultOption.open()
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw CLIError.noInput("places file \(file) (missing or unreadable)")
                }
                let result: PlaceImport
                do {
                    result = try coffer.places.importPlaces(
                        Array(data), format: format.flatMap(PlaceFormat.init(rawValue:)), network: network, replacing: replace)
                } catch .places(let error) {
                    throw CLIError.badData("\(file): \(error)")
                } catch {
                    throw error
                }
                if SecretInput.shared.interactive || !result.skipped.isEmpty {
                    Output.note("\(file): \(Output.count(result.networks.count, "network")), \(Output.count(result.locations.count, "location"))"
                        + (result.skipped.isEmpty ? "" : ", \(result.skipped.count) skipped"))
                }
                for skipped in result.skipped.prefix(10) { Output.note("  skipped record \(skipped.record): \(skipped.reason)") }
            }
        }
    }
}

extension PlacesCommand {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "What places the vault holds.",
            discussion: """
                Examples:
                  coffer places status
                  coffer places status --json
                """)

        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var output: JSONOption

        struct Status: Encodable {
            var server: String?
            var networks: Int
            var importedLocations: Int
            var cachedTiles: Int
            var cachedLocations: Int
            var cachedBytes: Int

            enum CodingKeys: String, CodingKey {
                case server, networks
                case importedLocations = "imported_locations"
                case cachedTiles = "cached_tiles"
                case cachedLocations = "cached_locations"
                case cachedBytes = "cached_bytes"
            }
        }

        func run() throws {
            let coffer = try vaultOption.open()
            let places = coffer.places
            let tiles = try places.cachedEntries()
            let status = Status(
                server: try places.server()?.absoluteString, networks: try places.networks().count,
                importedLocations: try places.localTile()?.locationCount ?? 0, cachedTiles: tiles.count,
                cachedLocations: tiles.reduce(0) { $0 + $1.locations }, cachedBytes: tiles.reduce(0) { $0 + $1.bytes })
            if output.json { return try Output.json(status) }
            Output.line("Server:    \(status.server ?? "none (places imported here only)")")
            Output.line("Networks:  \(status.networks)")
            Output.line("Imported:  \(Output.count(status.importedLocations, "location"))")
            Output.line("Cached:    \(Output.count(status.cachedTiles, "tile")), \(Output.count(status.cachedLocations, "location"))"
                + (status.cachedTiles > 0 ? String(format: " (%.1f MiB)", Double(status.cachedBytes) / 1_048_576) : ""))
        }
    }
}

extension PlacesCommand {
    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear", abstract: "Forget the server, cached tiles and the cue state (imported places stay unless --all).",
            discussion: """
                Examples:
                  coffer places clear
                """)

        @OptionGroup var vaultOption: VaultOption
        @Flag(help: "Also remove the places imported here.") var all = false

        func run() throws {
            let coffer = try vaultOption.open()
            try coffer.places.clear(importedToo: all)
        }
    }
}

/// `coffer networks`: the directory of networks known here.
struct NetworksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "networks", abstract: "List store networks (for `coffer edit CARD --add-network ID`).",
        discussion: """
            Examples:
              coffer networks --search cost
              coffer networks --category grocery --json
            """)

    @OptionGroup var vaultOption: VaultOption
    @Option(help: "Only networks whose name or other names contain this (any case).") var search: String?
    @Option(help: "Only this category: \(NetworkCategory.allCases.map(\.rawValue).joined(separator: ", ")).") var category: String?
    @OptionGroup var output: JSONOption

    func validate() throws {
        if let category, NetworkCategory(rawValue: category) == nil {
            throw ValidationError("--category must be one of \(NetworkCategory.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    struct NetworkLine: Encodable {
        var id: String
        var name: String
        var category: String
        var wikidata: String?
        var defaultRadiusMeters: Int
        var isLargeArea: Bool

        enum CodingKeys: String, CodingKey {
            case id, name, category, wikidata
            case defaultRadiusMeters = "default_radius_meters"
            case isLargeArea = "is_large_area"
        }
    }

    func run() throws {
        let coffer = try vaultOption.open()
        let networks = try coffer.places.networks()
        var seen: Set<String> = []
        let chosen = networks.filter { network in
            seen.insert(network.id).inserted && (category == nil || network.category.rawValue == category)
                && (search.map { network.matches(search: $0) } ?? true)
        }.sorted { $0.id < $1.id }
        if output.json {
            return try Output.json(chosen.map {
                NetworkLine(id: $0.id, name: $0.name, category: $0.category.rawValue, wikidata: $0.wikidata,
                            defaultRadiusMeters: $0.defaultRadius, isLargeArea: $0.isLargeArea)
            })
        }
        if chosen.isEmpty, networks.isEmpty {
            Output.note("No networks yet: run `coffer places from URL` or `coffer places import FILE`.")
            return
        }
        let width = chosen.map(\.id.count).max() ?? 0
        for network in chosen {
            Output.line(network.id.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + network.name + "  "
                + Output.styled(network.category.rawValue, .dim))
        }
    }
}

/// `--at LAT,LON`, or `-` to read it from standard input (a position is private: a command line is visible to other
/// users of the machine).
enum PositionArgument {
    static func parse(_ text: String) throws -> GeoPoint {
        var value = text
        if text == "-" { value = try SecretInput.shared.remainingText("position").trimmingCharacters(in: .whitespacesAndNewlines) }
        guard let point = GeoPoint(parsing: value) else {
            throw CLIError.usage("the position must be LAT,LON in decimal degrees (latitude within ±90, longitude within ±180)")
        }
        return point
    }

    /// A distance such as `800m`, `5km`, `2.5` (kilometres).
    static func distance(_ text: String) throws -> Double {
        let lower = text.lowercased().trimmingCharacters(in: .whitespaces)
        let metres: Double?
        if lower.hasSuffix("km") { metres = Double(lower.dropLast(2)).map { $0 * 1_000 } }
        else if lower.hasSuffix("m") { metres = Double(lower.dropLast(1)) }
        else { metres = Double(lower).map { $0 * 1_000 } }
        guard let metres, metres.isFinite, metres > 0, metres <= 100_000 else {
            throw CLIError.usage("--within must be a distance up to 100 km, such as 800m or 5km")
        }
        return metres
    }

    static func formatted(_ metres: Double) -> String {
        metres < 1_000 ? "\(Int(metres.rounded())) m" : String(format: "%.1f km", metres / 1_000)
    }
}

/// Fetches the tile for `position` when a server is set and it is missing or old, and says so when nothing covers it.
func preparePlaces(_ coffer: Coffer, at position: GeoPoint) async throws {
    let outcome = try await PlacesResolver(coffer: coffer).prepare(position)
    switch outcome {
    case .ready:
        break
    case .staleTile(let why):
        Output.warning("using cached places: \(why)")
    case .noPlaces:
        throw CLIError.other(
            "no places cover this position", status: .notFound,
            hint: "run `coffer places from URL` (a server's public places) or `coffer places import FILE`")
    case .unreachable(let why):
        throw CLIError.other("no places for this area yet: \(why)", status: .unavailable, hint: "try again when online")
    }
}

struct NearCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "near", abstract: "Valid cards with a store near a position, nearest first.",
        discussion: """
            Examples:
              coffer near --at 37.7749,-122.4194
              coffer near --at 37.7749,-122.4194 --within 5km --json
            """)

    @OptionGroup var vaultOption: VaultOption
    @Option(help: ArgumentHelp("The position, or - to read it from standard input.", valueName: "lat,lon")) var at: String
    @Option(help: "How far to look, up to 100 km.") var within = "5km"
    @OptionGroup var output: JSONOption

    struct NearLine: Encodable {
        var cardID: String
        var card: String
        var storeID: String
        var store: String
        var networkID: String?
        var network: String?
        var address: String?
        var distanceMeters: Double

        enum CodingKeys: String, CodingKey {
            case card, store, network, address
            case cardID = "card_id"
            case storeID = "store_id"
            case networkID = "network_id"
            case distanceMeters = "distance_meters"
        }
    }

    func run() async throws {
        let position = try PositionArgument.parse(at)
        let radius = try PositionArgument.distance(within)
        let coffer = try vaultOption.open()
        try await preparePlaces(coffer, at: position)
        let near = try coffer.places.near(position, cards: try coffer.places.cueCards(at: Date()), radius: radius)
        let lines = near.map {
            NearLine(
                cardID: $0.card.id, card: $0.card.name, storeID: $0.region.id, store: $0.region.name, networkID: $0.region.networkID,
                network: $0.region.networkName, address: $0.region.address, distanceMeters: ($0.region.distance * 10).rounded() / 10)
        }
        if output.json { return try Output.json(lines) }
        if lines.isEmpty {
            Output.note("No valid card has a store within \(PositionArgument.formatted(radius)).")
            return
        }
        let width = lines.map(\.card.count).max() ?? 0
        for line in lines {
            let distance = PositionArgument.formatted(line.distanceMeters)
            Output.line(line.card.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                + String(repeating: " ", count: max(0, 8 - distance.count)) + distance + "  " + line.store
                + (line.network.map { "  " + Output.styled($0, .dim) } ?? ""))
        }
    }
}

struct RegionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "regions",
        abstract: "The regions to monitor at a position: at most 20 within 50 km, your cards' networks first.",
        discussion: """
            Examples:
              coffer regions --at 37.7749,-122.4194
              coffer regions --at 37.7749,-122.4194 --max 100   # Android's limit
            """)

    @OptionGroup var vaultOption: VaultOption
    @Option(help: ArgumentHelp("The position, or - to read it from standard input.", valueName: "lat,lon")) var at: String
    @Option(help: "How many regions (iOS allows 20, Android 100).") var max = RegionRules.defaultLimit
    @OptionGroup var output: JSONOption

    func validate() throws {
        guard (1...RegionRules.androidLimit).contains(max) else { throw ValidationError("--max must be 1 to \(RegionRules.androidLimit)") }
    }

    struct RegionLine: Encodable {
        var id: String
        var networkID: String?
        var network: String?
        var name: String
        var radiusMeters: Int
        var priority: Int
        var distanceMeters: Double

        enum CodingKeys: String, CodingKey {
            case id, network, name, priority
            case networkID = "network_id"
            case radiusMeters = "radius_meters"
            case distanceMeters = "distance_meters"
        }
    }

    func run() async throws {
        let position = try PositionArgument.parse(at)
        let coffer = try vaultOption.open()
        try await preparePlaces(coffer, at: position)
        let regions = try coffer.places.regions(at: position, cards: try coffer.places.cueCards(at: Date()), limit: max)
        if output.json {
            return try Output.json(regions.map {
                RegionLine(id: $0.id, networkID: $0.networkID, network: $0.networkName, name: $0.name, radiusMeters: $0.radius,
                           priority: $0.priority, distanceMeters: ($0.distance * 10).rounded() / 10)
            })
        }
        for region in regions {
            let distance = PositionArgument.formatted(region.distance)
            Output.line("\(region.priority)  " + String(repeating: " ", count: Swift.max(0, 8 - distance.count)) + distance
                + "  r=\(region.radius) m  " + region.name + (region.networkName.map { "  " + Output.styled($0, .dim) } ?? ""))
        }
    }
}

struct CueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cue",
        abstract: "Follow your position and show the right card when you reach one of its stores.",
        discussion: """
            Positions come from gpsd (--gpsd, its JSON protocol on TCP 2947) or from a file or standard input of \
            NMEA sentences or "lat,lon" lines (--follow). The monitored regions are chosen again after moving more \
            than max(500 m, the largest radius) or after 6 hours; each arrival is announced once per visit, as a \
            desktop notification when a session bus answers, and on standard output. Ctrl-C stops.

            Examples:
              coffer cue --gpsd
              coffer cue --gpsd 192.168.1.20:2947
              coffer cue --follow drive.nmea --no-notify --json
            """)

    @OptionGroup var vaultOption: VaultOption
    @Option(name: .customLong("gpsd"), help: ArgumentHelp("Read positions from gpsd (default 127.0.0.1:2947).", valueName: "host:port"))
    var gpsd: String?
    @Flag(name: .customLong("gpsd-default"), help: .hidden) var gpsdDefault = false
    @Option(help: ArgumentHelp("Read positions from a file of NMEA or lat,lon lines (- for standard input).", valueName: "file"))
    var follow: String?
    @Option(help: "How many regions to monitor (iOS allows 20, Android 100).") var max = RegionRules.defaultLimit
    @Flag(help: "Print only; no desktop notification.") var noNotify = false
    @Flag(help: "Print one JSON object per event.") var json = false

    static func normalizedArguments(_ arguments: [String]) -> [String] {
        // `--gpsd` alone means the default address; ArgumentParser options need a value, so it is rewritten.
        var result: [String] = []
        for (index, argument) in arguments.enumerated() {
            let next = index + 1 < arguments.count ? arguments[index + 1] : nil
            if argument == "--gpsd", next == nil || next!.hasPrefix("-") { result.append("--gpsd-default") } else { result.append(argument) }
        }
        return result
    }

    func validate() throws {
        let sources = [gpsd != nil || gpsdDefault, follow != nil].filter { $0 }.count
        guard sources == 1 else {
            throw ValidationError("give one position source: --gpsd [HOST:PORT] or --follow FILE|-")
        }
        if let gpsd, GPSDSource(address: gpsd) == nil { throw ValidationError("--gpsd must be HOST:PORT") }
        guard (1...RegionRules.androidLimit).contains(max) else { throw ValidationError("--max must be 1 to \(RegionRules.androidLimit)") }
    }

    func run() async throws {
        let coffer = try vaultOption.open()
        let fixes: AsyncThrowingStream<PositionFix, any Error>
        let sourceName: String
        if let follow {
            let source = LineSource(path: follow == "-" ? nil : follow)
            fixes = source.fixes()
            sourceName = source.description
        } else {
            let source = gpsd.flatMap(GPSDSource.init(address:)) ?? GPSDSource()
            fixes = source.fixes()
            sourceName = source.description
        }
        let notifier = noNotify ? nil : DesktopNotifier()
        let json = json
        let runner = CueRunner(coffer: coffer, resolver: PlacesResolver(coffer: coffer), limit: max)
        let task = Task {
            try await runner.run(fixes) { event in CueOutput.report(event, notifier: notifier, json: json) }
        }
        let stop = Signals.onTermination { task.cancel() }
        defer { stop.cancel() }
        do {
            try await task.value
        } catch is CancellationError {
            return
        } catch let error as PositionSourceError {
            throw CLIError.other(
                "\(error)", status: .unavailable,
                hint: follow == nil ? "is gpsd running? (`gpspipe -w` shows its reports); \(sourceName)" : nil)
        }
    }
}

/// How `coffer cue` reports: a line per arrival (and notice) on standard output, or JSON lines; arrivals also as a
/// desktop notification.
enum CueOutput {
    static func report(_ event: CueEvent, notifier: DesktopNotifier?, json: Bool) {
        switch event {
        case .refreshed(let regions, let fix):
            if json { line(["event": "refreshed", "fix": fix, "regions": regions.count]) }
        case .notice(let message):
            if json { line(["event": "notice", "message": message]) } else { Output.warning(message) }
        case .arrived(let cue, let fix):
            let first = cue.cards[0]
            let place = cue.region.name + (cue.region.networkName.map { " (\($0))" } ?? "")
            if json {
                line(["event": "arrived", "fix": fix, "region": cue.region.id, "place": place, "network": cue.region.networkID ?? "",
                      "cards": cue.cards.map(\.id), "card": first.name])
            } else {
                let others = cue.cards.count > 1 ? "  (+\(cue.cards.count - 1) more)" : ""
                Output.line("\(place): \(first.name)  coffer show \(first.id.prefix(8))\(others)")
            }
            notifier?.show(title: "You're near \(place)", body: "\(first.name) is ready to show: coffer show \(first.id.prefix(8))")
        }
    }

    static func line(_ object: [String: any Sendable]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        Output.line(String(decoding: data, as: UTF8.self))
    }
}

/// SIGINT and SIGTERM as a callback, so a long-running command stops cleanly.
enum Signals {
    static func onTermination(_ handler: @escaping @Sendable () -> Void) -> any DispatchSourceSignal {
        let queue = DispatchQueue(label: "coffer.signals")
        var sources: [any DispatchSourceSignal] = []
        // A parent may have left them blocked (service managers, some test harnesses): they must reach us.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler(handler: handler)
            source.resume()
            sources.append(source)
        }
        // One handle cancels both: the second is kept alive by the first's cancel handler.
        let second = sources[1]
        sources[0].setCancelHandler { second.cancel() }
        return sources[0]
    }
}
