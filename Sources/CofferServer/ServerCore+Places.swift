import CofferCrypto
import CofferPlaces
import CofferServerStore
import CofferSyncAPI
import Crypto
import Foundation
import HTTPTypes
import Synchronization

/// Places tiles already built, by cell, each with the places version it was built from; a new import makes them
/// stale. Bounded in entries and in bytes (a dense cell's tile is megabytes, and anyone may ask for any cell): past
/// either bound the cache starts again.
final class TileCache: Sendable {
    struct Entry: Sendable {
        var version: Int64
        var tile: PlaceTile
        var etag: String
    }

    private let entries = Mutex<(tiles: [String: Entry], bytes: Int)>(([:], 0))
    private let networks = Mutex<(version: Int64, list: [Network], counts: [String: Int])?>(nil)
    static let capacity = 2_048
    static let byteBudget = 256 << 20

    func tile(_ cell: String, version: Int64) -> Entry? {
        entries.withLock { $0.tiles[cell].flatMap { $0.version == version ? $0 : nil } }
    }

    func store(_ entry: Entry, cell: String) {
        entries.withLock { cache in
            let size = entry.tile.bytes.count
            if cache.tiles.count >= Self.capacity || cache.bytes + size > Self.byteBudget {
                cache = ([:], 0)
            }
            cache.bytes += size - (cache.tiles[cell]?.tile.bytes.count ?? 0)
            cache.tiles[cell] = entry
        }
    }

    func networks(version: Int64) -> (list: [Network], counts: [String: Int])? {
        networks.withLock { $0.flatMap { $0.version == version ? ($0.list, $0.counts) : nil } }
    }

    func store(networks list: [Network], counts: [String: Int], version: Int64) {
        networks.withLock { $0 = (version, list, counts) }
    }
}

/// The places endpoints: CardOnCue's (`/v1/networks`, `/v1/locations/nearby`, `/v1/region-refresh`, `/v1/admin/*`),
/// which take the positions and networks its clients choose to send and keep neither, and Coffer's private path
/// (`/v1/places/tiles/{cell}`), which learns at most a coarse cell.
extension ServerCore {
    // MARK: Directory

    func networks(search: String?, category: String?) async throws -> NetworkList {
        if let category, NetworkCategory(rawValue: category) == nil {
            throw APIError.invalidRequest(
                "category must be one of \(NetworkCategory.allCases.map(\.rawValue).joined(separator: ", "))", field: "category")
        }
        if let search, search.utf8.count > 200 { throw APIError.invalidRequest("search is too long", field: "search") }
        let (all, counts) = try await directory()
        let chosen = all.filter { network in
            (category == nil || network.category.rawValue == category)
                && (search.map { $0.isEmpty || network.matches(search: $0) } ?? true)
        }
        return NetworkList(networks: chosen.map { NetworkJSON($0, locationCount: counts[$0.id] ?? 0) })
    }

    func networkLocations(id: String, limit: Int, offset: Int) async throws -> NetworkLocations {
        guard (1...1_000).contains(limit) else { throw APIError.invalidRequest("limit must be between 1 and 1000", field: "limit") }
        guard offset >= 0 else { throw APIError.invalidRequest("offset must not be negative", field: "offset") }
        guard Network.isSlug(id), let network = try await store.network(id: id) else { throw APIError.networkNotFound }
        let page = try await store.locations(network: id, limit: limit, offset: offset)
        return NetworkLocations(
            network: NetworkJSON(network, locationCount: page.total),
            locations: page.locations.map { LocationJSON($0, network: network) }, total: page.total)
    }

    /// Every network and its number of locations, read again only after an import (counting is a scan).
    private func directory() async throws -> (list: [Network], counts: [String: Int]) {
        let version = try await store.placesVersion()
        if let cached = tileCache.networks(version: version) { return cached }
        let stats = try await store.placesStats()
        let list = try await store.networks()
        tileCache.store(networks: list, counts: stats.perNetwork, version: stats.version)
        return (list, stats.perNetwork)
    }

    // MARK: CardOnCue's position-taking endpoints

    func nearby(latitude: Double?, longitude: Double?, radiusKM: Double, networks: [String], limit: Int) async throws -> NearbyLocations {
        let position = try Self.position(latitude, longitude)
        guard radiusKM.isFinite, (0.1...100).contains(radiusKM) else {
            throw APIError.invalidRequest("radius_km must be between 0.1 and 100", field: "radius_km")
        }
        guard (1...100).contains(limit) else { throw APIError.invalidRequest("limit must be between 1 and 100", field: "limit") }
        let filter = networks.isEmpty ? nil : Set(networks)
        if let index = await places.current() {
            return NearbyLocations(
                locations: index.nearby(position, radius: radiusKM * 1_000, networks: filter, limit: limit).map {
                    LocationJSON($0.location, network: $0.network, distance: $0.distance)
                })
        }
        let found = try await store.nearby(position, radius: radiusKM * 1_000, networks: filter, limit: limit)
        var directory: [String: Network] = [:]
        for network in try await self.directory().list { directory[network.id] = network }
        return NearbyLocations(locations: found.map { LocationJSON($0.location, network: directory[$0.location.networkID], distance: $0.distance) })
    }

    func regionRefresh(_ request: RegionRefreshRequest) async throws -> RegionRefreshResponse {
        let position = try Self.position(request.lat, request.lon)
        let radiusKM = request.radiusKM ?? RegionRules.searchRadius / 1_000
        guard radiusKM.isFinite, (1...100).contains(radiusKM) else {
            throw APIError.invalidRequest("radius_km must be between 1 and 100", field: "radius_km")
        }
        let limit = request.maxRegions ?? RegionRules.defaultLimit
        guard (1...RegionRules.defaultLimit).contains(limit) else {
            throw APIError.invalidRequest("max_regions must be between 1 and 20", field: "max_regions")
        }
        let networks = request.userNetworks ?? []
        guard networks.count <= 1_000, networks.allSatisfy({ $0.utf8.count <= PlaceLimits.idLength }) else {
            throw APIError.invalidRequest("user_networks must be at most 1000 network ids", field: "user_networks")
        }
        if let accuracy = request.accuracy, !accuracy.isFinite || accuracy < 0 {
            throw APIError.invalidRequest("accuracy must be a non-negative number of metres", field: "accuracy")
        }
        let regions: [MonitoredRegion]
        if let index = await places.current() {
            regions = index.regions(at: position, userNetworks: Set(networks), radius: radiusKM * 1_000, limit: limit)
        } else {
            regions = try await store.regions(position, userNetworks: Set(networks), radius: radiusKM * 1_000, limit: limit)
        }
        return RegionRefreshResponse(
            regions: regions.map(RegionJSON.init),
            refreshAfterMeters: max(Int(RegionRules.refreshDistance), regions.map(\.radius).max() ?? 0),
            cacheTTLSeconds: Int(RegionRules.refreshInterval), serverTime: now)
    }

    static func position(_ latitude: Double?, _ longitude: Double?) throws -> GeoPoint {
        guard let latitude, let longitude else { throw APIError.invalidRequest("Missing required parameters: lat, lon") }
        guard latitude.isFinite, abs(latitude) <= 90 else {
            throw APIError.invalidRequest("lat must be a number between -90 and 90", field: "lat")
        }
        guard longitude.isFinite, abs(longitude) <= 180 else {
            throw APIError.invalidRequest("lon must be a number between -180 and 180", field: "lon")
        }
        return GeoPoint(latitude: latitude, longitude: longitude)!
    }

    // MARK: Tiles

    /// The tile of a geohash-4 cell (or the pack of a geohash-2 cell): every location within 50 km of any point of
    /// the cell, padded to its size class, with an ETag of its bytes.
    func tile(cell: String, kind: PlaceTile.Kind) async throws -> TileCache.Entry {
        let precision = kind == .pack ? PlacesMedia.packPrecision : PlacesMedia.tilePrecision
        guard cell.utf8.count == precision, Geohash.isValid(cell), let box = Geohash.box(cell) else {
            throw APIError.invalidRequest("cell must be a geohash of \(precision) characters", field: "cell")
        }
        let version = try await store.placesVersion()
        if let cached = tileCache.tile(cell, version: version) { return cached }
        let radius = Int(RegionRules.searchRadius)
        let locations = try await store.locations(in: box.halo(radius: RegionRules.searchRadius))
        let tile: PlaceTile
        do {
            tile = try PlaceTile.encode(
                kind: kind, cell: cell, radius: radius, dataVersion: version, networks: try await directory().list,
                locations: locations)
        } catch {
            throw APIError(.contentTooLarge, "too_large", "This cell holds too many places for one tile")
        }
        let digest = Hex.encode(SHA256.hash(data: tile.bytes).prefix(16))
        let entry = TileCache.Entry(version: version, tile: tile, etag: "\"\(digest)\"")
        tileCache.store(entry, cell: cell)
        return entry
    }

    // MARK: Operators

    /// No bearer token at all is 401 (say who you are); a token that is not the operator's is 403, and audited.
    func requireOperator(_ authorization: String?, address: String?) async throws {
        guard let authorization, authorization.utf8.starts(with: "Bearer ".utf8), authorization.utf8.count > 7 else {
            throw APIError.missingOperatorToken
        }
        guard OperatorToken.matches(authorization, storedHash: operatorTokenHash) else {
            try await store.audit(AuditEvent(at: now, kind: .operatorRefused, userID: nil, address: address))
            throw APIError.adminRequired
        }
    }

    /// CardOnCue's "create or update a network": a new id is added (`created`), an existing one updated in place,
    /// keeping its locations and what the request leaves out.
    func createOrUpdateNetwork(
        _ request: NetworkCreateRequest, address: String?
    ) async throws -> (network: NetworkJSON, created: Bool) {
        let existing = Network.isSlug(request.id) ? try await store.network(id: request.id) : nil
        let network: Network
        do throws(PlacesError) {
            network = try request.network(updating: existing)
        } catch {
            throw APIError.invalidRequest(error.description, field: error.field)
        }
        _ = try await store.importPlaces(PlaceImport(networks: [network]), replacing: false, now: now)
        places.invalidate()
        try await store.audit(
            AuditEvent(
                at: now, kind: .placesImported, userID: nil, address: address, detail: existing == nil ? "1 network" : "1 network updated"))
        let count = existing == nil ? 0 : try await directory().counts[network.id] ?? 0
        return (NetworkJSON(network, locationCount: count), existing == nil)
    }

    /// An operator's import: a CardOnCue CSV, GeoJSON (collection or sequence) or Overpass JSON, in one transaction.
    func importPlaces(_ bytes: [UInt8], network: String?, replacing: Bool, address: String?) async throws -> PlacesImportResponse {
        let known = try await store.networks()
        let batch: PlaceImport
        do throws(PlacesError) {
            batch = try PlaceImporter.read(bytes, network: network, known: known)
        } catch .unknownNetwork {
            throw APIError(.notFound, "not_found", "Network not found")
        } catch .field("network_id", let problem) {
            throw APIError.invalidRequest(problem.description, field: "network_id")
        } catch {
            // Anything else is wrong inside the uploaded file.
            throw APIError.invalidRequest(error.description, field: "file")
        }
        let summary: PlaceImportSummary
        do throws(ServerStoreError) {
            summary = try await store.importPlaces(batch, replacing: replacing, now: now)
            places.invalidate()
        } catch .invalidPlaces(let rule) {
            throw APIError.invalidRequest(rule, field: "file")
        } catch {
            throw error
        }
        try await store.audit(
            AuditEvent(
                at: now, kind: .placesImported, userID: nil, address: address,
                detail: "\(summary.networks) networks, \(summary.locations) locations, \(summary.removed) removed"))
        return PlacesImportResponse(
            imported: summary.locations, networks: summary.networks, removed: summary.removed, skipped: batch.skipped)
    }
}
