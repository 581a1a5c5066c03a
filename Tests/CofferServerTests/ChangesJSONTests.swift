import CofferCrypto
@testable import CofferServer
import CofferServerStore
import CofferSyncAPI
import Foundation
import NIOCore
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
        (
            "boxes of every base64 padding",
            ChangePage(
                items: (0...5).map { item(box: Data(repeating: 0xFB, count: $0), sequence: Int64($0)) }, cursor: 5, hasMore: false)
        ),
        (
            "kinds needing escapes",
            ChangePage(
                items: [
                    item(kind: #"quote " and backslash \ and slash /"#), item(kind: controlCharacters),
                    item(kind: "unicode é ✓ 𝄞 \u{2028} \u{7F}"), item(kind: ""),
                ],
                cursor: 12, hasMore: true)
        ),
        (
            "extreme numbers",
            ChangePage(
                items: [item(revision: .max, updatedAt: .max), item(revision: .min, updatedAt: -1)], cursor: .max, hasMore: false)
        ),
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

    /// The client reads the server's pages without `JSONDecoder` (`ChangesResponse(canonicalJSON:)`): it must read
    /// every page whose kinds need no escape, and read it as `JSONDecoder` does.
    @Test("the client's direct reading of a page agrees with JSONDecoder", arguments: pages.map(\.0))
    func directReading(_ name: String) throws {
        var page = try #require(Self.pages.first { $0.0 == name }?.1)
        for head in [nil, Data("manifest bytes".utf8)] {
            let body = Data(ChangesJSON.body(page, head: head).readableBytesView)
            let decoded = try WireJSON.decoder().decode(ChangesResponse.self, from: body)
            let escaped = page.items.contains { item in item.row.kind.utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } }
            guard let read = ChangesResponse(canonicalJSON: body) else {
                #expect(escaped, "a page the server wrote was left to JSONDecoder")
                continue
            }
            #expect(Self.same(read, decoded))
            #expect(read.head == head?.base64EncodedString())
        }
        page.hasMore.toggle()
        #expect(
            ChangesResponse(canonicalJSON: Data(ChangesJSON.body(page).readableBytesView))?.hasMore == page.hasMore
                || page.items
                    .contains { $0.row.kind.utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } }
        )
    }

    /// Damaged pages: whatever the direct reading accepts, JSONDecoder accepts and reads the same; the rest is left
    /// to JSONDecoder.
    @Test("damaged pages: the direct reading never accepts what JSONDecoder refuses or reads otherwise")
    func directReadingOfDamagedPages() throws {
        var generator = SystemRandomNumberGenerator()
        let spellings: [[UInt8]] = [
            Array(#"{ "cursor" : 3 , "has_more" : false , "items" : [ ] }"#.utf8), Array(#"{"items":[],"has_more":true,"cursor":-0}"#.utf8),
            Array(#"{"cursor":1,"has_more":false,"items":[],"head":null}"#.utf8), Array(#"{"cursor":1.0,"has_more":false,"items":[]}"#.utf8),
            Array(#"{"cursor":1,"cursor":2,"has_more":false,"items":[]}"#.utf8), Array(#"{"cursor":1,"has_more":false,"items":[],"x":1}"#.utf8),
            Array(#"{"cursor":01,"has_more":false,"items":[]}"#.utf8), Array(#"{"cursor":9223372036854775808,"has_more":false,"items":[]}"#.utf8),
            Array(#"{"cursor":-9223372036854775808,"has_more":false,"items":[]}"#.utf8),
        ]
        var bodies: [[UInt8]] = spellings
        for _ in 0..<40 {
            let items = (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                let deleted = Int.random(in: 0..<4, using: &generator) == 0
                return Self.item(
                    kind: ["note", "otp", "café", ""].randomElement(using: &generator)!,
                    box: deleted ? nil : Data((0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }),
                    deleted: deleted, revision: .random(in: 1...1_000, using: &generator))
            }
            bodies.append(Array(ChangesJSON.body(ChangePage(items: items, cursor: 7, hasMore: false), head: Data([1, 2, 3])).readableBytesView))
        }
        let alphabet = Array(#"{}[]:,"\ -0123456789.eEtruefalsn"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xFF]
        var accepted = 0
        for original in bodies {
            for _ in 0..<250 {
                var body = original
                for _ in 0..<Int.random(in: 1...3, using: &generator) where !body.isEmpty {
                    let at = Int.random(in: 0..<body.count, using: &generator)
                    switch Int.random(in: 0..<3, using: &generator) {
                    case 0: body[at] = alphabet.randomElement(using: &generator)!
                    case 1: body.insert(alphabet.randomElement(using: &generator)!, at: at)
                    default: body.remove(at: at)
                    }
                }
                guard let read = ChangesResponse(canonicalJSON: Data(body)) else { continue }
                accepted += 1
                let decoded = try? WireJSON.decoder().decode(ChangesResponse.self, from: Data(body))
                #expect(decoded.map { Self.same(read, $0) } == true, "\(String(decoding: body, as: UTF8.self))")
            }
        }
        // Some damage leaves valid pages (a digit changed, a space added): the comparison above was exercised.
        #expect(accepted > 100)
    }

    static func same(_ first: ChangesResponse, _ second: ChangesResponse) -> Bool {
        first.items == second.items && first.cursor == second.cursor && first.hasMore == second.hasMore && first.head == second.head
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
