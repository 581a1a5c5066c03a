import CofferCrypto
import Foundation

/// An OTP token as it appears in an authenticator: who it is for (issuer and account) and its ``OTPParameters``,
/// with conversion from and to Google's `otpauth://` Key URI format.
///
/// ## Parsing rules
/// - The URI is trimmed of surrounding whitespace and must be at most ``maximumURILength`` bytes (checked before any
///   other work).
/// - Schemes: `otpauth://TYPE/LABEL?QUERY` and Bitwarden/Proton's `steam://SECRET`. Scheme, type and parameter names
///   are case-insensitive. Types are `totp`, `hotp` and `steam` (Aegis); `encoder=steam` (KeePassXC) turns a TOTP
///   URI into Steam.
/// - Everything up to the first `?` is the type and label; `#` is not a fragment delimiter, because apps emit raw
///   `#` in labels and no `otpauth` URI carries a fragment.
/// - The label is percent-decoded (`+` stays a plus sign) and split at its **last** colon, literal or `%3A`, into the
///   issuer prefix and the account; whitespace around both is trimmed. So an account never contains a colon, while an
///   issuer may (`Foo: Bar:alice` gives issuer `Foo: Bar`, account `alice`). A label without a colon is all account.
/// - Query values are form-decoded: `+` is a space, then `%XX` escapes (`issuer=Air+Canada` is `Air Canada`,
///   `secret=…%3D%3D` is padding).
/// - The `issuer` parameter, when present and non-empty, is the issuer; a differing label prefix is discarded. The
///   wiki says the two "should be equal", and newer Google Authenticator versions prefer the parameter.
/// - `secret` is required (base32, see ``Base32`` for what is tolerated). `counter` is required for HOTP. `digits`
///   defaults to 6 (5 for Steam), `period` to 30 and `algorithm` to SHA1. Steam accepts only its fixed values.
/// - A known parameter (`secret`, `issuer`, `algorithm`, `digits`, `period`, `counter`, `encoder`) given twice is
///   rejected with ``OTPError/duplicateParameter(_:)``; unknown parameters (`image`, `codeDisplay`, …) are ignored.
///
/// ## Printing
/// ``uri`` is canonical: `otpauth://TYPE/Issuer:account?secret=…&issuer=…&algorithm=…&digits=…&period=…` (or
/// `counter=` for HOTP; Steam prints `otpauth://steam/` with no algorithm, digits or period). Labels and values are
/// percent-encoded per RFC 3986 (space as `%20`, never `+`); the secret is unpadded upper-case base32. Parsing the
/// printed URI gives back an equal token.
///
/// Descriptions and mirrors show neither the secret nor the account name.
public struct OTPToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The largest URI, in UTF-8 bytes, that ``init(uri:)`` will look at.
    public static let maximumURILength = 4096

    /// The service, such as `GitHub`; `nil` when unknown. Never empty, never padded with whitespace.
    public let issuer: String?
    /// The account name, such as `alice@example.com`; may be empty. Never contains a colon.
    public let account: String
    /// The secret and code derivation.
    public let parameters: OTPParameters

    /// Creates a token. Whitespace around `issuer` and `account` is trimmed and an empty issuer becomes `nil`, so the
    /// token survives a round trip through ``uri``.
    ///
    /// - Throws: ``OTPError/invalidAccountName`` when the account contains a colon.
    public init(issuer: String?, account: String, parameters: OTPParameters) throws(OTPError) {
        let account = account.trimmingWhitespace()
        guard !account.unicodeScalars.contains(":") else { throw .invalidAccountName }
        let issuer = issuer?.trimmingWhitespace()
        self.issuer = issuer?.isEmpty == false ? issuer : nil
        self.account = account
        self.parameters = parameters
    }

    /// Parses an `otpauth://` or `steam://` URI following the rules in the type's documentation.
    ///
    /// - Throws: an ``OTPError`` naming the first rule the URI breaks; never the URI or its secret.
    public init(uri: String) throws(OTPError) {
        guard uri.utf8.count <= Self.maximumURILength else { throw .uriTooLong }
        let bytes = Self.trimmingASCIIWhitespace(Array(uri.utf8))
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            bytes[colon...].starts(with: "://".utf8)
        else { throw .malformedURI }
        let rest = bytes[(colon + 3)...]
        switch Self.asciiLowercased(bytes[..<colon]) {
        case "otpauth":
            self = try Self.parseOTPAuth(rest)
        case "steam":
            let parameters = try OTPParameters(secret: Self.decodeSecret(rest), kind: .steam)
            try self.init(issuer: nil, account: "", parameters: parameters)
        default:
            throw .unsupportedScheme
        }
    }

    /// The canonical `otpauth://` URI. It contains the secret: treat it as secret.
    public var uri: String {
        let type: String
        var tail = ""
        let kindParameters = "&algorithm=\(parameters.algorithm.name)&digits=\(parameters.digits)"
        switch parameters.kind {
        case .totp(let period):
            type = "totp"
            tail = kindParameters + "&period=\(period)"
        case .hotp(let counter):
            type = "hotp"
            tail = kindParameters + "&counter=\(counter)"
        case .steam:
            type = "steam"
        }
        var label = PercentEncoding.encode(account)
        var issuerParameter = ""
        if let issuer {
            label = PercentEncoding.encode(issuer) + ":" + label
            issuerParameter = "&issuer=" + PercentEncoding.encode(issuer)
        }
        return "otpauth://\(type)/\(label)?secret=\(Base32.encode(parameters.secret))\(issuerParameter)\(tail)"
    }

    public var description: String {
        "OTPToken(issuer: \(issuer.map { "\"\($0)\"" } ?? "none"), account redacted, \(parameters))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self, children: ["issuer": issuer as Any, "account": "redacted", "parameters": parameters],
            displayStyle: .struct)
    }

    // MARK: - Parsing

    private static let knownParameters: Set<String> = [
        "secret", "issuer", "algorithm", "digits", "period", "counter", "encoder",
    ]

    private static func parseOTPAuth(_ rest: ArraySlice<UInt8>) throws(OTPError) -> OTPToken {
        let questionMark = rest.firstIndex(of: UInt8(ascii: "?")) ?? rest.endIndex
        let path = rest[..<questionMark]
        let query = questionMark == rest.endIndex ? rest[rest.endIndex...] : rest[(questionMark + 1)...]
        let slash = path.firstIndex(of: UInt8(ascii: "/")) ?? path.endIndex
        let labelBytes = slash == path.endIndex ? path[path.endIndex...] : path[(slash + 1)...]

        let values = try queryValues(query)
        let encoderIsSteam = values["encoder"].map { $0.lowercased() == "steam" } ?? false
        let algorithm = try values["algorithm"].map { name throws(OTPError) in
            guard let algorithm = OTPAlgorithm(name: name) else { throw .unsupportedAlgorithm }
            return algorithm
        }
        let digits = try values["digits"].map { text throws(OTPError) in
            guard let value = decimal(text).flatMap({ Int(exactly: $0) }) else { throw .invalidDigits }
            return value
        }
        let period = try values["period"].map { text throws(OTPError) in
            guard let value = decimal(text).flatMap({ Int(exactly: $0) }) else { throw .invalidPeriod }
            return value
        }

        let kind: OTPParameters.Kind
        switch asciiLowercased(path[..<slash]) {
        case "totp" where encoderIsSteam, "steam":
            if let period, period != OTPParameters.steamPeriod { throw .invalidPeriod }
            kind = .steam
        case "totp":
            kind = .totp(period: period ?? OTPParameters.defaultPeriod)
        case "hotp" where !encoderIsSteam:
            guard let text = values["counter"] else { throw .missingCounter }
            guard let counter = decimal(text) else { throw .invalidCounter }
            kind = .hotp(counter: counter)
        default:
            throw .unsupportedType
        }

        guard let secretText = values["secret"] else { throw .missingSecret }
        let parameters = try OTPParameters(
            secret: decodeSecret(secretText.utf8), algorithm: algorithm ?? .sha1, digits: digits, kind: kind)

        guard let label = PercentEncoding.decode(labelBytes, plusIsSpace: false) else { throw .malformedURI }
        let (labelIssuer, account) = Self.splitLabel(label)
        let issuerParameter = values["issuer"].flatMap { $0.isEmpty ? nil : $0 }
        return try OTPToken(issuer: issuerParameter ?? labelIssuer, account: account, parameters: parameters)
    }

    /// Splits a decoded label by the Key URI rules: at its **last** colon into the issuer prefix and the account,
    /// both trimmed of surrounding whitespace; an empty prefix is no issuer, and a label without a colon is all
    /// account. Importers use it for apps that keep a whole label where an account belongs.
    public static func splitLabel(_ label: String) -> (issuer: String?, account: String) {
        // Scalars, not Characters: a colon followed by a combining mark must still count as a colon.
        let scalars = label.unicodeScalars
        guard let separator = scalars.lastIndex(of: ":") else {
            return (nil, label.trimmingWhitespace())
        }
        let issuer = String(scalars[..<separator]).trimmingWhitespace()
        let account = String(scalars[scalars.index(after: separator)...]).trimmingWhitespace()
        return (issuer.isEmpty ? nil : issuer, account)
    }

    /// Form-decoded values of the known query parameters, keyed by lower-cased name.
    private static func queryValues(_ query: ArraySlice<UInt8>) throws(OTPError) -> [String: String] {
        var values: [String: String] = [:]
        for field in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = field.firstIndex(of: UInt8(ascii: "=")) ?? field.endIndex
            guard let rawName = PercentEncoding.decode(field[..<equals], plusIsSpace: true) else {
                throw .malformedURI
            }
            let name = rawName.lowercased()
            guard knownParameters.contains(name) else { continue }
            guard values[name] == nil else { throw .duplicateParameter(name) }
            let rawValue = equals == field.endIndex ? field[field.endIndex...] : field[(equals + 1)...]
            guard let value = PercentEncoding.decode(rawValue, plusIsSpace: true) else { throw .malformedURI }
            values[name] = value
        }
        return values
    }

    private static func decodeSecret(_ text: some Collection<UInt8>) throws(OTPError) -> [UInt8] {
        let string = String(decoding: text, as: UTF8.self)
        let significant = string.utf8.contains { byte in
            !(byte == UInt8(ascii: " ") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "\t")
                || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r"))
        }
        guard significant else { throw .missingSecret }
        do {
            return try Base32.decode(string)
        } catch {
            throw .invalidSecret
        }
    }

    /// A plain decimal number: ASCII digits only, no sign or spaces.
    private static func decimal(_ text: String) -> UInt64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return UInt64(text)
    }

    private static func asciiLowercased(_ bytes: some Collection<UInt8>) -> String {
        String(decoding: bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }, as: UTF8.self)
    }

    private static func trimmingASCIIWhitespace(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }),
            let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return [] }
        return bytes[first...last]
    }
}
