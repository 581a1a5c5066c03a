import CofferCrypto
import CofferPlaces
import Foundation
import PostgresNIO

extension PostgresServerStore {
    /// Rows per INSERT of an import: arrays bound as parameters and unnested, so a million locations take a
    /// hundred statements rather than a million round trips.
    static let importBatch = 10_000

    public func importPlaces(_ batch: PlaceImport, replacing: Bool, now: Date) async throws(ServerStoreError) -> PlaceImportSummary {
        let at = UnixTime.milliseconds(now)
        do {
            return try await rawTransaction(acting: .server) { [self] connection in
                let stored = Set(try await connection.rows("SELECT id FROM networks", logger: logger).map { try $0.decode(String.self) })
                try PlaceQueries.checkNetworks(batch, stored: stored)
                for network in batch.networks {
                    try await connection.rows(
                        """
                        INSERT INTO networks (id, wikidata, name, canonical_names, category, is_large_area, default_radius, tags, updated_at)
                        VALUES (\(network.id), \(network.wikidata), \(network.name), \(network.canonicalNames),
                                \(network.category.rawValue), \(network.isLargeArea), \(network.defaultRadius), \(network.tags),
                                TIMESTAMPTZ 'epoch' + \(at) * INTERVAL '1 millisecond')
                        ON CONFLICT (id) DO UPDATE SET wikidata = EXCLUDED.wikidata, name = EXCLUDED.name,
                            canonical_names = EXCLUDED.canonical_names, category = EXCLUDED.category,
                            is_large_area = EXCLUDED.is_large_area, default_radius = EXCLUDED.default_radius,
                            tags = EXCLUDED.tags, updated_at = EXCLUDED.updated_at
                        """, logger: logger)
                }
                var removed = 0
                if replacing {
                    let networks = Array(Set(batch.locations.map(\.networkID)).union(batch.network.map { [$0] } ?? []))
                    let ids = batch.locations.map(\.id)
                    removed = try await connection.rows(
                        """
                        DELETE FROM locations WHERE network_id = ANY(\(networks)) AND NOT (id = ANY(\(ids))) RETURNING 1
                        """, logger: logger
                    ).count
                }
                var start = 0
                while start < batch.locations.count {
                    let slice = batch.locations[start..<min(batch.locations.count, start + Self.importBatch)]
                    // Absent text is bound as '' and absent radii as 0 (arrays of optionals do not bind), and
                    // NULLIF turns them back; validation keeps real values non-empty and radii ≥ 1.
                    try await connection.rows(
                        """
                        INSERT INTO locations (id, network_id, name, address, lat, lon, radius, phone, hours)
                        SELECT id, network_id, name, NULLIF(address, ''), lat, lon, NULLIF(radius, 0), NULLIF(phone, ''), NULLIF(hours, '')
                        FROM unnest(\(slice.map(\.id)), \(slice.map(\.networkID)), \(slice.map(\.name)),
                                    \(slice.map { $0.address ?? "" }), \(slice.map(\.point.latitude)), \(slice.map(\.point.longitude)),
                                    \(slice.map { Int32($0.radius ?? 0) }), \(slice.map { $0.phone ?? "" }), \(slice.map { $0.hours ?? "" }))
                            AS t (id, network_id, name, address, lat, lon, radius, phone, hours)
                        ON CONFLICT (id) DO UPDATE SET network_id = EXCLUDED.network_id, name = EXCLUDED.name,
                            address = EXCLUDED.address, lat = EXCLUDED.lat, lon = EXCLUDED.lon, radius = EXCLUDED.radius,
                            phone = EXCLUDED.phone, hours = EXCLUDED.hours
                        """, logger: logger)
                    start += Self.importBatch
                }
                try await connection.rows(
                    """
                    INSERT INTO places_version (singleton, version) VALUES (1, \(at))
                    ON CONFLICT (singleton) DO UPDATE SET version = greatest(places_version.version + 1, EXCLUDED.version)
                    """, logger: logger)
                return PlaceImportSummary(networks: batch.networks.count, locations: batch.locations.count, removed: removed)
            }
        } catch {
            throw Self.mapped(error, context: "place import failed")
        }
    }

    static let networkColumns = "id, wikidata, name, canonical_names, category, is_large_area, default_radius, tags"
    static let locationColumns = "l.id, l.network_id, l.name, l.address, l.lat, l.lon, l.radius, l.phone, l.hours"

    static func network(_ row: PostgresRow) throws -> Network {
        var cells = Cells(row)
        return Network(
            id: try cells.next(String.self), wikidata: try cells.next(String?.self), name: try cells.next(String.self),
            canonicalNames: try cells.next([String].self),
            category: NetworkCategory(rawValue: try cells.next(String.self)) ?? .other, isLargeArea: try cells.next(Bool.self),
            defaultRadius: Int(try cells.next(Int32.self)), tags: try cells.next([String].self))
    }

    static func location(_ cells: inout Cells) throws -> Location {
        let id = try cells.next(String.self)
        let network = try cells.next(String.self)
        let name = try cells.next(String.self)
        let address = try cells.next(String?.self)
        guard let point = GeoPoint(latitude: try cells.next(Double.self), longitude: try cells.next(Double.self)) else {
            throw ServerStoreError.unavailable("a stored location has no valid position")
        }
        return Location(
            id: id, networkID: network, name: name, address: address, point: point,
            radius: try cells.next(Int32?.self).map(Int.init), phone: try cells.next(String?.self), hours: try cells.next(String?.self))
    }

    public func network(id: String) async throws(ServerStoreError) -> Network? {
        try await shared { [self] client in
            try await client.rows("SELECT \(unescaped: Self.networkColumns) FROM networks WHERE id = \(id)", logger: logger)
                .first.map(Self.network)
        }
    }

    public func networks() async throws(ServerStoreError) -> [Network] {
        try await shared { [self] client in
            try await client.rows("SELECT \(unescaped: Self.networkColumns) FROM networks ORDER BY id COLLATE \"C\"", logger: logger).map(Self.network)
        }
    }

    public func locations(network: String, limit: Int, offset: Int) async throws(ServerStoreError) -> (locations: [Location], total: Int) {
        try await shared { [self] client in
            let total =
                try await client.rows("SELECT count(*) FROM locations WHERE network_id = \(network)", logger: logger)
                .first?.decode(Int64.self) ?? 0
            let rows = try await client.rows(
                """
                SELECT \(unescaped: Self.locationColumns) FROM locations l WHERE l.network_id = \(network)
                ORDER BY l.id COLLATE "C" LIMIT \(Int64(limit)) OFFSET \(Int64(offset))
                """, logger: logger)
            return (
                try rows.map { row in
                    var cells = Cells(row)
                    return try Self.location(&cells)
                }, Int(total)
            )
        }
    }

    public func locationsPage(after: String?, limit: Int) async throws(ServerStoreError) -> [Location] {
        let rows = try await shared { [self] client in
            try await client.rows(
                """
                SELECT \(unescaped: Self.locationColumns) FROM locations l WHERE l.id > \(after ?? "")
                ORDER BY l.id LIMIT \(Int64(limit))
                """, logger: logger)
        }
        do {
            return try rows.map { row in
                var cells = Cells(row)
                return try Self.location(&cells)
            }
        } catch {
            throw .unavailable("a stored location does not decode")
        }
    }

    /// Two boxes (the second repeats the first when one is enough), so that every geographic statement has one
    /// shape and is prepared once.
    static func twoBoxes(_ boxes: [GeoBox]) -> (GeoBox, GeoBox) {
        let first = boxes.first ?? GeoBox(south: 0, north: -1, west: 0, east: -1)
        return (first, boxes.count > 1 ? boxes[1] : first)
    }

    public func locations(in boxes: [GeoBox]) async throws(ServerStoreError) -> [Location] {
        var result: [Location] = []
        var remaining = boxes[...]
        while !remaining.isEmpty {
            let (a, b) = Self.twoBoxes(Array(remaining.prefix(2)))
            remaining = remaining.dropFirst(2)
            let rows = try await shared { [self] client in
                try await client.rows(
                    """
                    SELECT \(unescaped: Self.locationColumns) FROM locations l
                    WHERE point(l.lon, l.lat) <@ box(point(\(a.west), \(a.south)), point(\(a.east), \(a.north)))
                       OR point(l.lon, l.lat) <@ box(point(\(b.west), \(b.south)), point(\(b.east), \(b.north)))
                    """, logger: logger)
            }
            for row in rows {
                do {
                    var cells = Cells(row)
                    result.append(try Self.location(&cells))
                } catch {
                    throw .unavailable("a stored location does not decode")
                }
            }
        }
        return result
    }

    /// Candidates with their distance and priority computed by PostgreSQL, ordered and cut there (a few more than
    /// asked); `RegionSelector` then decides exactly, as the client would. PostgreSQL's trigonometry may differ from
    /// Swift's in the last bits, which matters only for ties (places at one spot): when the cut falls inside a group
    /// of equal distances, the whole group is fetched.
    private func ranked(
        _ position: GeoPoint, radius: Double, userNetworks: [String], only networks: [String]?, limit: Int
    ) async throws(ServerStoreError) -> [(location: Location, network: Network, distance: Double, priority: Int)] {
        let fetch = limit + 8
        var found = try await candidates(
            position, radius: radius, userNetworks: userNetworks, only: networks, upTo: (2, radius + 1), limit: fetch)
        if limit > 0, found.count == fetch {
            let cut = found[limit - 1]
            let tieMargin = 0.001
            if let last = found.last, last.priority == cut.priority, last.distance <= cut.distance + tieMargin {
                found = try await candidates(
                    position, radius: radius, userNetworks: userNetworks, only: networks,
                    upTo: (cut.priority, cut.distance + tieMargin), limit: PlaceLimits.importLocations)
            }
        }
        let user = Set(userNetworks)
        var selector = RegionSelector(position: position, radius: radius, limit: limit) { Array(found[$0].location.id.utf8) }
        for (index, candidate) in found.enumerated() {
            selector.consider(
                index: index, latitude: candidate.location.point.latitude, longitude: candidate.location.point.longitude,
                priority: user.contains(candidate.location.networkID) ? 1 : 2)
        }
        return selector.picks.map { (found[$0.index].location, found[$0.index].network, $0.distance, $0.priority) }
    }

    /// Locations in the search circle up to `(priority, distance)` in PostgreSQL's order, at most `limit`.
    private func candidates(
        _ position: GeoPoint, radius: Double, userNetworks: [String], only networks: [String]?,
        upTo cutoff: (priority: Int, distance: Double), limit: Int
    ) async throws(ServerStoreError) -> [(location: Location, network: Network, distance: Double, priority: Int)] {
        let (a, b) = Self.twoBoxes(GeoBox.around(position, radius: radius))
        let (latitude, longitude) = (position.latitude, position.longitude)
        let rows = try await shared { [self] client in
            try await client.rows(
                """
                SELECT \(unescaped: Self.locationColumns), n.id, n.wikidata, n.name, n.canonical_names, n.category,
                       n.is_large_area, n.default_radius, n.tags, d.distance, d.priority
                FROM locations l JOIN networks n ON n.id = l.network_id,
                LATERAL (SELECT 2 * 6371000 * asin(least(1, sqrt(
                            power(sin(radians(l.lat - \(latitude)) / 2), 2)
                            + cos(radians(\(latitude))) * cos(radians(l.lat)) * power(sin(radians(l.lon - \(longitude)) / 2), 2))))
                        AS distance,
                        CASE WHEN l.network_id = ANY(\(userNetworks)) THEN 1 ELSE 2 END AS priority) d
                WHERE (point(l.lon, l.lat) <@ box(point(\(a.west), \(a.south)), point(\(a.east), \(a.north)))
                       OR point(l.lon, l.lat) <@ box(point(\(b.west), \(b.south)), point(\(b.east), \(b.north))))
                  AND d.distance <= \(radius + 1)
                  AND (d.priority < \(cutoff.priority) OR (d.priority = \(cutoff.priority) AND d.distance <= \(cutoff.distance)))
                  AND (\(networks == nil) OR l.network_id = ANY(\(networks ?? [])))
                ORDER BY d.priority, d.distance, l.id COLLATE "C"
                LIMIT \(Int64(limit))
                """, logger: logger)
        }
        do {
            return try rows.map { row in
                var cells = Cells(row)
                let location = try Self.location(&cells)
                let network = Network(
                    id: try cells.next(String.self), wikidata: try cells.next(String?.self), name: try cells.next(String.self),
                    canonicalNames: try cells.next([String].self),
                    category: NetworkCategory(rawValue: try cells.next(String.self)) ?? .other,
                    isLargeArea: try cells.next(Bool.self), defaultRadius: Int(try cells.next(Int32.self)),
                    tags: try cells.next([String].self))
                return (location, network, try cells.next(Double.self), Int(try cells.next(Int32.self)))
            }
        } catch {
            throw .unavailable("a stored location does not decode")
        }
    }

    public func nearby(_ position: GeoPoint, radius: Double, networks: Set<String>?, limit: Int) async throws(ServerStoreError) -> [NearbyLocation] {
        try await ranked(position, radius: radius, userNetworks: [], only: networks.map(Array.init), limit: limit).map {
            NearbyLocation(location: $0.location, networkName: $0.network.name, distance: $0.distance)
        }
    }

    public func regions(_ position: GeoPoint, userNetworks: Set<String>, radius: Double, limit: Int) async throws(ServerStoreError) -> [MonitoredRegion] {
        try await ranked(position, radius: radius, userNetworks: Array(userNetworks), only: nil, limit: limit).map {
            MonitoredRegion(
                id: $0.location.id, networkID: $0.network.id, networkName: $0.network.name, name: $0.location.name,
                address: $0.location.address, point: $0.location.point, radius: $0.location.effectiveRadius(in: $0.network),
                priority: $0.priority, distance: $0.distance)
        }
    }

    public func placesVersion() async throws(ServerStoreError) -> Int64 {
        try await shared { [self] client in
            try await client.rows("SELECT version FROM places_version WHERE singleton = 1", logger: logger).first?.decode(Int64.self) ?? 0
        }
    }

    public func placesStats() async throws(ServerStoreError) -> PlacesStats {
        try await shared { [self] client in
            var perNetwork: [String: Int] = [:]
            for row in try await client.rows("SELECT network_id, count(*) FROM locations GROUP BY network_id", logger: logger) {
                let (network, count) = try row.decode((String, Int64).self)
                perNetwork[network] = Int(count)
            }
            let networks = try await client.rows("SELECT count(*) FROM networks", logger: logger).first?.decode(Int64.self) ?? 0
            let version =
                try await client.rows("SELECT version FROM places_version WHERE singleton = 1", logger: logger)
                .first?.decode(Int64.self) ?? 0
            return PlacesStats(
                networks: Int(networks), locations: perNetwork.values.reduce(0, +), perNetwork: perNetwork, version: version)
        }
    }
}
