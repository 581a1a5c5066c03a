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

@Suite("Position reports: NMEA, gpsd JSON, lat,lon lines")
struct PositionReportTests {
    @Test("the fixture track's NMEA gives track.txt's positions, one fix per RMC and GGA")
    func trackFixture() throws {
        let nmea = try String(contentsOf: ImportTests.fixtures.appendingPathComponent("track.nmea"), encoding: .utf8)
        let text = try String(contentsOf: ImportTests.fixtures.appendingPathComponent("track.txt"), encoding: .utf8)
        let expected = text.split(separator: "\n").compactMap(PositionLine.parse).map(\.point)
        let fixes = nmea.split(whereSeparator: \.isNewline).compactMap(NMEA.parse)
        #expect(expected.count == 160)
        #expect(fixes.count == 2 * expected.count)
        // RMC and GGA of one fix alternate; both name the same position, to 1e-7 degrees.
        for (index, fix) in fixes.enumerated() {
            let want = expected[index / 2]
            #expect(abs(fix.point.latitude - want.latitude) < 1.5e-7 && abs(fix.point.longitude - want.longitude) < 1.5e-7, "fix \(index)")
        }
        let first = try #require(fixes.first?.time)
        #expect(first == Date(timeIntervalSince1970: 1_795_521_600), "2026-11-24 12:00:00 UTC")
    }

    @Test(
        "damaged, void and foreign sentences give nothing",
        arguments: [
            "$GPRMC,120000.00,A,3746.322298,N,12225.381212,W,287.7,45.0,241126,,,A*7C",  // wrong checksum
            "$GPRMC,120000.00,V,3746.322298,N,12225.381212,W,287.7,45.0,241126,,,A",  // void
            "$GPGGA,120000.00,3746.322298,N,12225.381212,W,0,08,0.9,16.0,M,-32.1,M,,",  // no fix
            "$GPGSV,3,1,11,03,03,111,00,04,15,270,00,06,01,010,00,13,06,292,00*74",
            "$GPRMC,120000.00,A,9146.322298,N,12225.381212,W,287.7,45.0,241126,,,A",  // latitude 91
            "$GPRMC,120000.00,A,3746.322298,X,12225.381212,W,287.7,45.0,241126,,,A",
            "$GPRMC,120000.00,A,37ab.322298,N,12225.381212,W,287.7,45.0,241126,,,A",
            "91,0", "37.7", "# a comment", "", "hello",
            #"{"class":"TPV","mode":1,"lat":37.7,"lon":-122.4}"#, #"{"class":"SKY"}"#, #"{"class":"TPV","mode":3,"lat":95,"lon":0}"#,
            #"{"class":"TPV","mode":3,"lat":true,"lon":false}"#, #"{"class":"TPV","mode":true,"lat":37.7,"lon":-122.4}"#,
            #"{"class":"TPV","mode":3,"lat":37.7,"lon":-122.4} trailing"#,
        ])
    func refused(_ line: String) {
        #expect(PositionLine.parse(line) == nil)
    }

    @Test("gpsd TPV, with and without fractional seconds; lat,lon lines")
    func accepted() throws {
        let tpv = try #require(
            GPSDReport.parse(#"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2026-11-24T12:00:15.000Z","lat":37.7749531,"lon":-122.4193881}"#))
        #expect(tpv.point == GeoPoint(latitude: 37.7749531, longitude: -122.4193881))
        #expect(tpv.time == Date(timeIntervalSince1970: 1_795_521_615))
        #expect(GPSDReport.parse(#"{"class":"TPV","mode":2,"time":"2026-11-24T12:00:15Z","lat":1,"lon":2}"#)?.time != nil)
        #expect(PositionLine.parse(" 37.7749, -122.4194 ")?.point == GeoPoint(latitude: 37.7749, longitude: -122.4194))
        #expect(PositionLine.parse("$GNRMC,235959.50,A,0000.000000,S,17959.999999,E,0,0,311299,,,A")?.point.longitude ?? 0 > 179.99)
    }
}
