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
    /// The nearest priority-1 candidate of each group offered with one (a network, or a card's own places).
    private var nearestOfGroup: [Int: Pick] = [:]

    /// `id` gives a candidate's id by index, needed only to break exact ties.
    public init(position: GeoPoint, radius: Double = RegionRules.searchRadius, limit: Int, id: @escaping (Int) -> [UInt8]) {
        self.position = position
        self.radius = radius
        self.limit = max(0, limit)
        self.boxes = GeoBox.around(position, radius: radius)
        self.id = id
        picks.reserveCapacity(self.limit + 1)
    }

    /// Offers candidate `index` at (`latitude`, `longitude`) with `priority` (1 or 2). A priority-1 candidate offered
    /// with a `group` can be kept by `chosen` as its group's nearest, whatever the order would keep.
    @inline(__always)
    public mutating func consider(index: Int, latitude: Double, longitude: Double, priority: Int, group: Int? = nil) {
        guard limit > 0 else { return }
        if picks.count == limit, let worst = picks.last, priority > worst.priority { return }
        guard inBoxes(latitude: latitude, longitude: longitude) else { return }
        let distance = Haversine.distance(
            latitude1: position.latitude, longitude1: position.longitude, latitude2: latitude, longitude2: longitude)
        let pick = Pick(index: index, priority: priority, distance: distance)
        if let group, priority == 1 { keepIfNearest(pick, of: group) }
        place(pick)
    }

    /// The picks with the nearest candidate of every group kept: those nearest ones first (the nearest `limit` of
    /// them when there are more groups than that), the rest filled in the usual order, all in the usual order.
    /// Without groups, `picks`.
    public var chosen: [Pick] {
        guard !nearestOfGroup.isEmpty else { return picks }
        let kept = nearestOfGroup.values.sorted { a, b in
            a.distance != b.distance ? a.distance < b.distance : id(a.index).lexicographicallyPrecedes(id(b.index))
        }.prefix(limit)
        var taken = Set(kept.map(\.index))
        var result = Array(kept)
        for pick in picks where result.count < limit && taken.insert(pick.index).inserted { result.append(pick) }
        return result.sorted(by: precedes)
    }

    private mutating func keepIfNearest(_ pick: Pick, of group: Int) {
        guard pick.distance <= radius else { return }
        if let nearest = nearestOfGroup[group] {
            let nearer =
                pick.distance != nearest.distance
                ? pick.distance < nearest.distance : id(pick.index).lexicographicallyPrecedes(id(nearest.index))
            guard nearer else { return }
        }
        nearestOfGroup[group] = pick
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
    /// places) first, then the rest, by distance then id, at most `limit`, within `radius`. With
    /// `nearestOfEachNetwork`, the nearest store of every user network and the nearest own place of every card are
    /// kept even where more of one network's stores are nearer (`RegionSelector.chosen`).
    public func regions(
        at position: GeoPoint, userNetworks: Set<String>, pinned: [Location] = [],
        radius: Double = RegionRules.searchRadius, limit: Int = RegionRules.defaultLimit, nearestOfEachNetwork: Bool = false
    ) -> [MonitoredRegion] {
        let locations = self.locations
        func location(_ index: Int) -> Location {
            index < pinned.count ? pinned[index] : locations[index - pinned.count]
        }
        var groups: [String: Int] = [:]
        func group(_ key: String) -> Int? {
            guard nearestOfEachNetwork else { return nil }
            if let number = groups[key] { return number }
            groups[key] = groups.count
            return groups.count - 1
        }
        var selector = RegionSelector(position: position, radius: radius, limit: limit) { Array(location($0).id.utf8) }
        for (index, place) in pinned.enumerated() {
            selector.consider(
                index: index, latitude: place.point.latitude, longitude: place.point.longitude, priority: 1,
                group: group(MonitoredRegion.group(id: place.id, networkID: nil)))
        }
        for (offset, place) in locations.enumerated() {
            let isUsers = userNetworks.contains(place.networkID)
            selector.consider(
                index: pinned.count + offset, latitude: place.point.latitude, longitude: place.point.longitude,
                priority: isUsers ? 1 : 2, group: isUsers ? group(MonitoredRegion.group(id: place.id, networkID: place.networkID)) : nil)
        }
        return selector.chosen.map { pick in
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
    /// What a region is kept as the nearest of, with `nearestOfEachNetwork`: its network, or for a card's own place
    /// (`CueCard.placeID`, "card:ID:N") the card.
    static func group(id: String, networkID: String?) -> String {
        if let networkID { return "network:" + networkID }
        return id.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).prefix(2).joined(separator: ":")
    }

    /// Merges monitored sets chosen from several sources (a cached tile, the vault's own places, cards' places) into
    /// one, by the same order, each id once, at most `limit`. With `nearestOfEachNetwork` (each set chosen so too),
    /// the nearest priority-1 region of each network and of each card's own places is kept first, as
    /// `RegionSelector.chosen` keeps it within one source.
    public static func merge(_ sets: [[MonitoredRegion]], limit: Int, nearestOfEachNetwork: Bool = false) -> [MonitoredRegion] {
        var seen: Set<String> = []
        let ordered = sets.joined().sorted(by: precedes).filter { seen.insert($0.id).inserted }
        guard nearestOfEachNetwork else { return Array(ordered.prefix(limit)) }
        // Priority 1 comes first in `ordered`, nearest first: a group's first region there is its nearest.
        var nearest: [String: MonitoredRegion] = [:]
        for region in ordered where region.priority == 1 {
            let key = group(id: region.id, networkID: region.networkID)
            if nearest[key] == nil { nearest[key] = region }
        }
        let kept = nearest.values.sorted { nearer($0, than: $1) }.prefix(limit)
        var taken = Set(kept.map(\.id))
        var result = Array(kept)
        for region in ordered where result.count < limit && taken.insert(region.id).inserted { result.append(region) }
        return result.sorted(by: precedes)
    }

    private static func precedes(_ a: MonitoredRegion, _ b: MonitoredRegion) -> Bool {
        if a.priority != b.priority { return a.priority < b.priority }
        return nearer(a, than: b)
    }

    private static func nearer(_ a: MonitoredRegion, than b: MonitoredRegion) -> Bool {
        a.distance != b.distance ? a.distance < b.distance : a.id.utf8.lexicographicallyPrecedes(b.id.utf8)
    }
}
