@testable import CofferPlaces
import CofferTestSupport
import Foundation
import Testing

@Suite("Region choice, refresh and tiles", .offCooperativePool)
struct RegionTests {
    /// 10,000 locations of 40 networks clustered around 25 towns (some at the antimeridian and near a pole), so that
    /// positions see from none to hundreds of candidates.
    static func randomPlaces(seed: UInt64, count: Int = 10_000) -> (networks: [Network], locations: [Location]) {
        var random = SplitMix64(seed: seed)
        let networks = (0..<40).map { Network(id: "net-\($0)", name: "Network \($0)", defaultRadius: 50 + $0 * 10) }
        var towns: [GeoPoint] = [
            GeoPoint(latitude: 37.7749, longitude: -122.4194)!, GeoPoint(latitude: -16.5, longitude: 179.8)!,
            GeoPoint(latitude: 88.9, longitude: 10)!,
        ]
        while towns.count < 25 {
            towns.append(GeoPoint(latitude: Double.random(in: -70...70, using: &random), longitude: Double.random(in: -180...180, using: &random))!)
        }
        var locations: [Location] = []
        for index in 0..<count {
            let town = towns[index % towns.count]
            let spread = index % 7 == 0 ? 1.5 : 0.3
            let latitude = max(-90, min(90, town.latitude + Double.random(in: -spread...spread, using: &random)))
            var longitude = town.longitude + Double.random(in: -spread...spread, using: &random)
            if longitude > 180 { longitude -= 360 }
            if longitude < -180 { longitude += 360 }
            locations.append(
                Location(
                    id: "loc-\(String(index, radix: 16))", networkID: networks[Int.random(in: 0..<networks.count, using: &random)].id,
                    name: "Store \(index)", point: GeoPoint(latitude: latitude, longitude: longitude)!,
                    radius: index % 3 == 0 ? nil : Int.random(in: 30...2_000, using: &random)))
        }
        // Two at the same spot, so that the id decides their order.
        locations.append(Location(id: "loc-twin-b", networkID: "net-1", name: "Twin", point: towns[0], radius: 80))
        locations.append(Location(id: "loc-twin-a", networkID: "net-1", name: "Twin", point: towns[0], radius: 80))
        return (networks, locations)
    }

    @Test("10,000 locations, 1,000 positions: the same ordered lists as a brute-force reference in Python")
    func regionsAgainstBruteForce() throws {
        let (networks, locations) = Self.randomPlaces(seed: 21)
        var random = SplitMix64(seed: 22)
        var positions: [GeoPoint] = []
        for index in 0..<1_000 {
            let base = locations[Int.random(in: 0..<locations.count, using: &random)].point
            let jitter = index % 10 == 0 ? 3.0 : 0.3
            let latitude = max(-90, min(90, base.latitude + Double.random(in: -jitter...jitter, using: &random)))
            var longitude = base.longitude + Double.random(in: -jitter...jitter, using: &random)
            if longitude > 180 { longitude -= 360 }
            if longitude < -180 { longitude += 360 }
            positions.append(GeoPoint(latitude: latitude, longitude: longitude)!)
        }
        positions[0] = GeoPoint(latitude: 37.7749, longitude: -122.4194)!
        let userNetworks: Set<String> = ["net-1", "net-7", "net-19", "net-33"]
        let byID = Dictionary(uniqueKeysWithValues: networks.map { ($0.id, $0) })
        let answer = try PlacesOracle.call(
            "regions",
            [
                "locations": locations.map { location -> [String: Any] in
                    [
                        "id": location.id, "network": location.networkID, "lat": location.point.latitude, "lon": location.point.longitude,
                        "radius": location.effectiveRadius(in: byID[location.networkID]),
                    ]
                },
                "positions": positions.map { [$0.latitude, $0.longitude] },
                "user_networks": Array(userNetworks), "radius_m": 50_000, "max": 20,
            ])
        let expected = try #require(answer["regions"] as? [[String]])
        try #require(expected.count == positions.count)
        let set = PlaceSet(networks: networks, locations: locations)
        let tile = try PlaceTile.encode(kind: .local, cell: "", radius: 0, dataVersion: 0, networks: networks, locations: locations)
        let memory = Self.index(networks, locations)
        var differences = 0
        var indexDifferences = 0
        var full = 0
        for (index, position) in positions.enumerated() {
            let fromSet = set.regions(at: position, userNetworks: userNetworks).map(\.id)
            let fromTile = tile.regions(at: position, userNetworks: userNetworks).map(\.id)
            if fromSet != expected[index] || fromTile != expected[index] { differences += 1 }
            if memory.regions(at: position, userNetworks: userNetworks).map(\.id) != expected[index] { indexDifferences += 1 }
            if expected[index].count == 20 { full += 1 }
        }
        #expect(differences == 0)
        #expect(indexDifferences == 0, "the server's memory index")
        #expect(full > 500, "most positions should have a full set to order")
        #expect(expected.contains { $0.isEmpty }, "some positions should have none")
        #expect(expected[0].firstIndex(of: "loc-twin-a")! < expected[0].firstIndex(of: "loc-twin-b")!)
    }

    /// The server's memory index over `locations`, added in a shuffled order (a store's pages come by id).
    static func index(_ networks: [Network], _ locations: [Location], version: Int64 = 1) -> PlaceIndex {
        var builder = PlaceIndex.Builder(networks: networks, version: version)
        var random = SplitMix64(seed: 5)
        for location in locations.shuffled(using: &random) { builder.add(location) }
        return builder.build()
    }

    @Test("the memory index answers exactly as the reference choice: every region field, nearby, limits, many networks, edges")
    func indexAgainstReference() {
        let (networks, locations) = Self.randomPlaces(seed: 23)
        let set = PlaceSet(networks: networks, locations: locations)
        let index = Self.index(networks, locations, version: 9)
        #expect(index.count == locations.count && index.version == 9)
        var random = SplitMix64(seed: 24)
        var checked = 0
        for round in 0..<600 {
            let base = locations[Int.random(in: 0..<locations.count, using: &random)].point
            let jitter = round % 5 == 0 ? 2.0 : 0.2
            var longitude = base.longitude + Double.random(in: -jitter...jitter, using: &random)
            if longitude > 180 { longitude -= 360 }
            if longitude < -180 { longitude += 360 }
            let position = GeoPoint(latitude: max(-90, min(90, base.latitude + Double.random(in: -jitter...jitter, using: &random))), longitude: longitude)!
            // None, a few, and more than the index looks up one by one; an unknown id changes nothing.
            let user: Set<String> = [[], ["net-3", "net-nowhere"], Set((0..<12).map { "net-\($0 * 3)" })][round % 3]
            let limit = [20, 1, 100, 7][round % 4]
            let radius = [50_000.0, 5_000, 100_000][round % 3]
            let expected = set.regions(at: position, userNetworks: user, radius: radius, limit: limit)
            #expect(index.regions(at: position, userNetworks: user, radius: radius, limit: limit) == expected, "round \(round)")
            let only: Set<String>? = round % 2 == 0 ? nil : ["net-5", "net-6"]
            let near = index.nearby(position, radius: radius / 10, networks: only, limit: limit)
            let nearExpected = PlaceSet(networks: networks, locations: locations.filter { only?.contains($0.networkID) ?? true })
                .regions(at: position, userNetworks: [], radius: radius / 10, limit: limit)
            #expect(near.map(\.location.id) == nearExpected.map(\.id) && near.map(\.distance) == nearExpected.map(\.distance), "round \(round)")
            let full = Dictionary(uniqueKeysWithValues: locations.map { ($0.id, $0) })
            #expect(near.allSatisfy { $0.location == full[$0.location.id] && $0.network.id == $0.location.networkID })
            checked += expected.count
        }
        #expect(checked > 5_000)
        #expect(index.regions(at: locations[0].point, userNetworks: [], limit: 0).isEmpty)
        let empty = PlaceIndex.Builder(networks: networks, version: 0).build()
        #expect(empty.regions(at: locations[0].point, userNetworks: ["net-1"]).isEmpty)
    }

    @Test("a network of the user's comes before a nearer store of another; a card's own place is priority 1")
    func priorities() {
        let here = GeoPoint(latitude: 37.7749, longitude: -122.4194)!
        let near = Location(id: "near", networkID: "kohls", name: "Kohl's", point: GeoPoint(latitude: 37.7750, longitude: -122.4194)!)
        let far = Location(id: "far", networkID: "costco", name: "Costco", point: GeoPoint(latitude: 37.9, longitude: -122.4)!)
        let beyond = Location(id: "beyond", networkID: "costco", name: "Costco", point: GeoPoint(latitude: 38.3, longitude: -122.4)!)
        let set = PlaceSet(networks: [Network(id: "costco", name: "Costco"), Network(id: "kohls", name: "Kohl's")], locations: [near, far, beyond])
        let card = CueCard(id: "c1", name: "Returns", networkIDs: [], places: [GeoPoint(latitude: 37.8, longitude: -122.41)!], isValid: true)
        let regions = set.regions(at: here, userNetworks: ["costco"], pinned: CueRules.pinnedPlaces([card]))
        #expect(regions.map(\.id) == ["card:c1:1", "far", "near"])
        #expect(regions.map(\.priority) == [1, 1, 2])
        #expect(set.regions(at: here, userNetworks: ["costco"], limit: 1).map(\.id) == ["far"])
        #expect(set.regions(at: here, userNetworks: [], limit: 0).isEmpty)
    }

    /// 25 stores of one network within 250 m, a store of another card's network 300 m away, a card's own place 400 m
    /// away and a nearer store without a card: with CardOnCue's order the 20 regions are all of the first network.
    static func crowdedArea() -> (set: PlaceSet, here: GeoPoint, card: CueCard) {
        let here = GeoPoint(latitude: 37.7749, longitude: -122.4194)!
        func north(_ metres: Double, east: Double = 0) -> GeoPoint {
            GeoPoint(latitude: here.latitude + metres / 111_194.93, longitude: here.longitude + east / 87_950)!
        }
        var locations = (0..<25).map { index in
            Location(id: "crowd-\(index)", networkID: "coffee", name: "Coffee \(index)", point: north(Double(index * 10), east: Double(index % 5) * 5))
        }
        locations.append(Location(id: "gym-1", networkID: "gym", name: "Gym", point: north(-300)))
        locations.append(Location(id: "gym-2", networkID: "gym", name: "Gym Two", point: north(-900)))
        locations.append(Location(id: "kiosk", networkID: "kiosk", name: "Kiosk", point: north(5)))
        let set = PlaceSet(
            networks: [Network(id: "coffee", name: "Coffee"), Network(id: "gym", name: "Gym"), Network(id: "kiosk", name: "Kiosk")], locations: locations)
        let card = CueCard(id: "c1", name: "Library", networkIDs: [], places: [north(400, east: 100), north(700)], isValid: true)
        return (set, here, card)
    }

    @Test("in a crowded area no card is crowded out: the nearest store of each card's network and each card's nearest place are kept")
    func crowdedAreaKeepsEveryCard() throws {
        let (set, here, card) = Self.crowdedArea()
        let user: Set<String> = ["coffee", "gym"]
        let pinned = CueRules.pinnedPlaces([card])
        let cardOnCue = set.regions(at: here, userNetworks: user, pinned: pinned)
        #expect(cardOnCue.count == 20 && cardOnCue.allSatisfy { $0.networkID == "coffee" }, "CardOnCue's order, kept where asked for")
        let kept = set.regions(at: here, userNetworks: user, pinned: pinned, nearestOfEachNetwork: true)
        #expect(kept.count == 20)
        #expect(kept.map(\.id).filter { !$0.hasPrefix("crowd-") } == ["gym-1", "card:c1:1"], "\(kept.map(\.id))")
        #expect(kept.filter { $0.id.hasPrefix("crowd-") }.map(\.id) == (0..<18).map { "crowd-\($0)" }, "then the nearest of the rest")
        #expect(kept.map(\.priority) == Array(repeating: 1, count: 20) && kept.map(\.distance) == kept.map(\.distance).sorted())
        // The same from a tile, and merged with the cards' places chosen apart (as `coffer cue` does).
        let tile = try PlaceTile.encode(kind: .local, cell: "", radius: 0, dataVersion: 0, networks: Array(set.networks.values), locations: set.locations)
        let fromTile = tile.regions(at: here, userNetworks: user, nearestOfEachNetwork: true)
        #expect(fromTile.map(\.id) == set.regions(at: here, userNetworks: user, nearestOfEachNetwork: true).map(\.id))
        let own = PlaceSet(networks: [], locations: []).regions(at: here, userNetworks: user, pinned: pinned, nearestOfEachNetwork: true)
        #expect(MonitoredRegion.merge([own, fromTile], limit: 20, nearestOfEachNetwork: true) == kept)
        let plain = [PlaceSet(networks: [], locations: []).regions(at: here, userNetworks: user, pinned: pinned), tile.regions(at: here, userNetworks: user)]
        #expect(MonitoredRegion.merge(plain, limit: 20).allSatisfy { $0.networkID == "coffee" })
        // More networks with cards than the limit: the nearest networks' nearest stores, nothing else.
        let two = set.regions(at: here, userNetworks: ["coffee", "gym", "kiosk"], pinned: pinned, limit: 2, nearestOfEachNetwork: true)
        #expect(two.map(\.id) == ["crowd-0", "kiosk"])
    }

    @Test("keeping each network's nearest: the same lists as a brute-force reference in Python, from a set and a tile")
    func nearestOfEachNetworkAgainstReference() throws {
        let (networks, locations) = Self.randomPlaces(seed: 41, count: 3_000)
        var random = SplitMix64(seed: 42)
        var positions = (0..<200).map { index -> GeoPoint in
            let base = locations[Int.random(in: 0..<locations.count, using: &random)].point
            let jitter = index % 10 == 0 ? 2.0 : 0.2
            var longitude = base.longitude + Double.random(in: -jitter...jitter, using: &random)
            if longitude > 180 { longitude -= 360 }
            if longitude < -180 { longitude += 360 }
            return GeoPoint(latitude: max(-90, min(90, base.latitude + Double.random(in: -jitter...jitter, using: &random))), longitude: longitude)!
        }
        positions[0] = GeoPoint(latitude: 37.7749, longitude: -122.4194)!
        let user = Set((0..<14).map { "net-\($0 * 3)" })
        for limit in [20, 5] {
            let answer = try PlacesOracle.call(
                "regions_nearest",
                [
                    "locations": locations.map {
                        ["id": $0.id, "network": $0.networkID, "lat": $0.point.latitude, "lon": $0.point.longitude] as [String: Any]
                    },
                    "positions": positions.map { [$0.latitude, $0.longitude] }, "user_networks": Array(user), "radius_m": 50_000, "max": limit,
                ])
            let expected = try #require(answer["regions"] as? [[String]])
            try #require(expected.count == positions.count)
            let set = PlaceSet(networks: networks, locations: locations)
            let tile = try PlaceTile.encode(kind: .local, cell: "", radius: 0, dataVersion: 0, networks: networks, locations: locations)
            var differ = 0
            var rescued = 0
            for (index, position) in positions.enumerated() {
                let fromSet = set.regions(at: position, userNetworks: user, limit: limit, nearestOfEachNetwork: true).map(\.id)
                let fromTile = tile.regions(at: position, userNetworks: user, limit: limit, nearestOfEachNetwork: true).map(\.id)
                if fromSet != expected[index] || fromTile != expected[index] { differ += 1 }
                if fromSet != set.regions(at: position, userNetworks: user, limit: limit).map(\.id) { rescued += 1 }
            }
            #expect(differ == 0, "limit \(limit)")
            #expect(rescued > 10, "limit \(limit): positions where a network's nearest store was otherwise crowded out")
        }
    }

    @Test("refresh after moving more than max(500 m, largest radius) or after 6 hours — either one")
    func refreshRule() {
        let start = GeoPoint(latitude: 37.7749, longitude: -122.4194)!
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let last = RefreshPoint(point: start, at: at, largestRadius: 100)
        let north499 = GeoPoint(latitude: 37.7749 + 499 / 111_194.93, longitude: -122.4194)!
        let north501 = GeoPoint(latitude: 37.7749 + 501 / 111_194.93, longitude: -122.4194)!
        #expect(RegionRules.needsRefresh(nil, position: start, now: at))
        #expect(!RegionRules.needsRefresh(last, position: north499, now: at.addingTimeInterval(60)))
        #expect(RegionRules.needsRefresh(last, position: north501, now: at.addingTimeInterval(60)))
        #expect(RegionRules.needsRefresh(last, position: start, now: at.addingTimeInterval(21_600)))
        #expect(!RegionRules.needsRefresh(last, position: start, now: at.addingTimeInterval(21_599)))
        #expect(RegionRules.needsRefresh(last, position: start, now: at.addingTimeInterval(-1)), "a clock that went back")
        let large = RefreshPoint(point: start, at: at, largestRadius: 2_000)
        let north1500 = GeoPoint(latitude: 37.7749 + 1_500 / 111_194.93, longitude: -122.4194)!
        let north2100 = GeoPoint(latitude: 37.7749 + 2_100 / 111_194.93, longitude: -122.4194)!
        #expect(!RegionRules.needsRefresh(large, position: north1500, now: at))
        #expect(RegionRules.needsRefresh(large, position: north2100, now: at))
    }
}

@Suite("Tiles: halo, padding and format", .offCooperativePool)
struct TileTests {
    @Test("every location within 50 km of any point of a cell is in the cell's halo (against the oracle)")
    func haloHoldsEverything() throws {
        var random = SplitMix64(seed: 31)
        var cells = ["9q8y", "xczb", "81b0", "upzp", "pbpb", "00p0", "gcpv", "u10j", "zzzz", "0000", "b0bh"]
        while cells.count < 40 {
            let point = GeoPoint(latitude: Double.random(in: -90...90, using: &random), longitude: Double.random(in: -180...180, using: &random))!
            cells.append(Geohash.encode(point, precision: 4))
        }
        var batches: [[[Double]]] = []
        for cell in cells {
            let box = try #require(Geohash.box(cell))
            var points: [[Double]] = []
            for _ in 0..<400 {
                let latitude = max(-90, min(90, Double.random(in: (box.south - 0.6)...(box.north + 0.6), using: &random)))
                let spread = abs(latitude) > 80 ? 180.0 : 1.5
                var longitude = Double.random(in: (box.west - spread)...(box.east + spread), using: &random)
                while longitude > 180 { longitude -= 360 }
                while longitude < -180 { longitude += 360 }
                let point = GeoPoint(latitude: latitude, longitude: longitude)!
                points.append([point.latitude, point.longitude])
            }
            batches.append(points)
        }
        let answer = try PlacesOracle.call("near_cell", ["cells": cells, "points": batches, "radius_m": 50_000])
        let within = try #require(answer["within"] as? [[Bool]])
        try #require(within.count == cells.count)
        var checked = 0
        for (cellIndex, cell) in cells.enumerated() {
            let halo = Geohash.box(cell)!.halo(radius: 50_000)
            for (index, point) in batches[cellIndex].enumerated() where within[cellIndex][index] {
                #expect(halo.contains { $0.contains(latitude: point[0], longitude: point[1]) }, "cell \(cell) point \(point)")
                checked += 1
            }
        }
        #expect(checked > 2_000)
    }

    @Test("halo boxes equal the oracle's, at the antimeridian and the poles too")
    func haloBoxes() throws {
        let cells = ["9q8y", "xczb", "81b0", "upzp", "pbpb", "h000", "gcpv", "2zzz"]
        let answer = try PlacesOracle.call("halo", ["cells": cells, "radius_m": 50_000])
        let boxes = try #require(answer["boxes"] as? [[[Double]]])
        for (index, cell) in cells.enumerated() {
            let ours = Geohash.box(cell)!.halo(radius: 50_000).map { [$0.south, $0.north, $0.west, $0.east] }
            #expect(ours.count == boxes[index].count, "cell \(cell)")
            for (a, b) in zip(ours, boxes[index]) {
                #expect(zip(a, b).allSatisfy { abs($0 - $1) < 1e-9 }, "cell \(cell)")
            }
        }
    }

    @Test("a tile round-trips; its padded size is its class, whatever the count")
    func roundTripAndPadding() throws {
        let (networks, locations) = RegionTests.randomPlaces(seed: 41, count: 3_000)
        var sizes: Set<Int> = []
        for count in [0, 1, 10, 100, 500, 3_000] {
            let slice = Array(locations.prefix(count))
            let tile = try PlaceTile.encode(kind: .cell, cell: "9q8y", radius: 50_000, dataVersion: 7, networks: networks, locations: slice)
            #expect(tile.bytes.count == PlaceTile.sizeClass(for: tile.bytes.count))
            #expect(tile.bytes.count >= PlaceTile.smallestSizeClass && tile.bytes.count.nonzeroBitCount == 1)
            sizes.insert(tile.bytes.count)
            let read = try PlaceTile(bytes: tile.bytes)
            #expect(read.cell == "9q8y" && read.kind == .cell && read.radius == 50_000 && read.dataVersion == 7)
            #expect(read.locations == slice)
            #expect(Set(read.networks.map(\.id)) == Set(slice.map(\.networkID)))
        }
        #expect(sizes.count < 6, "different counts share a size class")
    }

    @Test("a damaged tile is refused, never trusted: every truncation and many bit flips")
    func damagedTiles() throws {
        let (networks, locations) = RegionTests.randomPlaces(seed: 42, count: 50)
        let tile = try PlaceTile.encode(kind: .cell, cell: "9q8y", radius: 50_000, dataVersion: 1, networks: networks, locations: locations)
        let content = Int(PlaceTile.read32(tile.bytes, 44))
        for length in stride(from: 0, to: content, by: 7) {
            #expect(throws: PlacesError.self) { try PlaceTile(bytes: Array(tile.bytes.prefix(length))) }
        }
        // The magic, version, reserved bytes and the four counts are checked: any flip there is refused. The kind
        // (one flip turns a cell tile into a local one), the cell's padding, the radius and the data version are
        // free values: a flip there still reads, in bounds.
        let checked = Set(0..<5).union(6..<8).union(32..<48)
        var random = SplitMix64(seed: 43)
        for _ in 0..<2_000 {
            var bytes = tile.bytes
            let index = Int.random(in: 0..<48, using: &random)
            bytes[index] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            if checked.contains(index) {
                #expect(throws: PlacesError.self, "byte \(index)") { try PlaceTile(bytes: bytes) }
            } else if let read = try? PlaceTile(bytes: bytes) {
                #expect(read.locations.count == locations.count)
                _ = read.networks
            }
        }
        // Flips in the records: either refused or still in bounds, never a crash.
        for _ in 0..<2_000 {
            var bytes = tile.bytes
            let index = Int.random(in: 48..<content, using: &random)
            bytes[index] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            if let read = try? PlaceTile(bytes: bytes) {
                _ = read.locations
                _ = read.networks
                _ = read.regions(at: locations[0].point, userNetworks: ["net-1"])
            }
        }
    }
}

@Suite("Tile format v1, locked", .offCooperativePool)
struct GoldenTileTests {
    static let golden = TestSupport.repositoryRoot.appendingPathComponent("Tests/Vectors/places/golden_tile_v1.bin")

    static let network = Network(
        id: "costco", wikidata: "Q715583", name: "Costco", canonicalNames: ["Costco", "Costco Wholesale"], category: .grocery,
        isLargeArea: false, defaultRadius: 100, tags: ["membership", "grocery"])
    static let locations = [
        Location(
            id: "loc_costco_001", networkID: "costco", name: "Costco San Francisco", address: "1450 Harrison St",
            point: GeoPoint(latitude: 37.7749, longitude: -122.4194)!, radius: nil, phone: "(415) 555-0101", hours: "Mo-Sa 10:00-20:30"),
        Location(id: "loc_costco_002", networkID: "costco", name: "Costco South SF", point: GeoPoint(latitude: 37.6526, longitude: -122.4079)!, radius: 150),
    ]

    @Test("the tile written by hand from FORMAT.md §9.3 (Tests/oracles/make_golden_tile.py) decodes to its values, and they encode to it")
    func golden() throws {
        let bytes = Array(try Data(contentsOf: Self.golden))
        let tile = try PlaceTile(bytes: bytes)
        #expect(tile.kind == .cell && tile.cell == "9q8y" && tile.radius == 50_000 && tile.dataVersion == 1_795_521_600_000)
        #expect(tile.networks == [Self.network])
        #expect(tile.locations == Self.locations)
        let encoded = try PlaceTile.encode(
            kind: .cell, cell: "9q8y", radius: 50_000, dataVersion: 1_795_521_600_000, networks: [Self.network], locations: Self.locations)
        #expect(encoded.bytes == bytes)
    }
}
