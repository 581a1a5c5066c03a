import ArgumentParser
import CofferPlaces
import CofferPlatform
import CofferServer
import CofferServerStore
import Foundation
import Logging

/// `coffer-server places`: the operator's side of places, straight into the store (no server needs to run).
struct Places: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import and inspect the places (networks and store locations) this server publishes.",
        subcommands: [Import.self, Stats.self])
}

/// A places file that cannot be imported: the file and the rule, never a value from it. Exit code 65 (EX_DATAERR).
struct PlacesCommandError: Error, CustomStringConvertible {
    var description: String
}

extension Places {
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import places files, each in one transaction.",
            discussion: """
                Formats (detected): CardOnCue's networks CSV (id,name,canonical_names,category,is_large_area,\
                default_radius_meters,tags[,wikidata]) and locations CSV (name,address,lat,lon,radius,phone, one \
                network per file: give --network), a GeoJSON FeatureCollection or sequence (osmium, All the Places), \
                Overpass JSON (out center;). GeoJSON and Overpass records are grouped into networks by brand:wikidata \
                unless --network puts them all in one. A bad value refuses the whole file; records that are not \
                stores are skipped and listed.
                """)

        @OptionGroup var common: CommonOptions
        @Option(help: "The network every location of these files belongs to (required for a locations CSV).")
        var network: String?
        @Flag(help: "Remove the network's locations that the file no longer holds.")
        var replace = false
        @Option(help: "The file's format, when detection is not enough: \(PlaceFormat.allCases.map(\.rawValue).joined(separator: ", ")).")
        var format: String?
        @Argument(help: "Files to import, in order (networks before their locations).")
        var files: [String]

        func validate() throws {
            if let format, PlaceFormat(rawValue: format) == nil {
                throw ValidationError("unknown format \(format)")
            }
            if let network, !CofferPlaces.Network.isSlug(network) {
                throw ValidationError("--network must be a network id (a–z, 0–9 and -)")
            }
        }

        func run() async throws {
            let logger = Logger(label: "coffer-server")
            let store = try common.makeStore(logger: logger)
            let format = format.flatMap(PlaceFormat.init(rawValue:))
            let network = network
            let replace = replace
            let files = files
            try await withStoreRunning(store) {
                try await store.migrate()
                for file in files {
                    let bytes: [UInt8]
                    do {
                        bytes = try PrivateFiles.read(file, limit: PlaceLimits.importBytes)
                    } catch {
                        throw PlacesCommandError(description: "\(file): cannot read it (missing, unreadable or over \(PlaceLimits.importBytes >> 20) MiB)")
                    }
                    let batch: PlaceImport
                    do {
                        batch = try PlaceImporter.read(bytes, format: format, network: network, known: try await store.networks())
                    } catch let error as PlacesError {
                        throw PlacesCommandError(description: "\(file): \(error)")
                    }
                    let summary: PlaceImportSummary
                    do {
                        summary = try await store.importPlaces(batch, replacing: replace, now: Date())
                    } catch ServerStoreError.invalidPlaces(let rule) {
                        throw PlacesCommandError(description: "\(file): \(rule)")
                    }
                    try await store.audit(
                        AuditEvent(
                            at: Date(), kind: .placesImported, userID: nil, address: nil,
                            detail: "\(summary.networks) networks, \(summary.locations) locations, \(summary.removed) removed"))
                    var line = "\(file): \(summary.networks) networks, \(summary.locations) locations"
                    if summary.removed > 0 { line += ", \(summary.removed) removed" }
                    if !batch.skipped.isEmpty { line += ", \(batch.skipped.count) skipped" }
                    print(line)
                    for skipped in batch.skipped.prefix(20) {
                        FileHandle.standardError.write(Data("  skipped record \(skipped.record): \(skipped.reason)\n".utf8))
                    }
                    if batch.skipped.count > 20 {
                        FileHandle.standardError.write(Data("  … and \(batch.skipped.count - 20) more\n".utf8))
                    }
                }
            }
        }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "How many networks and locations the server holds.")

        @OptionGroup var common: CommonOptions
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let logger = Logger(label: "coffer-server")
            let store = try common.makeStore(logger: logger)
            let json = json
            try await withStoreRunning(store) {
                try await store.migrate()
                let stats = try await store.placesStats()
                if json {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys]
                    print(String(decoding: try encoder.encode(stats), as: UTF8.self))
                    return
                }
                print("\(stats.networks) networks, \(stats.locations) locations")
                for (network, count) in stats.perNetwork.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }).prefix(50) {
                    print("  \(network)  \(count)")
                }
            }
        }
    }
}

struct OperatorTokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operator-token",
        abstract: "Make a new operator token for the admin endpoints (replaces the previous one); it is printed once.",
        discussion: "Send it as `Authorization: Bearer <token>` to /v1/admin/networks and /v1/admin/import. Restart servers to load it.")

    @OptionGroup var common: CommonOptions

    func run() throws {
        print(try OperatorToken.create(dataDirectory: common.dataDirectory))
    }
}
