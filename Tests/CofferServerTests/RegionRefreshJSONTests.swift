import CofferPlaces
@testable import CofferServer
import CofferSyncAPI
import Foundation
import NIOCore
import Testing

/// `RegionRefreshJSON` writes the region-refresh answer by hand; `JSONEncoder` (through `WireJSON`, as every other
/// answer is written) is the oracle it must match byte for byte, and clients must decode it to the same answer.
@Suite("Region-refresh JSON")
struct RegionRefreshJSONTests {
    static func region(
        id: String = "costco-0001", networkID: String? = "costco", networkName: String? = "Costco", name: String = "Costco Downtown",
        address: String? = "1 Main St", lat: Double = 37.7749, lon: Double = -122.4194, radius: Int = 150, priority: Int = 1,
        distance: Double = 1234.56
    ) -> RegionJSON {
        var region = RegionJSON(
            MonitoredRegion(
                id: id, networkID: networkID, networkName: networkName, name: name, address: address,
                point: GeoPoint(latitude: 0, longitude: 0)!, radius: radius, priority: priority, distance: 0))
        region.lat = lat
        region.lon = lon
        region.distanceMeters = distance
        return region
    }

    static let controlCharacters = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)

    static let answers: [(String, RegionRefreshResponse)] = [
        (
            "no regions",
            RegionRefreshResponse(regions: [], refreshAfterMeters: 500, cacheTTLSeconds: 21_600, serverTime: Date(timeIntervalSince1970: 1_790_000_000))
        ),
        (
            "one region",
            RegionRefreshResponse(
                regions: [region()], refreshAfterMeters: 500, cacheTTLSeconds: 21_600, serverTime: Date(timeIntervalSince1970: 1_790_000_000.75))
        ),
        (
            "a card's own place: no network",
            RegionRefreshResponse(
                regions: [region(networkID: nil, networkName: nil, address: nil)], refreshAfterMeters: 2_000, cacheTTLSeconds: 1,
                serverTime: Date(timeIntervalSinceReferenceDate: 0))
        ),
        (
            "texts needing escapes",
            RegionRefreshResponse(
                regions: [
                    region(id: #"a "quoted" \ id/with slash"#, networkName: controlCharacters, name: "Café ✓ 𝄞 \u{2028} \u{7F}", address: "")
                ],
                refreshAfterMeters: 500, cacheTTLSeconds: 21_600, serverTime: Date(timeIntervalSince1970: 0))
        ),
        (
            "numbers at their edges",
            RegionRefreshResponse(
                regions: [
                    region(lat: 90, lon: -180, radius: 0, priority: 2, distance: 0),
                    region(lat: -89.999999999, lon: 179.99999999999997, radius: .max, distance: 50_000),
                    region(lat: 1e-7, lon: -0.0, radius: 1, distance: 0.01),
                    region(lat: 12.5, lon: .leastNonzeroMagnitude, distance: 123_456_789.12),
                ],
                refreshAfterMeters: .max, cacheTTLSeconds: 0, serverTime: Date(timeIntervalSince1970: 4_102_444_800.999))
        ),
    ]

    @Test("matches JSONEncoder byte for byte", arguments: answers.map(\.0))
    func matchesEncoder(_ name: String) throws {
        let answer = try #require(Self.answers.first { $0.0 == name }?.1)
        try expectEqualToEncoder(answer)
    }

    @Test("matches JSONEncoder on random answers")
    func randomAnswers() throws {
        var generator = SystemRandomNumberGenerator()
        func text() -> String {
            let scalars = (0..<Int.random(in: 0...24, using: &generator)).map { _ -> Character in
                let value =
                    Bool.random(using: &generator)
                    ? UInt32.random(in: 0...0x7F, using: &generator) : UInt32.random(in: 0x80...0x2FFFF, using: &generator)
                return Character(Unicode.Scalar(value) ?? "x")
            }
            return String(scalars)
        }
        for _ in 0..<300 {
            let regions = (0..<Int.random(in: 0...20, using: &generator)).map { _ in
                Self.region(
                    id: text(), networkID: Bool.random(using: &generator) ? text() : nil,
                    networkName: Bool.random(using: &generator) ? text() : nil, name: text(),
                    address: Bool.random(using: &generator) ? text() : nil,
                    lat: .random(in: -90...90, using: &generator), lon: .random(in: -180...180, using: &generator),
                    radius: .random(in: 0...100_000, using: &generator), priority: .random(in: 1...2, using: &generator),
                    distance: (Double.random(in: 0...5_000_000, using: &generator)).rounded() / 100)
            }
            try expectEqualToEncoder(
                RegionRefreshResponse(
                    regions: regions, refreshAfterMeters: .random(in: 500...100_000, using: &generator),
                    cacheTTLSeconds: 21_600, serverTime: Date(timeIntervalSince1970: .random(in: 0...4_102_444_800, using: &generator))))
        }
    }

    @Test("decodes back to the answer")
    func decodes() throws {
        let answer = try #require(Self.answers.first { $0.0 == "one region" }?.1)
        let body = RegionRefreshJSON.body(answer)
        let decoded = try WireJSON.decoder().decode(RegionRefreshResponse.self, from: Data(body.readableBytesView))
        #expect(decoded.regions == answer.regions)
        #expect(decoded.refreshAfterMeters == 500)
        #expect(decoded.serverTime == Date(timeIntervalSince1970: 1_790_000_000))
    }

    private func expectEqualToEncoder(_ answer: RegionRefreshResponse) throws {
        let expected = String(decoding: try WireJSON.encoder().encode(answer), as: UTF8.self)
        let written = String(decoding: RegionRefreshJSON.body(answer).readableBytesView, as: UTF8.self)
        #expect(written == expected)
    }
}
