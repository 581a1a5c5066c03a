import CofferPlaces
import Foundation

/// The places a server publishes: networks and their locations. Public data, shared by every user, written only by
/// operators (imports) and read by anyone; no request that reads it leaves a trace of its position here. Both
/// stores answer geographic questions through a spatial index (SQLite's R*Tree, PostgreSQL's GiST over `point`)
/// and then apply `Haversine` and `RegionSelector` exactly, so that both give the same answers as a client that
/// computes from a tile.
public protocol PlaceStore: Sendable {
    /// Stores an import in one transaction: networks upserted by id, locations upserted by id. With `replacing`,
    /// the locations of the import's networks that it does not hold are deleted first. Checks that every location's
    /// network exists (in the import or the store).
    func importPlaces(_ batch: PlaceImport, replacing: Bool, now: Date) async throws(ServerStoreError) -> PlaceImportSummary
    /// One network.
    func network(id: String) async throws(ServerStoreError) -> Network?
    /// Every network, by id.
    func networks() async throws(ServerStoreError) -> [Network]
    /// A page of a network's locations, by id, and how many it has.
    func locations(network: String, limit: Int, offset: Int) async throws(ServerStoreError) -> (locations: [Location], total: Int)
    /// A page of every location, in id order after `after` (from the first when nil), at most `limit`: how a
    /// server reads all places into its memory index, a page at a time.
    func locationsPage(after: String?, limit: Int) async throws(ServerStoreError) -> [Location]
    /// Every location inside any of `boxes` (a tile's halo), with the networks they use.
    func locations(in boxes: [GeoBox]) async throws(ServerStoreError) -> [Location]
    /// The locations within `radius` metres of `position`, nearest first (then by id), at most `limit`, of
    /// `networks` only when given.
    func nearby(_ position: GeoPoint, radius: Double, networks: Set<String>?, limit: Int) async throws(ServerStoreError) -> [NearbyLocation]
    /// The monitored set at `position` (CardOnCue's `get_top_regions`, exactly as `PlaceSet.regions`).
    func regions(_ position: GeoPoint, userNetworks: Set<String>, radius: Double, limit: Int) async throws(ServerStoreError) -> [MonitoredRegion]
    /// Counts and the version of the places (the time of the last import), which tiles carry for caching.
    func placesStats() async throws(ServerStoreError) -> PlacesStats
    /// The version alone (Unix ms of the last import, 0 before any): one row, read on every tile request.
    func placesVersion() async throws(ServerStoreError) -> Int64
}

/// What an import changed.
public struct PlaceImportSummary: Sendable, Equatable, Codable {
    public var networks: Int
    public var locations: Int
    /// Locations removed because `replacing` was asked and the import no longer holds them.
    public var removed: Int

    public init(networks: Int, locations: Int, removed: Int) {
        self.networks = networks
        self.locations = locations
        self.removed = removed
    }
}

/// A location and its distance from the position asked about.
public struct NearbyLocation: Sendable, Equatable {
    public var location: Location
    public var networkName: String
    public var distance: Double

    public init(location: Location, networkName: String, distance: Double) {
        self.location = location
        self.networkName = networkName
        self.distance = distance
    }
}

/// How many places a store holds.
public struct PlacesStats: Sendable, Equatable, Codable {
    public var networks: Int
    public var locations: Int
    /// Locations per network id.
    public var perNetwork: [String: Int]
    /// Unix milliseconds of the last import (0 before any).
    public var version: Int64

    enum CodingKeys: String, CodingKey {
        case networks, locations, version
        case perNetwork = "per_network"
    }

    public init(networks: Int, locations: Int, perNetwork: [String: Int], version: Int64) {
        self.networks = networks
        self.locations = locations
        self.perNetwork = perNetwork
        self.version = version
    }
}

/// The choice both stores make once their index has given the candidates: exact distances and order, as the
/// client computes them.
enum PlaceQueries {
    struct Candidate {
        var rowID: Int64
        var id: String
        var networkID: String
        var latitude: Double
        var longitude: Double
    }

    static func pick(
        _ candidates: [Candidate], position: GeoPoint, radius: Double, limit: Int, priority: (Candidate) -> Int
    ) -> [(candidate: Candidate, pick: RegionSelector.Pick)] {
        var selector = RegionSelector(position: position, radius: radius, limit: limit) { Array(candidates[$0].id.utf8) }
        for (index, candidate) in candidates.enumerated() {
            selector.consider(index: index, latitude: candidate.latitude, longitude: candidate.longitude, priority: priority(candidate))
        }
        return selector.picks.map { (candidates[$0.index], $0) }
    }

    /// Locations in an import whose network is in neither the import nor `stored`.
    static func checkNetworks(_ batch: PlaceImport, stored: Set<String>) throws(ServerStoreError) {
        let known = stored.union(batch.networks.map(\.id))
        if batch.locations.contains(where: { !known.contains($0.networkID) }) { throw .invalidPlaces("unknown network") }
    }
}
