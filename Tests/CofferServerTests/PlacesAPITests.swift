import CofferPlaces
import CofferServer
import CofferServerStore
import CofferServerTestSupport
import CofferSyncAPI
import CofferTestSupport
import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationEssentialsCompat
import Testing

@Suite("Places over HTTP: CardOnCue's endpoints, tiles, operators")
struct PlacesAPITests {
    static let fixtures = TestSupport.repositoryRoot.appendingPathComponent("Tests/CofferPlacesTests/Fixtures")

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    /// A server whose data directory holds an operator token, with CardOnCue's sample networks and stores imported.
    static func withPlaces(
        _ backend: Backend, logs: LogCollector = LogCollector(),
        _ body: @escaping @Sendable (APIClient, any ServerStore, String) async throws -> Void
    ) async throws {
        let directory = try TestSupport.temporaryDirectory("places-server")
        let token = try OperatorToken.create(dataDirectory: directory)
        try await withServer(backend, logs: logs, configure: { $0.dataDirectory = directory }) { api, store in
            for (file, network) in [
                ("networks_wikidata.csv", nil), ("costco.csv", "costco"), ("whole-foods.csv", "whole-foods"),
                ("kohls.csv", "kohls"), ("sfpl.csv", "sfpl"),
            ] as [(String, String?)] {
                let path = "/v1/admin/import" + (network.map { "?network_id=\($0)&overwrite=true" } ?? "")
                let answer = try await api.sendRaw(
                    .post, path, headers: [.authorization: "Bearer \(token)", .contentType: "text/csv"],
                    body: ByteBuffer(data: try fixture(file)))
                try #require(answer.status == .ok, "import \(file): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
            }
            try await body(api, store, token)
        }
    }

    @Test("the directory is public; search, category, pages; unknown network 404; bad parameters 400", arguments: Backend.allCases)
    func directory(backend: Backend) async throws {
        try await Self.withPlaces(backend) { api, _, _ in
            let all = try await api.send(.get, "/v1/networks").decode(NetworkList.self)
            #expect(Set(all.networks.map(\.id)).isSuperset(of: ["costco", "whole-foods", "kohls", "sfpl", "disneyland"]))
            #expect(all.networks.first { $0.id == "costco" }?.locationCount == 5)
            let search = try await api.send(.get, "/v1/networks?search=WHOLESALE").decode(NetworkList.self)
            #expect(search.networks.map(\.id) == ["costco"])
            let library = try await api.send(.get, "/v1/networks?category=library").decode(NetworkList.self)
            #expect(library.networks.map(\.id) == ["sfpl"])
            #expect(try await api.send(.get, "/v1/networks?category=bakery").status == .badRequest)

            let page = try await api.send(.get, "/v1/networks/costco/locations?limit=2&offset=1").decode(NetworkLocations.self)
            #expect(page.total == 5 && page.count == 2 && page.locations.map(\.id) == ["loc_costco_002", "loc_costco_003"])
            #expect(page.locations.allSatisfy { $0.radiusMeters > 0 && $0.networkName == "Costco" })
            let missing = try await api.send(.get, "/v1/networks/nowhere/locations")
            #expect(missing.status == .notFound && missing.error?.message == "Network not found")
            #expect(try await api.send(.get, "/v1/networks/costco/locations?limit=0").status == .badRequest)
            #expect(try await api.send(.get, "/v1/networks/costco/locations?limit=1001").status == .badRequest)
            #expect(try await api.send(.get, "/v1/networks/costco/locations?offset=-1").status == .badRequest)
        }
    }

    @Test("nearby and region-refresh: a token, CardOnCue's bounds, the store's exact answer", arguments: Backend.allCases)
    func positions(backend: Backend) async throws {
        try await Self.withPlaces(backend) { api, store, operatorToken in
            #expect(try await api.send(.get, "/v1/locations/nearby?lat=37.7749&lon=-122.4194").status == .unauthorized)
            #expect(try await api.send(.post, "/v1/region-refresh", json: RegionRefreshRequest(lat: 37.7749, lon: -122.4194)).status == .unauthorized)
            let account = try await TestAccount.register(api)

            let near = try await api.send(.get, "/v1/locations/nearby?lat=37.7749&lon=-122.4194&radius_km=2", token: account.access)
                .decode(NearbyLocations.self)
            #expect(near.locations.first?.id == "loc_costco_001" && near.locations.first?.distanceMeters == 0)
            #expect(near.locations.allSatisfy { ($0.distanceMeters ?? .infinity) <= 2_000 })
            #expect(near.locations.map { $0.distanceMeters ?? 0 } == near.locations.map { $0.distanceMeters ?? 0 }.sorted())
            let onlySFPL = try await api.send(
                .get, "/v1/locations/nearby?lat=37.7749&lon=-122.4194&radius_km=100&network_ids=sfpl&limit=3", token: account.access
            ).decode(NearbyLocations.self)
            #expect(onlySFPL.count == 3 && onlySFPL.locations.allSatisfy { $0.networkID == "sfpl" })
            for (query, field) in [
                ("lat=91&lon=0", "lat"), ("lat=0&lon=181", "lon"), ("lat=0&lon=0&radius_km=0.05", "radius_km"),
                ("lat=0&lon=0&radius_km=101", "radius_km"), ("lat=0&lon=0&limit=101", "limit"),
                ("lat=abc&lon=0", "lat"), ("lat=nan&lon=0", "lat"), ("lat=0x1p3&lon=0", "lat"),
            ] {
                let answer = try await api.send(.get, "/v1/locations/nearby?\(query)", token: account.access)
                #expect(answer.status == .badRequest && answer.error?.details?.field == field, "\(query)")
            }
            let noPosition = try await api.send(.get, "/v1/locations/nearby?radius_km=3", token: account.access)
            #expect(noPosition.status == .badRequest && noPosition.error?.message == "Missing required parameters: lat, lon")

            let request = RegionRefreshRequest(lat: 37.7749, lon: -122.4194, userNetworks: ["sfpl"], maxRegions: 5)
            let refresh = try await api.send(.post, "/v1/region-refresh", token: account.access, json: request)
                .decode(RegionRefreshResponse.self)
            let expected = try await store.regions(
                GeoPoint(latitude: 37.7749, longitude: -122.4194)!, userNetworks: ["sfpl"], radius: 50_000, limit: 5)
            #expect(refresh.regions.map(\.id) == expected.map(\.id))
            #expect(refresh.regions.prefix(while: { $0.priority == 1 }).allSatisfy { $0.networkID == "sfpl" })
            #expect(refresh.regions.first?.priority == 1 && refresh.cacheTTLSeconds == 21_600 && refresh.refreshAfterMeters == 500)
            for body in [
                #"{"lat":37.7,"lon":-122.4,"max_regions":21}"#, #"{"lat":37.7,"lon":-122.4,"max_regions":0}"#,
                #"{"lat":37.7,"lon":-122.4,"radius_km":0.5}"#, #"{"lat":95,"lon":-122.4}"#, #"{"lon":-122.4}"#,
                #"{"lat":37.7,"lon":-122.4,"user_networks":"costco"}"#,
            ] {
                let answer = try await api.send(.post, "/v1/region-refresh", token: account.access, raw: Data(body.utf8))
                #expect(answer.status == .badRequest, "\(body)")
            }
            // Disneyland's large area keeps its radius, and the refresh distance follows it.
            let csv = "name,address,lat,lon,radius,phone\nDisneyland Park,,33.8121,-117.9190,,\n"
            let parkImport = try await api.sendRaw(
                .post, "/v1/admin/import?network_id=disneyland", headers: [.authorization: "Bearer \(operatorToken)"],
                body: ByteBuffer(string: csv))
            #expect(parkImport.status == .ok)
            let park = try await api.send(
                .post, "/v1/region-refresh", token: account.access, json: RegionRefreshRequest(lat: 33.81, lon: -117.92, userNetworks: ["disneyland"])
            ).decode(RegionRefreshResponse.self)
            #expect(park.regions.first?.radiusMeters == 2_000 && park.refreshAfterMeters == 2_000)
        }
    }

    @Test("tiles: public, cacheable, padded, the halo's places and nothing else; bad cells 400", arguments: Backend.allCases)
    func tiles(backend: Backend) async throws {
        try await Self.withPlaces(backend) { api, store, _ in
            let answer = try await api.send(.get, "/v1/places/tiles/9q8y")
            #expect(answer.status == .ok)
            // HEAD answers as GET, without the body (on PostgreSQL, other tests' imports may change the tile between
            // two requests: the GET right after it, of the same ETag, is the one to compare with).
            var head = try await api.send(.head, "/v1/places/tiles/9q8y")
            var get = try await api.send(.get, "/v1/places/tiles/9q8y")
            for _ in 0..<5 where head.headers[.eTag] != get.headers[.eTag] {
                head = try await api.send(.head, "/v1/places/tiles/9q8y")
                get = try await api.send(.get, "/v1/places/tiles/9q8y")
            }
            #expect(head.status == .ok && head.body.isEmpty && head.headers[.eTag] == get.headers[.eTag])
            #expect(head.headers[.contentLength] == "\(get.body.count)" && head.headers[.contentType] == PlacesMedia.tile)
            #expect(try await api.send(.head, "/v1/places/packs/9q").status == .ok)
            #expect(try await api.send(.head, "/v1/places/tiles/9q8").status == .badRequest)
            #expect(answer.headers[.contentType] == PlacesMedia.tile)
            #expect(answer.headers[.cacheControl] == "public, max-age=21600, no-transform")
            let etag = try #require(answer.headers[HTTPField.Name("ETag")!])
            let tile = try PlaceTile(bytes: Array(answer.body))
            #expect(tile.kind == .cell && tile.cell == "9q8y" && tile.radius == 50_000)
            #expect(answer.body.count == PlaceTile.sizeClass(for: answer.body.count))
            let halo = Geohash.box("9q8y")!.halo(radius: 50_000)
            let expected = try await store.locations(in: halo)
            #expect(Set(tile.locations) == Set(expected))
            #expect(tile.locations.contains { $0.id == "loc_costco_001" } && !tile.locations.contains { $0.networkID == "disneyland" })

            // Another test's import (PostgreSQL is shared) may change the tile between two requests: ask until the
            // tag holds still.
            var notModified = false
            var current = etag
            for _ in 0..<10 where !notModified {
                let again = try await api.sendRaw(.get, "/v1/places/tiles/9q8y", headers: [HTTPField.Name("If-None-Match")!: "W/" + current], body: nil)
                notModified = again.status == .notModified && again.body.isEmpty
                current = again.headers[HTTPField.Name("ETag")!] ?? current
            }
            #expect(notModified)
            // A cell of the Southern Ocean, far from every test's places.
            let ocean = Geohash.encode(GeoPoint(latitude: -75, longitude: -150)!, precision: 4)
            let empty = try await api.send(.get, "/v1/places/tiles/\(ocean)")
            #expect(empty.status == .ok && empty.body.count == PlaceTile.smallestSizeClass)
            #expect(try PlaceTile(bytes: Array(empty.body)).locationCount == 0)
            let pack = try PlaceTile(bytes: Array(try await api.send(.get, "/v1/places/packs/9q").body))
            #expect(pack.kind == .pack && Set(pack.locations.map(\.id)).isSuperset(of: tile.locations.map(\.id)))
            for cell in ["9q8", "9q8yz", "9Q8Y", "9qay", "%20%20%20%20"] {
                #expect(try await api.send(.get, "/v1/places/tiles/\(cell)").status == .badRequest, "\(cell)")
            }
            #expect(try await api.send(.get, "/v1/places/packs/9q8y").status == .badRequest)
        }
    }

    @Test("operators only: no token, a wrong one or an account's are refused and audited; imports are atomic", arguments: Backend.allCases)
    func operators(backend: Backend) async throws {
        try await Self.withPlaces(backend) { api, store, token in
            let account = try await TestAccount.register(api)
            // PostgreSQL's places are shared by every test and run: a network of this run's own, placed far from the
            // fixtures' stores that the other tests read.
            let bakery = "bakery-\(UInt32.random(in: 0...UInt32.max))"
            let network = #"{"id":"\#(bakery)","name":"Bakery","category":"grocery"}"#
            for authorization in [nil, "Basic b3A6b3A=", "Bearer "] {
                var headers: HTTPFields = [.contentType: "application/json"]
                if let authorization { headers[.authorization] = authorization }
                let answer = try await api.sendRaw(.post, "/v1/admin/networks", headers: headers, body: ByteBuffer(string: network))
                #expect(answer.status == .unauthorized && answer.headers[.wwwAuthenticate] == "Bearer", "\(authorization ?? "none")")
            }
            for bearer in ["coffer-op-wrong", account.access, String(token.dropLast())] {
                let headers: HTTPFields = [.contentType: "application/json", .authorization: "Bearer \(bearer)"]
                let answer = try await api.sendRaw(.post, "/v1/admin/networks", headers: headers, body: ByteBuffer(string: network))
                #expect(answer.status == .forbidden && answer.error?.message == "Admin access required")
            }
            #expect(try await withMaintenance(of: store) { try await $0.auditEvents(limit: 50) }.filter { $0.kind == .operatorRefused }.count >= 3)
            // A refused network names the field at fault.
            for (body, field) in [
                (#"{"id":"Not A Slug","name":"Bakery"}"#, "id"), (#"{"id":"\#(bakery)","name":" "}"#, "name"),
                (#"{"id":"\#(bakery)","name":"B","wikidata":"X1"}"#, "wikidata"),
                (#"{"id":"\#(bakery)","name":"B","category":"bakery"}"#, "category"),
                (#"{"id":"\#(bakery)","name":"B","default_radius_meters":0}"#, "default_radius_meters"),
                (#"{"id":"\#(bakery)","name":"B","tags":[""]}"#, "tags"),
                (#"{"id":"\#(bakery)","name":"B","canonical_names":[""]}"#, "canonical_names"),
            ] {
                let answer = try await api.sendRaw(
                    .post, "/v1/admin/networks", headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                    body: ByteBuffer(string: body))
                #expect(answer.status == .badRequest && answer.error?.details?.field == field, "\(body)")
            }
            let created = try await api.sendRaw(
                .post, "/v1/admin/networks", headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                body: ByteBuffer(string: network))
            #expect(created.status == .created)
            #expect(try await store.network(id: bakery)?.category == .grocery)
            // CardOnCue's "create or update": an existing id is updated, keeping what the request leaves out.
            let renamed = #"{"id":"\#(bakery)","name":"Bakery & Café","default_radius_meters":60}"#
            let updated = try await api.sendRaw(
                .post, "/v1/admin/networks", headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                body: ByteBuffer(string: renamed))
            #expect(updated.status == .ok && updated.json?["name"] as? String == "Bakery & Café")
            let stored = try await store.network(id: bakery)
            #expect(stored?.category == .grocery && stored?.defaultRadius == 60 && stored?.name == "Bakery & Café")
            #expect(stored?.canonicalNames == ["Bakery"], "kept from the first request (CardOnCue's default: [name])")
            let badUpdate = try await api.sendRaw(
                .post, "/v1/admin/networks", headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"id":"\#(bakery)","name":"B","default_radius_meters":0}"#))
            let unchanged = try await store.network(id: bakery)
            #expect(badUpdate.status == .badRequest && unchanged?.defaultRadius == 60, "nothing changed")

            // CardOnCue's multipart form.
            let boundary = "coffer-test-boundary"
            var form = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"network_id\"\r\n\r\n\(bakery)\r\n".utf8)
            form += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b.csv\"\r\nContent-Type: text/csv\r\n\r\n".utf8)
            form += Data("name,address,lat,lon,radius,phone\nBakery One,,-31.2,-140.5,40,\n".utf8)
            form += Data("\r\n--\(boundary)--\r\n".utf8)
            let imported = try await api.sendRaw(
                .post, "/v1/admin/import",
                headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=\(boundary)"],
                body: ByteBuffer(data: form))
            #expect(imported.status == .ok && imported.json?["imported"] as? Int == 1)
            // Updating the network keeps its locations, and says how many it has.
            let again = try await api.sendRaw(
                .post, "/v1/admin/networks", headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"id":"\#(bakery)","name":"Bakery","tags":["bread"]}"#))
            #expect(again.status == .ok && again.json?["location_count"] as? Int == 1)
            #expect(try await store.locations(network: bakery, limit: 10, offset: 0).total == 1)
            // The query is checked with a form too, and fills in what the form leaves out.
            let badQuery = try await api.sendRaw(
                .post, "/v1/admin/import?overwrite=null",
                headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=\(boundary)"],
                body: ByteBuffer(data: form))
            #expect(badQuery.status == .badRequest && badQuery.error?.details?.field == "overwrite")

            let before = try await store.placesStats()
            for (file, network, status) in [
                ("bad_lat.csv", "costco", HTTPResponse.Status.badRequest), ("costco.csv", "nowhere", .notFound),
                ("bad_json.geojson", nil, .badRequest), ("bad_feature.geojson", nil, .badRequest),
            ] {
                let path = "/v1/admin/import" + (network.map { "?network_id=\($0)" } ?? "")
                let answer = try await api.sendRaw(
                    .post, path, headers: [.authorization: "Bearer \(token)"], body: ByteBuffer(data: try Self.fixture(file)))
                #expect(answer.status == status, "\(file)")
                if status == .badRequest { #expect(answer.error?.details?.field == "file", "\(file)") }
            }
            let noNetwork = try await api.sendRaw(
                .post, "/v1/admin/import", headers: [.authorization: "Bearer \(token)", .contentType: "text/csv"],
                body: ByteBuffer(string: "name,address,lat,lon,radius,phone\nA,,1,2,,\n"))
            #expect(noNetwork.status == .badRequest && noNetwork.error?.details?.field == "network_id")
            let noBoundary = try await api.sendRaw(
                .post, "/v1/admin/import", headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data"],
                body: ByteBuffer(data: form))
            #expect(noBoundary.status == .badRequest && noBoundary.error?.details?.field == "Content-Type")
            let broken = try await api.sendRaw(
                .post, "/v1/admin/import",
                headers: [.authorization: "Bearer \(token)", .contentType: "multipart/form-data; boundary=\(boundary)"],
                body: ByteBuffer(string: "--\(boundary)\r\nContent-Disposition: form-data; name=\"network_id\"\r\n\r\nx\r\n"))
            #expect(broken.status == .badRequest && broken.error?.details?.field != nil)
            let after = try await store.placesStats()
            // PostgreSQL's places are shared with the tests running beside this one: compare what this test touched.
            let touched = backend == .sqlite ? Set(before.perNetwork.keys).union(after.perNetwork.keys) : ["costco", bakery]
            for network in touched { #expect(after.perNetwork[network] == before.perNetwork[network], "nothing half-imported: \(network)") }
            if backend == .sqlite { #expect(after.networks == before.networks) }
            let tooBig = try await api.sendRaw(
                .post, "/v1/admin/import?network_id=costco", headers: [.authorization: "Bearer \(token)"],
                body: ByteBuffer(repeating: 0x41, count: (64 << 20) + 1))
            #expect(tooBig.status == .contentTooLarge)
        }
    }
}
