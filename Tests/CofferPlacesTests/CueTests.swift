@testable import CofferPlaces
import Foundation
import Testing

@Suite("Surfacing: which cards, in which order, once per visit")
struct CueTests {
    static let costco = MonitoredRegion(
        id: "loc_costco_001", networkID: "costco", networkName: "Costco", name: "Costco SF", address: nil,
        point: GeoPoint(latitude: 37.7749, longitude: -122.4194)!, radius: 100, priority: 1, distance: 0)
    static let kohls = MonitoredRegion(
        id: "loc_kohls_001", networkID: "kohls", networkName: "Kohl's", name: "Kohl's", address: nil,
        point: GeoPoint(latitude: 37.7816, longitude: -122.4501)!, radius: 100, priority: 2, distance: 0)

    static func north(of region: MonitoredRegion, _ metres: Double) -> GeoPoint {
        GeoPoint(latitude: region.point.latitude + metres / 111_194.93, longitude: region.point.longitude)!
    }

    @Test("preferred card first, then the most recently used, then by name; invalid cards never")
    func cardOrder() {
        let day = Date(timeIntervalSince1970: 1_800_000_000)
        let cards = [
            CueCard(id: "a", name: "Costco (old)", networkIDs: ["costco"], lastUsed: day, isValid: false),
            CueCard(id: "b", name: "Costco Ben", networkIDs: ["costco"], lastUsed: day.addingTimeInterval(-60), isValid: true),
            CueCard(id: "c", name: "Costco Ada", networkIDs: ["costco"], isValid: true),
            CueCard(id: "d", name: "Costco Cy", networkIDs: ["costco"], lastUsed: day, isValid: true),
            CueCard(id: "e", name: "Costco Eve", networkIDs: ["costco"], preferredFor: ["costco"], isValid: true),
            CueCard(id: "f", name: "Library", networkIDs: ["sfpl"], isValid: true),
            CueCard(id: "g", name: "Costco Abe", networkIDs: ["costco"], isValid: true),
        ]
        #expect(CueRules.cards(for: Self.costco, among: cards).map(\.id) == ["e", "d", "b", "g", "c"])
        #expect(CueRules.cards(for: Self.kohls, among: cards).isEmpty)
        #expect(CueRules.userNetworks(cards) == ["costco", "sfpl"])
        #expect(!CueRules.userNetworks([cards[0]]).contains("costco"))
    }

    @Test("an entry is reported once; jitter at the edge is not a new visit; leaving and coming back is")
    func visits() {
        var tracker = VisitTracker()
        let monitored = [Self.costco, Self.kohls]
        #expect(tracker.move(to: Self.north(of: Self.costco, 300), monitored: monitored).isEmpty)
        #expect(tracker.move(to: Self.north(of: Self.costco, 90), monitored: monitored).map(\.id) == ["loc_costco_001"])
        #expect(tracker.move(to: Self.north(of: Self.costco, 20), monitored: monitored).isEmpty)
        #expect(tracker.move(to: Self.north(of: Self.costco, 120), monitored: monitored).isEmpty)
        #expect(tracker.move(to: Self.north(of: Self.costco, 95), monitored: monitored).isEmpty, "edge jitter")
        #expect(tracker.move(to: Self.north(of: Self.costco, 151), monitored: monitored).isEmpty)
        #expect(tracker.visiting.isEmpty)
        #expect(tracker.move(to: Self.north(of: Self.costco, 50), monitored: monitored).map(\.id) == ["loc_costco_001"])
        #expect(tracker.move(to: Self.north(of: Self.costco, 40), monitored: []).isEmpty, "dropped from the set, still there")
        #expect(tracker.move(to: Self.north(of: Self.costco, 30), monitored: monitored).isEmpty)
    }

    @Test("a card's own place surfaces that card")
    func ownPlace() {
        let place = GeoPoint(latitude: 37.79, longitude: -122.40)!
        let card = CueCard(id: "ret", name: "Amazon return", networkIDs: [], places: [place], isValid: true)
        let region = MonitoredRegion(
            id: CueCard.placeID(card: "ret", index: 0), networkID: nil, networkName: nil, name: "Amazon return",
            address: nil, point: place, radius: 100, priority: 1, distance: 0)
        #expect(CueRules.cards(for: region, among: [card]).map(\.id) == ["ret"])
        #expect(CueRules.pinnedPlaces([card]).map(\.id) == ["card:ret:1"])
    }
}
