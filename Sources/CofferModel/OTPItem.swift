import CofferCrypto
import CofferOTP
import Foundation

/// A 2FA token (seed 002's token model, extended to HOTP, Steam and 6–8 digits).
public struct OTPItem: Sendable, Equatable {
    /// Service name, e.g. "GitHub": 1–100 characters after trimming, or empty when the token names none (an
    /// `otpauth://` URI may leave it out; the account is then the token's name, and nothing is made up for it).
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

    /// Builds an item from an `otpauth://` token; `issuer` fills in when the URI has none (else it has none).
    public init(token: OTPToken, issuer fallbackIssuer: String? = nil, tags: [String] = []) throws(ModelError) {
        try self.init(
            issuer: token.issuer ?? fallbackIssuer ?? "", account: token.account, parameters: token.parameters, tags: tags)
    }

    public mutating func validate() throws(ModelError) {
        issuer = issuer.trimmingWhitespace().isEmpty ? "" : try Rules.name(issuer, field: "issuer", limit: 100)
        account = try Rules.name(account, field: "account", limit: 200)
        tags = try Rules.labels(tags, field: "tags")
        notes = try Rules.optionalText(notes, field: "notes", limit: 65_536)
    }

    /// "Issuer (account)", or the account alone for a token without an issuer.
    public var displayName: String { issuer.isEmpty ? account : "\(issuer) (\(account))" }

    /// The names the token is found by: its display name, issuer, account and `issuer:account` (as a label).
    public var lookupNames: [String] {
        issuer.isEmpty ? [account] : [displayName, issuer, account, "\(issuer):\(account)"]
    }

    /// The otpauth URI (contains the secret: only for explicit exports and the QR hand-over).
    public func token() throws(ModelError) -> OTPToken {
        do {
            return try OTPToken(issuer: issuer.isEmpty ? nil : issuer, account: account, parameters: parameters)
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
