import Crypto
import Foundation

/// Computes HOTP values (RFC 4226) for one secret and hash, with the HMAC key schedule done once.
///
/// This is the low-level engine behind ``OTPParameters``. It checks only that the secret is not empty; policy such
/// as a minimum secret length lives in ``OTPParameters``. It is useful on its own for known-answer tests whose secrets
/// are shorter than that policy allows.
///
/// The keyed HMAC state is computed in `init` and copied per code, so generating a code costs one HMAC over 8 bytes
/// and no re-keying; copies of swift-crypto's hash state are copy-on-write, so concurrent use of one generator is safe.
public struct OTPGenerator: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The HMAC hash function.
    public let algorithm: OTPAlgorithm
    private let keyed: KeyedHMAC

    private enum KeyedHMAC: Sendable {
        case sha1(HMAC<Insecure.SHA1>)
        case sha256(HMAC<SHA256>)
        case sha512(HMAC<SHA512>)
    }

    /// The characters of a Steam Guard code, indexed by value.
    private static let steamAlphabet: [UInt8] = Array("23456789BCDFGHJKMNPQRTVWXY".utf8)

    /// Creates a generator for a raw (already base32-decoded) secret.
    ///
    /// - Throws: ``OTPError/missingSecret`` when the secret is empty.
    public init(secret: [UInt8], algorithm: OTPAlgorithm) throws(OTPError) {
        guard !secret.isEmpty else { throw .missingSecret }
        let key = SymmetricKey(data: secret)
        self.algorithm = algorithm
        switch algorithm {
        case .sha1: keyed = .sha1(HMAC(key: key))
        case .sha256: keyed = .sha256(HMAC(key: key))
        case .sha512: keyed = .sha512(HMAC(key: key))
        }
    }

    /// The 31-bit result of RFC 4226 dynamic truncation of HMAC(secret, counter as 8 big-endian bytes).
    public func truncatedValue(counter: UInt64) -> UInt32 {
        switch keyed {
        case .sha1(let hmac): Self.truncate(hmac, counter: counter)
        case .sha256(let hmac): Self.truncate(hmac, counter: counter)
        case .sha512(let hmac): Self.truncate(hmac, counter: counter)
        }
    }

    /// The HOTP code for a counter: `digits` decimal digits, with leading zeros kept.
    ///
    /// - Throws: ``OTPError/invalidDigits`` unless `digits` is in ``OTPParameters/digitsRange``.
    public func code(counter: UInt64, digits: Int) throws(OTPError) -> String {
        guard OTPParameters.digitsRange.contains(digits) else { throw .invalidDigits }
        var value = truncatedValue(counter: counter)
        // A fixed-size stack buffer filled from the right avoids any intermediate strings in the hot path.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: digits) { buffer in
            for index in stride(from: digits - 1, through: 0, by: -1) {
                buffer[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            return String(decoding: buffer, as: UTF8.self)
        }
    }

    /// The Steam Guard code for a counter: five characters from `23456789BCDFGHJKMNPQRTVWXY`, least significant first.
    public func steamCode(counter: UInt64) -> String {
        var value = truncatedValue(counter: counter)
        let alphabet = Self.steamAlphabet
        let radix = UInt32(alphabet.count)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: OTPParameters.steamCodeLength) { buffer in
            for index in 0..<OTPParameters.steamCodeLength {
                buffer[index] = alphabet[Int(value % radix)]
                value /= radix
            }
            return String(decoding: buffer, as: UTF8.self)
        }
    }

    private static func truncate<H: HashFunction>(_ keyed: HMAC<H>, counter: UInt64) -> UInt32 {
        var hmac = keyed
        withUnsafeBytes(of: counter.bigEndian) { hmac.update(data: $0) }
        let mac = hmac.finalize()
        return mac.withUnsafeBytes { bytes in
            let offset = Int(bytes[bytes.count - 1] & 0x0F)
            return (UInt32(bytes[offset] & 0x7F) << 24)
                | (UInt32(bytes[offset + 1]) << 16)
                | (UInt32(bytes[offset + 2]) << 8)
                | UInt32(bytes[offset + 3])
        }
    }

    public var description: String { "OTPGenerator(\(algorithm.name), secret redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["algorithm": algorithm, "secret": "redacted"], displayStyle: .struct)
    }
}
