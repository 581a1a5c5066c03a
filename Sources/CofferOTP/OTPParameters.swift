import Foundation

/// Everything needed to generate the codes of one OTP token: the secret and how codes are derived from it.
///
/// Values are validated on creation, so a value that exists can always produce codes:
/// - the secret is ``secretByteCountRange`` bytes long (at least 10 bytes, i.e. 16 base32 characters, as Coffer's
///   requirements ask; at most 1 KiB, a bound against hostile input far above any real token);
/// - TOTP and HOTP codes have ``digitsRange`` digits (RFC 4226 §5.3 allows 6 to 8);
/// - a TOTP period is ``periodRange`` seconds (a day is the upper bound; zero would divide by zero);
/// - Steam Guard is fixed at SHA1, 30 seconds and 5 characters.
///
/// For HOTP, `counter` is the value the *next* code is computed from; persisting its increment is the caller's job.
///
/// Descriptions, debug descriptions and mirrors (`dump`) never show the secret.
public struct OTPParameters: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// How codes are derived over time.
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
        /// RFC 6238 TOTP with T0 = 0 and this many seconds per step.
        case totp(period: Int)
        /// RFC 4226 HOTP; `counter` is the moving factor of the next code.
        case hotp(counter: UInt64)
        /// Steam Guard: TOTP with SHA1 and 30-second steps, shown as 5 characters.
        case steam

        public var description: String {
            switch self {
            case .totp(let period): "TOTP every \(period) s"
            case .hotp(let counter): "HOTP at counter \(counter)"
            case .steam: "Steam Guard"
            }
        }
    }

    /// Accepted secret lengths in bytes.
    public static let secretByteCountRange = 10...1024
    /// Accepted numbers of digits for TOTP and HOTP.
    public static let digitsRange = 6...8
    /// Accepted TOTP periods in seconds.
    public static let periodRange = 1...86_400
    /// The fixed length of a Steam Guard code.
    public static let steamCodeLength = 5
    /// The fixed period of Steam Guard, in seconds.
    public static let steamPeriod = 30
    /// The period used when a URI gives none.
    public static let defaultPeriod = 30
    /// The number of digits used when none is given.
    public static let defaultDigits = 6

    /// The raw secret (base32-decoded).
    public let secret: [UInt8]
    /// The HMAC hash function.
    public let algorithm: OTPAlgorithm
    /// The code length: 6 to 8 digits, or 5 characters for Steam.
    public let digits: Int
    /// TOTP, HOTP or Steam, with the period or counter.
    public let kind: Kind

    /// Creates validated parameters.
    ///
    /// - Parameters:
    ///   - secret: The raw secret bytes.
    ///   - algorithm: The hash; must be `.sha1` for Steam.
    ///   - digits: The code length; `nil` means 6, or 5 for Steam. Steam accepts only 5.
    ///   - kind: TOTP with a period, HOTP with a counter, or Steam.
    /// - Throws: ``OTPError/secretTooShort``, ``OTPError/secretTooLong``, ``OTPError/invalidDigits``,
    ///   ``OTPError/invalidPeriod`` or ``OTPError/unsupportedAlgorithm``.
    public init(
        secret: [UInt8], algorithm: OTPAlgorithm = .sha1, digits: Int? = nil, kind: Kind = .totp(period: 30)
    ) throws(OTPError) {
        guard secret.count >= Self.secretByteCountRange.lowerBound else { throw .secretTooShort }
        guard secret.count <= Self.secretByteCountRange.upperBound else { throw .secretTooLong }
        switch kind {
        case .totp(let period):
            guard Self.periodRange.contains(period) else { throw .invalidPeriod }
            fallthrough
        case .hotp:
            let digits = digits ?? Self.defaultDigits
            guard Self.digitsRange.contains(digits) else { throw .invalidDigits }
            self.digits = digits
        case .steam:
            guard algorithm == .sha1 else { throw .unsupportedAlgorithm }
            let digits = digits ?? Self.steamCodeLength
            guard digits == Self.steamCodeLength else { throw .invalidDigits }
            self.digits = digits
        }
        self.secret = secret
        self.algorithm = algorithm
        self.kind = kind
    }

    /// Keyed when a code is asked for, not when the parameters are made: reading a vault decodes every token, and
    /// keying an HMAC for each took a fifth of `coffer list`'s time on 10,000 of them.
    private var generator: OTPGenerator {
        get throws(OTPError) { try OTPGenerator(secret: secret, algorithm: algorithm) }
    }

    /// The seconds per step for TOTP and Steam; `nil` for HOTP.
    public var period: Int? {
        switch kind {
        case .totp(let period): period
        case .steam: Self.steamPeriod
        case .hotp: nil
        }
    }

    /// The moving factor used at a Unix time: `floor(time / period)` for TOTP and Steam, the stored counter for HOTP
    /// (which does not depend on time).
    ///
    /// - Throws: ``OTPError/invalidTime`` for a time before the epoch.
    public func counter(atUnixTime time: Int64) throws(OTPError) -> UInt64 {
        guard time >= 0 else { throw .invalidTime }
        switch kind {
        case .hotp(let counter): return counter
        case .totp(let period): return UInt64(time) / UInt64(period)
        case .steam: return UInt64(time) / UInt64(Self.steamPeriod)
        }
    }

    /// The code at a Unix time in whole seconds. For HOTP the time is only validated and the stored counter is used,
    /// so a list of mixed tokens can be refreshed uniformly.
    ///
    /// - Throws: ``OTPError/invalidTime`` for a time before the epoch.
    public func code(atUnixTime time: Int64) throws(OTPError) -> String {
        let counter = try counter(atUnixTime: time)
        if case .steam = kind {
            return try generator.steamCode(counter: counter)
        }
        return try generator.code(counter: counter, digits: digits)
    }

    /// The code at a date; fractions of a second are rounded down.
    ///
    /// - Throws: ``OTPError/invalidTime`` for a date before the epoch or beyond 64-bit seconds.
    public func code(at date: Date) throws(OTPError) -> String {
        try code(atUnixTime: Self.unixTime(of: date))
    }

    /// Seconds until the code shown at `time` changes, in `1...period`; `nil` for HOTP, whose codes change only
    /// when the counter moves.
    ///
    /// - Throws: ``OTPError/invalidTime`` for a time before the epoch.
    public func secondsRemaining(atUnixTime time: Int64) throws(OTPError) -> Int? {
        guard time >= 0 else { throw .invalidTime }
        guard let period else { return nil }
        return period - Int(time % Int64(period))
    }

    /// Seconds until the code shown at `date` changes; see ``secondsRemaining(atUnixTime:)``.
    public func secondsRemaining(at date: Date) throws(OTPError) -> Int? {
        try secondsRemaining(atUnixTime: Self.unixTime(of: date))
    }

    private static func unixTime(of date: Date) throws(OTPError) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        // Int64(exactly:) rejects NaN, infinities and values outside 64 bits; the sign is checked by the callers.
        guard let whole = Int64(exactly: seconds) else { throw .invalidTime }
        return whole
    }

    public static func == (lhs: OTPParameters, rhs: OTPParameters) -> Bool {
        lhs.algorithm == rhs.algorithm && lhs.digits == rhs.digits && lhs.kind == rhs.kind && lhs.secret == rhs.secret
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(secret)
        hasher.combine(algorithm)
        hasher.combine(digits)
        hasher.combine(kind)
    }

    public var description: String {
        "OTPParameters(\(kind), \(algorithm.name), \(digits) \(kind == .steam ? "characters" : "digits"), secret redacted)"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: ["kind": kind, "algorithm": algorithm, "digits": digits, "secret": "redacted"],
            displayStyle: .struct)
    }
}

/// Formatting of codes for display.
public enum OTPCodeFormat {
    /// Groups a numeric code for reading aloud or typing: `123 456`, `123 4567`, `1234 5678`. Codes of other lengths,
    /// such as 5-character Steam codes, are returned unchanged.
    public static func grouped(_ code: String) -> String {
        let characters = Array(code)
        let split: Int
        switch characters.count {
        case 6, 7: split = 3
        case 8: split = 4
        default: return code
        }
        return String(characters[..<split]) + " " + String(characters[split...])
    }
}
