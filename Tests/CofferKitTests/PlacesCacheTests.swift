import CofferPlaces
import CofferTestSupport
import CofferVault
import Foundation
import Testing

@_spi(Sync) @testable import CofferKit

/// Tiles cached from a server: 339 cells once held 55 MB and were never dropped, and `coffer networks` opened every
/// one of them.
@Suite("Cached places tiles")
struct PlacesCacheTests {
    static func tile(_ cell: String, locations: Int = 3, network: String = "net") throws -> PlaceTile {
        let box = try #require(Geohash.box(cell))
        let centre = try #require(GeoPoint(latitude: (box.south + box.north) / 2, longitude: (box.west + box.east) / 2))
        return try PlaceTile.encode(
            kind: .cell, cell: cell, radius: 50_000, dataVersion: 1, networks: [Network(id: network, name: network.uppercased())],
            locations: (0..<locations).map { Location(id: "\(cell)-\($0)", networkID: network, name: "Store \($0)", point: centre) })
    }

    @Test("tiles not fetched for 30 days are dropped, then the longest-unfetched beyond the size cap; never the one just fetched")
    func eviction() throws {
        let places = try KitFixture().coffer.places
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let size = try Self.tile("9q8y").bytes.count
        for (offset, cell) in ["9q8y", "9q8z", "9q9p", "9q9n"].enumerated() {
            try places.storeTile(try Self.tile(cell), etag: "\"\(cell)\"", fetchedAt: start.addingTimeInterval(Double(offset) * 86_400))
        }
        #expect(try places.cachedEntries().map(\.cell) == ["9q8y", "9q8z", "9q9p", "9q9n"])
        #expect(try places.cachedEntries().allSatisfy { $0.bytes == size && $0.locations == 3 })
        // Fetched again (or confirmed unchanged) a tile is young again.
        try places.storeTile(try Self.tile("9q8y"), etag: nil, fetchedAt: start.addingTimeInterval(29 * 86_400))
        // 31 days after the start: the tiles of days 0 (fetched again since) and 3 stay; those of days 1 and 2 go.
        try places.storeTile(try Self.tile("9q9q"), etag: nil, fetchedAt: start.addingTimeInterval(32 * 86_400 + 1))
        #expect(Set(try places.cachedEntries().map(\.cell)) == ["9q8y", "9q9n", "9q9q"])
        #expect(try places.cachedTile("9q8z") == nil && places.cachedTile("9q9p") == nil, "the tiles themselves are removed")
        // Room for two: the longest-unfetched goes first, the one just fetched stays even alone over the cap.
        try places.storeTile(try Self.tile("9q9r"), etag: nil, fetchedAt: start.addingTimeInterval(33 * 86_400), cacheBytes: 2 * size)
        #expect(try places.cachedEntries().map(\.cell) == ["9q9q", "9q9r"])
        try places.storeTile(try Self.tile("9q9s"), etag: nil, fetchedAt: start.addingTimeInterval(34 * 86_400), cacheBytes: size / 2)
        #expect(try places.cachedEntries().map(\.cell) == ["9q9s"])
        #expect(try places.cachedTile("9q9s")?.etag == nil && places.cachedTile("9q9s")?.tile.locationCount == 3)
    }

    @Test("networks come from the directory without opening a tile; a tile's network the directory lacks joins it")
    func networksWithoutTiles() throws {
        let places = try KitFixture().coffer.places
        try places.useServer(try #require(URL(string: "https://places.example.org")), directory: [Network(id: "net", name: "NET")])
        try places.storeTile(try Self.tile("9q8y", network: "newcomer"), etag: nil, fetchedAt: Date())
        #expect(try places.networks().map(\.id) == ["net", "newcomer"])
        #expect(try places.serverDirectory().map(\.id) == ["net", "newcomer"])
    }

    @Test("an index written before sizes were kept (a list of cells) is read by opening those tiles once")
    func legacyIndex() throws {
        let fixture = try KitFixture()
        let places = fixture.coffer.places
        let fetched = Date(timeIntervalSince1970: 1_800_000_000)
        try places.storeTile(try Self.tile("9q8y", locations: 5), etag: "\"a\"", fetchedAt: fetched)
        try fixture.coffer.vault.setLocalValues([VaultPlaces.tilesIndexName: Data(#"["9q8y","gone"]"#.utf8)])
        let entries = try places.cachedEntries()
        #expect(entries.map(\.cell) == ["9q8y"] && entries.first?.locations == 5 && entries.first?.fetchedAtMs == 1_800_000_000_000)
        try places.storeTile(try Self.tile("9q8z"), etag: nil, fetchedAt: fetched)
        #expect(try places.cachedEntries().map(\.cell) == ["9q8y", "9q8z"])
    }
}
