@testable import CofferServer
import CofferPlaces
import CofferServerStore
import CofferServerTestSupport
import CofferTestSupport
import Foundation
import Logging
import Testing

/// The server's memory index of places (`PlaceIndexCache`), built from each store: its answers against the
/// brute-force Python reference, and the rule that keeps it fresh.
@Suite("Places index in the server's memory")
struct PlaceIndexTests {
    static func cache(_ store: any ServerStore, clock: TestClock, interval: TimeInterval = 1) -> PlaceIndexCache {
        var logger = Logger(label: "test.places-index")
        logger.logLevel = .error
        return PlaceIndexCache(store: store, interval: interval, clock: clock.function, logger: logger)
    }

    struct NotRebuilt: Error {}

    /// Waits (up to 30 s) until the cache answers from an index of at least `version`, its clock passing the
    /// interval each time (on PostgreSQL, other tests may import meanwhile).
    static func index(_ cache: PlaceIndexCache, clock: TestClock, atLeast version: Int64) async throws -> PlaceIndex {
        for _ in 0..<600 {
            if let index = await cache.current(), index.version >= version { return index }
            try await Task.sleep(for: .milliseconds(50))
            clock.advance(1)
        }
        throw NotRebuilt()
    }

    @Test("built from the store, page by page, it answers as the brute-force reference in Python and as the store", arguments: Backend.allCases)
    func againstOracle(backend: Backend) async throws {
        try await backend.withStore { store in
            let centre = PlaceStoreTests.randomCentre(seed: 11)
            var (networks, locations) = PlaceStoreTests.places(around: centre, count: 25_000, seed: 12)
            // Two of the user's at one spot, so that the id decides their order.
            locations += ["b", "a"].map {
                Location(id: "\(networks[0].id)-twin-\($0)", networkID: networks[2].id, name: "Twin", point: centre, radius: 70)
            }
            _ = try await store.importPlaces(PlaceImport(networks: networks, locations: locations), replacing: false, now: PlaceStoreTests.now)
            let clock = TestClock()
            let cache = Self.cache(store, clock: clock)
            await cache.build()
            // On PostgreSQL other tests may import meanwhile: the index answers once it is of the store's version.
            let index = try await Self.index(cache, clock: clock, atLeast: try await store.placesVersion())
            #expect(index.count >= locations.count, "more than one page, every location")

            var generator = SplitMix64(seed: 13)
            var positions = [centre]
            while positions.count < 120 {
                positions.append(
                    GeoPoint(
                        latitude: centre.latitude + Double.random(in: -0.6...0.6, using: &generator),
                        longitude: max(-180, min(180, centre.longitude + Double.random(in: -0.8...0.8, using: &generator))))!)
            }
            let user: Set<String> = [networks[2].id, networks[5].id]
            // What the store holds within 50 km of every position: on PostgreSQL, other tests' places count too.
            var nearby: [String: Location] = [:]
            for position in positions {
                for location in try await store.locations(in: GeoBox.around(position, radius: 50_000)) { nearby[location.id] = location }
            }
            let byID = Dictionary(uniqueKeysWithValues: try await store.networks().map { ($0.id, $0) })
            let answer = try PlacesOracle.call(
                "regions",
                [
                    "locations": nearby.values.map { location -> [String: Any] in
                        [
                            "id": location.id, "network": location.networkID, "lat": location.point.latitude, "lon": location.point.longitude,
                            "radius": location.effectiveRadius(in: byID[location.networkID]),
                        ]
                    },
                    "positions": positions.map { [$0.latitude, $0.longitude] },
                    "user_networks": Array(user), "radius_m": 50_000, "max": 20,
                ])
            let expected = try #require(answer["regions"] as? [[String]])
            try #require(expected.count == positions.count)
            #expect(expected[0].prefix(2) == ["\(networks[0].id)-twin-a", "\(networks[0].id)-twin-b"])
            for (number, position) in positions.enumerated() {
                let regions = index.regions(at: position, userNetworks: user)
                #expect(regions.map(\.id) == expected[number], "position \(number)")
                #expect(regions == (try await store.regions(position, userNetworks: user, radius: 50_000, limit: 20)), "position \(number)")
                let only: Set<String>? = number % 2 == 0 ? nil : [networks[3].id]
                let near = index.nearby(position, radius: 3_000, networks: only, limit: 15)
                let fromStore = try await store.nearby(position, radius: 3_000, networks: only, limit: 15)
                #expect(near.map(\.location) == fromStore.map(\.location) && near.map(\.distance) == fromStore.map(\.distance))
                #expect(near.map(\.network.name) == fromStore.map(\.networkName))
            }
            #expect(expected.filter { $0.count == 20 }.count > 100, "full sets to order")
        }
    }

    @Test("fresh by rule: an import through this instance shows at once, through another within the interval", arguments: Backend.allCases)
    func freshness(backend: Backend) async throws {
        try await backend.withStore { store in
            let centre = PlaceStoreTests.randomCentre(seed: 21)
            let (networks, locations) = PlaceStoreTests.places(around: centre, count: 300, seed: 22)
            _ = try await store.importPlaces(PlaceImport(networks: networks, locations: locations), replacing: false, now: PlaceStoreTests.now)
            // Two instances on one store, each with its clock.
            let (clockA, clockB) = (TestClock(), TestClock())
            let (a, b) = (Self.cache(store, clock: clockA), Self.cache(store, clock: clockB))
            await a.build()
            await b.build()
            // On PostgreSQL other tests may import meanwhile: each answers once its index is of the store's version.
            let before = try await Self.index(b, clock: clockB, atLeast: 0)
            _ = try await Self.index(a, clock: clockA, atLeast: 0)

            // A store right at `centre`, imported through instance A.
            let newcomer = Location(id: "\(networks[0].id)-newcomer", networkID: networks[0].id, name: "New", point: centre, radius: 40)
            _ = try await store.importPlaces(PlaceImport(locations: [newcomer]), replacing: false, now: PlaceStoreTests.now.addingTimeInterval(1))
            a.invalidate()
            let imported = try await store.placesVersion()
            #expect(await a.current() == nil, "the importing instance stops answering from the old index at once")
            // B trusts its index for the interval, then reads the version, sees the import and hands over to the store.
            clockB.advance(0.9)
            #expect(await b.current()?.version == before.version)
            clockB.advance(0.2)
            #expect(await b.current() == nil)
            for (cache, clock) in [(a, clockA), (b, clockB)] {
                let index = try await Self.index(cache, clock: clock, atLeast: imported)
                #expect(index.regions(at: centre, userNetworks: [networks[0].id], limit: 1).first?.id == newcomer.id)
                #expect(before.regions(at: centre, userNetworks: [networks[0].id], limit: 1).first?.id != newcomer.id)
            }
        }
    }
}
