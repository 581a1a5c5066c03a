import Foundation

/// Every place of a store in memory, indexed for the position-taking questions (the monitored set, places nearby)
/// so that a server answers them without a database round trip. Locations sit in latitude bands of
/// `bandHeight` degrees, sorted by longitude within a band, so a box is a binary search per band; a second order
/// groups them by network (each group in the same band and longitude order) for the user's networks. The index
/// only finds candidates: `RegionSelector` chooses among them exactly as a client does from a tile, with the same
/// boxes, distances (haversine, R = 6,371,000 m) and order (priority, distance, id).
///
/// Compact: coordinates (and each latitude's cosine), network and radius in parallel arrays, the text of all
/// locations in one byte area; about 90 bytes a location besides its text.
public struct PlaceIndex: Sendable {
    /// The places version (`PlacesStats.version`) the index was built from.
    public let version: Int64
    public var count: Int { latitudes.count }

    static let bandHeight = 0.05
    static let bandCount = 3_600

    private let networks: [Network]
    private let networkNumbers: [String: Int32]
    private let latitudes: [Double]
    private let longitudes: [Double]
    /// `Haversine.cosine` of each latitude, kept so that a question computes it once per place, not per distance.
    private let cosines: [Double]
    private let networkOf: [Int32]
    /// The location's own radius, or -1 for its network's default.
    private let radii: [Int32]
    /// Where each location's text begins in `text`: id, name, address, phone, hours, one after the other.
    private let textStart: [Int]
    /// The five fields' lengths per location; `absent` for a field without a value.
    private let textLengths: [UInt16]
    private let text: [UInt8]
    /// `bandStart[b]..<bandStart[b + 1]` are the locations of band `b`.
    private let bandStart: [Int32]
    /// Location numbers grouped by network, each group in band and longitude order.
    private let byNetwork: [Int32]
    /// Each `byNetwork` slot's band and longitude, side by side with it: a search within a network's group then
    /// reads neighbouring memory rather than a location's coordinates anywhere in the arrays (a cache miss each).
    private let networkBands: [Int32]
    private let networkLongitudes: [Double]
    /// `networkStart[n]..<networkStart[n + 1]` is network `n`'s group in `byNetwork`.
    private let networkStart: [Int32]

    private static let fields = 5
    private static let absent = UInt16.max

    static func band(_ latitude: Double) -> Int {
        min(bandCount - 1, max(0, Int((latitude + 90) / bandHeight)))
    }

    /// Collects networks and locations, then sorts them into an index.
    public struct Builder: Sendable {
        private let version: Int64
        private let networks: [Network]
        private var numbers: [String: Int32] = [:]
        private var latitudes: [Double] = []
        private var longitudes: [Double] = []
        private var networkOf: [Int32] = []
        private var radii: [Int32] = []
        private var textStart: [Int] = []
        private var textLengths: [UInt16] = []
        private var text: [UInt8] = []

        /// Starts an index of `version` over `networks`; locations of other networks are left out, as the stores'
        /// answers (which join each location to its network) leave them out.
        public init(networks: [Network], version: Int64) {
            self.version = version
            self.networks = networks
            for (number, network) in networks.enumerated() { numbers[network.id] = Int32(number) }
        }

        /// Adds one location (each id once).
        public mutating func add(_ location: Location) {
            guard let network = numbers[location.networkID] else { return }
            latitudes.append(location.point.latitude)
            longitudes.append(location.point.longitude)
            networkOf.append(network)
            radii.append(location.radius.map { Int32(clamping: $0) } ?? -1)
            textStart.append(text.count)
            for field in [location.id, location.name, location.address, location.phone, location.hours] {
                guard let field else {
                    textLengths.append(PlaceIndex.absent)
                    continue
                }
                let bytes = Array(field.utf8.prefix(Int(PlaceIndex.absent) - 1))
                textLengths.append(UInt16(bytes.count))
                text += bytes
            }
        }

        /// The index: a counting sort into bands, each band sorted by longitude, then grouped by network.
        public func build() -> PlaceIndex {
            let count = latitudes.count
            var bandStart = [Int32](repeating: 0, count: PlaceIndex.bandCount + 1)
            let bands = latitudes.map(PlaceIndex.band)
            for band in bands { bandStart[band + 1] += 1 }
            for band in 0..<PlaceIndex.bandCount { bandStart[band + 1] += bandStart[band] }
            var next = bandStart
            var order = [Int32](repeating: 0, count: count)
            for (location, band) in bands.enumerated() {
                order[Int(next[band])] = Int32(location)
                next[band] += 1
            }
            for band in 0..<PlaceIndex.bandCount where bandStart[band + 1] - bandStart[band] > 1 {
                order[Int(bandStart[band])..<Int(bandStart[band + 1])].sort { longitudes[Int($0)] < longitudes[Int($1)] }
            }
            var textStart: [Int] = []
            var textLengths: [UInt16] = []
            textStart.reserveCapacity(count)
            textLengths.reserveCapacity(count * PlaceIndex.fields)
            for location in order {
                textStart.append(self.textStart[Int(location)])
                let first = Int(location) * PlaceIndex.fields
                textLengths += self.textLengths[first..<first + PlaceIndex.fields]
            }
            let networkOf = order.map { self.networkOf[Int($0)] }
            var networkStart = [Int32](repeating: 0, count: networks.count + 1)
            for network in networkOf { networkStart[Int(network) + 1] += 1 }
            for network in 0..<networks.count { networkStart[network + 1] += networkStart[network] }
            var place = networkStart
            var byNetwork = [Int32](repeating: 0, count: count)
            for (location, network) in networkOf.enumerated() {
                byNetwork[Int(place[Int(network)])] = Int32(location)
                place[Int(network)] += 1
            }
            return PlaceIndex(
                version: version, networks: networks, networkNumbers: numbers,
                latitudes: order.map { latitudes[Int($0)] }, longitudes: order.map { longitudes[Int($0)] },
                cosines: order.map { Haversine.cosine(latitudes[Int($0)]) },
                networkOf: networkOf, radii: order.map { radii[Int($0)] }, textStart: textStart, textLengths: textLengths,
                text: text, bandStart: bandStart, byNetwork: byNetwork,
                networkBands: byNetwork.map { Int32(PlaceIndex.band(latitudes[Int(order[Int($0)])])) },
                networkLongitudes: byNetwork.map { longitudes[Int(order[Int($0)])] }, networkStart: networkStart)
        }
    }

    private init(
        version: Int64, networks: [Network], networkNumbers: [String: Int32], latitudes: [Double], longitudes: [Double],
        cosines: [Double], networkOf: [Int32], radii: [Int32], textStart: [Int], textLengths: [UInt16], text: [UInt8], bandStart: [Int32],
        byNetwork: [Int32], networkBands: [Int32], networkLongitudes: [Double], networkStart: [Int32]
    ) {
        self.version = version
        self.networks = networks
        self.networkNumbers = networkNumbers
        self.latitudes = latitudes
        self.longitudes = longitudes
        self.cosines = cosines
        self.networkOf = networkOf
        self.radii = radii
        self.textStart = textStart
        self.textLengths = textLengths
        self.text = text
        self.bandStart = bandStart
        self.byNetwork = byNetwork
        self.networkBands = networkBands
        self.networkLongitudes = networkLongitudes
        self.networkStart = networkStart
    }

    // MARK: Questions

    /// The monitored set at `position`, exactly as `PlaceSet.regions` chooses it over the same places (without
    /// pinned places: those are a client's own).
    public func regions(
        at position: GeoPoint, userNetworks: Set<String>, radius: Double = RegionRules.searchRadius,
        limit: Int = RegionRules.defaultLimit
    ) -> [MonitoredRegion] {
        choose(position, radius: radius, limit: limit, first: numbers(userNetworks), onlyFirst: false).map { pick in
            let location = storedLocation(pick.index)
            let network = networks[Int(networkOf[pick.index])]
            return MonitoredRegion(
                id: location.id, networkID: network.id, networkName: network.name, name: location.name,
                address: location.address, point: location.point, radius: location.effectiveRadius(in: network),
                priority: pick.priority, distance: pick.distance)
        }
    }

    /// The locations within `radius` metres of `position`, nearest first (then by id), at most `limit`, of `networks`
    /// only when given: the stores' `nearby`.
    public func nearby(
        _ position: GeoPoint, radius: Double, networks only: Set<String>?, limit: Int
    ) -> [(location: Location, network: Network, distance: Double)] {
        let picks: [RegionSelector.Pick]
        if let only {
            picks = choose(position, radius: radius, limit: limit, first: numbers(only), onlyFirst: true)
        } else {
            picks = choose(position, radius: radius, limit: limit, first: [], onlyFirst: false)
        }
        return picks.map { (storedLocation($0.index), networks[Int(networkOf[$0.index])], $0.distance) }
    }

    private func numbers(_ ids: Set<String>) -> [Int32] {
        ids.compactMap { networkNumbers[$0] }.sorted()
    }

    /// Priority 1 for the locations of `first` within `radius`; unless `onlyFirst`, priority 2 for the others in
    /// the smallest circle (from 1 km, tripled up to `radius`) that holds `limit` places: no place outside it can
    /// come before those inside. Every candidate is offered to the selector once.
    private func choose(_ position: GeoPoint, radius: Double, limit: Int, first: [Int32], onlyFirst: Bool) -> [RegionSelector.Pick] {
        guard limit > 0 else { return [] }
        var selector = RegionSelector(position: position, radius: radius, limit: limit) { [self] in Array(textField($0, 0)) }
        let boxes = GeoBox.around(position, radius: radius)
        for network in first {
            for box in boxes {
                forEach(network: Int(network), in: box) { location in
                    selector.consider(index: location, latitude: latitudes[location], longitude: longitudes[location], priority: 1)
                }
            }
        }
        if onlyFirst { return selector.picks }
        // Priority 1 fills the set on its own: the others can only come after.
        if selector.picks.count == limit, selector.picks.last?.priority == 1 { return selector.picks }
        let isFirst: (Int32) -> Bool = first.count <= 8 ? { first.contains($0) } : { [set = Set(first)] in set.contains($0) }
        // A hair wider than the circle, so that rounding at its edge never leaves out a place inside it.
        func ringBoxes(_ reach: Double) -> [GeoBox] { GeoBox.around(position, radius: reach * 1.000_001 + 1) }
        // Each ring's distances are kept, so that the last ring's candidates are offered without computing them again.
        let cosine = Haversine.cosine(position.latitude)
        var reach = min(radius, 1_000)
        var ring: [(location: Int, distance: Double)] = []
        while true {
            ring.removeAll(keepingCapacity: true)
            var inside = 0
            for box in ringBoxes(reach) {
                forEach(in: box) { location in
                    let distance = Haversine.distance(
                        latitude1: position.latitude, longitude1: position.longitude, cosine1: cosine,
                        latitude2: latitudes[location], longitude2: longitudes[location], cosine2: cosines[location])
                    if distance <= reach { inside += 1 }
                    ring.append((location, distance))
                }
            }
            if inside >= limit || reach >= radius { break }
            reach = min(radius, reach * 3)
        }
        for (location, distance) in ring where !isFirst(networkOf[location]) {
            selector.consider(
                index: location, latitude: latitudes[location], longitude: longitudes[location], priority: 2, distance: distance)
        }
        return selector.picks
    }

    /// Every location in `box`, band by band.
    private func forEach(in box: GeoBox, _ body: (Int) -> Void) {
        guard box.south <= box.north, box.west <= box.east else { return }
        for band in Self.band(box.south)...Self.band(box.north) {
            let end = Int(bandStart[band + 1])
            var low = Int(bandStart[band]), high = end
            while low < high {
                let middle = (low + high) / 2
                if longitudes[middle] < box.west { low = middle + 1 } else { high = middle }
            }
            var location = low
            while location < end, longitudes[location] <= box.east {
                body(location)
                location += 1
            }
        }
    }

    /// Every location of network `network` in `box`: one binary search per band over the network's group.
    private func forEach(network: Int, in box: GeoBox, _ body: (Int) -> Void) {
        guard box.south <= box.north, box.west <= box.east else { return }
        let start = Int(networkStart[network]), end = Int(networkStart[network + 1])
        for band in Self.band(box.south)...Self.band(box.north) {
            var low = start, high = end
            while low < high {
                let middle = (low + high) / 2
                let other = Int(networkBands[middle])
                if other < band || (other == band && networkLongitudes[middle] < box.west) { low = middle + 1 } else { high = middle }
            }
            var slot = low
            while slot < end, Int(networkBands[slot]) == band, networkLongitudes[slot] <= box.east {
                body(Int(byNetwork[slot]))
                slot += 1
            }
        }
    }

    // MARK: Locations back from the arrays

    private func textField(_ location: Int, _ field: Int) -> ArraySlice<UInt8> {
        var start = textStart[location]
        let lengths = location * Self.fields
        for earlier in 0..<field where textLengths[lengths + earlier] != Self.absent {
            start += Int(textLengths[lengths + earlier])
        }
        let length = textLengths[lengths + field]
        return length == Self.absent ? [] : text[start..<start + Int(length)]
    }

    private func string(_ location: Int, _ field: Int) -> String? {
        textLengths[location * Self.fields + field] == Self.absent ? nil : String(decoding: textField(location, field), as: UTF8.self)
    }

    private func storedLocation(_ location: Int) -> Location {
        Location(
            id: string(location, 0) ?? "", networkID: networks[Int(networkOf[location])].id, name: string(location, 1) ?? "",
            address: string(location, 2), point: GeoPoint(exactLatitude: latitudes[location], longitude: longitudes[location]),
            radius: radii[location] < 0 ? nil : Int(radii[location]), phone: string(location, 3), hours: string(location, 4))
    }
}
