import CofferKit
import CofferPlaces
import CofferSync
import CofferSyncAPI
import Foundation

/// Makes sure the vault holds places for a position: the vault's own imports, or the tile of the position's cell
/// from the server set with `coffer places from` (fetched when missing or a day old, with its ETag; the cached copy
/// kept when the server cannot be reached). The server learns the geohash-4 cell, nothing finer.
public struct PlacesResolver: Sendable {
    public let coffer: Coffer
    public let clock: @Sendable () -> Date

    public init(coffer: Coffer, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.coffer = coffer
        self.clock = clock
    }

    /// What preparing found, for the user.
    public enum Outcome: Sendable, Equatable {
        /// A current tile or the vault's own places cover the position.
        case ready
        /// The server could not be reached; a cached tile older than a day is used.
        case staleTile(String)
        /// No places cover the position: neither imported nor from a server.
        case noPlaces
        /// The server could not be reached and nothing is cached for this cell.
        case unreachable(String)
    }

    public func prepare(_ position: GeoPoint) async throws -> Outcome {
        let places = coffer.places
        let cached = try places.coveringTile(position)
        let hasLocal = (try places.localTile()?.locationCount ?? 0) > 0
        let now = clock()
        if let cached, now.timeIntervalSince(cached.fetchedAt) < VaultPlaces.tileFreshness, now >= cached.fetchedAt {
            return .ready
        }
        guard let server = try places.server() else { return hasLocal || cached != nil ? .ready : .noPlaces }
        let cell = cached?.tile.cell ?? Geohash.encode(position, precision: PlacesMedia.tilePrecision)
        let kind: PlaceTile.Kind = cell.count == PlacesMedia.packPrecision ? .pack : .cell
        let answer: PlacesClient.TileAnswer
        do throws(SyncClientError) {
            answer = try await PlacesClient(server: server.absoluteString).tile(cell, kind: kind, etag: cached?.etag)
        } catch {
            if cached != nil { return .staleTile(error.description) }
            return hasLocal ? .ready : .unreachable(error.description)
        }
        switch answer {
        case .notModified:
            if let cached { try places.storeTile(cached.tile, etag: cached.etag, fetchedAt: now) }
        case .tile(let tile, let etag):
            try places.storeTile(tile, etag: etag, fetchedAt: now)
        }
        return .ready
    }
}

/// What `coffer cue` reports as it follows positions.
public enum CueEvent: Sendable {
    /// The monitored set was chosen again at the `fix`-th position (1-based): first fix, moved far enough, or 6 hours.
    case refreshed([MonitoredRegion], fix: Int)
    /// The user arrived, at the `fix`-th position, at a store or place with cards: the one to show first at the head.
    case arrived(Cue, fix: Int)
    /// Something the user should know (no places here, server unreachable); said once per cell.
    case notice(String)
}

/// Follows positions and surfaces cards by the region rules: refresh the monitored set when stale, report each
/// entry into a region once per visit, and only for regions with valid cards. The refresh point and the visits in
/// progress are kept sealed in the vault, so a restart neither forgets nor repeats.
public final class CueRunner: Sendable {
    public let coffer: Coffer
    public let resolver: PlacesResolver
    public let limit: Int

    public init(coffer: Coffer, resolver: PlacesResolver, limit: Int = RegionRules.defaultLimit) {
        self.coffer = coffer
        self.resolver = resolver
        self.limit = limit
    }

    public func run(
        _ fixes: AsyncThrowingStream<PositionFix, any Error>, onEvent: @Sendable (CueEvent) -> Void
    ) async throws {
        let places = coffer.places
        var state = try places.cueState()
        var tracker = VisitTracker(visiting: state.visiting)
        var monitored: [MonitoredRegion] = []
        var cards: [CueCard] = []
        var noticed: Set<String> = []
        var count = 0
        var chosen = false
        var sourceTime = false
        var lastTime: Date?
        for try await fix in fixes {
            count += 1
            try Task.checkCancellation()
            // One timeline: the source's clock when it gives one (a replayed log keeps its own hours), and a fix
            // without a time (NMEA GGA) continues it rather than jumping to the wall clock. Fixes before the source's
            // first time (gpsd's first report) use the wall clock; when the source's clock starts, the 6-hour window
            // moves onto it instead of reading the gap between the two clocks as time passed.
            let now: Date
            if let time = fix.time {
                if !sourceTime, state.refresh != nil, chosen { state.refresh?.at = time }
                sourceTime = true
                now = time
            } else {
                now = lastTime ?? resolver.clock()
            }
            lastTime = now
            // The first fix always chooses; after it, only the rules do (an area without places is not asked for
            // again on every fix).
            if !chosen || RegionRules.needsRefresh(state.refresh, position: fix.point, now: now) {
                chosen = true
                let outcome = try await resolver.prepare(fix.point)
                let cell = Geohash.encode(fix.point, precision: PlacesMedia.tilePrecision)
                switch outcome {
                case .ready:
                    break
                case .staleTile(let why):
                    if noticed.insert("stale:" + cell).inserted { onEvent(.notice("using cached places: \(why)")) }
                case .noPlaces:
                    if noticed.insert("none:" + cell).inserted {
                        onEvent(.notice("no places cover this area: run `coffer places from URL` or `coffer places import FILE`"))
                    }
                case .unreachable(let why):
                    if noticed.insert("unreachable:" + cell).inserted { onEvent(.notice("no places for this area yet: \(why)")) }
                }
                cards = try places.cueCards(at: now)
                monitored = try places.regions(at: fix.point, cards: cards, limit: limit)
                state.refresh = RefreshPoint(point: fix.point, at: now, largestRadius: monitored.map(\.radius).max() ?? 0)
                try places.setCueState(state)
                onEvent(.refreshed(monitored, fix: count))
            }
            let entered = tracker.move(to: fix.point, monitored: monitored)
            for region in entered {
                let matching = CueRules.cards(for: region, among: cards)
                if !matching.isEmpty { onEvent(.arrived(Cue(region: region, cards: matching), fix: count)) }
            }
            let visiting = tracker.visiting.values.sorted { $0.id < $1.id }
            if visiting != state.visiting {
                state.visiting = visiting
                try places.setCueState(state)
            }
        }
    }
}
