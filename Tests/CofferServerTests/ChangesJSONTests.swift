import CofferCrypto
@testable import CofferServer
import CofferServerStore
import CofferSyncAPI
import Foundation
import Testing

/// `ChangesJSON` writes the changes page by hand; `JSONEncoder` (through `WireJSON`, as every other answer is
/// written) is the oracle it must match byte for byte, and clients must decode it to the same `ChangesResponse`.
@Suite("Changes page JSON")
struct ChangesJSONTests {
    static func item(
        kind: String = "note", box: Data? = Data("box".utf8), deleted: Bool = false, revision: Int64 = 1,
        updatedAt: Int64 = 1_700_000_000_000, sequence: Int64 = 1
    ) -> FeedItem {
        FeedItem(
            row: ItemRow(id: UUID(), kind: kind, revision: revision, updatedAt: updatedAt, deleted: deleted, box: box),
            sequence: sequence)
    }

    static let controlCharacters = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)

    static let pages: [(String, ChangePage)] = [
        ("empty, at the start", ChangePage(items: [], cursor: 0, hasMore: false)),
        ("empty, further on", ChangePage(items: [], cursor: 9_007_199_254_740_993, hasMore: false)),
        ("one item, more to come", ChangePage(items: [item()], cursor: 1, hasMore: true)),
        ("a tombstone has no box", ChangePage(items: [item(box: nil, deleted: true, revision: 7)], cursor: 4, hasMore: false)),
        ("boxes of every base64 padding", ChangePage(
            items: (0...5).map { item(box: Data(repeating: 0xFB, count: $0), sequence: Int64($0)) }, cursor: 5, hasMore: false)),
        ("kinds needing escapes", ChangePage(
            items: [
                item(kind: #"quote " and backslash \ and slash /"#), item(kind: controlCharacters),
                item(kind: "unicode é ✓ 𝄞 \u{2028} \u{7F}"), item(kind: ""),
            ],
            cursor: 12, hasMore: true)),
        ("extreme numbers", ChangePage(
            items: [item(revision: .max, updatedAt: .max), item(revision: .min, updatedAt: -1)], cursor: .max, hasMore: false)),
    ]

    @Test("matches JSONEncoder byte for byte", arguments: pages.map(\.0))
    func matchesEncoder(_ name: String) throws {
        let page = try #require(Self.pages.first { $0.0 == name }?.1)
        try expectEqualToEncoder(page)
    }

    @Test("matches JSONEncoder on random pages")
    func randomPages() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let items = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                let kindBytes = (0..<Int.random(in: 0...20, using: &generator)).map { _ in UInt8.random(in: 0...0x7F, using: &generator) }
                let deleted = Bool.random(using: &generator)
                return FeedItem(
                    row: ItemRow(
                        id: UUID(), kind: String(decoding: kindBytes, as: UTF8.self), revision: .random(in: 1...Int64.max, using: &generator),
                        updatedAt: .random(in: 0...Int64.max, using: &generator), deleted: deleted,
                        box: deleted ? nil : Data((0..<Int.random(in: 0...700, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })),
                    sequence: 1)
            }
            try expectEqualToEncoder(ChangePage(items: items, cursor: .random(in: 0...Int64.max, using: &generator), hasMore: .random(using: &generator)))
        }
    }

    @Test("decodes back to the page")
    func decodes() throws {
        let page = ChangePage(items: [Self.item(), Self.item(box: nil, deleted: true)], cursor: 2, hasMore: true)
        let body = ChangesJSON.body(page)
        let decoded = try WireJSON.decoder().decode(ChangesResponse.self, from: Data(body.readableBytesView))
        #expect(decoded.cursor == 2)
        #expect(decoded.hasMore)
        #expect(decoded.items.map(\.id) == page.items.map(\.id))
        #expect(decoded.items.map(\.box) == page.items.map(\.box))
        #expect(decoded.items.map(\.deleted) == [false, true])
    }

    private func expectEqualToEncoder(_ page: ChangePage) throws {
        let response = ChangesResponse(
            items: page.items.map(\.row),
            cursor: page.cursor, hasMore: page.hasMore)
        let expected = try WireJSON.encoder().encode(response)
        let written = Data(ChangesJSON.body(page).readableBytesView)
        #expect(written == expected, "\(String(decoding: written.prefix(300), as: UTF8.self))")
    }
}
