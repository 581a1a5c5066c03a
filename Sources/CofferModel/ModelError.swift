/// A value that breaks a rule of its item kind. Descriptions name the field and the rule, never the value.
public enum ModelError: Error, Equatable, Sendable, CustomStringConvertible {
    case emptyField(String)
    case tooLong(field: String, limit: Int)
    case tooMany(field: String, limit: Int)
    case invalidField(field: String, rule: String)
    case notOneTime
    case alreadyUsed
    case keyLocked
    case wrongPIN(remainingAttempts: Int)
    case unsupportedContentVersion(Int)
    case malformedContent(String)

    public var description: String {
        switch self {
        case .emptyField(let field): return "\(field) must not be empty"
        case .tooLong(let field, let limit): return "\(field) is longer than \(limit) characters"
        case .tooMany(let field, let limit): return "more than \(limit) \(field)"
        case .invalidField(let field, let rule): return "\(field): \(rule)"
        case .notOneTime: return "this card is not a one-time pass"
        case .alreadyUsed: return "this pass has already been used"
        case .keyLocked: return "this key is locked after too many wrong PINs; remove it and import the seed again"
        case .wrongPIN(let remaining):
            switch remaining {
            case ...0: return "wrong PIN; the key is now locked (too many wrong PINs in a row)"
            case 1: return "wrong PIN; 1 attempt left before the key locks"
            default: return "wrong PIN; \(remaining) attempts left before the key locks"
            }
        case .unsupportedContentVersion(let version):
            return "item content version \(version) is newer than this version of Coffer understands"
        case .malformedContent(let detail): return "item content is malformed: \(detail)"
        }
    }
}

/// Shared field rules. Values read from files are hostile: everything has an upper bound.
enum Rules {
    static func name(_ value: String, field: String = "name", limit: Int = 200) throws(ModelError) -> String {
        let trimmed = value.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .emptyField(field) }
        // Most names are ASCII: their characters are their bytes, and their control characters C0 and DEL.
        let ascii = trimmed.utf8.allSatisfy { $0 < 0x80 }
        guard (ascii ? trimmed.utf8.count : trimmed.count) <= limit else { throw .tooLong(field: field, limit: limit) }
        let control =
            ascii
            ? trimmed.utf8.contains { $0 < 0x20 || $0 == 0x7F }
            : trimmed.unicodeScalars.contains { $0.properties.generalCategory == .control }
        guard !control else { throw .invalidField(field: field, rule: "control characters are not allowed") }
        return trimmed
    }

    static func optionalText(_ value: String?, field: String, limit: Int) throws(ModelError) -> String? {
        guard let value else { return nil }
        guard value.count <= limit else { throw .tooLong(field: field, limit: limit) }
        return value.isEmpty ? nil : value
    }

    /// Tags and network ids: trimmed, lower-cased for networks, deduplicated in order, at most 50 of 64 characters.
    static func labels(_ values: [String], field: String, lowercase: Bool = false) throws(ModelError) -> [String] {
        var seen = Set<String>()
        var result: [String] = []
        for value in values {
            var label = try name(value, field: field, limit: 64)
            if lowercase { label = label.lowercased() }
            if seen.insert(label).inserted { result.append(label) }
        }
        guard result.count <= 50 else { throw .tooMany(field: field, limit: 50) }
        return result
    }
}

import CofferCrypto
import Foundation
