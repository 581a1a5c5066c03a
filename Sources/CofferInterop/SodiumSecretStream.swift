import CofferCrypto
import Foundation

/// The opening half of libsodium's `crypto_secretstream_xchacha20poly1305` for a stream of one message, which is
/// how Ente Auth seals its encrypted export. Built from HChaCha20 and Poly1305 (written here from the XChaCha draft
/// and RFC 8439) and ChaCha20 (BoringSSL, through ``KeePassCrypto/chaCha20(_:key:nonce:counter:)``); checked against
/// the RFC and draft vectors and against libsodium itself in `SodiumSecretStreamTests`.
///
/// A reviewed exception to taking primitives from a library: swift-crypto exposes neither HChaCha20 nor a bare
/// Poly1305, and loading libsodium at run time would make an import of one app's export depend on a library the
/// rest of Coffer never needs. Both functions only open (they verify a tag before anything is used, comparing it
/// with `ConstantTime.equal`), run on an export the user chose, and are checked by the vectors above on every run.
///
/// Layout: the 24-byte header gives the subkey HChaCha20(key, header[0..<16]) and the nonce
/// `01 00 00 00 ‖ header[16..<24]`. A message is one encrypted tag byte, the ciphertext, and a 16-byte Poly1305 tag
/// over (keystream block 1 with its first byte replaced by the encrypted tag byte) ‖ ciphertext ‖ (length mod 16)
/// zero bytes ‖ 0 as 8 bytes ‖ (64 + ciphertext length) as 8 bytes, keyed by the first 32 bytes of keystream block
/// 0; the message itself is decrypted from block 2 on.
enum SodiumSecretStream {
    static let headerByteCount = 24
    static let overheadByteCount = 17
    /// The tag libsodium marks the last message of a stream with.
    static let finalTag: UInt8 = 3

    /// The tag and plaintext of the stream's first message; `nil` when it does not authenticate under `key`.
    static func openFirstMessage(_ sealed: [UInt8], key: [UInt8], header: [UInt8]) throws(InteropError) -> (tag: UInt8, message: [UInt8])? {
        guard key.count == 32, header.count == headerByteCount else {
            throw .malformedFile("a secretstream key or header has the wrong length")
        }
        guard sealed.count >= overheadByteCount else { throw .malformedFile("the sealed message is shorter than its tag") }
        let subkey = hChaCha20(key: key, nonce: Array(header[0..<16]))
        let nonce: [UInt8] = [1, 0, 0, 0] + header[16..<24]
        let ciphertext = Array(sealed[1..<(sealed.count - 16)])
        let block0 = try KeePassCrypto.chaCha20([UInt8](repeating: 0, count: 64), key: subkey, nonce: nonce, counter: 0)
        var block1 = [UInt8](repeating: 0, count: 64)
        block1[0] = sealed[0]
        block1 = try KeePassCrypto.chaCha20(block1, key: subkey, nonce: nonce, counter: 1)
        let tag = block1[0]
        block1[0] = sealed[0]
        var authenticated = block1 + ciphertext
        // libsodium pads with (0x10 - 64 + length) & 0xf zero bytes, which is length mod 16 (not up to a block
        // boundary); the MAC is over exactly these bytes.
        authenticated += [UInt8](repeating: 0, count: ciphertext.count & 0xF)
        authenticated += [UInt8](repeating: 0, count: 8)
        authenticated += withUnsafeBytes(of: UInt64(64 + ciphertext.count).littleEndian, Array.init)
        let mac = poly1305(authenticated, key: Array(block0[0..<32]))
        // Constant-time comparison: the tag must not leak how much of it matched.
        guard ConstantTime.equal(mac, Array(sealed.suffix(16))) else { return nil }
        return (tag, try KeePassCrypto.chaCha20(ciphertext, key: subkey, nonce: nonce, counter: 2))
    }

    /// HChaCha20 (draft-irtf-cfrg-xchacha §2.2): ChaCha20's 20 rounds over key and 16-byte nonce, without the final
    /// addition, keeping words 0–3 and 12–15.
    static func hChaCha20(key: [UInt8], nonce: [UInt8]) -> [UInt8] {
        func word(_ bytes: [UInt8], _ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        var x: [UInt32] = [0x6170_7865, 0x3320_646E, 0x7962_2D32, 0x6B20_6574]
        x += (0..<8).map { word(key, 4 * $0) }
        x += (0..<4).map { word(nonce, 4 * $0) }
        func quarter(_ a: Int, _ b: Int, _ c: Int, _ d: Int) {
            x[a] &+= x[b]; x[d] ^= x[a]; x[d] = x[d] << 16 | x[d] >> 16
            x[c] &+= x[d]; x[b] ^= x[c]; x[b] = x[b] << 12 | x[b] >> 20
            x[a] &+= x[b]; x[d] ^= x[a]; x[d] = x[d] << 8 | x[d] >> 24
            x[c] &+= x[d]; x[b] ^= x[c]; x[b] = x[b] << 7 | x[b] >> 25
        }
        for _ in 0..<10 {
            quarter(0, 4, 8, 12); quarter(1, 5, 9, 13); quarter(2, 6, 10, 14); quarter(3, 7, 11, 15)
            quarter(0, 5, 10, 15); quarter(1, 6, 11, 12); quarter(2, 7, 8, 13); quarter(3, 4, 9, 14)
        }
        return [0, 1, 2, 3, 12, 13, 14, 15].flatMap { index in
            (0..<4).map { UInt8(truncatingIfNeeded: x[index] >> (8 * UInt32($0))) }
        }
    }

    /// Poly1305 (RFC 8439 §2.5) of `message` under the one-time 32-byte `key`, in 26-bit limbs.
    static func poly1305(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        func word(_ bytes: [UInt8], _ at: Int) -> UInt64 {
            UInt64(bytes[at]) | UInt64(bytes[at + 1]) << 8 | UInt64(bytes[at + 2]) << 16 | UInt64(bytes[at + 3]) << 24
        }
        let mask: UInt64 = 0x3FF_FFFF
        let r0 = word(key, 0) & 0x3FF_FFFF, r1 = (word(key, 3) >> 2) & 0x3FF_FF03
        let r2 = (word(key, 6) >> 4) & 0x3FF_C0FF, r3 = (word(key, 9) >> 6) & 0x3F0_3FFF
        let r4 = (word(key, 12) >> 8) & 0x00F_FFFF
        let s1 = r1 * 5, s2 = r2 * 5, s3 = r3 * 5, s4 = r4 * 5
        var h0: UInt64 = 0, h1: UInt64 = 0, h2: UInt64 = 0, h3: UInt64 = 0, h4: UInt64 = 0
        var offset = 0
        while offset < message.count {
            var block = Array(message[offset..<min(offset + 16, message.count)])
            let full = block.count == 16
            if !full { block += [1] + [UInt8](repeating: 0, count: 15 - block.count) }
            h0 += word(block, 0) & mask
            h1 += (word(block, 3) >> 2) & mask
            h2 += (word(block, 6) >> 4) & mask
            h3 += (word(block, 9) >> 6) & mask
            h4 += (word(block, 12) >> 8) | (full ? 1 << 24 : 0)
            let d0 = h0 * r0 + h1 * s4 + h2 * s3 + h3 * s2 + h4 * s1
            var d1 = h0 * r1 + h1 * r0 + h2 * s4 + h3 * s3 + h4 * s2
            var d2 = h0 * r2 + h1 * r1 + h2 * r0 + h3 * s4 + h4 * s3
            var d3 = h0 * r3 + h1 * r2 + h2 * r1 + h3 * r0 + h4 * s4
            var d4 = h0 * r4 + h1 * r3 + h2 * r2 + h3 * r1 + h4 * r0
            h0 = d0 & mask
            d1 += d0 >> 26; h1 = d1 & mask
            d2 += d1 >> 26; h2 = d2 & mask
            d3 += d2 >> 26; h3 = d3 & mask
            d4 += d3 >> 26; h4 = d4 & mask
            h0 += (d4 >> 26) * 5
            h1 += h0 >> 26; h0 &= mask
            offset += 16
        }
        // Full carry, then h mod 2^130 - 5: subtract p when h >= p (branch-free select).
        var carry = h1 >> 26; h1 &= mask
        h2 += carry; carry = h2 >> 26; h2 &= mask
        h3 += carry; carry = h3 >> 26; h3 &= mask
        h4 += carry; carry = h4 >> 26; h4 &= mask
        h0 += carry * 5; carry = h0 >> 26; h0 &= mask
        h1 += carry
        var g0 = h0 + 5; carry = g0 >> 26; g0 &= mask
        var g1 = h1 + carry; carry = g1 >> 26; g1 &= mask
        var g2 = h2 + carry; carry = g2 >> 26; g2 &= mask
        var g3 = h3 + carry; carry = g3 >> 26; g3 &= mask
        let g4 = (h4 &+ carry) &- (1 << 26)
        let useG = (g4 >> 63) &- 1  // all ones when g4 did not go negative (h >= p)
        g0 &= useG; g1 &= useG; g2 &= useG; g3 &= useG
        h0 = (h0 & ~useG) | g0; h1 = (h1 & ~useG) | g1; h2 = (h2 & ~useG) | g2; h3 = (h3 & ~useG) | g3
        h4 = (h4 & ~useG) | (g4 & useG)
        let w0 = (h0 | h1 << 26) & 0xFFFF_FFFF
        let w1 = (h1 >> 6 | h2 << 20) & 0xFFFF_FFFF
        let w2 = (h2 >> 12 | h3 << 14) & 0xFFFF_FFFF
        let w3 = (h3 >> 18 | h4 << 8) & 0xFFFF_FFFF
        var f = w0 + word(key, 16)
        var tag = withUnsafeBytes(of: UInt32(truncatingIfNeeded: f).littleEndian, Array.init)
        f = w1 + word(key, 20) + (f >> 32)
        tag += withUnsafeBytes(of: UInt32(truncatingIfNeeded: f).littleEndian, Array.init)
        f = w2 + word(key, 24) + (f >> 32)
        tag += withUnsafeBytes(of: UInt32(truncatingIfNeeded: f).littleEndian, Array.init)
        f = w3 + word(key, 28) + (f >> 32)
        tag += withUnsafeBytes(of: UInt32(truncatingIfNeeded: f).littleEndian, Array.init)
        return tag
    }
}
