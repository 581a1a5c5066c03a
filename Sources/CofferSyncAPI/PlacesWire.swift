import CofferPlaces
import Foundation

// CardOnCue's places JSON (reference: cardoncue.md, endpoints 9–14): snake_case, coordinates in decimal degrees,
// distances and radii in metres.

/// A network as `GET /v1/networks` lists it.
public struct NetworkJSON: Codable, Sendable, Equatable {
    public var id: String
    public var wikidata: String?
    public var name: String
    public var canonicalNames: [String]
    public var category: String
    public var isLargeArea: Bool
    public var defaultRadiusMeters: Int
    public var tags: [String]
    /// How many locations the server holds for it (absent in requests).
    public var locationCount: Int?

    enum CodingKeys: String, CodingKey {
        case id, wikidata, name, category, tags
        case canonicalNames = "canonical_names"
        case isLargeArea = "is_large_area"
        case defaultRadiusMeters = "default_radius_meters"
        case locationCount = "location_count"
    }

    public init(_ network: Network, locationCount: Int? = nil) {
        id = network.id
        wikidata = network.wikidata
        name = network.name
        canonicalNames = network.canonicalNames
        category = network.category.rawValue
        isLargeArea = network.isLargeArea
        defaultRadiusMeters = network.defaultRadius
        tags = network.tags
        self.locationCount = locationCount
    }

    /// The network this describes, checked; CardOnCue's defaults fill what a creation request leaves out.
    public func network() throws(PlacesError) -> Network {
        guard let category = NetworkCategory(rawValue: category) else {
            let categories = NetworkCategory.allCases.map(\.rawValue).joined(separator: ", ")
            throw .field("category", .invalid("category must be one of \(categories)"))
        }
        return try Network(
            id: id, wikidata: wikidata, name: name, canonicalNames: canonicalNames.isEmpty ? [name] : canonicalNames,
            category: category, isLargeArea: isLargeArea, defaultRadius: defaultRadiusMeters, tags: tags
        ).validated()
    }
}

/// `POST /v1/admin/networks`: only `id` and `name` are required.
public struct NetworkCreateRequest: Decodable, Sendable {
    public var id: String
    public var wikidata: String?
    public var name: String
    public var canonicalNames: [String]?
    public var category: String?
    public var isLargeArea: Bool?
    public var defaultRadiusMeters: Int?
    public var tags: [String]?

    enum CodingKeys: String, CodingKey {
        case id, wikidata, name, category, tags
        case canonicalNames = "canonical_names"
        case isLargeArea = "is_large_area"
        case defaultRadiusMeters = "default_radius_meters"
    }

    /// The network this request asks for. Over an `existing` network of the same id, what the request leaves out is
    /// kept; for a new one, CardOnCue's defaults fill it in.
    public func network(updating existing: Network? = nil) throws(PlacesError) -> Network {
        try NetworkJSON(
            Network(
                id: id, wikidata: wikidata ?? existing?.wikidata, name: name,
                canonicalNames: canonicalNames ?? existing?.canonicalNames ?? [],
                isLargeArea: isLargeArea ?? existing?.isLargeArea ?? false,
                defaultRadius: defaultRadiusMeters ?? existing?.defaultRadius ?? PlaceLimits.defaultRadius,
                tags: tags ?? existing?.tags ?? [])
        ).with(category: category ?? existing?.category.rawValue ?? NetworkCategory.other.rawValue).network()
    }
}

extension NetworkJSON {
    func with(category: String) -> NetworkJSON {
        var copy = self
        copy.category = category
        return copy
    }
}

/// A location as the places endpoints answer it.
public struct LocationJSON: Codable, Sendable, Equatable {
    public var id: String
    public var networkID: String
    public var networkName: String?
    public var name: String
    public var address: String?
    public var lat: Double
    public var lon: Double
    /// The radius to watch: the location's own or its network's default.
    public var radiusMeters: Int
    public var phone: String?
    public var hours: String?
    public var distanceMeters: Double?

    enum CodingKeys: String, CodingKey {
        case id, name, address, lat, lon, phone, hours
        case networkID = "network_id"
        case networkName = "network_name"
        case radiusMeters = "radius_meters"
        case distanceMeters = "distance_meters"
    }

    public init(_ location: Location, network: Network?, distance: Double? = nil) {
        id = location.id
        networkID = location.networkID
        networkName = network?.name
        name = location.name
        address = location.address
        lat = location.point.latitude
        lon = location.point.longitude
        radiusMeters = location.effectiveRadius(in: network)
        phone = location.phone
        hours = location.hours
        distanceMeters = distance.map(Self.metres)
    }

    /// Distances to the centimetre: finer is noise, and shorter JSON.
    static func metres(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}

/// `GET /v1/networks`.
public struct NetworkList: Codable, Sendable {
    public var networks: [NetworkJSON]
    public var count: Int

    public init(networks: [NetworkJSON]) {
        self.networks = networks
        self.count = networks.count
    }
}

/// `GET /v1/networks/{id}/locations`.
public struct NetworkLocations: Codable, Sendable {
    public var network: NetworkJSON
    public var locations: [LocationJSON]
    public var count: Int
    public var total: Int

    public init(network: NetworkJSON, locations: [LocationJSON], total: Int) {
        self.network = network
        self.locations = locations
        self.count = locations.count
        self.total = total
    }
}

/// `GET /v1/locations/nearby`.
public struct NearbyLocations: Codable, Sendable {
    public var locations: [LocationJSON]
    public var count: Int

    public init(locations: [LocationJSON]) {
        self.locations = locations
        self.count = locations.count
    }
}

/// `POST /v1/region-refresh`: a position and networks CardOnCue's clients choose to send. Neither is stored.
public struct RegionRefreshRequest: Codable, Sendable {
    public var lat: Double
    public var lon: Double
    public var accuracy: Double?
    public var radiusKM: Double?
    public var userNetworks: [String]?
    public var maxRegions: Int?

    enum CodingKeys: String, CodingKey {
        case lat, lon, accuracy
        case radiusKM = "radius_km"
        case userNetworks = "user_networks"
        case maxRegions = "max_regions"
    }

    public init(lat: Double, lon: Double, radiusKM: Double? = nil, userNetworks: [String]? = nil, maxRegions: Int? = nil) {
        self.lat = lat
        self.lon = lon
        self.radiusKM = radiusKM
        self.userNetworks = userNetworks
        self.maxRegions = maxRegions
    }
}

/// One region of a region-refresh answer.
public struct RegionJSON: Codable, Sendable, Equatable {
    public var id: String
    public var networkID: String?
    public var networkName: String?
    public var name: String
    public var address: String?
    public var lat: Double
    public var lon: Double
    public var radiusMeters: Int
    public var priority: Int
    public var distanceMeters: Double

    enum CodingKeys: String, CodingKey {
        case id, name, address, lat, lon, priority
        case networkID = "network_id"
        case networkName = "network_name"
        case radiusMeters = "radius_meters"
        case distanceMeters = "distance_meters"
    }

    public init(_ region: MonitoredRegion) {
        id = region.id
        networkID = region.networkID
        networkName = region.networkName
        name = region.name
        address = region.address
        lat = region.point.latitude
        lon = region.point.longitude
        radiusMeters = region.radius
        priority = region.priority
        distanceMeters = LocationJSON.metres(region.distance)
    }
}

/// The answer to `POST /v1/region-refresh`.
public struct RegionRefreshResponse: Codable, Sendable {
    public var regions: [RegionJSON]
    /// Refresh after moving more than this: max(500 m, the largest radius returned).
    public var refreshAfterMeters: Int
    public var cacheTTLSeconds: Int
    public var serverTime: Date

    enum CodingKeys: String, CodingKey {
        case regions
        case refreshAfterMeters = "refresh_after_meters"
        case cacheTTLSeconds = "cache_ttl_seconds"
        case serverTime = "server_time"
    }

    public init(regions: [RegionJSON], refreshAfterMeters: Int, cacheTTLSeconds: Int, serverTime: Date) {
        self.regions = regions
        self.refreshAfterMeters = refreshAfterMeters
        self.cacheTTLSeconds = cacheTTLSeconds
        self.serverTime = serverTime
    }
}

/// The answer to `POST /v1/admin/import` (CardOnCue's `{imported, skipped, errors}`, and what else changed).
public struct PlacesImportResponse: Codable, Sendable {
    public var imported: Int
    public var networks: Int
    public var removed: Int
    public var skipped: Int
    /// Why records were skipped: `"record N: reason"`.
    public var errors: [String]

    public init(imported: Int, networks: Int, removed: Int, skipped: [SkippedRecord]) {
        self.imported = imported
        self.networks = networks
        self.removed = removed
        self.skipped = skipped.count
        self.errors = skipped.prefix(1_000).map { "record \($0.record): \($0.reason)" }
    }
}

/// The media type of a places tile (docs/FORMAT.md §9).
public enum PlacesMedia {
    public static let tile = "application/vnd.coffer.places-tile"
    /// Precision of the cells `GET /v1/places/tiles/{cell}` serves, and of the wider packs.
    public static let tilePrecision = 4
    public static let packPrecision = 2
}
