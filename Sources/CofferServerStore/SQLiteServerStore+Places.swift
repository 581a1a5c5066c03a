import CofferCrypto
import CofferPlaces
import Foundation
import GRDB

/// The places tables of the SQLite store. Locations are found through an R*Tree of their coordinates (SQLite's
/// `rtree` module, built into Debian's SQLite): its 32-bit boxes are rounded outward, so the index gives a superset
/// and the exact coordinates of the `locations` row decide.
enum SQLitePlaces {
    static func migration(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE networks (
                    id TEXT PRIMARY KEY NOT NULL,
                    wikidata TEXT,
                    name TEXT NOT NULL,
                    canonical_names TEXT NOT NULL,
                    category TEXT NOT NULL,
                    is_large_area INTEGER NOT NULL,
                    default_radius INTEGER NOT NULL,
                    tags TEXT NOT NULL,
                    updated_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX networks_wikidata ON networks(wikidata) WHERE wikidata IS NOT NULL;
                CREATE TABLE locations (
                    row INTEGER PRIMARY KEY,
                    id TEXT NOT NULL UNIQUE,
                    network_id TEXT NOT NULL REFERENCES networks(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    address TEXT,
                    lat REAL NOT NULL,
                    lon REAL NOT NULL,
                    radius INTEGER,
                    phone TEXT,
                    hours TEXT
                );
                CREATE INDEX locations_network ON locations(network_id, id);
                CREATE VIRTUAL TABLE locations_geo USING rtree(row, south, north, west, east);
                CREATE TABLE places_version (
                    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
                    version INTEGER NOT NULL
                );
                """)
    }

    static let locationColumns = "l.row, l.id, l.network_id, l.name, l.address, l.lat, l.lon, l.radius, l.phone, l.hours"

    static func location(_ row: Row) throws -> Location {
        guard let point = GeoPoint(latitude: row["lat"], longitude: row["lon"]) else {
            throw ServerStoreError.unavailable("a stored location has no valid position")
        }
        return Location(
            id: row["id"], networkID: row["network_id"], name: row["name"], address: row["address"], point: point,
            radius: row["radius"], phone: row["phone"], hours: row["hours"])
    }

    static func network(_ row: Row) throws -> Network {
        Network(
            id: row["id"], wikidata: row["wikidata"], name: row["name"],
            canonicalNames: try JSONDecoder().decode([String].self, from: Data((row["canonical_names"] as String).utf8)),
            category: NetworkCategory(rawValue: row["category"]) ?? .other, isLargeArea: row["is_large_area"],
            defaultRadius: row["default_radius"],
            tags: try JSONDecoder().decode([String].self, from: Data((row["tags"] as String).utf8)))
    }

    static func json(_ list: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(list), as: UTF8.self)
    }

    /// `(south, north, west, east)` overlap tests for each box, OR-ed.
    static func boxFilter(_ boxes: [GeoBox]) -> (sql: String, arguments: StatementArguments) {
        var arguments = StatementArguments()
        let sql = boxes.map { box in
            arguments += [box.north, box.south, box.east, box.west]
            return "(g.south <= ? AND g.north >= ? AND g.west <= ? AND g.east >= ?)"
        }.joined(separator: " OR ")
        return (boxes.isEmpty ? "0" : sql, arguments)
    }

    static func candidates(_ db: Database, boxes: [GeoBox], networks: Set<String>?) throws -> [PlaceQueries.Candidate] {
        let filter = boxFilter(boxes)
        let rows = try Row.fetchCursor(
            db,
            sql: "SELECT l.row, l.id, l.network_id, l.lat, l.lon FROM locations_geo g JOIN locations l ON l.row = g.row WHERE \(filter.sql)",
            arguments: filter.arguments)
        var result: [PlaceQueries.Candidate] = []
        while let row = try rows.next() {
            let network: String = row[2]
            if let networks, !networks.contains(network) { continue }
            result.append(PlaceQueries.Candidate(rowID: row[0], id: row[1], networkID: network, latitude: row[3], longitude: row[4]))
        }
        return result
    }

    /// Enough candidates to choose the monitored set exactly, without reading every place of the search circle: the
    /// user's networks' places within `radius` (through the (network, lat) index), and the places of a circle that
    /// grows from 1 km until it holds `limit` of them all or reaches `radius`. Every place within the final circle is
    /// read, so the nearest ones of priority 2 are among the candidates; `RegionSelector` then decides.
    static func regionCandidates(
        _ db: Database, _ position: GeoPoint, userNetworks: Set<String>, radius: Double, limit: Int
    ) throws -> [PlaceQueries.Candidate] {
        var byRow: [Int64: PlaceQueries.Candidate] = [:]
        var userPlaces = 0
        if !userNetworks.isEmpty {
            let boxes = GeoBox.around(position, radius: radius)
            let marks = Array(repeating: "?", count: userNetworks.count).joined(separator: ",")
            for box in boxes {
                var arguments = StatementArguments(Array(userNetworks))
                arguments += [box.south, box.north, box.west, box.east]
                let rows = try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT row, id, network_id, lat, lon FROM locations INDEXED BY locations_network_lat
                        WHERE network_id IN (\(marks)) AND lat BETWEEN ? AND ? AND lon BETWEEN ? AND ?
                        """,
                    arguments: arguments)
                while let row = try rows.next() {
                    let candidate = PlaceQueries.Candidate(rowID: row[0], id: row[1], networkID: row[2], latitude: row[3], longitude: row[4])
                    if byRow.updateValue(candidate, forKey: candidate.rowID) == nil,
                        Haversine.distance(
                            latitude1: position.latitude, longitude1: position.longitude,
                            latitude2: candidate.latitude, longitude2: candidate.longitude) <= radius
                    {
                        userPlaces += 1
                    }
                }
            }
        }
        // Priority 1 fills the set on its own: the others can only come after.
        if userPlaces >= limit { return Array(byRow.values) }
        var reach = min(radius, 1_000)
        while true {
            // A hair wider than the circle, so that rounding at its edge never leaves out a place inside it.
            let ring = try candidates(db, boxes: GeoBox.around(position, radius: reach * 1.000_001 + 1), networks: nil)
            var inside = 0
            for candidate in ring
            where Haversine.distance(
                latitude1: position.latitude, longitude1: position.longitude, latitude2: candidate.latitude,
                longitude2: candidate.longitude) <= reach
            {
                inside += 1
                byRow[candidate.rowID] = candidate
            }
            // Every place within `reach` is known, so once there are `limit` of them, the nearest places of
            // priority 2 that the set needs (limit minus the user's) are among them.
            if inside >= limit || reach >= radius { break }
            reach = min(radius, reach * 3)
        }
        return Array(byRow.values)
    }

    static func details(_ db: Database, rows: [Int64]) throws -> [Int64: (Location, Network)] {
        guard !rows.isEmpty else { return [:] }
        let marks = Array(repeating: "?", count: rows.count).joined(separator: ",")
        var result: [Int64: (Location, Network)] = [:]
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT \(locationColumns), n.id AS nid, n.wikidata, n.name AS nname, n.canonical_names, n.category,
                       n.is_large_area, n.default_radius, n.tags
                FROM locations l JOIN networks n ON n.id = l.network_id WHERE l.row IN (\(marks))
                """,
            arguments: StatementArguments(rows))
        {
            let network = Network(
                id: row["nid"], wikidata: row["wikidata"], name: row["nname"],
                canonicalNames: try JSONDecoder().decode([String].self, from: Data((row["canonical_names"] as String).utf8)),
                category: NetworkCategory(rawValue: row["category"]) ?? .other, isLargeArea: row["is_large_area"],
                defaultRadius: row["default_radius"],
                tags: try JSONDecoder().decode([String].self, from: Data((row["tags"] as String).utf8)))
            result[row["row"]] = (try location(row), network)
        }
        return result
    }
}

extension SQLiteServerStore {
    public func importPlaces(_ batch: PlaceImport, replacing: Bool, now: Date) async throws(ServerStoreError) -> PlaceImportSummary {
        try await write { db in
            let stored = Set(try String.fetchAll(db, sql: "SELECT id FROM networks"))
            try PlaceQueries.checkNetworks(batch, stored: stored)
            let at = UnixTime.milliseconds(now)
            let upsertNetwork = try db.cachedStatement(
                sql: """
                    INSERT INTO networks (id, wikidata, name, canonical_names, category, is_large_area, default_radius, tags, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET wikidata = excluded.wikidata, name = excluded.name,
                        canonical_names = excluded.canonical_names, category = excluded.category,
                        is_large_area = excluded.is_large_area, default_radius = excluded.default_radius,
                        tags = excluded.tags, updated_at = excluded.updated_at
                    """)
            for network in batch.networks {
                try upsertNetwork.execute(arguments: [
                    network.id, network.wikidata, network.name, try SQLitePlaces.json(network.canonicalNames),
                    network.category.rawValue, network.isLargeArea, network.defaultRadius, try SQLitePlaces.json(network.tags), at,
                ])
            }
            var removed = 0
            if replacing {
                let ids = Set(batch.locations.map(\.id))
                let networks = Set(batch.locations.map(\.networkID)).union(batch.network.map { [$0] } ?? [])
                for network in networks {
                    let stale = try Row.fetchAll(db, sql: "SELECT row, id FROM locations WHERE network_id = ?", arguments: [network])
                        .filter { !ids.contains($0["id"]) }
                    for row in stale {
                        try db.execute(sql: "DELETE FROM locations_geo WHERE row = ?", arguments: [row["row"] as Int64])
                        try db.execute(sql: "DELETE FROM locations WHERE row = ?", arguments: [row["row"] as Int64])
                    }
                    removed += stale.count
                }
            }
            let upsertLocation = try db.cachedStatement(
                sql: """
                    INSERT INTO locations (id, network_id, name, address, lat, lon, radius, phone, hours)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET network_id = excluded.network_id, name = excluded.name,
                        address = excluded.address, lat = excluded.lat, lon = excluded.lon, radius = excluded.radius,
                        phone = excluded.phone, hours = excluded.hours
                    RETURNING row
                    """)
            let index = try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO locations_geo (row, south, north, west, east) VALUES (?, ?, ?, ?, ?)")
            for location in batch.locations {
                let (latitude, longitude) = (location.point.latitude, location.point.longitude)
                guard
                    let row = try Int64.fetchOne(
                        upsertLocation,
                        arguments: [
                            location.id, location.networkID, location.name, location.address, latitude, longitude,
                            location.radius, location.phone, location.hours,
                        ])
                else { throw ServerStoreError.unavailable("a location was not stored") }
                try index.execute(arguments: [row, latitude, latitude, longitude, longitude])
            }
            try db.execute(
                sql: """
                    INSERT INTO places_version (singleton, version) VALUES (1, ?)
                    ON CONFLICT (singleton) DO UPDATE SET version = max(places_version.version + 1, excluded.version)
                    """,
                arguments: [at])
            return PlaceImportSummary(networks: batch.networks.count, locations: batch.locations.count, removed: removed)
        }
    }

    public func network(id: String) async throws(ServerStoreError) -> Network? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM networks WHERE id = ?", arguments: [id]).map(SQLitePlaces.network)
        }
    }

    public func networks() async throws(ServerStoreError) -> [Network] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM networks ORDER BY id").map(SQLitePlaces.network)
        }
    }

    public func locations(network: String, limit: Int, offset: Int) async throws(ServerStoreError) -> (locations: [Location], total: Int) {
        try await read { db in
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM locations WHERE network_id = ?", arguments: [network]) ?? 0
            let rows = try Row.fetchAll(
                db, sql: "SELECT \(SQLitePlaces.locationColumns) FROM locations l WHERE l.network_id = ? ORDER BY l.id LIMIT ? OFFSET ?",
                arguments: [network, limit, offset])
            return (try rows.map(SQLitePlaces.location), total)
        }
    }

    public func locationsPage(after: String?, limit: Int) async throws(ServerStoreError) -> [Location] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT \(SQLitePlaces.locationColumns) FROM locations l WHERE l.id > ? ORDER BY l.id LIMIT ?",
                arguments: [after ?? "", limit]
            ).map(SQLitePlaces.location)
        }
    }

    public func locations(in boxes: [GeoBox]) async throws(ServerStoreError) -> [Location] {
        try await read { db in
            let filter = SQLitePlaces.boxFilter(boxes)
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT \(SQLitePlaces.locationColumns) FROM locations_geo g JOIN locations l ON l.row = g.row
                    WHERE \(filter.sql)
                    """,
                arguments: filter.arguments)
            var result: [Location] = []
            while let row = try rows.next() {
                let location = try SQLitePlaces.location(row)
                if boxes.contains(where: { $0.contains(location.point) }) { result.append(location) }
            }
            return result
        }
    }

    public func nearby(_ position: GeoPoint, radius: Double, networks: Set<String>?, limit: Int) async throws(ServerStoreError) -> [NearbyLocation] {
        try await read { db in
            let candidates = try SQLitePlaces.candidates(db, boxes: GeoBox.around(position, radius: radius), networks: networks)
            let picks = PlaceQueries.pick(candidates, position: position, radius: radius, limit: limit) { _ in 1 }
            let details = try SQLitePlaces.details(db, rows: picks.map(\.candidate.rowID))
            return picks.compactMap { candidate, pick in
                details[candidate.rowID].map { NearbyLocation(location: $0.0, networkName: $0.1.name, distance: pick.distance) }
            }
        }
    }

    public func regions(_ position: GeoPoint, userNetworks: Set<String>, radius: Double, limit: Int) async throws(ServerStoreError) -> [MonitoredRegion] {
        try await read { db in
            let candidates = try SQLitePlaces.regionCandidates(db, position, userNetworks: userNetworks, radius: radius, limit: limit)
            let picks = PlaceQueries.pick(candidates, position: position, radius: radius, limit: limit) {
                userNetworks.contains($0.networkID) ? 1 : 2
            }
            let details = try SQLitePlaces.details(db, rows: picks.map(\.candidate.rowID))
            return picks.compactMap { candidate, pick in
                details[candidate.rowID].map { location, network in
                    MonitoredRegion(
                        id: location.id, networkID: network.id, networkName: network.name, name: location.name,
                        address: location.address, point: location.point, radius: location.effectiveRadius(in: network),
                        priority: pick.priority, distance: pick.distance)
                }
            }
        }
    }

    public func placesVersion() async throws(ServerStoreError) -> Int64 {
        try await read { db in try Int64.fetchOne(db, sql: "SELECT version FROM places_version WHERE singleton = 1") ?? 0 }
    }

    public func placesStats() async throws(ServerStoreError) -> PlacesStats {
        try await read { db in
            var perNetwork: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT network_id, count(*) AS n FROM locations GROUP BY network_id") {
                perNetwork[row["network_id"]] = row["n"]
            }
            let networks = try Int.fetchOne(db, sql: "SELECT count(*) FROM networks") ?? 0
            let version = try Int64.fetchOne(db, sql: "SELECT version FROM places_version WHERE singleton = 1") ?? 0
            return PlacesStats(networks: networks, locations: perNetwork.values.reduce(0, +), perNetwork: perNetwork, version: version)
        }
    }
}
