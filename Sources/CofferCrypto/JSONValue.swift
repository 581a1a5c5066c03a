/// A JSON document (RFC 8259) with its types kept apart: a boolean is never a number, a string never a number, a
/// whole number never a fraction. The importers, the places readers and gpsd's reports read through it, so each can
/// tell a wrong type from a missing field.
///
/// `parse` reads the bytes itself rather than through `JSONDecoder`: a decoder has no way to ask a value's type, and
/// trying each type in turn made a 20,000-store GeoJSON file (6.9 MB) take 1.8 s, five times `JSONSerialization`'s
/// (whose numbers cannot tell `true` from `1`); this reader takes about 0.15 s. It is checked against Python's `json`
/// module (`JSONValueTests`).
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number equal to a whole number that fits `Int64` (`12`, `12.0`, `1e2`, as `JSONDecoder` reads them).
    case integer(Int64)
    /// A whole number above `Int64.max` that fits `UInt64`.
    case unsignedInteger(UInt64)
    /// Any other number, as the nearest double.
    case fraction(Double)
    case string(String)
    case array([JSONValue])
    /// An object's members; of a name given twice, the last value counts (as Python and JavaScript read it).
    case object([String: JSONValue])

    /// How deeply arrays and objects may nest, as `JSONDecoder` allows.
    package static let maximumDepth = 512

    /// The document, or `nil` when `bytes` are not one JSON value (after an optional UTF-8 byte-order mark), with
    /// nothing but white space around it.
    package static func parse(_ bytes: some Collection<UInt8>) -> JSONValue? {
        let parsed = bytes.withContiguousStorageIfAvailable { buffer in
            var parser = JSONParser(buffer)
            return parser.document()
        }
        if let parsed { return parsed }
        return parse(Array(bytes))
    }

    /// The member named `key` of an object; `nil` for a missing member or a value that is not an object.
    package subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    package var stringValue: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    package var arrayValue: [JSONValue]? {
        guard case .array(let value) = self else { return nil }
        return value
    }

    package var objectValue: [String: JSONValue]? {
        guard case .object(let value) = self else { return nil }
        return value
    }

    package var intValue: Int? {
        switch self {
        case .integer(let value): Int(exactly: value)
        case .unsignedInteger(let value): Int(exactly: value)
        default: nil
        }
    }

    /// Any number, as the nearest double (a position's coordinates); never a boolean.
    package var doubleValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .unsignedInteger(let value): Double(value)
        case .fraction(let value): value
        default: nil
        }
    }

    package var uint64Value: UInt64? {
        switch self {
        case .integer(let value): UInt64(exactly: value)
        case .unsignedInteger(let value): value
        default: nil
        }
    }

    /// A key from a file as an error may show it: quoted when short and plain, else described.
    package static func quotedKey(_ key: String) -> String {
        let plain =
            !key.isEmpty && key.count <= 40
            && key.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
        return plain ? "\"\(key)\"" : "(a key that is not a plain name)"
    }
}

/// A recursive-descent reader of RFC 8259 text over bytes; every failure is `nil`, with no detail that could quote
/// the input.
private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var offset = 0
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func document() -> JSONValue? {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { offset = 3 }
        skipWhiteSpace()
        guard let value = value() else { return nil }
        skipWhiteSpace()
        return offset == bytes.count ? value : nil
    }

    private mutating func skipWhiteSpace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    private mutating func value() -> JSONValue? {
        guard offset < bytes.count else { return nil }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) -> JSONValue? {
        let count = word.utf8CodeUnitCount
        guard bytes.count - offset >= count else { return nil }
        for index in 0..<count where bytes[offset + index] != word.utf8Start[index] { return nil }
        offset += count
        return value
    }

    private mutating func object() -> JSONValue? {
        guard enter() else { return nil }
        defer { depth -= 1 }
        offset += 1
        var members: [String: JSONValue] = [:]
        skipWhiteSpace()
        if take(UInt8(ascii: "}")) { return .object(members) }
        while true {
            skipWhiteSpace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\""), let key = string() else { return nil }
            skipWhiteSpace()
            guard take(UInt8(ascii: ":")) else { return nil }
            skipWhiteSpace()
            guard let member = value() else { return nil }
            members[key] = member
            skipWhiteSpace()
            if take(UInt8(ascii: "}")) { return .object(members) }
            guard take(UInt8(ascii: ",")) else { return nil }
        }
    }

    private mutating func array() -> JSONValue? {
        guard enter() else { return nil }
        defer { depth -= 1 }
        offset += 1
        var elements: [JSONValue] = []
        skipWhiteSpace()
        if take(UInt8(ascii: "]")) { return .array(elements) }
        while true {
            skipWhiteSpace()
            guard let element = value() else { return nil }
            elements.append(element)
            skipWhiteSpace()
            if take(UInt8(ascii: "]")) { return .array(elements) }
            guard take(UInt8(ascii: ",")) else { return nil }
        }
    }

    private mutating func enter() -> Bool {
        depth += 1
        return depth <= JSONValue.maximumDepth
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard offset < bytes.count, bytes[offset] == byte else { return false }
        offset += 1
        return true
    }

    /// A string from its opening quote: valid UTF-8, no raw control characters, escapes decoded, and a `\u` escape of
    /// half a surrogate pair only with its other half.
    private mutating func string() -> String? {
        offset += 1
        let start = offset
        // The common case, no escape: the bytes as they are.
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let text = String(validating: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
                offset += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { return nil }
            offset += 1
        }
        var decoded = Array(bytes[start..<offset])
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard offset < bytes.count else { return nil }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = unicodeEscape() else { return nil }
                    UTF8.encode(scalar) { decoded.append($0) }
                default: return nil
                }
            default:
                guard byte >= 0x20 else { return nil }
                decoded.append(byte)
            }
        }
        return nil
    }

    /// The scalar of a `\uXXXX` escape whose `\u` was read, with the low half of a surrogate pair read as well.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let unit = hexUnit() else { return nil }
        switch unit {
        case 0xD800...0xDBFF:
            guard bytes.count - offset >= 2, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                return nil
            }
            offset += 2
            guard let low = hexUnit(), (0xDC00...0xDFFF).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
        case 0xDC00...0xDFFF:
            return nil
        default:
            return Unicode.Scalar(unit)
        }
    }

    private mutating func hexUnit() -> UInt32? {
        guard bytes.count - offset >= 4 else { return nil }
        var unit: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            unit = unit << 4 | UInt32(digit)
            offset += 1
        }
        return unit
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`; a number beyond a double's range is refused.
    private mutating func number() -> JSONValue? {
        let start = offset
        _ = take(UInt8(ascii: "-"))
        guard offset < bytes.count else { return nil }
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
        } else {
            guard digits() > 0 else { return nil }
        }
        var whole = true
        if take(UInt8(ascii: ".")) {
            whole = false
            guard digits() > 0 else { return nil }
        }
        if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
            whole = false
            if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
            guard digits() > 0 else { return nil }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        if whole {
            if let value = Int64(text) { return .integer(value) }
            if let value = UInt64(text) { return .unsignedInteger(value) }
        }
        guard let value = Double(text), value.isFinite else { return nil }
        if value.rounded() == value {
            if value >= -0x1p63, value < 0x1p63 { return .integer(Int64(value)) }
            if value >= 0, value < 0x1p64 { return .unsignedInteger(UInt64(value)) }
        }
        return .fraction(value)
    }

    private mutating func digits() -> Int {
        let start = offset
        while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
        return offset - start
    }
}

extension JSONValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByStringLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(integerLiteral value: Int64) { self = .integer(value) }
    package init(stringLiteral value: String) { self = .string(value) }
    package init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

    package init(dictionaryLiteral members: (String, JSONValue)...) {
        self = .object(Dictionary(members, uniquingKeysWith: { _, last in last }))
    }

    /// A whole number of any integer type, as `integer` or, above `Int64.max`, `unsignedInteger`.
    package static func number(_ value: some BinaryInteger) -> JSONValue {
        if let signed = Int64(exactly: value) { return .integer(signed) }
        if let unsigned = UInt64(exactly: value) { return .unsignedInteger(unsigned) }
        return .fraction(Double(value))
    }

    /// A string, or `null` for nil.
    package static func string(_ value: String?) -> JSONValue {
        value.map(JSONValue.string) ?? .null
    }

    /// The document as JSON text: members in key order, strings escaped only where JSON requires it (slashes and
    /// non-ASCII as they are), and with `pretty` on lines indented by two spaces, as the command line's `--json`
    /// prints (`"key" : value`). A number that is not finite, which no JSON holds, is written as `null`.
    package func text(pretty: Bool = false) -> String {
        var output = ""
        write(to: &output, pretty: pretty, indent: 0)
        return output
    }

    private func write(to output: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .integer(let number): output += String(number)
        case .unsignedInteger(let number): output += String(number)
        case .fraction(let number): output += number.isFinite ? String(number) : "null"
        case .string(let text): Self.writeString(text, to: &output)
        case .array(let items):
            guard !items.isEmpty else {
                output += "[]"
                return
            }
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += "," }
                if pretty { output += "\n" + String(repeating: " ", count: indent + 2) }
                item.write(to: &output, pretty: pretty, indent: indent + 2)
            }
            if pretty { output += "\n" + String(repeating: " ", count: indent) }
            output += "]"
        case .object(let members):
            guard !members.isEmpty else {
                output += "{}"
                return
            }
            output += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output += "," }
                if pretty { output += "\n" + String(repeating: " ", count: indent + 2) }
                Self.writeString(key, to: &output)
                output += pretty ? " : " : ":"
                members[key]!.write(to: &output, pretty: pretty, indent: indent + 2)
            }
            if pretty { output += "\n" + String(repeating: " ", count: indent) }
            output += "}"
        }
    }

    private static func writeString(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case "\u{00}"..."\u{1F}":
                output += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}
