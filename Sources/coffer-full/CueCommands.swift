import ArgumentParser
import CofferCLI
import CofferCrypto
import CofferCue
import CofferKit
import CofferReporting
import CofferSync
import Dispatch
import Foundation
import Synchronization

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
            Output.line(
                line.card.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
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
            return try Output.json(
                regions.map {
                    RegionLine(
                        id: $0.id, networkID: $0.networkID, network: $0.networkName, name: $0.name, radiusMeters: $0.radius,
                        priority: $0.priority, distanceMeters: ($0.distance * 10).rounded() / 10)
                })
        }
        for region in regions {
            let distance = PositionArgument.formatted(region.distance)
            Output.line(
                "\(region.priority)  " + String(repeating: " ", count: Swift.max(0, 8 - distance.count)) + distance
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
            if json { line(["event": "refreshed", "fix": .number(fix), "regions": .number(regions.count)]) }
        case .notice(let message):
            if json { line(["event": "notice", "message": .string(message)]) } else { Output.warning(message) }
        case .arrived(let cue, let fix):
            let first = cue.cards[0]
            let place = cue.region.name + (cue.region.networkName.map { " (\($0))" } ?? "")
            if json {
                line([
                    "event": "arrived", "fix": .number(fix), "region": .string(cue.region.id), "place": .string(place),
                    "network": .string(cue.region.networkID ?? ""), "cards": .array(cue.cards.map { .string($0.id) }),
                    "card": .string(first.name),
                ])
            } else {
                let others = cue.cards.count > 1 ? "  (+\(cue.cards.count - 1) more)" : ""
                Output.line("\(place): \(first.name)  coffer show \(first.id.prefix(8))\(others)")
            }
            notifier?.show(title: "You're near \(place)", body: "\(first.name) is ready to show: coffer show \(first.id.prefix(8))")
        }
    }

    static func line(_ object: JSONValue) {
        Output.line(object.text())
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
