#if canImport(CCryptoBoringSSL)
internal import CCryptoBoringSSL
#endif
import Crypto
import Foundation

/// AES-256-GCM with associated data, in Coffer's box layout: `nonce (12) ‖ ciphertext ‖ tag (16)`.
///
/// The layout is CryptoKit's `SealedBox.combined`. What a box belongs to (vault, item, kind, revision, format
/// version) is never stored in it: the caller passes it as associated data, and a box moved anywhere else fails to
/// open.
///
/// A key that seals or opens many boxes (a vault's items key) is made a `BoxKey` once; the `SymmetricKey` forms make
/// one for the call.
public enum Box {
    /// Bytes a box adds to its plaintext.
    public static let overhead = nonceSize + tagSize
    public static let nonceSize = 12
    public static let tagSize = 16

    /// Seals `plaintext` under `key` with a fresh random 96-bit nonce.
    public static func seal(_ plaintext: Data, key: BoxKey, associatedData: [UInt8]) throws(CofferCryptoError) -> Data {
        try key.seal(plaintext, associatedData: associatedData) { nonce in SystemRandom().fill(nonce) }
    }

    /// Seals `plaintext` under a key used for this box alone.
    public static func seal(_ plaintext: Data, key: SymmetricKey, associatedData: [UInt8]) throws(CofferCryptoError) -> Data {
        try seal(plaintext, key: try BoxKey(key), associatedData: associatedData)
    }

    /// Seals with a caller-chosen nonce. Only for known-answer tests: reusing a nonce under one key destroys GCM's
    /// security, so this is reachable only through `@_spi(Testing) import CofferCrypto`.
    @_spi(Testing) public static func seal(
        _ plaintext: Data, key: SymmetricKey, associatedData: [UInt8], fixedNonce: [UInt8]
    ) throws(CofferCryptoError) -> Data {
        guard fixedNonce.count == nonceSize else { throw .malformedBox }
        return try BoxKey(key).seal(plaintext, associatedData: associatedData) { nonce in nonce.copyBytes(from: fixedNonce) }
    }

    /// Opens a box; throws `.authenticationFailed` unless key, box and associated data all match.
    /// No plaintext is released before the tag is verified.
    public static func open(_ box: Data, key: BoxKey, associatedData: [UInt8]) throws(CofferCryptoError) -> Data {
        try key.open(box, associatedData: associatedData)
    }

    /// Opens a box under a key used for this box alone.
    public static func open(_ box: Data, key: SymmetricKey, associatedData: [UInt8]) throws(CofferCryptoError) -> Data {
        guard box.count >= overhead else { throw .malformedBox }
        return try BoxKey(key).open(box, associatedData: associatedData)
    }
}

/// An AES-256 key made ready to seal and open boxes: its key schedule and GHASH table are computed once, here, and
/// wiped when the key goes.
///
/// swift-crypto's `AES.GCM` sets that context up again for every box, which at 1 KiB costs more than the cipher
/// itself (a box ran at two thirds of OpenSSL's rate). On platforms where swift-crypto is built on BoringSSL, this
/// keeps BoringSSL's `EVP_AEAD_CTX`, which BoringSSL documents as safe to seal and open with from several threads at
/// once; elsewhere (CryptoKit) it keeps the key and calls `AES.GCM`. Both give the same bytes, which the Wycheproof
/// vectors and the OpenSSL oracle check through `Box`.
public final class BoxKey: @unchecked Sendable {
    #if canImport(CCryptoBoringSSL)
    // Immutable after init; BoringSSL's seal and open only read it.
    private let context: UnsafeMutablePointer<EVP_AEAD_CTX>
    #else
    private let key: SymmetricKey
    #endif

    /// Prepares `key`, which must be 256 bits.
    public init(_ key: SymmetricKey) throws(CofferCryptoError) {
        guard key.bitCount == 256 else { throw .primitiveFailure("AES-GCM key size") }
        #if canImport(CCryptoBoringSSL)
        let context = key.withUnsafeBytes { raw in
            CCryptoBoringSSL_EVP_AEAD_CTX_new(
                CCryptoBoringSSL_EVP_aead_aes_256_gcm(), raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, Box.tagSize)
        }
        guard let context else { throw .primitiveFailure("AES-GCM key") }
        self.context = context
        #else
        self.key = key
        #endif
    }

    #if canImport(CCryptoBoringSSL)
    deinit {
        // BoringSSL's free zeroes the context (the expanded key) before releasing it.
        CCryptoBoringSSL_EVP_AEAD_CTX_free(context)
    }
    #endif

    /// A box of `plaintext`, its nonce written by `makeNonce` into the box's first 12 bytes.
    func seal(
        _ plaintext: Data, associatedData: [UInt8], makeNonce: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(CofferCryptoError) -> Data {
        var box = Data(count: Box.overhead + plaintext.count)
        #if canImport(CCryptoBoringSSL)
        let sealed = box.withUnsafeMutableBytes { out in
            makeNonce(UnsafeMutableRawBufferPointer(rebasing: out[0..<Box.nonceSize]))
            let bytes = out.bindMemory(to: UInt8.self).baseAddress!
            var written = 0
            let result = plaintext.withUnsafeBytes { input in
                associatedData.withUnsafeBufferPointer { aad in
                    CCryptoBoringSSL_EVP_AEAD_CTX_seal(
                        context, bytes + Box.nonceSize, &written, out.count - Box.nonceSize, bytes, Box.nonceSize,
                        input.bindMemory(to: UInt8.self).baseAddress, input.count, aad.baseAddress, aad.count)
                }
            }
            return result == 1 && written == out.count - Box.nonceSize
        }
        guard sealed else {
            CCryptoBoringSSL_ERR_clear_error()
            throw .primitiveFailure("AES-GCM seal")
        }
        return box
        #else
        var nonceBytes = [UInt8](repeating: 0, count: Box.nonceSize)
        nonceBytes.withUnsafeMutableBytes { makeNonce($0) }
        do {
            let sealed = try AES.GCM.seal(plaintext, using: key, nonce: try AES.GCM.Nonce(data: nonceBytes), authenticating: associatedData)
            guard let combined = sealed.combined else { throw CofferCryptoError.primitiveFailure("AES-GCM nonce size") }
            box = combined
            return box
        } catch {
            throw .primitiveFailure("AES-GCM seal")
        }
        #endif
    }

    /// The plaintext of `box`, released only when its tag verifies.
    func open(_ box: Data, associatedData: [UInt8]) throws(CofferCryptoError) -> Data {
        guard box.count >= Box.overhead else { throw .malformedBox }
        #if canImport(CCryptoBoringSSL)
        var plaintext = Data(count: box.count - Box.overhead)
        let opened = plaintext.withUnsafeMutableBytes { out in
            box.withUnsafeBytes { sealed in
                associatedData.withUnsafeBufferPointer { aad in
                    let input = sealed.bindMemory(to: UInt8.self).baseAddress!
                    var written = 0
                    let result = CCryptoBoringSSL_EVP_AEAD_CTX_open(
                        context, out.bindMemory(to: UInt8.self).baseAddress, &written, out.count, input, Box.nonceSize,
                        input + Box.nonceSize, sealed.count - Box.nonceSize, aad.baseAddress, aad.count)
                    guard result == 1, written == out.count else {
                        // BoringSSL decrypts before it compares tags: what it wrote was never authenticated.
                        SecretBytes.wipe(out)
                        return false
                    }
                    return true
                }
            }
        }
        guard opened else {
            CCryptoBoringSSL_ERR_clear_error()
            throw .authenticationFailed
        }
        return plaintext
        #else
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
        #endif
    }
}
