import CofferCrypto
import Foundation

/// What an import brings, checked and ready to store in one transaction, and what it left out and why.
public struct PlaceImport: Sendable, Equatable {
    public var networks: [Network]
    public var locations: [Location]
    public var skipped: [SkippedRecord]
    /// Set by a locations CSV: the one network its rows belong to.
    public var network: String?

    public init(networks: [Network] = [], locations: [Location] = [], skipped: [SkippedRecord] = [], network: String? = nil) {
        self.networks = networks
        self.locations = locations
        self.skipped = skipped
        self.network = network
    }
}

/// A record an import left out on purpose (not a store of a known brand, a duplicate, no position), with the
/// reason. Bad values are not skipped: they refuse the whole import.
public struct SkippedRecord: Sendable, Equatable, Codable {
    /// The line (CSV) or record (GeoJSON feature, Overpass element) number, from 1.
    public var record: Int
    public var reason: String

    public init(record: Int, reason: String) {
        self.record = record
        self.reason = reason
    }
}

/// The formats places are imported from.
public enum PlaceFormat: String, Sendable, CaseIterable {
    /// CardOnCue's operator CSV of networks: `id,name,canonical_names,category,is_large_area,default_radius_meters,tags`
    /// (and an optional `wikidata`).
    case networksCSV = "networks-csv"
    /// CardOnCue's locations CSV of one network: `name,address,lat,lon,radius,phone`.
    case locationsCSV = "locations-csv"
    /// A GeoJSON FeatureCollection (All the Places, exports of GIS tools).
    case geoJSON = "geojson"
    /// A GeoJSON text sequence: one feature per line, each optionally after an RS byte (osmium, RFC 8142).
    case geoJSONSequence = "geojsonseq"
    /// Overpass API JSON (`out center;`).
    case overpass

    /// The format of a file from its first bytes: JSON with `elements` is Overpass, a FeatureCollection is GeoJSON,
    /// a leading RS or one feature per line a sequence, a CSV header with `lat` and `lon` a locations file, one
    /// with `id` and `name` a networks file.
    public static func detect(_ bytes: [UInt8]) -> PlaceFormat? {
        var start = bytes.startIndex
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start += 3 }
        while start < bytes.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        guard start < bytes.endIndex else { return nil }
        if bytes[start] == 0x1E { return .geoJSONSequence }
        let head = String(decoding: bytes[start..<min(bytes.endIndex, start + 4096)], as: UTF8.self)
        if bytes[start] == 0x7B {
            if head.contains("\"elements\"") { return .overpass }
            let firstLine = head.split(separator: "\n", maxSplits: 1).first ?? ""
            if firstLine.contains("\"type\"") && firstLine.contains("\"Feature\"") && !firstLine.contains("FeatureCollection") && firstLine.hasSuffix("}") {
                return .geoJSONSequence
            }
            return .geoJSON
        }
        let header = (head.split(separator: "\n", maxSplits: 1).first ?? "").lowercased()
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines.union(["\""])) }
        if header.contains("lat") && header.contains("lon") { return .locationsCSV }
        if header.contains("id") && header.contains("name") { return .networksCSV }
        return nil
    }
}

/// Reads places files into a checked `PlaceImport`. Refuses, with the record number, any bad value (a latitude
/// outside ±90, NaN, an unknown network, a duplicate network id, an oversize file); skips, with a reason, records
/// that are not stores (no brand, no position) and repeats of a record already read.
public enum PlaceImporter {
    /// Reads `bytes` as `format` (detected when `nil`). `network` is the network of a locations CSV, or the one
    /// every GeoJSON/Overpass record belongs to; `known` are the networks already stored, by id.
    public static func read(
        _ bytes: [UInt8], format: PlaceFormat? = nil, network: String? = nil, known: [Network] = []
    ) throws(PlacesError) -> PlaceImport {
        guard bytes.count <= PlaceLimits.importBytes else {
            throw .tooLarge("the file is larger than \(PlaceLimits.importBytes >> 20) MiB")
        }
        // A file given with its network and not JSON is that network's locations CSV, even with a header too broken
        // to recognise: the header's own error is the useful one.
        let looksLikeJSON = bytes.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }.map { $0 == 0x7B || $0 == 0x1E } ?? false
        let guessed = network != nil && !looksLikeJSON ? .locationsCSV : PlaceFormat.detect(bytes)
        guard let format = format ?? guessed else {
            throw .malformed("not a places file (CardOnCue CSV, GeoJSON, GeoJSON sequence or Overpass JSON)")
        }
        let result: PlaceImport
        switch format {
        case .networksCSV:
            result = try CardOnCueCSV.networks(bytes)
        case .locationsCSV:
            guard let network else { throw .field("network_id", .invalid("a locations CSV needs the network it belongs to")) }
            guard let owner = known.first(where: { $0.id == network }) else { throw .unknownNetwork }
            result = try CardOnCueCSV.locations(bytes, network: owner)
        case .geoJSON, .geoJSONSequence, .overpass:
            var reader = BrandedPlaces(known: known, network: network)
            if let network, !known.contains(where: { $0.id == network }) { throw .unknownNetwork }
            switch format {
            case .geoJSON: try GeoJSONReader.collection(bytes, into: &reader)
            case .geoJSONSequence: try GeoJSONReader.sequence(bytes, into: &reader)
            default: try OverpassReader.read(bytes, into: &reader)
            }
            result = reader.result
        }
        guard result.locations.count <= PlaceLimits.importLocations else {
            throw .tooLarge("more than \(PlaceLimits.importLocations) locations in one import")
        }
        return result
    }
}

/// CardOnCue's operator CSVs.
enum CardOnCueCSV {
    static func networks(_ bytes: [UInt8]) throws(PlacesError) -> PlaceImport {
        let table = try CSVTable(bytes, required: ["id", "name"])
        var seen: Set<String> = []
        var networks: [Network] = []
        for row in table.rows {
            do throws(PlacesError) {
                guard let id = table.value(row, "id") else { throw .invalid("network id is empty") }
                guard seen.insert(id).inserted else { throw .invalid("network id repeats an earlier row") }
                let name = table.value(row, "name") ?? ""
                var category = NetworkCategory.other
                if let text = table.value(row, "category") {
                    guard let parsed = NetworkCategory(rawValue: text.lowercased()) else {
                        throw .invalid("category must be one of \(NetworkCategory.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    category = parsed
                }
                var radius = PlaceLimits.defaultRadius
                if let text = table.value(row, "default_radius_meters") {
                    guard let value = Self.metres(text) else { throw .invalid("default_radius_meters must be a number of metres") }
                    radius = value == 0 ? PlaceLimits.defaultRadius : value
                }
                var canonical = list(table.value(row, "canonical_names"))
                if canonical.isEmpty { canonical = [name] }
                networks.append(
                    try Network(
                        id: id, wikidata: table.value(row, "wikidata"), name: name, canonicalNames: canonical,
                        category: category, isLargeArea: try flag(table.value(row, "is_large_area")), defaultRadius: radius,
                        tags: list(table.value(row, "tags"))
                    ).validated())
            } catch {
                throw .record(row.line, error)
            }
        }
        return PlaceImport(networks: networks)
    }

    static func locations(_ bytes: [UInt8], network: Network) throws(PlacesError) -> PlaceImport {
        let table = try CSVTable(bytes, required: ["name", "lat", "lon"])
        var locations: [Location] = []
        locations.reserveCapacity(table.rows.count)
        for (offset, row) in table.rows.enumerated() {
            do throws(PlacesError) {
                let point = try Coordinates.point(latitude: table.value(row, "lat"), longitude: table.value(row, "lon"))
                var radius: Int?
                if let text = table.value(row, "radius") ?? table.value(row, "radius_meters") {
                    guard let value = Self.metres(text) else {
                        throw .invalid("radius must be a number of metres (empty or 0 for the network's default)")
                    }
                    radius = value == 0 ? nil : value
                }
                let number = String(offset + 1)
                let id = "loc_\(network.id)_" + String(repeating: "0", count: max(0, 3 - number.count)) + number
                locations.append(
                    try Location(
                        id: id, networkID: network.id, name: table.value(row, "name") ?? "", address: table.value(row, "address"),
                        point: point, radius: radius, phone: table.value(row, "phone")
                    ).validated())
            } catch {
                throw .record(row.line, error)
            }
        }
        return PlaceImport(locations: locations, network: network.id)
    }

    /// A radius as CardOnCue's importer reads it (`parseInt(text) || default`): whole metres, a fraction cut off
    /// (`120.7` is 120), 0 meaning the default. Anything `parseInt` would read only in part (`120m`, `1e3`, a sign)
    /// is refused rather than guessed at, and the range is checked with the location.
    static func metres(_ text: String) -> Int? {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 9, whole.allSatisfy({ $0.isASCII && $0.isNumber }),
            parts.count == 1 || parts[1].allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        return Int(whole)
    }

    /// `a|b|c` or `a,b,c` (CardOnCue writes either inside quotes).
    static func list(_ text: String?) -> [String] {
        guard let text else { return [] }
        let separator: Character = text.contains("|") ? "|" : ","
        return text.split(separator: separator).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func flag(_ text: String?) throws(PlacesError) -> Bool {
        switch text?.lowercased() {
        case nil, "false", "0", "no": return false
        case "true", "1", "yes": return true
        default: throw .invalid("is_large_area must be true or false")
        }
    }
}

/// Coordinates read from text or JSON numbers, refused when out of range or not finite.
enum Coordinates {
    static func point(latitude: String?, longitude: String?) throws(PlacesError) -> GeoPoint {
        guard let latitude, let longitude else { throw .invalid("lat and lon are required") }
        return try point(latitude: Double(latitude), longitude: Double(longitude))
    }

    static func point(latitude: Double?, longitude: Double?) throws(PlacesError) -> GeoPoint {
        guard let latitude, latitude.isFinite, abs(latitude) <= 90 else {
            throw .invalid("latitude must be a number within ±90")
        }
        guard let longitude, longitude.isFinite, abs(longitude) <= 180 else {
            throw .invalid("longitude must be a number within ±180")
        }
        return GeoPoint(latitude: latitude, longitude: longitude)!
    }
}
