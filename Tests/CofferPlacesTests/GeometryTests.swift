@testable import CofferPlaces
import CofferTestSupport
import Foundation
import Testing

@Suite("Distances and geohash cells against outside oracles", .offCooperativePool)
struct GeometryTests {
    static func point(_ latitude: Double, _ longitude: Double) -> GeoPoint { GeoPoint(latitude: latitude, longitude: longitude)! }

    @Test("published distances from Costco SF (reference: on-cue.md §5)")
    func publishedDistances() {
        let costco = Self.point(37.7749, -122.4194)
        #expect(abs(Haversine.distance(costco, Self.point(37.7790, -122.4153)) - 581.112) < 0.001)
        #expect(abs(Haversine.distance(costco, Self.point(37.7820, -122.4009)) - 1_807.445) < 0.001)
        #expect(abs(Haversine.distance(costco, Self.point(37.7816, -122.4501)) - 2_799.100) < 0.001)
    }

    @Test("1,000 random pairs: haversine as the haversine package computes it, and within 0.6 % of GeographicLib")
    func randomDistances() throws {
        var random = SplitMix64(seed: 11)
        var pairs: [[Double]] = []
        for index in 0..<1_000 {
            let a = Self.point(Double.random(in: -90...90, using: &random), Double.random(in: -180...180, using: &random))
            let b: GeoPoint
            switch index % 4 {
            case 0:  // anywhere
                b = Self.point(Double.random(in: -90...90, using: &random), Double.random(in: -180...180, using: &random))
            case 1:  // within about 60 km, the scale regions work at
                b = Self.point(
                    max(-90, min(90, a.latitude + Double.random(in: -0.5...0.5, using: &random))),
                    Self.wrap(a.longitude + Double.random(in: -0.5...0.5, using: &random)))
            case 2:  // across the antimeridian
                b = Self.point(a.latitude, a.longitude >= 0 ? -179.9 : 179.9)
            default:  // near a pole
                b = Self.point(index % 8 == 3 ? 89.99 : -89.99, Double.random(in: -180...180, using: &random))
            }
            pairs.append([a.latitude, a.longitude, b.latitude, b.longitude])
        }
        let answer = try PlacesOracle.call("distance", ["pairs": pairs])
        let haversine = try #require(answer["haversine"] as? [Double])
        let geodesic = try #require(answer["geodesic"] as? [Double])
        try #require(haversine.count == pairs.count && geodesic.count == pairs.count)
        var compared = 0
        for (index, pair) in pairs.enumerated() {
            let ours = Haversine.distance(latitude1: pair[0], longitude1: pair[1], latitude2: pair[2], longitude2: pair[3])
            #expect(abs(ours - haversine[index]) <= max(1e-6, ours * 1e-12), "pair \(index)")
            if geodesic[index] > 1_000 {
                #expect(abs(ours - geodesic[index]) / geodesic[index] < 0.006, "pair \(index) against the ellipsoid")
                compared += 1
            }
        }
        #expect(compared > 700)
    }

    static func wrap(_ longitude: Double) -> Double {
        longitude > 180 ? longitude - 360 : longitude < -180 ? longitude + 360 : longitude
    }

    @Test("published geohash vectors and edges (reference: on-cue.md §5)")
    func geohashVectors() throws {
        #expect(Geohash.encode(Self.point(42.6, -5.6), precision: 5) == "ezs42")
        let box = try #require(Geohash.box("ezs42"))
        #expect(box == GeoBox(south: 42.5830078125, north: 42.626953125, west: -5.625, east: -5.5810546875))
        let expected: [Geohash.Direction: String] = [
            .north: "ezs48", .northEast: "ezs49", .east: "ezs43", .southEast: "ezs41",
            .south: "ezs40", .southWest: "ezefp", .west: "ezefr", .northWest: "ezefx",
        ]
        for (direction, cell) in expected { #expect(Geohash.neighbour(of: "ezs42", direction) == cell, "\(direction)") }
        let centre = try #require(Geohash.center("u4pruydqqvj"))
        #expect(abs(centre.latitude - 57.64911) < 5e-6 && abs(centre.longitude - 10.40744) < 5e-6)
        #expect(Geohash.encode(Self.point(52.205, 0.119), precision: 7) == "u120fxw")
        #expect(Geohash.encode(Self.point(37.7749, -122.4194), precision: 4) == "9q8y")
        #expect(Geohash.neighbour(of: "gcpv", .east) == "u10j")
        #expect(Geohash.neighbour(of: "xczb", .east) == "81b0")
        #expect(Geohash.neighbour(of: "81b0", .west) == "xczb")
        #expect(Geohash.neighbour(of: "upzp", .north) == nil)
        #expect(Geohash.neighbour(of: "upzp", .northEast) == nil)
        #expect(Geohash.encode(Self.point(0, 180), precision: 4) == Geohash.encode(Self.point(0, -180), precision: 4))
        #expect(Geohash.encode(Self.point(90, 0), precision: 4) == "upbp")
        #expect(!Geohash.isValid("ezs4a") && !Geohash.isValid("") && !Geohash.isValid("EZS42") && !Geohash.isValid("0123456789bcd"))
        #expect(Geohash.box("ezsi2") == nil)
    }

    @Test("10,000 random points: encode, decode and neighbours as pygeohash, with the edges")
    func geohashAgainstPygeohash() throws {
        var random = SplitMix64(seed: 12)
        var points: [[Double]] = []
        for index in 0..<10_000 {
            var latitude = Double.random(in: -90...90, using: &random)
            var longitude = Double.random(in: -180...180, using: &random)
            switch index % 10 {
            case 0: longitude = [180, -180, 179.9999999, -179.9999999][index / 10 % 4]
            case 1: latitude = [90, -90, 89.9999999, -89.9999999][index / 10 % 4]
            case 2: longitude = 0
            default: break
            }
            let point = Self.point(latitude, longitude)
            points.append([point.latitude, point.longitude, Double(index % 12 + 1)])
        }
        let cells = points.map { Geohash.encode(Self.point($0[0], $0[1]), precision: Int($0[2])) }
        let neighbourCells = Array(cells.prefix(3_000))
        let answer = try PlacesOracle.call("geohash", ["encode": points, "decode": cells, "neighbours": neighbourCells])
        let encoded = try #require(answer["encode"] as? [String])
        let decoded = try #require(answer["decode"] as? [[Double]])
        let neighbours = try #require(answer["neighbours"] as? [[String: Any]])
        try #require(encoded.count == cells.count && decoded.count == cells.count && neighbours.count == neighbourCells.count)
        var mismatches: [String] = []
        for index in cells.indices {
            if cells[index] != encoded[index] { mismatches.append("encode \(points[index]): \(cells[index]) ≠ \(encoded[index])") }
            let box = try #require(Geohash.box(cells[index]))
            // pygeohash computes edges as centre ± error, a few ulps from the exact binary fractions.
            if !zip([box.south, box.north, box.west, box.east], decoded[index]).allSatisfy({ abs($0 - $1) < 1e-9 }) {
                mismatches.append("decode \(cells[index]): \(box) ≠ \(decoded[index])")
            }
        }
        for (index, cell) in neighbourCells.enumerated() {
            for direction in Geohash.Direction.allCases {
                let theirs = neighbours[index][direction.rawValue] as? String
                let ours = Geohash.neighbour(of: cell, direction)
                if ours != theirs { mismatches.append("\(direction) of \(cell): \(ours ?? "none") ≠ \(theirs ?? "none")") }
            }
        }
        #expect(mismatches.count == 0, "first mismatches: \(mismatches.prefix(5))")
        #expect(Set(cells.filter { $0.count == 1 }).count > 10)
    }
}
