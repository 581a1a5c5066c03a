import CofferCrypto
import Foundation

extension ChangesResponse {
    /// The page read straight from JSON shaped as the server writes it (`ChangesJSON`: known keys, each once,
    /// strings without escapes, whole numbers, every row within `SyncLimits`), or nil for anything else, which the
    /// caller then reads with `JSONDecoder`, whose answer is the one that counts.
    ///
    /// `JSONDecoder` builds a tree of every page before the rows are decoded from it, and that took a fifth of a new
    /// device's login with 10,000 items. Whatever this reads, `JSONDecoder` reads the same way: the fuzzer and the
    /// tests hold the two equal on the server's pages and on damaged ones.
    public init?(canonicalJSON data: Data) {
        guard
            let page = data.withUnsafeBytes({ bytes -> ChangesResponse? in
                var reader = CanonicalJSONReader(bytes: bytes)
                return reader.changes()
            })
        else { return nil }
        self = page
    }
}

/// Reads the JSON subset `ChangesResponse(canonicalJSON:)` accepts; every method returns nil (or false) at the first
/// byte outside it.
private struct CanonicalJSONReader {
    let bytes: UnsafeRawBufferPointer
    var position = 0

    mutating func changes() -> ChangesResponse? {
        var cursor: Int64?
        var hasMore: Bool?
        var head: String??
        var items: [ItemRow]?
        guard take(UInt8(ascii: "{")) else { return nil }
        if !take(UInt8(ascii: "}")) {
            repeat {
                guard let key = plainString(), take(UInt8(ascii: ":")) else { return nil }
                switch Key(bytes, key) {
                case .cursor where cursor == nil:
                    guard let value = integer() else { return nil }
                    cursor = value
                case .hasMore where hasMore == nil:
                    guard let value = boolean() else { return nil }
                    hasMore = value
                case .head where head == nil:
                    if takeNull() {
                        head = .some(nil)
                    } else {
                        guard let range = plainString() else { return nil }
                        head = text(range)
                    }
                case .items where items == nil:
                    guard let value = rows() else { return nil }
                    items = value
                default: return nil
                }
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")) else { return nil }
        }
        skipSpace()
        guard position == bytes.count, let cursor, let hasMore, let items else { return nil }
        return ChangesResponse(items: items, cursor: cursor, hasMore: hasMore, head: head ?? nil)
    }

    /// The keys of a page and of its rows.
    private enum Key {
        case cursor, hasMore, head, items, id, kind, revision, updatedAt, deleted, box, unknown

        init(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) {
            let name = UnsafeRawBufferPointer(rebasing: bytes[range])
            func matches(_ word: StaticString) -> Bool {
                name.count == word.utf8CodeUnitCount && memcmp(name.baseAddress!, word.utf8Start, name.count) == 0
            }
            self =
                if matches("cursor") { .cursor } else if matches("has_more") { .hasMore } else if matches("head") { .head } else if matches("items") {
                    .items
                } else if matches("id") { .id } else if matches("kind") { .kind } else if matches("revision") { .revision } else if matches("updated_at") {
                    .updatedAt
                } else if matches("deleted") { .deleted } else if matches("box") { .box } else { .unknown }
        }
    }

    mutating func rows() -> [ItemRow]? {
        guard take(UInt8(ascii: "[")) else { return nil }
        var rows: [ItemRow] = []
        if take(UInt8(ascii: "]")) { return rows }
        repeat {
            guard let row = row() else { return nil }
            rows.append(row)
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "]")) ? rows : nil
    }

    /// One row, checked as `ItemRow.init(from:)` checks it.
    mutating func row() -> ItemRow? {
        var id: UUID?
        var kind: String?
        var revision: Int64?
        var updatedAt: Int64?
        var deleted: Bool?
        var box: Data??
        guard take(UInt8(ascii: "{")) else { return nil }
        repeat {
            guard let key = plainString(), take(UInt8(ascii: ":")) else { return nil }
            switch Key(bytes, key) {
            case .id where id == nil:
                guard let range = plainString(), let value = UUID(utf8: UnsafeRawBufferPointer(rebasing: bytes[range])) else {
                    return nil
                }
                id = value
            case .kind where kind == nil:
                guard let range = plainString() else { return nil }
                kind = text(range)
            case .revision where revision == nil:
                guard let value = integer() else { return nil }
                revision = value
            case .updatedAt where updatedAt == nil:
                guard let value = integer() else { return nil }
                updatedAt = value
            case .deleted where deleted == nil:
                guard let value = boolean() else { return nil }
                deleted = value
            case .box where box == nil:
                // Base64 is 4/3 of the bytes: oversize text is left to JSONDecoder's refusal before it is decoded.
                guard let range = plainString(), range.count <= (SyncLimits.maxBoxBytes / 3 + 1) * 4,
                    let value = Data(base64Encoded: Data(bytes[range])), value.count <= SyncLimits.maxBoxBytes
                else { return nil }
                box = .some(value)
            default: return nil
            }
        } while take(UInt8(ascii: ","))
        guard take(UInt8(ascii: "}")), let id, let kind, let revision, let updatedAt, let deleted else { return nil }
        let content = box ?? nil
        guard deleted == (content == nil) else { return nil }
        return ItemRow(id: id, kind: kind, revision: revision, updatedAt: updatedAt, deleted: deleted, box: content)
    }

    /// A string's bytes between its quotes, when it has no escape, no control character and is valid UTF-8.
    mutating func plainString() -> Range<Int>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = position
        var ascii = true
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                let range = start..<(position - 1)
                if !ascii, String(validating: bytes[range], as: UTF8.self) == nil { return nil }
                return range
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        return nil
    }

    func text(_ range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    /// A JSON integer: an optional minus and digits without a leading zero, no fraction or exponent, in 64 bits.
    mutating func integer() -> Int64? {
        skipSpace()
        let negative = position < bytes.count && bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        let start = position
        var magnitude: UInt64 = 0
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            let (times, overflowed) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carried) = times.addingReportingOverflow(UInt64(bytes[position] - UInt8(ascii: "0")))
            guard !overflowed, !carried else { return nil }
            magnitude = sum
            position += 1
        }
        let digits = position - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        if position < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[position]) { return nil }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    mutating func boolean() -> Bool? {
        if literal("true") { return true }
        if literal("false") { return false }
        return nil
    }

    mutating func takeNull() -> Bool { literal("null") }

    private mutating func literal(_ word: StaticString) -> Bool {
        skipSpace()
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count,
            UnsafeRawBufferPointer(start: word.utf8Start, count: count).elementsEqual(bytes[position..<(position + count)])
        else { return false }
        position += count
        return true
    }

    /// Skips white space, then takes `byte` if it comes next.
    mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    mutating func skipSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }
}
