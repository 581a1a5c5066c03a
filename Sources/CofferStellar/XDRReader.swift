/// Why a Stellar transaction envelope was not read (or not signed). No case carries a secret: an envelope is public.
public enum StellarError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is not base64, or decodes to nothing.
    case notBase64
    /// More bytes than any transaction has.
    case tooLarge(limit: Int)
    /// The data ends inside `what`.
    case truncated(String)
    /// A length or count past its limit (`what`, the count, the limit).
    case tooMany(String, Int, limit: Int)
    /// A value outside what the XDR definitions allow (`what`, the value).
    case unknown(String, Int64)
    /// Claim predicates nested deeper than the network accepts.
    case tooDeep(limit: Int)
    /// Bytes after the envelope's end.
    case trailingBytes(Int)
    /// A non-zero padding byte or a boolean that is neither 0 nor 1: not canonical XDR.
    case notCanonical(String)
    /// A part Coffer does not decode, so cannot show: the envelope is not signed.
    case notShown(String)

    public var description: String {
        switch self {
        case .notBase64: "the envelope is not base64 XDR"
        case .tooLarge(let limit): "the envelope is larger than \(limit) bytes"
        case .truncated(let what): "the envelope ends inside \(what)"
        case .tooMany(let what, let count, let limit): "\(what): \(count) is more than \(limit)"
        case .unknown(let what, let value): "unknown \(what) \(value)"
        case .tooDeep(let limit): "claim predicates are nested more than \(limit) deep"
        case .trailingBytes(let count): "\(count) bytes follow the envelope"
        case .notCanonical(let what): "\(what) is not canonical XDR"
        case .notShown(let what): "\(what), which Coffer cannot show in full: not signed"
        }
    }
}

/// A reader of XDR (RFC 4506) as Stellar uses it: big-endian 4-byte units, lengths checked against the bytes left
/// and against each field's declared bound before anything is allocated.
struct XDRReader {
    private let bytes: [UInt8]
    private(set) var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - position }

    private mutating func take(_ count: Int, _ what: String) throws(StellarError) -> ArraySlice<UInt8> {
        guard count <= remaining else { throw .truncated(what) }
        defer { position += count }
        return bytes[position..<position + count]
    }

    mutating func uint32(_ what: String) throws(StellarError) -> UInt32 {
        try take(4, what).reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func int32(_ what: String) throws(StellarError) -> Int32 { Int32(bitPattern: try uint32(what)) }

    mutating func uint64(_ what: String) throws(StellarError) -> UInt64 {
        try take(8, what).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func int64(_ what: String) throws(StellarError) -> Int64 { Int64(bitPattern: try uint64(what)) }

    mutating func bool(_ what: String) throws(StellarError) -> Bool {
        switch try uint32(what) {
        case 0: return false
        case 1: return true
        default: throw .notCanonical(what)
        }
    }

    /// A union's discriminant or an enum value, as a signed 32-bit number.
    mutating func discriminant(_ what: String) throws(StellarError) -> Int32 { try int32(what) }

    mutating func fixed(_ count: Int, _ what: String) throws(StellarError) -> [UInt8] {
        let data = Array(try take(count, what))
        try padding(count, what)
        return data
    }

    /// `opaque<max>` or `string<max>`.
    mutating func variable(max: Int, _ what: String) throws(StellarError) -> [UInt8] {
        let count = try uint32(what)
        guard count <= UInt32(max) else { throw .tooMany(what, Int(count), limit: max) }
        return try fixed(Int(count), what)
    }

    /// An array's element count, checked against its bound and against the bytes left (each element takes at least
    /// `minimumSize` bytes), so a hostile count allocates nothing.
    mutating func count(max: Int, minimumSize: Int = 4, _ what: String) throws(StellarError) -> Int {
        let count = try uint32(what)
        guard count <= UInt32(max) else { throw .tooMany(what, Int(count), limit: max) }
        guard Int(count) * minimumSize <= remaining else { throw .truncated(what) }
        return Int(count)
    }

    private mutating func padding(_ count: Int, _ what: String) throws(StellarError) {
        let pad = (4 - count % 4) % 4
        guard try take(pad, what).allSatisfy({ $0 == 0 }) else { throw .notCanonical(what) }
    }

    func slice(from start: Int) -> ArraySlice<UInt8> { bytes[start..<position] }
}
