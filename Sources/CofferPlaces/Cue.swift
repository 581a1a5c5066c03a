import Foundation

/// What the surfacing rules need of a card, taken from the vault by the caller at the time of the check.
public struct CueCard: Sendable, Hashable {
    public var id: String
    public var name: String
    public var networkIDs: [String]
    /// The card's own places (Wallet pass locations), each a region of its own.
    public var places: [GeoPoint]
    /// Networks for which the user chose this card first.
    public var preferredFor: Set<String>
    public var lastUsed: Date?
    /// Not expired, not before its start, not a used one-time pass, not archived: the caller decides at `now`.
    public var isValid: Bool

    public init(
        id: String, name: String, networkIDs: [String], places: [GeoPoint] = [], preferredFor: Set<String> = [],
        lastUsed: Date? = nil, isValid: Bool
    ) {
        self.id = id
        self.name = name
        self.networkIDs = networkIDs
        self.places = places
        self.preferredFor = preferredFor
        self.lastUsed = lastUsed
        self.isValid = isValid
    }

    /// The region id of this card's `index`-th own place.
    public static func placeID(card: String, index: Int) -> String { "card:\(card):\(index + 1)" }
}

/// What to show on arriving somewhere: the region entered and the cards for it, the one to show first at the head.
public struct Cue: Sendable, Hashable {
    public var region: MonitoredRegion
    public var cards: [CueCard]

    public init(region: MonitoredRegion, cards: [CueCard]) {
        self.region = region
        self.cards = cards
    }
}

/// The surfacing rules: which cards a region shows and in which order, which regions the user's cards make priority
/// 1, and when a visit begins and ends.
public enum CueRules {
    /// Metres past a region's radius before a visit counts as over, so that a fix wandering around the edge of the
    /// circle does not surface the card again.
    public static let exitMargin = 50.0
    /// The radius of a card's own place (Wallet's default for store cards).
    public static let cardPlaceRadius = 100

    /// The networks of the valid cards: priority 1 when choosing regions.
    public static func userNetworks(_ cards: [CueCard]) -> Set<String> {
        Set(cards.filter(\.isValid).flatMap(\.networkIDs))
    }

    /// The valid cards' own places, as pinned locations (priority 1).
    public static func pinnedPlaces(_ cards: [CueCard]) -> [Location] {
        cards.filter(\.isValid).flatMap { card in
            card.places.enumerated().map { index, point in
                Location(
                    id: CueCard.placeID(card: card.id, index: index), networkID: "", name: card.name, point: point,
                    radius: cardPlaceRadius)
            }
        }
    }

    /// The valid cards for `region`, preferred first, then the most recently used, then by name and id. Empty for a
    /// store of a network the user holds no valid card for.
    public static func cards(for region: MonitoredRegion, among cards: [CueCard]) -> [CueCard] {
        let matching = cards.filter { card in
            guard card.isValid else { return false }
            if let network = region.networkID { return card.networkIDs.contains(network) }
            return card.places.indices.contains { CueCard.placeID(card: card.id, index: $0) == region.id }
        }
        let network = region.networkID
        return matching.sorted { a, b in
            let aPreferred = network.map { a.preferredFor.contains($0) } ?? false
            let bPreferred = network.map { b.preferredFor.contains($0) } ?? false
            if aPreferred != bPreferred { return aPreferred }
            switch (a.lastUsed, b.lastUsed) {
            case let (x?, y?) where x != y: return x > y
            case (.some, nil): return true
            case (nil, .some): return false
            default: break
            }
            if a.name != b.name { return a.name.localizedStandardCompare(b.name) == .orderedAscending }
            return a.id < b.id
        }
    }
}

/// Follows one person's visits: a region is entered at the first position inside its radius, and the visit lasts
/// until a position is more than `CueRules.exitMargin` beyond it. Each entry is reported once.
public struct VisitTracker: Sendable {
    /// The regions being visited, kept with their geometry so that a visit ends correctly even after a refresh
    /// dropped the region from the monitored set.
    public private(set) var visiting: [String: MonitoredRegion] = [:]

    public init() {}

    /// A tracker resuming visits already under way.
    public init(visiting: [MonitoredRegion]) {
        for region in visiting { self.visiting[region.id] = region }
    }

    /// Moves to `position`; returns the regions of `monitored` entered by this move, nearest first.
    public mutating func move(to position: GeoPoint, monitored: [MonitoredRegion]) -> [MonitoredRegion] {
        for (id, region) in visiting
        where Haversine.distance(region.point, position) > Double(region.radius) + CueRules.exitMargin {
            visiting[id] = nil
        }
        var entered: [MonitoredRegion] = []
        for region in monitored where visiting[region.id] == nil {
            let distance = Haversine.distance(region.point, position)
            guard distance <= Double(region.radius) else { continue }
            var inside = region
            inside.distance = distance
            visiting[region.id] = inside
            entered.append(inside)
        }
        return entered.sorted { $0.distance < $1.distance }
    }
}
