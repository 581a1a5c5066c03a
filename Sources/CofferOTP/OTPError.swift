/// Why OTP parameters, a code request or an `otpauth://` URI was rejected.
///
/// Cases and descriptions name the broken rule only. They never carry the secret, the URI or any other part of the
/// input, because all of those may be secret; ``duplicateParameter(_:)`` carries only one of the fixed parameter
/// names this module understands.
public enum OTPError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The secret is not base32 (see ``Base32``).
    case invalidSecret
    /// The URI has no `secret` parameter, or it is empty.
    case missingSecret
    /// The decoded secret is shorter than ``OTPParameters/secretByteCountRange`` allows.
    case secretTooShort
    /// The decoded secret is longer than ``OTPParameters/secretByteCountRange`` allows.
    case secretTooLong
    /// The algorithm is not one of SHA1, SHA256 or SHA512, or a Steam token asked for another one.
    case unsupportedAlgorithm
    /// The number of digits is outside ``OTPParameters/digitsRange`` (or is not 5 for Steam), or is not a number.
    case invalidDigits
    /// The TOTP period is outside ``OTPParameters/periodRange`` (or is not 30 for Steam), or is not a number.
    case invalidPeriod
    /// The HOTP counter is not a decimal number in `0...UInt64.max`.
    case invalidCounter
    /// An HOTP URI has no `counter` parameter.
    case missingCounter
    /// The time is before the Unix epoch or not a finite number.
    case invalidTime
    /// The account name contains a colon, which the `otpauth://` label cannot represent.
    case invalidAccountName
    /// The URI is longer than ``OTPToken/maximumURILength`` bytes; it was not parsed.
    case uriTooLong
    /// The URI's scheme is neither `otpauth` nor `steam`.
    case unsupportedScheme
    /// The `otpauth://` type is not `totp`, `hotp` or `steam` (or `encoder=steam` was combined with `hotp`).
    case unsupportedType
    /// The URI is not well formed: no `://`, a bad percent escape, or text that is not UTF-8 once decoded.
    case malformedURI
    /// A parameter this module understands appears more than once; the value is its name, such as `secret`.
    case duplicateParameter(String)

    public var description: String {
        switch self {
        case .invalidSecret: "the secret is not valid base32"
        case .missingSecret: "the secret is missing or empty"
        case .secretTooShort:
            "the secret is shorter than \(OTPParameters.secretByteCountRange.lowerBound) bytes (16 base32 characters)"
        case .secretTooLong: "the secret is longer than \(OTPParameters.secretByteCountRange.upperBound) bytes"
        case .unsupportedAlgorithm: "the algorithm must be SHA1, SHA256 or SHA512 (SHA1 for Steam)"
        case .invalidDigits:
            "the number of digits must be \(OTPParameters.digitsRange.lowerBound) to "
                + "\(OTPParameters.digitsRange.upperBound) (5 for Steam)"
        case .invalidPeriod:
            "the period must be \(OTPParameters.periodRange.lowerBound) to "
                + "\(OTPParameters.periodRange.upperBound) seconds (30 for Steam)"
        case .invalidCounter: "the counter must be a whole number from 0 to \(UInt64.max)"
        case .missingCounter: "an HOTP URI must have a counter parameter"
        case .invalidTime: "the time must be a finite number of seconds at or after the Unix epoch"
        case .invalidAccountName: "the account name must not contain a colon"
        case .uriTooLong: "the URI is longer than \(OTPToken.maximumURILength) bytes"
        case .unsupportedScheme: "the URI scheme must be otpauth or steam"
        case .unsupportedType: "the OTP type must be totp, hotp or steam"
        case .malformedURI: "the URI is malformed (bad structure, percent escape or UTF-8)"
        case .duplicateParameter(let name): "the URI parameter '\(name)' appears more than once"
        }
    }
}
