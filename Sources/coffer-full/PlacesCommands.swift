import ArgumentParser
import CofferCLI
import CofferCue
import CofferKit
import CofferReporting
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
                Output.note(
                    "Using \(Output.count(fetched.networks.count, "network")) from \(client.server)"
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
                } catch let error as PlacesError {
                    throw CLIError.badData("\(file): \(error)")
                }
                if SecretInput.shared.interactive || !result.skipped.isEmpty {
                    Output.note(
                        "\(file): \(Output.count(result.networks.count, "network")), \(Output.count(result.locations.count, "location"))"
                            + (result.skipped.isEmpty ? "" : ", \(result.skipped.count) skipped"))
                }
                for skipped in result.skipped.prefix(10) { Output.note("  skipped record \(skipped.record): \(skipped.reason)") }
            }
        }
    }
}

extension PlacesCommand {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "What places the vault holds.",
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
            Output.line(
                "Cached:    \(Output.count(status.cachedTiles, "tile")), \(Output.count(status.cachedLocations, "location"))"
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
            return try Output.json(
                chosen.map {
                    NetworkLine(
                        id: $0.id, name: $0.name, category: $0.category.rawValue, wikidata: $0.wikidata,
                        defaultRadiusMeters: $0.defaultRadius, isLargeArea: $0.isLargeArea)
                })
        }
        if chosen.isEmpty, networks.isEmpty {
            Output.note("No networks yet: run `coffer places from URL` or `coffer places import FILE`.")
            return
        }
        let width = chosen.map(\.id.count).max() ?? 0
        for network in chosen {
            Output.line(
                network.id.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + network.name + "  "
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
        if lower.hasSuffix("km") {
            metres = Double(lower.dropLast(2)).map { $0 * 1_000 }
        } else if lower.hasSuffix("m") {
            metres = Double(lower.dropLast(1))
        } else {
            metres = Double(lower).map { $0 * 1_000 }
        }
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
