import Foundation

/// One region to monitor: a location (or a card's own place) with the radius to watch, its priority and distance
/// from the position it was chosen for.
public struct MonitoredRegion: Sendable, Hashable, Codable {
    public var id: String
    /// The location's network; `nil` for a card's own place (a Wallet pass location).
    public var networkID: String?
    public var networkName: String?
    public var name: String
    public var address: String?
    public var point: GeoPoint
    public var radius: Int
    /// 1 for the networks of the user's valid cards and their own places, 2 for the rest.
    public var priority: Int
    public var distance: Double

    public init(
        id: String, networkID: String?, networkName: String?, name: String, address: String?, point: GeoPoint,
        radius: Int, priority: Int, distance: Double
    ) {
        self.id = id
        self.networkID = networkID
        self.networkName = networkName
        self.name = name
        self.address = address
        self.point = point
        self.radius = radius
        self.priority = priority
        self.distance = distance
    }
}

/// CardOnCue's region rules, exactly (reference: on-cue.md §1), with its AND-for-OR refresh bug left out.
public enum RegionRules {
    /// iOS monitors at most 20 regions per app.
    public static let defaultLimit = 20
    /// Android allows 100 geofences per app.
    public static let androidLimit = 100
    /// Only places within this many metres are candidates.
    public static let searchRadius = 50_000.0
    /// Refresh after moving more than the larger of this and the largest monitored radius…
    public static let refreshDistance = 500.0
    /// … or after this many seconds.
    public static let refreshInterval: TimeInterval = 21_600

    /// Whether the monitored set chosen at `last` is stale at `position` and `now`: never chosen, moved more than
    /// `max(500 m, largest monitored radius)` from where it was chosen, or chosen 6 hours ago or more.
    public static func needsRefresh(_ last: RefreshPoint?, position: GeoPoint, now: Date) -> Bool {
        guard let last else { return true }
        if now.timeIntervalSince(last.at) >= refreshInterval || now < last.at { return true }
        return Haversine.distance(last.point, position) > max(refreshDistance, Double(last.largestRadius))
    }
}

/// Where and when the monitored set was last chosen (kept sealed in the vault, never in the clear).
public struct RefreshPoint: Sendable, Hashable, Codable {
    public var point: GeoPoint
    public var at: Date
    public var largestRadius: Int

    public init(point: GeoPoint, at: Date, largestRadius: Int) {
        self.point = point
        self.at = at
        self.largestRadius = largestRadius
    }
}

/// Chooses the monitored set in one pass over the candidates: those within `radius` of `position`, ordered by
/// priority, then distance, then id (UTF-8 byte order), the first `limit` kept. Candidates outside the bounding
/// boxes of the search circle are dismissed before any trigonometry, so a pass over a 100,000-location tile costs
/// little more than reading it.
public struct RegionSelector {
    public struct Pick: Sendable, Equatable {
        public var index: Int
        public var priority: Int
        public var distance: Double
    }

    public let position: GeoPoint
    public let radius: Double
    public let limit: Int
    private let boxes: [GeoBox]
    private let id: (Int) -> [UInt8]
    /// The best picks so far, in order; never longer than `limit`.
    public private(set) var picks: [Pick] = []

    /// `id` gives a candidate's id by index, needed only to break exact ties.
    public init(position: GeoPoint, radius: Double = RegionRules.searchRadius, limit: Int, id: @escaping (Int) -> [UInt8]) {
        self.position = position
        self.radius = radius
        self.limit = max(0, limit)
        self.boxes = GeoBox.around(position, radius: radius)
        self.id = id
        picks.reserveCapacity(self.limit + 1)
    }

    /// Offers candidate `index` at (`latitude`, `longitude`) with `priority` (1 or 2).
    @inline(__always)
    public mutating func consider(index: Int, latitude: Double, longitude: Double, priority: Int) {
        guard limit > 0 else { return }
        if picks.count == limit, let worst = picks.last, priority > worst.priority { return }
        guard inBoxes(latitude: latitude, longitude: longitude) else { return }
        let distance = Haversine.distance(
            latitude1: position.latitude, longitude1: position.longitude, latitude2: latitude, longitude2: longitude)
        place(Pick(index: index, priority: priority, distance: distance))
    }

    /// The same, for a caller that has already computed `distance` as `Haversine.distance(position, candidate)`: the
    /// choice is the one `consider(index:latitude:longitude:priority:)` makes.
    @inline(__always)
    public mutating func consider(index: Int, latitude: Double, longitude: Double, priority: Int, distance: Double) {
        guard limit > 0 else { return }
        if picks.count == limit, let worst = picks.last, priority > worst.priority { return }
        guard inBoxes(latitude: latitude, longitude: longitude) else { return }
        place(Pick(index: index, priority: priority, distance: distance))
    }

    @inline(__always)
    private func inBoxes(latitude: Double, longitude: Double) -> Bool {
        for box in boxes where box.contains(latitude: latitude, longitude: longitude) { return true }
        return false
    }

    @inline(__always)
    private mutating func place(_ pick: Pick) {
        guard pick.distance <= radius else { return }
        if picks.count == limit, let worst = picks.last, !precedes(pick, worst) { return }
        var slot = picks.count
        while slot > 0 && precedes(pick, picks[slot - 1]) { slot -= 1 }
        picks.insert(pick, at: slot)
        if picks.count > limit { picks.removeLast() }
    }

    private func precedes(_ a: Pick, _ b: Pick) -> Bool {
        if a.priority != b.priority { return a.priority < b.priority }
        if a.distance != b.distance { return a.distance < b.distance }
        return id(a.index).lexicographicallyPrecedes(id(b.index))
    }
}

/// A set of places to choose regions from: locations with their networks. Built from an import, a store's answer
/// or a tile; the same selection runs over each.
public struct PlaceSet: Sendable {
    public private(set) var networks: [String: Network]
    public private(set) var locations: [Location]

    public init(networks: [Network], locations: [Location]) {
        var byID: [String: Network] = [:]
        for network in networks { byID[network.id] = network }
        self.networks = byID
        self.locations = locations
    }

    /// The monitored set at `position`: `userNetworks` (the networks of valid cards) and `pinned` places (cards' own
    /// places) first, then the rest, by distance then id, at most `limit`, within `radius`.
    public func regions(
        at position: GeoPoint, userNetworks: Set<String>, pinned: [Location] = [],
        radius: Double = RegionRules.searchRadius, limit: Int = RegionRules.defaultLimit
    ) -> [MonitoredRegion] {
        let locations = self.locations
        func location(_ index: Int) -> Location {
            index < pinned.count ? pinned[index] : locations[index - pinned.count]
        }
        var selector = RegionSelector(position: position, radius: radius, limit: limit) { Array(location($0).id.utf8) }
        for (index, place) in pinned.enumerated() {
            selector.consider(index: index, latitude: place.point.latitude, longitude: place.point.longitude, priority: 1)
        }
        for (offset, place) in locations.enumerated() {
            selector.consider(
                index: pinned.count + offset, latitude: place.point.latitude, longitude: place.point.longitude,
                priority: userNetworks.contains(place.networkID) ? 1 : 2)
        }
        return selector.picks.map { pick in
            let location = location(pick.index)
            let isPinned = pick.index < pinned.count
            let network = isPinned ? nil : networks[location.networkID]
            return MonitoredRegion(
                id: location.id, networkID: isPinned ? nil : location.networkID, networkName: network?.name,
                name: location.name, address: location.address, point: location.point,
                radius: location.effectiveRadius(in: network), priority: pick.priority, distance: pick.distance)
        }
    }
}

extension MonitoredRegion {
    /// Merges monitored sets chosen from several sources (a cached tile, the vault's own places, cards' places) into
    /// one, by the same order, each id once, at most `limit`.
    public static func merge(_ sets: [[MonitoredRegion]], limit: Int) -> [MonitoredRegion] {
        var seen: Set<String> = []
        let ordered = sets.joined().sorted { a, b in
            if a.priority != b.priority { return a.priority < b.priority }
            if a.distance != b.distance { return a.distance < b.distance }
            return a.id.utf8.lexicographicallyPrecedes(b.id.utf8)
        }
        return Array(ordered.filter { seen.insert($0.id).inserted }.prefix(limit))
    }
}
