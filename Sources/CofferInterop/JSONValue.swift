import Foundation

/// A JSON document with its types kept apart (a boolean is never a number, a string never a number), so each
/// importer can tell a wrong type from a missing field. Parsing goes through `JSONDecoder`, which bounds nesting.
enum JSONValue: Sendable, Equatable, Decodable {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsignedInteger(UInt64)
    case fraction(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(UInt64.self) {
            self = .unsignedInteger(value)
        } else if let value = try? container.decode(Double.self) {
            self = .fraction(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// The document, or `nil` when `bytes` are not JSON.
    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    /// The member named `key` of an object; `nil` for a missing member or a value that is not an object.
    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    var stringValue: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    var arrayValue: [JSONValue]? {
        guard case .array(let value) = self else { return nil }
        return value
    }

    var intValue: Int? {
        switch self {
        case .integer(let value): Int(exactly: value)
        case .unsignedInteger(let value): Int(exactly: value)
        default: nil
        }
    }

    /// Any number, as the nearest double (a position's coordinates); never a boolean.
    var doubleValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .unsignedInteger(let value): Double(value)
        case .fraction(let value): value
        default: nil
        }
    }

    var uint64Value: UInt64? {
        switch self {
        case .integer(let value): UInt64(exactly: value)
        case .unsignedInteger(let value): value
        default: nil
        }
    }

    /// A string member: `nil` when missing or `null`; a member of another type is an entry error.
    func string(_ key: String) throws(ImportEntryError) -> String? {
        guard let value = self[key], value != .null else { return nil }
        guard let text = value.stringValue else { throw ImportEntryError("\(key) is not a string") }
        return text
    }

    /// A whole-number member: `nil` when missing or `null`; a member of another type is an entry error.
    func int(_ key: String) throws(ImportEntryError) -> Int? {
        guard let value = self[key], value != .null else { return nil }
        guard let number = value.intValue else { throw ImportEntryError("\(key) is not a whole number") }
        return number
    }

    /// A non-negative whole-number member, for HOTP counters.
    func uint64(_ key: String) throws(ImportEntryError) -> UInt64? {
        guard let value = self[key], value != .null else { return nil }
        guard let number = value.uint64Value else { throw ImportEntryError("\(key) is not a non-negative whole number") }
        return number
    }

    /// An array-of-strings member; elements that are not strings are dropped (tags are decoration).
    func strings(_ key: String) throws(ImportEntryError) -> [String] {
        guard let value = self[key], value != .null else { return [] }
        guard let list = value.arrayValue else { throw ImportEntryError("\(key) is not an array") }
        return list.compactMap(\.stringValue)
    }

    /// A key from the file as an error may show it: quoted when short and plain, else described.
    static func quotedKey(_ key: String) -> String {
        let plain = !key.isEmpty && key.count <= 40
            && key.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
        return plain ? "\"\(key)\"" : "(a key that is not a plain name)"
    }
}
