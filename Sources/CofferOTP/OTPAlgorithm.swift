/// The HMAC hash function of an OTP token.
///
/// Only the three hashes of RFC 6238 are supported. Spellings such as `SHA-1` and other hashes such as `MD5`
/// (mOTP) are rejected rather than guessed at, so an unusual token fails loudly instead of producing wrong codes.
public enum OTPAlgorithm: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case sha1
    case sha256
    case sha512

    /// Parses an algorithm name case-insensitively: `SHA1`, `sha256`, `Sha512`. Returns `nil` for anything else.
    public init?(name: some StringProtocol) {
        switch name.lowercased() {
        case "sha1": self = .sha1
        case "sha256": self = .sha256
        case "sha512": self = .sha512
        default: return nil
        }
    }

    /// The canonical upper-case name used in `otpauth://` URIs: `SHA1`, `SHA256` or `SHA512`.
    public var name: String {
        switch self {
        case .sha1: "SHA1"
        case .sha256: "SHA256"
        case .sha512: "SHA512"
        }
    }

    public var description: String { name }
}
