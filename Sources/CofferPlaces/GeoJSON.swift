import CofferCrypto
import Foundation

/// Collects branded places from GeoJSON or Overpass records: networks keyed by their brand's Wikidata item, one
/// location per id (a later polygon replaces an earlier closed line of the same OpenStreetMap object, as osmium
/// writes both; other repeats are skipped).
struct BrandedPlaces {
    private var networksByQID: [String: String] = [:]
    private var networksByID: [String: Network] = [:]
    private var newNetworks: [Network] = []
    private var locations: [Location] = []
    private var indexByID: [String: (index: Int, fromLine: Bool)] = [:]
    private var skipped: [SkippedRecord] = []
    private let forcedNetwork: String?

    init(known: [Network], network: String?) {
        for network in known {
            networksByID[network.id] = network
            if let qid = network.wikidata { networksByQID[qid] = network.id }
        }
        forcedNetwork = network
    }

    var result: PlaceImport {
        PlaceImport(networks: newNetworks, locations: locations, skipped: skipped)
    }

    mutating func skip(_ record: Int, _ reason: String) {
        skipped.append(SkippedRecord(record: record, reason: reason))
    }

    /// Adds one record's place. `properties` are the feature's properties or the element's tags; `osmID` is
    /// `type/id` for OpenStreetMap objects; `fromLine` marks a centroid taken from a closed line.
    mutating func add(
        record: Int, properties: [String: JSONValue], osmID: String?, featureID: String?, point: GeoPoint, fromLine: Bool
    ) throws(PlacesError) {
        let network: Network
        if let forcedNetwork, let forced = networksByID[forcedNetwork] {
            network = forced
        } else {
            guard let qid = Self.text(properties["brand:wikidata"]) else { return skip(record, "no brand:wikidata") }
            guard Network.isQID(qid) else { throw .record(record, .invalid("brand:wikidata must be a Q followed by digits")) }
            network = try self.network(qid: qid, brand: Self.text(properties["brand"]) ?? Self.text(properties["name"]))
        }
        let id: String
        if let osmID {
            id = "osm:" + osmID
        } else if let reference = Self.text(properties["ref"]) {
            id = "\(network.id):\(reference)"
        } else if let featureID {
            id = "\(network.id):\(featureID)"
        } else {
            id = "\(network.id):\(point.latitude),\(point.longitude)"
        }
        let location: Location
        do throws(PlacesError) {
            location = try Location(
                id: id, networkID: network.id, name: Self.text(properties["name"]) ?? Self.text(properties["brand"]) ?? network.name,
                address: Self.address(properties), point: point, radius: nil,
                phone: Self.text(properties["phone"]) ?? Self.text(properties["contact:phone"]),
                hours: Self.text(properties["opening_hours"])
            ).validated()
        } catch {
            throw .record(record, error)
        }
        if let earlier = indexByID[id] {
            if earlier.fromLine && !fromLine {
                locations[earlier.index] = location
                indexByID[id] = (earlier.index, false)
            }
            return skip(record, "duplicate of an earlier record")
        }
        indexByID[id] = (locations.count, fromLine)
        locations.append(location)
    }

    private mutating func network(qid: String, brand: String?) throws(PlacesError) -> Network {
        if let id = networksByQID[qid], let network = networksByID[id] { return network }
        var slug = brand.flatMap(Network.slug(from:)) ?? qid.lowercased()
        if networksByID[slug] != nil {
            slug = String((slug.prefix(PlaceLimits.idLength - qid.count - 1) + "-" + qid.lowercased()))
        }
        let network = try Network(
            id: slug, wikidata: qid, name: brand ?? qid, canonicalNames: [brand ?? qid], category: .other
        ).validated()
        networksByQID[qid] = slug
        networksByID[slug] = network
        newNetworks.append(network)
        return network
    }

    /// A property as text: a string trimmed (nil when blank), a number as written in decimal; nil for anything else.
    static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            return trimmed.isEmpty ? nil : trimmed
        case .integer(let number)?: return String(number)
        case .unsignedInteger(let number)?: return String(number)
        case .fraction(let number)?: return String(number)
        default: return nil
        }
    }

    static func address(_ properties: [String: JSONValue]) -> String? {
        if let full = text(properties["addr:full"]) { return full }
        let street = [text(properties["addr:housenumber"]), text(properties["addr:street"])].compactMap { $0 }
            .joined(separator: " ")
        let parts = [
            street.isEmpty ? text(properties["addr:street_address"]) : street,
            text(properties["addr:city"]), text(properties["addr:state"]), text(properties["addr:postcode"]),
        ]
        .compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }
}

/// GeoJSON (RFC 7946) FeatureCollections and text sequences (RFC 8142, and osmium's line-per-record form).
enum GeoJSONReader {
    static func collection(_ bytes: [UInt8], into places: inout BrandedPlaces) throws(PlacesError) {
        guard let root = try json(bytes).objectValue else { throw .malformed("GeoJSON must be an object") }
        if root["type"]?.stringValue == "Feature" {
            return try feature(root, record: 1, into: &places)
        }
        guard root["type"]?.stringValue == "FeatureCollection", let features = root["features"]?.arrayValue else {
            throw .malformed("GeoJSON must be a FeatureCollection with a features array")
        }
        for (index, feature) in features.enumerated() {
            guard let object = feature.objectValue else { throw .record(index + 1, .malformed("a feature must be an object")) }
            try self.feature(object, record: index + 1, into: &places)
        }
    }

    static func sequence(_ bytes: [UInt8], into places: inout BrandedPlaces) throws(PlacesError) {
        var record = 0
        for line in bytes.split(whereSeparator: { $0 == 0x0A || $0 == 0x1E }) {
            let trimmed = line.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
            guard !trimmed.isEmpty, !trimmed.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) else { continue }
            record += 1
            let object: JSONValue
            do throws(PlacesError) {
                object = try json(trimmed)
            } catch {
                throw .record(record, error)
            }
            guard let feature = object.objectValue else { throw .record(record, .malformed("a record must be a feature")) }
            try self.feature(feature, record: record, into: &places)
        }
        guard record > 0 else { throw .malformed("the sequence holds no record") }
    }

    static func feature(_ feature: [String: JSONValue], record: Int, into places: inout BrandedPlaces) throws(PlacesError) {
        guard feature["type"]?.stringValue == "Feature" else { throw .record(record, .malformed("a record must be a Feature")) }
        let properties = feature["properties"]?.objectValue ?? [:]
        guard let geometry = feature["geometry"]?.objectValue else { return places.skip(record, "no geometry") }
        let centroid: (point: GeoPoint, fromLine: Bool)?
        do throws(PlacesError) {
            centroid = try Centroid.of(geometry)
        } catch {
            throw .record(record, error)
        }
        guard let centroid else { return places.skip(record, "not a point or an area") }
        var osmID: String?
        if let type = BrandedPlaces.text(properties["@type"]), let id = BrandedPlaces.text(properties["@id"]) {
            osmID = "\(type)/\(id)"
        }
        try places.add(
            record: record, properties: properties, osmID: osmID, featureID: BrandedPlaces.text(feature["id"]),
            point: centroid.point, fromLine: centroid.fromLine)
    }

    static func json(_ bytes: some Collection<UInt8>) throws(PlacesError) -> JSONValue {
        guard let value = JSONValue.parse(bytes) else { throw .malformed("the JSON is malformed") }
        return value
    }
}

/// Overpass API JSON: nodes with `lat`/`lon`, ways and relations with `center` (`out center;`).
enum OverpassReader {
    static func read(_ bytes: [UInt8], into places: inout BrandedPlaces) throws(PlacesError) {
        guard let elements = try GeoJSONReader.json(bytes)["elements"]?.arrayValue else {
            throw .malformed("Overpass JSON must be an object with an elements array")
        }
        for (index, element) in elements.enumerated() {
            let record = index + 1
            guard let element = element.objectValue, let type = element["type"]?.stringValue,
                let id = BrandedPlaces.text(element["id"])
            else { throw .record(record, .malformed("an element needs a type and an id")) }
            guard let tags = element["tags"]?.objectValue, !tags.isEmpty else {
                places.skip(record, "no tags")
                continue
            }
            let position = element["center"]?.objectValue ?? element
            guard position["lat"] != nil || position["lon"] != nil else {
                places.skip(record, "no position (use out center;)")
                continue
            }
            let point: GeoPoint
            do throws(PlacesError) {
                point = try Coordinates.point(latitude: position["lat"]?.doubleValue, longitude: position["lon"]?.doubleValue)
            } catch {
                throw .record(record, error)
            }
            try places.add(record: record, properties: tags, osmID: "\(type)/\(id)", featureID: nil, point: point, fromLine: false)
        }
    }
}

/// Where a GeoJSON geometry stands as one point: a Point itself; the area-weighted planar centroid (shoelace, in
/// degrees) of a Polygon's outer ring, of a MultiPolygon's polygons, or of a closed LineString taken as a ring.
/// Holes are ignored: a store's position need not be exact to a few metres.
enum Centroid {
    /// `nil` for geometries that are neither a point nor an area (an open line).
    static func of(_ geometry: [String: JSONValue]) throws(PlacesError) -> (point: GeoPoint, fromLine: Bool)? {
        let coordinates = geometry["coordinates"]
        switch geometry["type"]?.stringValue {
        case "Point":
            return (try position(coordinates), false)
        case "Polygon":
            let rings = try list(coordinates)
            guard let outer = rings.first else { throw .invalid("a polygon needs a ring") }
            let (point, _) = try ring(outer)
            return (point, false)
        case "MultiPolygon":
            let polygons = try list(coordinates)
            guard !polygons.isEmpty else { throw .invalid("a multipolygon needs a polygon") }
            var weighted = (latitude: 0.0, longitude: 0.0, area: 0.0)
            var plain: [GeoPoint] = []
            for polygon in polygons {
                guard let outer = try list(polygon).first else { throw .invalid("a polygon needs a ring") }
                let (point, area) = try ring(outer)
                plain.append(point)
                weighted.latitude += point.latitude * area
                weighted.longitude += point.longitude * area
                weighted.area += area
            }
            if weighted.area > 0 {
                return (try Coordinates.point(latitude: weighted.latitude / weighted.area, longitude: weighted.longitude / weighted.area), false)
            }
            return (try mean(plain), false)
        case "LineString":
            let positions = try list(coordinates)
            guard positions.count >= 4, let first = positions.first, let last = positions.last,
                try position(first) == position(last)
            else { return nil }
            return (try ring(coordinates).point, true)
        case "MultiLineString", "MultiPoint", "GeometryCollection":
            return nil
        default:
            throw .invalid("unknown geometry type")
        }
    }

    /// A ring's centroid and absolute area (square degrees); a ring of no area gives the mean of its distinct positions.
    static func ring(_ value: JSONValue?) throws(PlacesError) -> (point: GeoPoint, area: Double) {
        var points: [GeoPoint] = []
        for item in try list(value) { points.append(try position(item)) }
        guard points.count >= 4, points.first == points.last else { throw .invalid("a ring needs at least four positions, closed") }
        // Relative to the first vertex: products of raw degrees (≈ 10⁴) lose the digits that place a store.
        let origin = points[0]
        var twiceArea = 0.0
        var sumX = 0.0
        var sumY = 0.0
        for index in 0..<(points.count - 1) {
            let (x0, y0) = (points[index].longitude - origin.longitude, points[index].latitude - origin.latitude)
            let (x1, y1) = (points[index + 1].longitude - origin.longitude, points[index + 1].latitude - origin.latitude)
            let cross = x0 * y1 - x1 * y0
            twiceArea += cross
            sumX += (x0 + x1) * cross
            sumY += (y0 + y1) * cross
        }
        if twiceArea == 0 {
            return (try mean(points), 0)
        }
        let point = try Coordinates.point(
            latitude: origin.latitude + sumY / (3 * twiceArea), longitude: origin.longitude + sumX / (3 * twiceArea))
        return (point, abs(twiceArea) / 2)
    }

    static func mean(_ points: [GeoPoint]) throws(PlacesError) -> GeoPoint {
        var distinct: [GeoPoint] = []
        for point in points where !distinct.contains(point) { distinct.append(point) }
        guard !distinct.isEmpty else { throw .invalid("a geometry needs a position") }
        return try Coordinates.point(
            latitude: distinct.map(\.latitude).reduce(0, +) / Double(distinct.count),
            longitude: distinct.map(\.longitude).reduce(0, +) / Double(distinct.count))
    }

    static func position(_ value: JSONValue?) throws(PlacesError) -> GeoPoint {
        guard let numbers = value?.arrayValue, numbers.count >= 2,
            let longitude = numbers[0].doubleValue, let latitude = numbers[1].doubleValue
        else { throw .invalid("a position must be [longitude, latitude]") }
        return try Coordinates.point(latitude: latitude, longitude: longitude)
    }

    static func list(_ value: JSONValue?) throws(PlacesError) -> [JSONValue] {
        guard let list = value?.arrayValue else { throw .invalid("coordinates must be arrays") }
        return list
    }
}
