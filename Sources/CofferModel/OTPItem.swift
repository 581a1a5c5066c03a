import CofferOTP
import Foundation

/// A 2FA token (seed 002's token model, extended to HOTP, Steam and 6–8 digits).
public struct OTPItem: Sendable, Equatable {
    /// Service name, e.g. "GitHub": 1–100 characters after trimming.
    public var issuer: String
    /// User name or e-mail: 1–200 characters after trimming.
    public var account: String
    /// Secret, algorithm, digits and period or counter. For HOTP the counter is the next value to use.
    public var parameters: OTPParameters
    public var tags: [String]
    public var notes: String?

    public init(issuer: String, account: String, parameters: OTPParameters, tags: [String] = [], notes: String? = nil) throws(ModelError) {
        self.issuer = issuer
        self.account = account
        self.parameters = parameters
        self.tags = tags
        self.notes = notes
        try validate()
    }

    /// Builds an item from an `otpauth://` token; `issuer` fills in when the URI has none.
    public init(token: OTPToken, issuer fallbackIssuer: String? = nil, tags: [String] = []) throws(ModelError) {
        try self.init(
            issuer: token.issuer ?? fallbackIssuer ?? "", account: token.account, parameters: token.parameters, tags: tags)
    }

    public mutating func validate() throws(ModelError) {
        issuer = try Rules.name(issuer, field: "issuer", limit: 100)
        account = try Rules.name(account, field: "account", limit: 200)
        tags = try Rules.labels(tags, field: "tags")
        notes = try Rules.optionalText(notes, field: "notes", limit: 65_536)
    }

    /// "Issuer (account)".
    public var displayName: String { "\(issuer) (\(account))" }

    /// The otpauth URI (contains the secret: only for explicit exports and the QR hand-over).
    public func token() throws(ModelError) -> OTPToken {
        do {
            return try OTPToken(issuer: issuer, account: account, parameters: parameters)
        } catch {
            throw .invalidField(field: "token", rule: error.description)
        }
    }

    /// For HOTP: the item with its counter advanced by one, to be stored before a code for the current counter is
    /// shown. Nil for time-based tokens.
    public func advancingCounter() throws(ModelError) -> OTPItem? {
        guard case .hotp(let counter) = parameters.kind else { return nil }
        guard counter < UInt64.max else { throw .invalidField(field: "counter", rule: "the HOTP counter is exhausted") }
        var next = self
        do {
            next.parameters = try OTPParameters(
                secret: parameters.secret, algorithm: parameters.algorithm, digits: parameters.digits,
                kind: .hotp(counter: counter + 1))
        } catch {
            throw .invalidField(field: "token", rule: error.description)
        }
        return next
    }
}

extension OTPItem: Codable {
    enum CodingKeys: String, CodingKey {
        case issuer, account, type, secret, algorithm, digits, period, counter, tags, notes
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let secret = Data(base64Encoded: try container.decode(String.self, forKey: .secret)) else {
            throw ModelError.malformedContent("OTP secret is not base64")
        }
        let algorithmName = try container.decode(String.self, forKey: .algorithm)
        guard let algorithm = OTPAlgorithm(name: algorithmName) else {
            throw ModelError.malformedContent("unknown OTP algorithm")
        }
        let digits = try container.decode(Int.self, forKey: .digits)
        let kind: OTPParameters.Kind
        switch try container.decode(String.self, forKey: .type) {
        case "totp": kind = .totp(period: try container.decode(Int.self, forKey: .period))
        case "hotp": kind = .hotp(counter: try container.decode(UInt64.self, forKey: .counter))
        case "steam": kind = .steam
        default: throw ModelError.malformedContent("unknown OTP type")
        }
        parameters = try OTPParameters(secret: Array(secret), algorithm: algorithm, digits: digits, kind: kind)
        issuer = try container.decode(String.self, forKey: .issuer)
        account = try container.decode(String.self, forKey: .account)
        tags = try container.decodeIfPresent([String].self, forKey: .tags) ?? []
        notes = try container.decodeIfPresent(String.self, forKey: .notes)
        if !decoder.isAuthenticatedContent { try validate() }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(issuer, forKey: .issuer)
        try container.encode(account, forKey: .account)
        switch parameters.kind {
        case .totp(let period):
            try container.encode("totp", forKey: .type)
            try container.encode(period, forKey: .period)
        case .hotp(let counter):
            try container.encode("hotp", forKey: .type)
            try container.encode(counter, forKey: .counter)
        case .steam:
            try container.encode("steam", forKey: .type)
        }
        try container.encode(Data(parameters.secret).base64EncodedString(), forKey: .secret)
        try container.encode(parameters.algorithm.name, forKey: .algorithm)
        try container.encode(parameters.digits, forKey: .digits)
        if !tags.isEmpty { try container.encode(tags, forKey: .tags) }
        try container.encodeIfPresent(notes, forKey: .notes)
    }
}
