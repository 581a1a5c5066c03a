import CofferCrypto
import Crypto
import Foundation

/// The 32 random bytes a device draws before it refreshes its session and keeps beside its refresh token until the
/// answer is stored (docs/FORMAT.md §8.2, §8.3). The server keeps only their SHA-256 with the rotation: presenting the
/// spent token again with the same key, while the token it was exchanged for is still unused, returns that token again
/// instead of ending the session. A copied refresh token alone is still a replay.
///
/// The key is a secret of the device, as the token is: its description and mirror never show it.
public struct RefreshRetryKey: Sendable, CustomStringConvertible, CustomReflectable {
    /// Length of a key.
    public static let byteCount = 32
    /// Length of its unpadded base64url text.
    public static let textLength = 43

    public let bytes: [UInt8]

    /// A key of exactly `byteCount` bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    /// A fresh key from `random`.
    public init(random: some RandomSource) {
        bytes = random.bytes(Self.byteCount)
    }

    /// Reads the wire form: exactly `textLength` characters of base64url (RFC 4648 §5), no padding, in its canonical
    /// form (the unused low bits of the last character zero).
    public init?(base64URL text: String) {
        guard text.utf8.count == Self.textLength,
            text.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "=") }),
            let data = Data(base64Encoded: text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/") + "=")
        else { return nil }
        self.bytes = Array(data)
        guard base64URL == text else { return nil }
    }

    /// The wire form: unpadded base64url.
    public var base64URL: String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// SHA-256 of the key: what the server stores with a rotation.
    public var digest: [UInt8] { Array(SHA256.hash(data: bytes)) }

    public var description: String { "RefreshRetryKey(redacted)" }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
