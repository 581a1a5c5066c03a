import Foundation

/// An API key, token or password.
public struct Credential: Sendable, Equatable {
    public static let valueLimit = 65_536

    public var name: String
    /// Who issued it, e.g. "openai".
    public var provider: String?
    public var value: String
    public var tags: [String]
    public var notes: String?
    /// The account the value belongs to (a password manager's user name), since format 1.3.
    public var username: String?
    /// Where the value is used (a password manager's URL), since format 1.3.
    public var url: String?

    public init(
        name: String, provider: String? = nil, value: String, tags: [String] = [], notes: String? = nil,
        username: String? = nil, url: String? = nil
    ) throws(ModelError) {
        self.name = name
        self.provider = provider
        self.value = value
        self.tags = tags
        self.notes = notes
        self.username = username
        self.url = url
        try validate()
    }

    public mutating func validate() throws(ModelError) {
        name = try Rules.name(name)
        provider = try provider.map { value throws(ModelError) in try Rules.name(value, field: "provider", limit: 100) }
        guard !value.isEmpty else { throw .emptyField("value") }
        guard value.utf8.count <= Self.valueLimit else { throw .tooLong(field: "value", limit: Self.valueLimit) }
        tags = try Rules.labels(tags, field: "tags")
        notes = try Rules.optionalText(notes, field: "notes", limit: 65_536)
        username = try Rules.optionalText(username, field: "username", limit: 1024)
        url = try Rules.optionalText(url, field: "url", limit: 4096)
    }

    /// The value as it may be shown: its first 8 characters then "…" for values of 24 characters or more (API keys,
    /// whose first characters name the kind of key, as in `sk-proj-…`), and only "…" for shorter values, where 8
    /// characters would give away too much of the secret.
    public var maskedValue: String { Self.mask(value) }

    /// Masks any secret string the way credentials are shown.
    public static func mask(_ secret: String) -> String {
        secret.count >= 24 ? String(secret.prefix(8)) + "…" : "…"
    }
}

/// Descriptions and mirrors show the name and provider, never the value, user name, URL or notes: a credential
/// printed by a failed test, a log line or a debugger must not carry its secret.
extension Credential: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "Credential(\(name)\(provider.map { ", \($0)" } ?? ""), value \(maskedValue))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["name": name, "provider": provider as Any], displayStyle: .struct) }
}
