import CofferPlaces
import CofferServerStore
import CofferServerTestSupport
import CofferTestSupport
import Foundation
import Testing

/// The places half of the store protocol, on both stores. Places are shared by all users, and the PostgreSQL
/// database by every test running at once, so each test works with its own networks around its own random spot.
@Suite("Place store conformance")
struct PlaceStoreTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Networks and `count` locations within about 60 km of `centre`, a tenth of them without their own radius.
    static func places(around centre: GeoPoint, count: Int, seed: UInt64) -> (networks: [Network], locations: [Location]) {
        var random = SystemRandomNumberGenerator()
        let prefix = "t\(UInt32.random(in: 0...UInt32.max, using: &random))"
        var generator = SplitMix64(seed: seed)
        let networks = (0..<6).map { Network(id: "\(prefix)-n\($0)", name: "Network \($0)", defaultRadius: 60 + 40 * $0) }
        let locations = (0..<count).map { index -> Location in
            var longitude = centre.longitude + Double.random(in: -0.7...0.7, using: &generator)
            if longitude > 180 { longitude -= 360 }
            if longitude < -180 { longitude += 360 }
            return Location(
                id: "\(prefix)-loc-\(index)", networkID: networks[index % networks.count].id, name: "Store \(index)",
                address: index % 2 == 0 ? "\(index) Main St" : nil,
                point: GeoPoint(
                    latitude: max(-90, min(90, centre.latitude + Double.random(in: -0.5...0.5, using: &generator))),
                    longitude: longitude)!,
                radius: index % 10 == 0 ? nil : 50 + index % 500, phone: index % 3 == 0 ? "+1 555 0100" : nil,
                hours: index % 4 == 0 ? "Mo-Su 08:00-20:00" : nil)
        }
        return (networks, locations)
    }

    static func randomCentre(seed: UInt64) -> GeoPoint {
        var generator = SplitMix64(seed: seed ^ UInt64(Date().timeIntervalSince1970 * 1000))
        return GeoPoint(latitude: Double.random(in: -60...60, using: &generator), longitude: Double.random(in: -179...179, using: &generator))!
    }

    @Test("imports, then regions, nearby, boxes and pages exactly as the reference choice over the same places", arguments: Backend.allCases)
    func queries(backend: Backend) async throws {
        try await backend.withStore { store in
            let centre = Self.randomCentre(seed: 1)
            var (networks, locations) = Self.places(around: centre, count: 3_000, seed: 2)
            // A sparse network of the user's, so that the choice mixes a few priority-1 places with nearer others.
            let sparse = Network(id: networks[0].id + "-sparse", name: "Sparse", defaultRadius: 120)
            networks.append(sparse)
            for index in 0..<5 {
                locations.append(
                    Location(
                        id: "\(sparse.id)-\(index)", networkID: sparse.id, name: "Sparse \(index)",
                        point: GeoPoint(latitude: centre.latitude + Double(index) * 0.05, longitude: centre.longitude - Double(index) * 0.04)!))
            }
            let summary = try await store.importPlaces(PlaceImport(networks: networks, locations: locations), replacing: false, now: Self.now)
            #expect(summary == PlaceImportSummary(networks: 7, locations: 3_005, removed: 0))
            let stats = try await store.placesStats()
            #expect(networks.dropLast().allSatisfy { stats.perNetwork[$0.id] == 500 } && stats.perNetwork[sparse.id] == 5)
            #expect(stats.version >= 1_800_000_000_000)
            #expect(try await store.placesVersion() >= stats.version)

            let reference = PlaceSet(networks: networks, locations: locations)
            var generator = SplitMix64(seed: 3)
            for index in 0..<40 {
                let position = GeoPoint(
                    latitude: centre.latitude + Double.random(in: -0.4...0.4, using: &generator),
                    longitude: max(-180, min(180, centre.longitude + Double.random(in: -0.4...0.4, using: &generator))))!
                let user: Set<String> = [[networks[1].id, networks[4].id], [], [sparse.id]][index % 3]
                let limit = [20, 1, 100, 3][index % 4]
                let expected = reference.regions(at: position, userNetworks: user, limit: limit)
                let regions = try await store.regions(position, userNetworks: user, radius: 50_000, limit: limit)
                #expect(regions == expected, "position \(index)")
                let only: Set<String> = [networks[2].id]
                let near = try await store.nearby(position, radius: 5_000, networks: only, limit: 10)
                let nearExpected = PlaceSet(networks: networks, locations: locations.filter { $0.networkID == networks[2].id })
                    .regions(at: position, userNetworks: [], radius: 5_000, limit: 10)
                #expect(near.map(\.location.id) == nearExpected.map(\.id))
                #expect(near.map(\.distance) == nearExpected.map(\.distance))
            }

            let cell = Geohash.encode(centre, precision: 4)
            let boxes = Geohash.box(cell)!.halo(radius: 50_000)
            let inBoxes = try await store.locations(in: boxes).filter { $0.id.hasPrefix(networks[0].id.split(separator: "-")[0] + "-") }
            let expectedInBoxes = locations.filter { location in boxes.contains { $0.contains(location.point) } }
            #expect(Set(inBoxes) == Set(expectedInBoxes))
            #expect(inBoxes.count == expectedInBoxes.count)

            let first = try await store.locations(network: networks[3].id, limit: 100, offset: 0)
            let second = try await store.locations(network: networks[3].id, limit: 1_000, offset: 100)
            #expect(first.total == 500 && first.locations.count == 100 && second.locations.count == 400)
            let ids = (first.locations + second.locations).map(\.id)
            #expect(ids == ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
            #expect(Set(first.locations + second.locations) == Set(locations.filter { $0.networkID == networks[3].id }))
            // Every location, a page at a time in id order (the memory index's read): each once, as stored.
            var paged: [String: Location] = [:]
            var after: String?
            var pages = 0
            while true {
                let page = try await store.locationsPage(after: after, limit: 1_000)
                for location in page { #expect(paged.updateValue(location, forKey: location.id) == nil, "\(location.id) twice") }
                pages += 1
                guard page.count == 1_000, let last = page.last else { break }
                after = last.id
            }
            #expect(pages >= 4 && locations.allSatisfy { paged[$0.id] == $0 })
            #expect(try await store.locationsPage(after: after, limit: 1_000).count < 1_000)
            #expect(try await store.network(id: networks[5].id) == networks[5])
            #expect(try await store.network(id: "\(networks[5].id)-absent") == nil)
            #expect(Set(try await store.networks()).isSuperset(of: networks))
        }
    }

    @Test("a location of an unknown network refuses the whole import; replacing removes what the import no longer holds", arguments: Backend.allCases)
    func atomicAndReplacing(backend: Backend) async throws {
        try await backend.withStore { store in
            let centre = Self.randomCentre(seed: 4)
            let (networks, locations) = Self.places(around: centre, count: 200, seed: 5)
            var bad = PlaceImport(networks: networks, locations: locations)
            bad.locations.append(Location(id: "\(networks[0].id)-stray", networkID: "\(networks[0].id)-nobody", name: "Stray", point: centre))
            await #expect(throws: ServerStoreError.invalidPlaces("unknown network")) {
                try await store.importPlaces(bad, replacing: false, now: Self.now)
            }
            #expect(try await store.network(id: networks[0].id) == nil, "nothing half-imported")

            _ = try await store.importPlaces(PlaceImport(networks: networks, locations: locations), replacing: false, now: Self.now)
            let network = networks[0].id
            var kept = locations.filter { $0.networkID == network }
            let dropped = kept.removeLast()
            kept[0].name = "Renamed"
            let summary = try await store.importPlaces(
                PlaceImport(locations: kept, network: network), replacing: true, now: Self.now.addingTimeInterval(1))
            #expect(summary.removed == 1)
            let page = try await store.locations(network: network, limit: 1_000, offset: 0)
            #expect(Set(page.locations) == Set(kept))
            #expect(!page.locations.contains { $0.id == dropped.id })
            #expect(
                try await store.locations(network: networks[1].id, limit: 1_000, offset: 0).total == locations.filter { $0.networkID == networks[1].id }.count)
        }
    }

    @Test("across the antimeridian and near a pole, and a large import in batches", arguments: Backend.allCases)
    func edges(backend: Backend) async throws {
        try await backend.withStore { store in
            let (networks, locations) = Self.places(around: GeoPoint(latitude: -17.5, longitude: 179.9)!, count: 12_000, seed: 6)
            #expect(locations.contains { $0.point.longitude < -179 } && locations.contains { $0.point.longitude > 179 })
            _ = try await store.importPlaces(PlaceImport(networks: networks, locations: locations), replacing: false, now: Self.now)
            for position in [GeoPoint(latitude: -17.5, longitude: 179.99)!, GeoPoint(latitude: -17.5, longitude: -179.99)!] {
                let regions = try await store.regions(position, userNetworks: [networks[0].id], radius: 50_000, limit: 100)
                #expect(regions == (try await Self.reference(store, around: position)).regions(at: position, userNetworks: [networks[0].id], limit: 100))
                #expect(regions.contains { $0.point.longitude > 0 } && regions.contains { $0.point.longitude < 0 })
            }
            let (polar, polarLocations) = Self.places(around: GeoPoint(latitude: 89.6, longitude: 0)!, count: 300, seed: 7)
            _ = try await store.importPlaces(PlaceImport(networks: polar, locations: polarLocations), replacing: false, now: Self.now)
            let pole = GeoPoint(latitude: 89.9, longitude: 120)!
            let regions = try await store.regions(pole, userNetworks: [], radius: 50_000, limit: 100)
            let expected = (try await Self.reference(store, around: pole)).regions(at: pole, userNetworks: [], limit: 100)
            let firstDifference = zip(regions, expected).first { $0 != $1 }
            #expect(regions == expected, "\(regions.count) vs \(expected.count), first difference \(String(describing: firstDifference))")
            #expect(regions.contains { region in polarLocations.contains { $0.id == region.id } })
            #expect(!regions.isEmpty)
        }
    }
}

extension PlaceStoreTests {
    /// Every place the store holds within 50 km of `position`, as a reference set: where earlier runs left places of
    /// their own on a shared PostgreSQL database, the answer must account for them too.
    static func reference(_ store: any ServerStore, around position: GeoPoint) async throws -> PlaceSet {
        PlaceSet(networks: try await store.networks(), locations: try await store.locations(in: GeoBox.around(position, radius: 50_000)))
    }
}
