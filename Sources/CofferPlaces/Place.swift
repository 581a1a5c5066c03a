import Foundation

/// A chain of stores or venues (CardOnCue's "network"): Costco, a city's libraries, a theme park. Cards name the
/// networks they are accepted at by `id`.
public struct Network: Sendable, Hashable, Codable {
    /// A slug: lower-case letters, digits and `-` (`costco`, `whole-foods`).
    public var id: String
    /// The brand's Wikidata item (`Q715583`), when known: one name can mean several brands, a QID cannot.
    public var wikidata: String?
    public var name: String
    /// Other names people or importers use for it; searched like the name.
    public var canonicalNames: [String]
    public var category: NetworkCategory
    /// A venue too large for a store-sized circle (a theme park): its radius is kept whatever its size.
    public var isLargeArea: Bool
    /// The radius of a location that does not give its own.
    public var defaultRadius: Int
    public var tags: [String]

    public init(
        id: String, wikidata: String? = nil, name: String, canonicalNames: [String] = [], category: NetworkCategory = .other,
        isLargeArea: Bool = false, defaultRadius: Int = PlaceLimits.defaultRadius, tags: [String] = []
    ) {
        self.id = id
        self.wikidata = wikidata
        self.name = name
        self.canonicalNames = canonicalNames
        self.category = category
        self.isLargeArea = isLargeArea
        self.defaultRadius = defaultRadius
        self.tags = tags
    }

    /// Checks every field against `PlaceLimits`; the error names the rule, and the field (by its name in CardOnCue's
    /// CSV and JSON, in `PlacesError.field`), never a value.
    public func validated() throws(PlacesError) -> Network {
        func check(_ field: String, _ body: () throws(PlacesError) -> Void) throws(PlacesError) {
            do {
                try body()
            } catch {
                throw .field(field, error)
            }
        }
        try check("id") { () throws(PlacesError) in
            guard Self.isSlug(id) else { throw .invalid("network id must be 1–\(PlaceLimits.idLength) of a–z, 0–9 and -") }
        }
        try check("wikidata") { () throws(PlacesError) in
            if let wikidata, !Self.isQID(wikidata) { throw .invalid("wikidata must be a Q followed by digits") }
        }
        try check("name") { () throws(PlacesError) in try PlaceLimits.checkText(name, "network name", required: true) }
        try check(canonicalNames.count > PlaceLimits.listCount ? "canonical_names" : "tags") { () throws(PlacesError) in
            guard canonicalNames.count <= PlaceLimits.listCount, tags.count <= PlaceLimits.listCount else {
                throw .invalid("a network has at most \(PlaceLimits.listCount) names and tags")
            }
        }
        try check("canonical_names") { () throws(PlacesError) in
            for text in canonicalNames { try PlaceLimits.checkText(text, "canonical name", required: true) }
        }
        try check("tags") { () throws(PlacesError) in
            for text in tags { try PlaceLimits.checkText(text, "tag", required: true) }
        }
        try check("default_radius_meters") { () throws(PlacesError) in
            guard PlaceLimits.radii.contains(defaultRadius) else {
                throw .invalid("default radius must be \(PlaceLimits.radii.lowerBound)–\(PlaceLimits.radii.upperBound) m")
            }
        }
        return self
    }

    /// Whether `text` is a valid network id.
    public static func isSlug(_ text: some StringProtocol) -> Bool {
        let bytes = text.utf8
        guard (1...PlaceLimits.idLength).contains(bytes.count) else { return false }
        return bytes.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
    }

    static func isQID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count >= 2 && bytes.count <= 16 && bytes[0] == 0x51 && bytes.dropFirst().allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    /// A slug made from a brand name: lower-cased, every run of other characters than a–z and 0–9 turned into one
    /// `-`, trimmed of `-`; `nil` when nothing is left.
    public static func slug(from name: String) -> String? {
        var result: [UInt8] = []
        var pendingDash = false
        for byte in name.lowercased().utf8 {
            if (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) {
                if pendingDash && !result.isEmpty { result.append(0x2D) }
                pendingDash = false
                result.append(byte)
            } else {
                pendingDash = true
            }
        }
        let slug = String(decoding: result.prefix(PlaceLimits.idLength), as: UTF8.self)
        return slug.isEmpty ? nil : String(slug.reversed().drop(while: { $0 == "-" }).reversed())
    }

    /// Whether `query` (case-insensitive) is part of the name or of any canonical name.
    public func matches(search query: String) -> Bool {
        let needle = query.lowercased()
        return name.lowercased().contains(needle) || canonicalNames.contains { $0.lowercased().contains(needle) }
    }
}

/// CardOnCue's network categories.
public enum NetworkCategory: String, Sendable, Hashable, Codable, CaseIterable {
    case grocery, retail, library, entertainment
    case oneTime = "one-time"
    case other

    /// Its index in the tile format (docs/FORMAT.md §9).
    var code: UInt8 {
        UInt8(Self.allCases.firstIndex(of: self)!)
    }

    init?(code: UInt8) {
        guard Int(code) < Self.allCases.count else { return nil }
        self = Self.allCases[Int(code)]
    }
}

/// One store or venue of a network.
public struct Location: Sendable, Hashable, Codable {
    /// Unique across all networks: `loc_costco_001`, `osm:way/123`, `costco:1234`.
    public var id: String
    public var networkID: String
    public var name: String
    public var address: String?
    public var point: GeoPoint
    /// Its own radius in metres, or `nil` for the network's default.
    public var radius: Int?
    public var phone: String?
    /// Opening hours in OpenStreetMap's `opening_hours` syntax (`Mo-Sa 10:00-20:30`), kept as text.
    public var hours: String?

    public init(
        id: String, networkID: String, name: String, address: String? = nil, point: GeoPoint, radius: Int? = nil,
        phone: String? = nil, hours: String? = nil
    ) {
        self.id = id
        self.networkID = networkID
        self.name = name
        self.address = address
        self.point = point
        self.radius = radius
        self.phone = phone
        self.hours = hours
    }

    /// The radius to monitor: its own, else the network's default.
    public func effectiveRadius(in network: Network?) -> Int {
        radius ?? network?.defaultRadius ?? PlaceLimits.defaultRadius
    }

    /// Checks every field against `PlaceLimits`.
    public func validated() throws(PlacesError) -> Location {
        guard !id.isEmpty, id.utf8.count <= PlaceLimits.locationIDLength, PlaceLimits.isPrintable(id) else {
            throw .invalid("location id must be 1–\(PlaceLimits.locationIDLength) printable bytes")
        }
        guard Network.isSlug(networkID) else { throw .invalid("network id must be a slug") }
        try PlaceLimits.checkText(name, "location name", required: true)
        if let address { try PlaceLimits.checkText(address, "address", required: false, limit: PlaceLimits.addressLength) }
        if let phone { try PlaceLimits.checkText(phone, "phone", required: false) }
        if let hours { try PlaceLimits.checkText(hours, "hours", required: false, limit: PlaceLimits.addressLength) }
        if let radius, !PlaceLimits.radii.contains(radius) {
            throw .invalid("radius must be \(PlaceLimits.radii.lowerBound)–\(PlaceLimits.radii.upperBound) m")
        }
        return self
    }
}

/// The bounds every place passes before it is stored: read from files and the network, so hostile until checked.
public enum PlaceLimits {
    public static let defaultRadius = 100
    /// From a doorway to a theme park.
    public static let radii = 1...10_000
    public static let idLength = 64
    public static let locationIDLength = 128
    public static let textLength = 200
    public static let addressLength = 500
    public static let listCount = 32
    /// The most locations one import may bring.
    public static let importLocations = 2_000_000
    /// The largest file an import reads.
    public static let importBytes = 1 << 30

    static func checkText(_ text: String, _ what: String, required: Bool, limit: Int = textLength) throws(PlacesError) {
        if required && text.trimmingCharacters(in: .whitespaces).isEmpty { throw .invalid("\(what) must not be empty") }
        guard text.utf8.count <= limit else { throw .invalid("\(what) is longer than \(limit) bytes") }
        guard isPrintable(text) else { throw .invalid("\(what) holds control characters") }
    }

    static func isPrintable(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F && !(0x80..<0xA0).contains($0.value) }
    }
}

/// Failures of places: parsing, validation and formats. Descriptions name the rule and where (a line or record
/// number), never a value read from the input.
public enum PlacesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A value breaks a rule.
    case invalid(String)
    /// A file or tile is not in the expected format.
    case malformed(String)
    /// An input is larger than its limit.
    case tooLarge(String)
    /// A record names a network that neither the import nor the store holds.
    case unknownNetwork
    /// A problem in a numbered record of an import: `record` is the line (CSV) or feature (GeoJSON) number.
    indirect case record(Int, PlacesError)
    /// A problem with one named field (a CSV column, a JSON key or a request parameter); described as the problem
    /// alone, whose text already names the field for people.
    indirect case field(String, PlacesError)

    /// The field at fault, when the error names one.
    public var field: String? {
        switch self {
        case .field(let name, _): return name
        case .record(_, let inner): return inner.field
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .invalid(let rule): return rule
        case .malformed(let what): return what
        case .tooLarge(let what): return what
        case .unknownNetwork: return "unknown network (import the networks first)"
        case .record(let number, let inner): return "record \(number): \(inner)"
        case .field(_, let inner): return inner.description
        }
    }
}
