import CofferCrypto

/// The members importers read, each with the entry error an importer reports for a value of the wrong type.
extension JSONValue {
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
}
