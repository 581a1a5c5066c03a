import Foundation

/// A set of places in Coffer's binary tile format (docs/FORMAT.md §9): what `GET /v1/places/tiles/{cell}` serves
/// and what the vault caches, sealed. Fixed-size records so that choosing regions reads only coordinates; strings
/// are decoded for the few locations chosen. The bytes are padded to a size class so that a tile's length does not
/// name its cell.
///
/// Layout (little-endian): a 48-byte header, `networkCount` × 16-byte network records, `locationCount` × 24-byte
/// location records, the string area, zero padding.
public struct PlaceTile: Sendable {
    public enum Kind: UInt8, Sendable {
        /// Every location within `radius` of any point of a cell (geohash-4 by default).
        case cell = 1
        /// The same for a wider cell (geohash-2), for people who won't reveal even a cell.
        case pack = 2
        /// Places a user imported into the vault, for use without a server.
        case local = 3
    }

    public static let magic: [UInt8] = Array("CFPT".utf8)
    public static let version: UInt8 = 1
    static let headerSize = 48
    static let networkRecordSize = 16
    static let locationRecordSize = 24
    /// The smallest padded size; each class doubles the one before.
    public static let smallestSizeClass = 16 << 10
    /// A tile larger than this is refused unread.
    public static let maximumSize = 256 << 20
    static let fieldSeparator: UInt8 = 0x1F
    static let listSeparator: UInt8 = 0x1E

    public let kind: Kind
    /// The cell the tile covers (empty for a local import).
    public let cell: String
    /// The halo radius in metres.
    public let radius: Int
    /// The version of the places it was made from (Unix ms of the last change), for caching.
    public let dataVersion: Int64
    public let networkCount: Int
    public let locationCount: Int
    /// The whole padded tile.
    public let bytes: [UInt8]
    private let networksStart: Int
    private let locationsStart: Int
    private let stringsStart: Int
    private let stringsEnd: Int

    // MARK: Writing

    /// Encodes `locations` and the networks they use (networks not in `networks` are refused).
    public static func encode(
        kind: Kind, cell: String, radius: Int, dataVersion: Int64, networks: [Network], locations: [Location]
    ) throws(PlacesError) -> PlaceTile {
        guard cell.utf8.count <= 12, cell.utf8.allSatisfy({ $0 >= 0x21 && $0 < 0x7F }) else { throw .invalid("a tile's cell is at most 12 ASCII characters") }
        var networkIndex: [String: Int] = [:]
        var used: [Network] = []
        let byID = Dictionary(networks.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for location in locations where networkIndex[location.networkID] == nil {
            guard let network = byID[location.networkID] else { throw .unknownNetwork }
            networkIndex[location.networkID] = used.count
            used.append(network)
        }
        var strings: [UInt8] = []
        var networkRecords: [UInt8] = []
        networkRecords.reserveCapacity(used.count * networkRecordSize)
        for network in used {
            let start = strings.count
            appendFields(
                [
                    network.id, network.name, network.wikidata ?? "",
                    network.canonicalNames.joined(separator: "\u{1E}"), network.tags.joined(separator: "\u{1E}"),
                ],
                to: &strings)
            append32(UInt32(start), to: &networkRecords)
            append32(UInt32(strings.count - start), to: &networkRecords)
            append32(UInt32(network.defaultRadius), to: &networkRecords)
            networkRecords.append(network.category.code)
            networkRecords.append(network.isLargeArea ? 1 : 0)
            networkRecords.append(contentsOf: [0, 0])
        }
        var locationRecords: [UInt8] = []
        locationRecords.reserveCapacity(locations.count * locationRecordSize)
        for location in locations {
            let start = strings.count
            appendFields(
                [location.id, location.name, location.address ?? "", location.phone ?? "", location.hours ?? ""],
                to: &strings)
            append32(UInt32(bitPattern: location.point.latitudeE7), to: &locationRecords)
            append32(UInt32(bitPattern: location.point.longitudeE7), to: &locationRecords)
            append32(UInt32(location.radius ?? 0), to: &locationRecords)
            append32(UInt32(networkIndex[location.networkID]!), to: &locationRecords)
            append32(UInt32(start), to: &locationRecords)
            append32(UInt32(strings.count - start), to: &locationRecords)
        }
        let content = headerSize + networkRecords.count + locationRecords.count + strings.count
        let total = sizeClass(for: content)
        guard total <= maximumSize else { throw .tooLarge("the tile would be larger than \(maximumSize >> 20) MiB") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(total)
        bytes += magic
        bytes += [version, kind.rawValue, 0, 0]
        var cellField = Array(cell.utf8)
        cellField += [UInt8](repeating: 0, count: 12 - cellField.count)
        bytes += cellField
        append32(UInt32(radius), to: &bytes)
        append64(UInt64(bitPattern: dataVersion), to: &bytes)
        append32(UInt32(used.count), to: &bytes)
        append32(UInt32(locations.count), to: &bytes)
        append32(UInt32(strings.count), to: &bytes)
        append32(UInt32(content), to: &bytes)
        bytes += networkRecords
        bytes += locationRecords
        bytes += strings
        bytes += [UInt8](repeating: 0, count: total - content)
        return try PlaceTile(bytes: bytes)
    }

    /// The padded size of `content` bytes: the smallest class (16 KiB, doubling) that holds it.
    public static func sizeClass(for content: Int) -> Int {
        var size = smallestSizeClass
        while size < content { size *= 2 }
        return size
    }

    private static func appendFields(_ fields: [String], to strings: inout [UInt8]) {
        for (index, field) in fields.enumerated() {
            if index > 0 { strings.append(fieldSeparator) }
            strings += field.utf8
        }
    }

    private static func append32(_ value: UInt32, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    private static func append64(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    // MARK: Reading

    /// Reads and checks a tile: every count, offset and coordinate is bounded before use, since tiles come from a
    /// server and from files.
    public init(bytes: [UInt8]) throws(PlacesError) {
        guard bytes.count >= Self.headerSize, bytes.count <= Self.maximumSize else { throw .malformed("not a places tile (size)") }
        guard Array(bytes[0..<4]) == Self.magic else { throw .malformed("not a places tile") }
        guard bytes[4] == Self.version else { throw .malformed("places tile version \(bytes[4]) is not supported") }
        guard let kind = Kind(rawValue: bytes[5]) else { throw .malformed("unknown places tile kind") }
        guard bytes[6] == 0, bytes[7] == 0 else { throw .malformed("a places tile's reserved bytes are set") }
        let cellBytes = bytes[8..<20].prefix { $0 != 0 }
        guard cellBytes.allSatisfy({ $0 >= 0x21 && $0 < 0x7F }) else { throw .malformed("a places tile's cell is not ASCII") }
        let networkCount = Int(Self.read32(bytes, 32))
        let locationCount = Int(Self.read32(bytes, 36))
        let stringBytes = Int(Self.read32(bytes, 40))
        let content = Int(Self.read32(bytes, 44))
        let networksStart = Self.headerSize
        let locationsStart = networksStart + networkCount * Self.networkRecordSize
        let stringsStart = locationsStart + locationCount * Self.locationRecordSize
        guard networkCount <= 1 << 20, locationCount <= 1 << 24, stringsStart + stringBytes == content,
            content <= bytes.count
        else { throw .malformed("a places tile's counts do not match its size") }
        self.kind = kind
        self.cell = String(decoding: cellBytes, as: UTF8.self)
        self.radius = Int(Self.read32(bytes, 20))
        self.dataVersion = Int64(bitPattern: Self.read64(bytes, 24))
        self.networkCount = networkCount
        self.locationCount = locationCount
        self.bytes = bytes
        self.networksStart = networksStart
        self.locationsStart = locationsStart
        self.stringsStart = stringsStart
        self.stringsEnd = content
        for index in 0..<networkCount {
            let record = networksStart + index * Self.networkRecordSize
            try checkString(record)
            guard NetworkCategory(code: bytes[record + 12]) != nil, bytes[record + 13] <= 1,
                PlaceLimits.radii.contains(Int(Self.read32(bytes, record + 8)))
            else { throw .malformed("a places tile's network \(index + 1) is malformed") }
        }
        for index in 0..<locationCount {
            let record = locationsStart + index * Self.locationRecordSize
            try checkString(record + 16)
            let radius = Int(Self.read32(bytes, record + 8))
            guard GeoPoint(latitudeE7: Self.readInt32(bytes, record), longitudeE7: Self.readInt32(bytes, record + 4)) != nil,
                radius == 0 || PlaceLimits.radii.contains(radius),
                Int(Self.read32(bytes, record + 12)) < networkCount
            else { throw .malformed("a places tile's location \(index + 1) is malformed") }
        }
    }

    private func checkString(_ at: Int) throws(PlacesError) {
        let offset = Int(Self.read32(bytes, at))
        let length = Int(Self.read32(bytes, at + 4))
        guard offset <= stringsEnd - stringsStart, length <= stringsEnd - stringsStart - offset else {
            throw .malformed("a places tile's string is out of bounds")
        }
    }

    @inline(__always)
    static func read32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
    }

    @inline(__always)
    static func readInt32(_ bytes: [UInt8], _ at: Int) -> Int32 {
        Int32(bitPattern: read32(bytes, at))
    }

    static func read64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
    }

    private func fields(at record: Int) -> [Substring] {
        let offset = stringsStart + Int(Self.read32(bytes, record))
        let length = Int(Self.read32(bytes, record + 4))
        let text = String(decoding: bytes[offset..<(offset + length)], as: UTF8.self)
        return text.split(separator: "\u{1F}", omittingEmptySubsequences: false)
    }

    private func idBytes(location index: Int) -> [UInt8] {
        let record = locationsStart + index * Self.locationRecordSize
        let offset = stringsStart + Int(Self.read32(bytes, record + 16))
        let length = Int(Self.read32(bytes, record + 20))
        return Array(bytes[offset..<(offset + length)].prefix { $0 != Self.fieldSeparator })
    }

    // MARK: Contents

    /// Network `index`, decoded.
    public func network(_ index: Int) -> Network {
        let record = networksStart + index * Self.networkRecordSize
        let parts = fields(at: record)
        func part(_ i: Int) -> String { i < parts.count ? String(parts[i]) : "" }
        func list(_ i: Int) -> [String] { part(i).split(separator: "\u{1E}").map(String.init) }
        return Network(
            id: part(0), wikidata: part(2).isEmpty ? nil : part(2), name: part(1), canonicalNames: list(3),
            category: NetworkCategory(code: bytes[record + 12]) ?? .other, isLargeArea: bytes[record + 13] == 1,
            defaultRadius: Int(Self.read32(bytes, record + 8)), tags: list(4))
    }

    /// Location `index`, decoded.
    public func location(_ index: Int) -> Location {
        let record = locationsStart + index * Self.locationRecordSize
        let parts = fields(at: record + 16)
        func part(_ i: Int) -> String? { i < parts.count && !parts[i].isEmpty ? String(parts[i]) : nil }
        let radius = Int(Self.read32(bytes, record + 8))
        let networkIndex = Int(Self.read32(bytes, record + 12))
        let networkRecord = networksStart + networkIndex * Self.networkRecordSize
        let networkID = fields(at: networkRecord).first.map(String.init) ?? ""
        return Location(
            id: part(0) ?? "", networkID: networkID, name: part(1) ?? "", address: part(2),
            point: GeoPoint(latitudeE7: Self.readInt32(bytes, record), longitudeE7: Self.readInt32(bytes, record + 4))!,
            radius: radius == 0 ? nil : radius, phone: part(3), hours: part(4))
    }

    public var networks: [Network] { (0..<networkCount).map(network) }
    public var locations: [Location] { (0..<locationCount).map(location) }

    /// The monitored set at `position` from this tile alone (see `PlaceSet.regions`).
    public func regions(
        at position: GeoPoint, userNetworks: Set<String>, radius: Double = RegionRules.searchRadius,
        limit: Int = RegionRules.defaultLimit, nearestOfEachNetwork: Bool = false
    ) -> [MonitoredRegion] {
        var priorityOne = [Bool](repeating: false, count: networkCount)
        for index in 0..<networkCount where !userNetworks.isEmpty {
            let record = networksStart + index * Self.networkRecordSize
            if let id = fields(at: record).first, userNetworks.contains(String(id)) { priorityOne[index] = true }
        }
        var selector = RegionSelector(position: position, radius: radius, limit: limit) { self.idBytes(location: $0) }
        bytes.withUnsafeBytes { raw in
            var record = locationsStart
            for index in 0..<locationCount {
                let latitude = Double(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: record, as: Int32.self))) / 1e7
                let longitude = Double(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: record + 4, as: Int32.self))) / 1e7
                let network = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: record + 12, as: UInt32.self)))
                let isUsers = priorityOne[network]
                selector.consider(
                    index: index, latitude: latitude, longitude: longitude, priority: isUsers ? 1 : 2,
                    group: isUsers && nearestOfEachNetwork ? network : nil)
                record += Self.locationRecordSize
            }
        }
        var networkCache: [Int: Network] = [:]
        return selector.chosen.map { pick in
            let location = location(pick.index)
            let networkIndex = Int(Self.read32(bytes, locationsStart + pick.index * Self.locationRecordSize + 12))
            let network = networkCache[networkIndex] ?? network(networkIndex)
            networkCache[networkIndex] = network
            return MonitoredRegion(
                id: location.id, networkID: network.id, networkName: network.name, name: location.name,
                address: location.address, point: location.point, radius: location.effectiveRadius(in: network),
                priority: pick.priority, distance: pick.distance)
        }
    }
}
