import CofferCrypto
import CofferKeystore
import CofferPlaces
import CofferVault
import Foundation

/// The vault's places, for the on-cue commands: what the user imported here, tiles cached from a server, the
/// server's directory of networks, and the cue state (last refresh point, visits in progress). Everything is this
/// device's sealed local state (`Vault.localValue`): never synced, never written in the clear.
public struct VaultPlaces: Sendable {
    let coffer: Coffer

    static let directoryName = "places/networks"
    static let localName = "places/local"
    static let serverName = "places/server"
    static let cueName = "places/cue"
    static func tileName(_ cell: String) -> String { "places/tile/\(cell)" }

    /// A tile is used without asking the server again for this long; after it, the server is asked with the tile's
    /// ETag (and the cached copy kept when the server cannot be reached).
    public static let tileFreshness: TimeInterval = 24 * 3600

    // MARK: Networks and local places

    /// Every network known here: imported ones, then the server's directory (which also takes in any network a
    /// cached tile brought that it lacked, so no tile is opened here); first source wins.
    public func networks() throws -> [Network] {
        var byID: [String: Network] = [:]
        for network in try storedNetworks() + serverDirectory() where byID[network.id] == nil { byID[network.id] = network }
        return byID.values.sorted { $0.id < $1.id }
    }

    func storedNetworks() throws -> [Network] {
        guard let data = try value(Self.directoryName) else { return [] }
        return try decode([Network].self, data)
    }

    /// The places imported into the vault, as one tile.
    public func localTile() throws -> PlaceTile? {
        guard let data = try value(Self.localName) else { return nil }
        do {
            return try PlaceTile(bytes: Array(data))
        } catch {
            throw VaultError.tampered("the vault's places")
        }
    }

    /// Reads a places file into the vault: networks join the directory, locations the local places (upserted by
    /// id; with `replacing`, the import's networks lose the locations it no longer holds). Same importers and rules
    /// as the server's.
    @discardableResult
    public func importPlaces(
        _ bytes: [UInt8], format: PlaceFormat? = nil, network: String? = nil, replacing: Bool = false
    ) throws -> PlaceImport {
        var networks = try storedNetworks()
        let current = try localTile()
        for network in current?.networks ?? [] where !networks.contains(where: { $0.id == network.id }) { networks.append(network) }
        let batch = try PlaceImporter.read(bytes, format: format, network: network, known: networks)
        for network in batch.networks {
            if let index = networks.firstIndex(where: { $0.id == network.id }) { networks[index] = network } else { networks.append(network) }
        }
        var locations = current?.locations ?? []
        let replacedNetworks = Set(batch.locations.map(\.networkID)).union(batch.network.map { [$0] } ?? [])
        if replacing { locations.removeAll { replacedNetworks.contains($0.networkID) } }
        var index: [String: Int] = [:]
        for (offset, location) in locations.enumerated() { index[location.id] = offset }
        for location in batch.locations {
            if let offset = index[location.id] {
                locations[offset] = location
            } else {
                index[location.id] = locations.count
                locations.append(location)
            }
        }
        let tile = try PlaceTile.encode(
            kind: .local, cell: "", radius: 0, dataVersion: UnixTime.milliseconds(coffer.location.options.clock()),
            networks: networks, locations: locations)
        try setValues([Self.directoryName: try encode(networks), Self.localName: Data(tile.bytes)])
        return batch
    }

    // MARK: Server and tiles

    /// The server whose public places this vault uses, if any.
    public func server() throws -> URL? {
        try value(Self.serverName).flatMap { URL(string: String(decoding: $0, as: UTF8.self)) }
    }

    /// Uses `url`'s public places from now on, with its directory of networks (replacing the previous server's
    /// directory and cached tiles).
    public func useServer(_ url: URL, directory: [Network]) throws {
        var values: [String: Data?] = [Self.serverName: Data(url.absoluteString.utf8), Self.directoryName + "/server": try encode(directory)]
        for entry in try cachedEntries() { values[Self.tileName(entry.cell)] = .some(nil) }
        values[Self.tilesIndexName] = .some(nil)
        try setValues(values)
    }

    /// The server's directory, as fetched by `useServer`.
    public func serverDirectory() throws -> [Network] {
        guard let data = try value(Self.directoryName + "/server") else { return [] }
        return try decode([Network].self, data)
    }

    /// A tile fetched from the server, with when and its ETag.
    public struct CachedTile: Sendable {
        public var tile: PlaceTile
        public var etag: String?
        public var fetchedAt: Date
    }

    /// The cached tile of `cell`, if any.
    public func cachedTile(_ cell: String) throws -> CachedTile? {
        guard let data = try value(Self.tileName(cell)) else { return nil }
        return try Self.decodeCached(data)
    }

    /// Cached tiles not fetched again (a tile in use is asked for again after a day) for this long are dropped.
    public static let tileMaximumAge: TimeInterval = 30 * 24 * 3600
    /// Beyond this many bytes of cached tiles, those fetched longest ago are dropped (never the one just fetched).
    public static let tileCacheBytes = 64 * 1024 * 1024

    static let tilesIndexName = "places/tiles"

    /// What the index of cached tiles says of each, so that status and eviction never open a tile.
    public struct CachedTileEntry: Sendable, Codable, Equatable {
        public var cell: String
        /// When the tile was last fetched or confirmed unchanged (Unix ms).
        public var fetchedAtMs: Int64
        public var bytes: Int
        public var locations: Int

        enum CodingKeys: String, CodingKey {
            case cell
            case fetchedAtMs = "fetched_ms"
            case bytes, locations
        }
    }

    /// Keeps a tile fetched from the server: its cell joins the index, networks the directory lacks join it, and
    /// tiles not fetched for `tileMaximumAge`, then the longest-unfetched beyond `cacheBytes`, are dropped.
    public func storeTile(
        _ tile: PlaceTile, etag: String?, fetchedAt: Date, cacheBytes: Int = VaultPlaces.tileCacheBytes
    ) throws {
        let now = max(0, UnixTime.milliseconds(fetchedAt))
        var entries = try cachedEntries().filter { $0.cell != tile.cell }
        let oldest = now - Int64(Self.tileMaximumAge * 1000)
        var dropped = entries.filter { $0.fetchedAtMs < oldest }
        entries.removeAll { $0.fetchedAtMs < oldest }
        entries.sort { ($0.fetchedAtMs, $0.cell) < ($1.fetchedAtMs, $1.cell) }
        var total = entries.reduce(tile.bytes.count) { $0 + $1.bytes }
        while total > cacheBytes, !entries.isEmpty {
            let evicted = entries.removeFirst()
            total -= evicted.bytes
            dropped.append(evicted)
        }
        entries.append(CachedTileEntry(cell: tile.cell, fetchedAtMs: now, bytes: tile.bytes.count, locations: tile.locationCount))
        var values: [String: Data?] = [
            Self.tileName(tile.cell): Self.encodeCached(CachedTile(tile: tile, etag: etag, fetchedAt: fetchedAt)),
            Self.tilesIndexName: try encode(entries),
        ]
        for entry in dropped { values[Self.tileName(entry.cell)] = .some(nil) }
        var directory = try serverDirectory()
        let known = Set(directory.map(\.id))
        let brought = tile.networks.filter { !known.contains($0.id) }
        if !brought.isEmpty {
            directory += brought
            values[Self.directoryName + "/server"] = try encode(directory)
        }
        try setValues(values)
    }

    /// The index of cached tiles. An index written before it kept sizes (a list of cells) is read by opening
    /// those tiles once; the next fetch writes it anew.
    public func cachedEntries() throws -> [CachedTileEntry] {
        guard let data = try value(Self.tilesIndexName) else { return [] }
        if let entries = try? JSONDecoder().decode([CachedTileEntry].self, from: data) { return entries }
        var entries: [CachedTileEntry] = []
        for cell in try decode([String].self, data) {
            guard let cached = try cachedTile(cell) else { continue }
            entries.append(
                CachedTileEntry(
                    cell: cell, fetchedAtMs: max(0, UnixTime.milliseconds(cached.fetchedAt)),
                    bytes: cached.tile.bytes.count, locations: cached.tile.locationCount))
        }
        return entries
    }

    /// The tile that covers `position` among those cached: its geohash-4 cell's, else a pack of its geohash-2 cell.
    public func coveringTile(_ position: GeoPoint) throws -> CachedTile? {
        let cell = Geohash.encode(position, precision: 4)
        if let tile = try cachedTile(cell) { return tile }
        return try cachedTile(String(cell.prefix(2)))
    }

    /// Cached tile bytes: fetch time (Unix ms, 8 bytes big-endian), ETag length (2 bytes) and ETag, then the tile.
    static func encodeCached(_ cached: CachedTile) -> Data {
        var data = Data()
        let ms = UInt64(max(0, UnixTime.milliseconds(cached.fetchedAt)))
        data.append(contentsOf: (0..<8).map { UInt8(truncatingIfNeeded: ms >> (56 - 8 * $0)) })
        let etag = Array((cached.etag ?? "").utf8.prefix(1024))
        data.append(contentsOf: [UInt8(etag.count >> 8), UInt8(etag.count & 0xFF)])
        data.append(contentsOf: etag)
        data.append(contentsOf: cached.tile.bytes)
        return data
    }

    static func decodeCached(_ data: Data) throws -> CachedTile {
        let bytes = Array(data)
        guard bytes.count >= 10 else { throw VaultError.tampered("a cached places tile") }
        let ms = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let length = Int(bytes[8]) << 8 | Int(bytes[9])
        guard bytes.count >= 10 + length else { throw VaultError.tampered("a cached places tile") }
        let etag = String(decoding: bytes[10..<(10 + length)], as: UTF8.self)
        do {
            return CachedTile(
                tile: try PlaceTile(bytes: Array(bytes[(10 + length)...])), etag: etag.isEmpty ? nil : etag,
                fetchedAt: UnixTime.date(milliseconds: Int64(clamping: ms)))
        } catch {
            throw VaultError.tampered("a cached places tile")
        }
    }

    // MARK: Cards and regions

    /// The cards as the surfacing rules see them at `now`: validity, networks, own places (Wallet pass locations),
    /// preference per network, last use.
    public func cueCards(at now: Date) throws -> [CueCard] {
        try coffer.items(kind: .card).compactMap { item in
            guard case .card(let card) = item.content else { return nil }
            return CueCard(
                id: item.id.lowercasedString, name: card.name, networkIDs: card.networkIDs,
                places: CardPlaces.places(of: card), preferredFor: CardPlaces.preferredNetworks(of: card),
                lastUsed: CardPlaces.lastUsed(of: card), isValid: card.isValid(at: now) && !card.isArchived)
        }
    }

    /// The monitored set at `position` from every source here (the vault's own places, the covering tile, the
    /// cards' own places), by the region rules.
    public func regions(
        at position: GeoPoint, cards: [CueCard], limit: Int = RegionRules.defaultLimit, radius: Double = RegionRules.searchRadius
    ) throws -> [MonitoredRegion] {
        Self.regions(at: position, cards: cards, limit: limit, radius: radius, tiles: try tiles(covering: position))
    }

    /// The tiles that hold places for `position`: the vault's own and the covering cached tile. Each is a sealed value
    /// opened and checked in full, so callers asking several questions read them once.
    func tiles(covering position: GeoPoint) throws -> [PlaceTile] {
        [try localTile(), try coveringTile(position)?.tile].compactMap { $0 }
    }

    /// Unlike iOS, Linux puts no limit on the regions an app follows, so `limit` is Coffer's own, and no card is
    /// crowded out by it: the nearest store of every network with a card, and the nearest own place of every card, are
    /// kept however many stores of another network are nearer (`nearestOfEachNetwork`). Only more cards' networks
    /// than `limit` within reach leave any out, and then the farthest.
    static func regions(
        at position: GeoPoint, cards: [CueCard], limit: Int, radius: Double, tiles: [PlaceTile]
    ) -> [MonitoredRegion] {
        let user = CueRules.userNetworks(cards)
        let pinned = PlaceSet(networks: [], locations: []).regions(
            at: position, userNetworks: user, pinned: CueRules.pinnedPlaces(cards), radius: radius, limit: limit,
            nearestOfEachNetwork: true)
        let fromTiles = tiles.map {
            $0.regions(at: position, userNetworks: user, radius: radius, limit: limit, nearestOfEachNetwork: true)
        }
        return MonitoredRegion.merge([pinned] + fromTiles, limit: limit, nearestOfEachNetwork: true)
    }

    /// A valid card and the nearest of its stores (or own places) within `radius` of `position`.
    public struct NearCard: Sendable {
        public var card: CueCard
        public var region: MonitoredRegion
    }

    /// The valid cards with a store within `radius` of `position`, nearest first. The nearest store of each of the
    /// cards' networks is chosen on its own (one pass each, keeping one place), so a large tile costs little.
    public func near(_ position: GeoPoint, cards: [CueCard], radius: Double) throws -> [NearCard] {
        let valid = cards.filter(\.isValid)
        let tiles = try tiles(covering: position)
        var nearest: [String: MonitoredRegion] = [:]
        for network in Set(valid.flatMap(\.networkIDs)) {
            let probe = CueCard(id: "", name: "", networkIDs: [network], isValid: true)
            if let region = Self.regions(at: position, cards: [probe], limit: 1, radius: radius, tiles: tiles).first,
                region.priority == 1, region.networkID == network
            {
                nearest[network] = region
            }
        }
        var result: [NearCard] = []
        for card in valid {
            let own = PlaceSet(networks: [], locations: []).regions(
                at: position, userNetworks: [], pinned: CueRules.pinnedPlaces([card]), radius: radius, limit: 1)
            let candidates = card.networkIDs.compactMap { nearest[$0] } + own
            if let best = candidates.min(by: { $0.distance < $1.distance }) { result.append(NearCard(card: card, region: best)) }
        }
        return result.sorted { ($0.region.distance, $0.card.name) < ($1.region.distance, $1.card.name) }
    }

    // MARK: Cue state

    /// What `coffer cue` keeps between runs: where and when the regions were last chosen, and the visits under way
    /// (so a restart does not announce a store the user is already in).
    public struct CueState: Codable, Sendable, Equatable {
        public var refresh: RefreshPoint?
        public var visiting: [MonitoredRegion]

        public init(refresh: RefreshPoint? = nil, visiting: [MonitoredRegion] = []) {
            self.refresh = refresh
            self.visiting = visiting
        }
    }

    public func cueState() throws -> CueState {
        guard let data = try value(Self.cueName) else { return CueState() }
        return try decode(CueState.self, data)
    }

    public func setCueState(_ state: CueState) throws {
        try setValues([Self.cueName: try encode(state)])
    }

    /// Forgets the server, its directory, cached tiles and the cue state; with `importedToo`, the imported places.
    public func clear(importedToo: Bool) throws {
        var values: [String: Data?] = [
            Self.serverName: nil, Self.directoryName + "/server": nil, Self.cueName: nil, Self.tilesIndexName: nil,
        ]
        for entry in try cachedEntries() { values[Self.tileName(entry.cell)] = .some(nil) }
        if importedToo {
            values[Self.localName] = .some(nil)
            values[Self.directoryName] = .some(nil)
        }
        try setValues(values)
    }

    // MARK: Plumbing

    private func value(_ name: String) throws -> Data? {
        try coffer.vault.localValue(name)
    }

    private func setValues(_ values: [String: Data?]) throws {
        try coffer.vault.setLocalValues(values)
    }

    private func encode(_ value: some Encodable) throws -> Data {
        do {
            return try JSONEncoder().encode(value)
        } catch {
            throw VaultError.storage("cannot encode places state")
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw VaultError.tampered("the vault's places state")
        }
    }
}

extension Coffer {
    /// The vault's places and cue state.
    public var places: VaultPlaces { VaultPlaces(coffer: self) }
}

/// What a card says about places, in its metadata: Wallet pass locations (`location_N = "lat,lon"`, as the pkpass
/// importer writes them), the networks it is preferred at (CardOnCue's `preferredForNetwork_<id> = "true"`) and its
/// last use (`lastUsedAt`, ISO 8601).
public enum CardPlaces {
    public static let preferredPrefix = "preferredForNetwork_"
    public static let lastUsedKey = "lastUsedAt"

    public static func places(of card: Card) -> [GeoPoint] {
        card.metadata.keys.filter { $0.hasPrefix("location_") }
            .sorted { (Int($0.dropFirst(9)) ?? .max) < (Int($1.dropFirst(9)) ?? .max) }
            .compactMap { card.metadata[$0].flatMap(GeoPoint.init(parsing:)) }
    }

    public static func preferredNetworks(of card: Card) -> Set<String> {
        Set(
            card.metadata.compactMap { key, value in
                key.hasPrefix(preferredPrefix) && value == "true" ? String(key.dropFirst(preferredPrefix.count)) : nil
            })
    }

    public static func lastUsed(of card: Card) -> Date? {
        card.metadata[lastUsedKey].flatMap { try? Date($0, strategy: .iso8601) }
    }
}
