/// Geohash cells (base-32, interleaved longitude/latitude bits), with Coffer's rules at the edges: longitude 180 is
/// −180 (the same meridian), latitude 90 lies in the top row, east and west neighbours wrap across the antimeridian,
/// and the top and bottom rows have no neighbour beyond the pole (reference: on-cue.md §5).
public enum Geohash {
    static let alphabet = Array("0123456789bcdefghjkmnpqrstuvwxyz".utf8)
    static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 128)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = Int8(index) }
        return table
    }()

    /// The longest cell Coffer accepts (about 37 mm × 19 mm).
    public static let maximumPrecision = 12

    /// The cell of `precision` characters (1…12) holding `point`.
    public static func encode(_ point: GeoPoint, precision: Int) -> String {
        precondition((1...maximumPrecision).contains(precision), "geohash precision out of range")
        var latitudeRange = (-90.0, 90.0)
        var longitudeRange = (-180.0, 180.0)
        let longitude = point.longitude == 180 ? -180 : point.longitude
        var result: [UInt8] = []
        result.reserveCapacity(precision)
        var bit = 0
        var value = 0
        var evenBit = true
        while result.count < precision {
            if evenBit {
                let middle = (longitudeRange.0 + longitudeRange.1) / 2
                if longitude >= middle {
                    value = value << 1 | 1
                    longitudeRange.0 = middle
                } else {
                    value <<= 1
                    longitudeRange.1 = middle
                }
            } else {
                let middle = (latitudeRange.0 + latitudeRange.1) / 2
                if point.latitude >= middle {
                    value = value << 1 | 1
                    latitudeRange.0 = middle
                } else {
                    value <<= 1
                    latitudeRange.1 = middle
                }
            }
            evenBit.toggle()
            bit += 1
            if bit == 5 {
                result.append(alphabet[value])
                bit = 0
                value = 0
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// Whether `cell` is a geohash of 1…12 characters from the (lower-case) alphabet.
    public static func isValid(_ cell: some StringProtocol) -> Bool {
        let bytes = cell.utf8
        guard (1...maximumPrecision).contains(bytes.count) else { return false }
        return bytes.allSatisfy { $0 < 128 && values[Int($0)] >= 0 }
    }

    /// The rectangle of `cell`; `nil` for an invalid cell.
    public static func box(_ cell: some StringProtocol) -> GeoBox? {
        guard isValid(cell) else { return nil }
        var latitudeRange = (-90.0, 90.0)
        var longitudeRange = (-180.0, 180.0)
        var evenBit = true
        for character in cell.utf8 {
            let value = Int(values[Int(character)])
            for shift in stride(from: 4, through: 0, by: -1) {
                let on = (value >> shift) & 1 == 1
                if evenBit {
                    let middle = (longitudeRange.0 + longitudeRange.1) / 2
                    if on { longitudeRange.0 = middle } else { longitudeRange.1 = middle }
                } else {
                    let middle = (latitudeRange.0 + latitudeRange.1) / 2
                    if on { latitudeRange.0 = middle } else { latitudeRange.1 = middle }
                }
                evenBit.toggle()
            }
        }
        return GeoBox(south: latitudeRange.0, north: latitudeRange.1, west: longitudeRange.0, east: longitudeRange.1)
    }

    /// The centre of `cell`.
    public static func center(_ cell: some StringProtocol) -> GeoPoint? {
        guard let box = box(cell) else { return nil }
        return GeoPoint(exactLatitude: (box.south + box.north) / 2, longitude: (box.west + box.east) / 2)
    }

    public enum Direction: String, Sendable, CaseIterable {
        case north = "n", northEast = "ne", east = "e", southEast = "se"
        case south = "s", southWest = "sw", west = "w", northWest = "nw"

        var steps: (latitude: Double, longitude: Double) {
            switch self {
            case .north: return (1, 0)
            case .northEast: return (1, 1)
            case .east: return (0, 1)
            case .southEast: return (-1, 1)
            case .south: return (-1, 0)
            case .southWest: return (-1, -1)
            case .west: return (0, -1)
            case .northWest: return (1, -1)
            }
        }
    }

    /// The cell of the same precision next to `cell` in `direction`; `nil` past a pole or for an invalid cell.
    /// Computed from the cell's centre moved by one cell size, which lands in the middle of the neighbour and so is
    /// free of rounding at the edges.
    public static func neighbour(of cell: some StringProtocol, _ direction: Direction) -> String? {
        guard let box = box(cell) else { return nil }
        let height = box.north - box.south
        let width = box.east - box.west
        let latitude = (box.south + box.north) / 2 + direction.steps.latitude * height
        guard latitude > -90, latitude < 90 else { return nil }
        var longitude = (box.west + box.east) / 2 + direction.steps.longitude * width
        if longitude >= 180 { longitude -= 360 }
        if longitude < -180 { longitude += 360 }
        return encode(GeoPoint(exactLatitude: latitude, longitude: longitude), precision: cell.utf8.count)
    }
}
