import CofferCrypto
import CofferSyncAPI

/// What the device key store holds under `vault-<vault id>-sync` (docs/FORMAT.md §8.3): the refresh token, and while a
/// refresh is under way the retry key sent with it. Two forms, told apart by the first byte (a JWT starts with `e`):
///
/// - idle: the token's UTF-8 bytes (the only form before retry keys, still read);
/// - refreshing: `0x01` ‖ retry key (32 bytes) ‖ the token's UTF-8 bytes.
public struct SyncTokenEntry: Sendable {
    /// The first byte of the refreshing form.
    public static let refreshingMarker: UInt8 = 0x01

    public var refreshToken: String
    public var retryKey: RefreshRetryKey?

    public init(refreshToken: String, retryKey: RefreshRetryKey? = nil) {
        self.refreshToken = refreshToken
        self.retryKey = retryKey
    }

    /// Reads either form; nil for an empty entry or a refreshing one without a token.
    public init?(_ secret: SecretBytes) {
        let bytes = secret.bytes
        guard let first = bytes.first else { return nil }
        guard first == Self.refreshingMarker else {
            self.init(refreshToken: String(decoding: bytes, as: UTF8.self))
            return
        }
        let tokenStart = 1 + RefreshRetryKey.byteCount
        guard bytes.count > tokenStart, let key = RefreshRetryKey(bytes: Array(bytes[1..<tokenStart])) else { return nil }
        self.init(refreshToken: String(decoding: bytes[tokenStart...], as: UTF8.self), retryKey: key)
    }

    /// The bytes to store.
    public var secret: SecretBytes {
        guard let retryKey else { return SecretBytes(utf8: refreshToken) }
        return SecretBytes([Self.refreshingMarker] + retryKey.bytes + Array(refreshToken.utf8))
    }
}
