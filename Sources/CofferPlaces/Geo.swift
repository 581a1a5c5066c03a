import Foundation

/// A position in degrees (WGS84 latitude and longitude), validated: latitude within ±90, longitude within ±180,
/// both finite. Every coordinate Coffer stores or sends is rounded to 1e-7 degree (about 1 cm), so that a position
/// read back from a store, a tile or a vault is the very same `Double` that went in (docs/FORMAT.md §9).
public struct GeoPoint: Sendable, Hashable, CustomStringConvertible {
    public let latitude: Double
    public let longitude: Double

    /// A point from degrees, rounded to 1e-7; `nil` when either value is out of range or not finite.
    public init?(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
        self.latitude = Self.rounded(latitude)
        self.longitude = Self.rounded(longitude)
    }

    /// A point kept exactly as given (already validated), for cell arithmetic that must not round.
    init(exactLatitude latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// A point from fixed-point 1e-7 degrees (the tile format's unit).
    public init?(latitudeE7: Int32, longitudeE7: Int32) {
        guard abs(Int64(latitudeE7)) <= 900_000_000, abs(Int64(longitudeE7)) <= 1_800_000_000 else { return nil }
        self.latitude = Double(latitudeE7) / 1e7
        self.longitude = Double(longitudeE7) / 1e7
    }

    public var latitudeE7: Int32 { Int32((latitude * 1e7).rounded()) }
    public var longitudeE7: Int32 { Int32((longitude * 1e7).rounded()) }

    static func rounded(_ degrees: Double) -> Double {
        (degrees * 1e7).rounded() / 1e7
    }

    /// Parses `"lat,lon"` (decimal degrees, optional spaces), the form of `--at` and of Wallet pass locations.
    public init?(parsing text: some StringProtocol) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2,
            let latitude = Double(parts[0].trimmingCharacters(in: .whitespaces)),
            let longitude = Double(parts[1].trimmingCharacters(in: .whitespaces))
        else { return nil }
        self.init(latitude: latitude, longitude: longitude)
    }

    public var description: String { "\(latitude),\(longitude)" }
}

/// Great-circle distances on a sphere of radius 6,371,000 m: the formula and radius every part of Coffer (server,
/// client, tiles, tests) uses, so that all of them order and filter places identically (reference: on-cue.md §5).
public enum Haversine {
    public static let earthRadius = 6_371_000.0

    /// Metres between two points: `2R·asin(√a)`, `a = sin²(Δφ/2) + cos φ1 cos φ2 sin²(Δλ/2)`.
    @inlinable
    public static func distance(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        distance(latitude1: a.latitude, longitude1: a.longitude, latitude2: b.latitude, longitude2: b.longitude)
    }

    @inlinable
    public static func distance(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double) -> Double {
        distance(
            latitude1: latitude1, longitude1: longitude1, cosine1: cosine(latitude1),
            latitude2: latitude2, longitude2: longitude2, cosine2: cosine(latitude2))
    }

    /// cos φ of a latitude in degrees, as `distance` computes it.
    @inlinable
    public static func cosine(_ latitude: Double) -> Double {
        cos(latitude * (Double.pi / 180))
    }

    /// The same distance, bit for bit, for a caller that keeps each point's `cosine(latitude)` (an index computing
    /// many distances from one position saves two of its six transcendental functions).
    @inlinable
    public static func distance(
        latitude1: Double, longitude1: Double, cosine1: Double, latitude2: Double, longitude2: Double, cosine2: Double
    ) -> Double {
        let radians = Double.pi / 180
        let phi1 = latitude1 * radians
        let phi2 = latitude2 * radians
        let sinHalfPhi = sin((phi2 - phi1) / 2)
        let sinHalfLambda = sin((longitude2 - longitude1) * radians / 2)
        let a = sinHalfPhi * sinHalfPhi + cosine1 * cosine2 * sinHalfLambda * sinHalfLambda
        return 2 * earthRadius * asin(min(1, a.squareRoot()))
    }
}

/// A latitude/longitude rectangle in degrees that never crosses the antimeridian (`west <= east`); areas that do
/// are two boxes.
public struct GeoBox: Sendable, Hashable {
    public var south: Double
    public var north: Double
    public var west: Double
    public var east: Double

    public init(south: Double, north: Double, west: Double, east: Double) {
        self.south = south
        self.north = north
        self.west = west
        self.east = east
    }

    @inlinable
    public func contains(latitude: Double, longitude: Double) -> Bool {
        latitude >= south && latitude <= north && longitude >= west && longitude <= east
    }

    public func contains(_ point: GeoPoint) -> Bool { contains(latitude: point.latitude, longitude: point.longitude) }

    /// The boxes holding every point within `radius` metres of any point of this box (the "halo"): latitude grows by
    /// the arc `radius/R`; longitude by `asin(sin δ / cos φp)` at the edge nearer the pole, the widest the circle
    /// gets; past a pole the whole ring of longitudes is taken. A box crossing ±180 is split in two.
    public func halo(radius: Double) -> [GeoBox] {
        let delta = radius / Haversine.earthRadius
        let deltaLatitude = delta * 180 / .pi
        let poleward = max(abs(south), abs(north))
        let south = max(-90, self.south - deltaLatitude)
        let north = min(90, self.north + deltaLatitude)
        if poleward + deltaLatitude >= 90 {
            return [GeoBox(south: south, north: north, west: -180, east: 180)]
        }
        let ratio = sin(delta) / cos(poleward * .pi / 180)
        guard ratio < 1 else { return [GeoBox(south: south, north: north, west: -180, east: 180)] }
        let deltaLongitude = asin(ratio) * 180 / .pi
        let west = self.west - deltaLongitude
        let east = self.east + deltaLongitude
        if east - west >= 360 { return [GeoBox(south: south, north: north, west: -180, east: 180)] }
        if west < -180 {
            return [
                GeoBox(south: south, north: north, west: west + 360, east: 180),
                GeoBox(south: south, north: north, west: -180, east: east),
            ]
        }
        if east > 180 {
            return [
                GeoBox(south: south, north: north, west: west, east: 180),
                GeoBox(south: south, north: north, west: -180, east: east - 360),
            ]
        }
        return [GeoBox(south: south, north: north, west: west, east: east)]
    }

    /// The boxes around a circle of `radius` metres about `center`.
    public static func around(_ center: GeoPoint, radius: Double) -> [GeoBox] {
        GeoBox(south: center.latitude, north: center.latitude, west: center.longitude, east: center.longitude)
            .halo(radius: radius)
    }
}

extension GeoPoint: Codable {
    enum CodingKeys: String, CodingKey {
        case latitude = "lat"
        case longitude = "lon"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let latitude = try container.decode(Double.self, forKey: .latitude)
        let longitude = try container.decode(Double.self, forKey: .longitude)
        guard let point = GeoPoint(latitude: latitude, longitude: longitude) else {
            throw DecodingError.dataCorruptedError(forKey: .latitude, in: container, debugDescription: "position out of range")
        }
        self = point
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(latitude, forKey: .latitude)
        try container.encode(longitude, forKey: .longitude)
    }
}
