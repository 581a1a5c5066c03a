import Crypto
import Foundation

/// AES-256-GCM with associated data, in Coffer's box layout: `nonce (12) ‖ ciphertext ‖ tag (16)`.
///
/// The layout is CryptoKit's `SealedBox.combined`, so a box is sealed and opened without extra copies. What a box
/// belongs to (vault, item, kind, revision, format version) is never stored in it: the caller passes it as
/// associated data, and a box moved anywhere else fails to open.
///
/// The signatures take concrete `Data` and `[UInt8]`: generic `DataProtocol` parameters would reach swift-crypto
/// unspecialised from another module and copy byte by byte.
public enum Box {
    /// Bytes a box adds to its plaintext.
    public static let overhead = nonceSize + tagSize
    public static let nonceSize = 12
    public static let tagSize = 16

    /// Seals `plaintext` under `key` with a fresh random 96-bit nonce.
    public static func seal(
        _ plaintext: Data, key: SymmetricKey, associatedData: [UInt8]
    ) throws(CofferCryptoError) -> Data {
        do {
            let sealed = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(), authenticating: associatedData)
            guard let combined = sealed.combined else { throw CofferCryptoError.primitiveFailure("AES-GCM nonce size") }
            return combined
        } catch let error as CofferCryptoError {
            throw error
        } catch {
            throw .primitiveFailure("AES-GCM seal")
        }
    }

    /// Seals with a caller-chosen nonce. Only for known-answer tests: reusing a nonce under one key destroys GCM's
    /// security, so this is reachable only through `@_spi(Testing) import CofferCrypto`.
    @_spi(Testing) public static func seal(
        _ plaintext: Data, key: SymmetricKey, associatedData: [UInt8], fixedNonce: [UInt8]
    ) throws(CofferCryptoError) -> Data {
        do {
            let nonce = try AES.GCM.Nonce(data: fixedNonce)
            guard fixedNonce.count == nonceSize else { throw CofferCryptoError.malformedBox }
            let sealed = try AES.GCM.seal(plaintext, using: key, nonce: nonce, authenticating: associatedData)
            guard let combined = sealed.combined else { throw CofferCryptoError.malformedBox }
            return combined
        } catch let error as CofferCryptoError {
            throw error
        } catch {
            throw .primitiveFailure("AES-GCM seal")
        }
    }

    /// Opens a box; throws `.authenticationFailed` unless key, box and associated data all match.
    /// No plaintext is released before the tag is verified.
    public static func open(
        _ box: Data, key: SymmetricKey, associatedData: [UInt8]
    ) throws(CofferCryptoError) -> Data {
        guard box.count >= overhead else { throw .malformedBox }
        // Built from a raw buffer: swift-crypto's `SealedBox(combined:)` copies a `Data` argument element by
        // element, but a raw buffer with one memcpy.
        let sealed: AES.GCM.SealedBox
        do {
            sealed = try box.withUnsafeBytes { try AES.GCM.SealedBox(combined: $0) }
        } catch {
            throw .malformedBox
        }
        do {
            return try AES.GCM.open(sealed, using: key, authenticating: associatedData)
        } catch {
            throw .authenticationFailed
        }
    }
}
