import CofferCrypto
import Crypto
import CryptoExtras
import Foundation
import Synchronization

/// The primitives a KeePass database needs beyond swift-crypto's AEADs: the AES-KDF, AES-256-CBC and ChaCha20
/// payload ciphers, and the Salsa20 and ChaCha20 streams that hide protected values. Checked against Python's
/// `cryptography` and PyCryptodome in `KeePassCryptoTests`.
enum KeePassCrypto {
    /// Blocks per AES-KDF chunk: 1 MiB of zeros, so the chained encryption runs at CBC speed in bounded memory.
    private static let aesKDFChunkBlocks = 1 << 16

    /// KeePass's AES-KDF: each 16-byte half of `key` encrypted `rounds` times with AES-256-ECB under `seed`, then
    /// SHA-256 of the two halves.
    ///
    /// Repeated ECB of one block is CBC over zero blocks with the block as IV (C₀ = E(0 ⊕ IV), Cᵢ = E(Cᵢ₋₁)), so
    /// BoringSSL's CBC does a chunk of rounds per call instead of one block function call per round. The two halves
    /// are independent and run on two threads, as KeePassXC runs them.
    static func aesKDF(_ key: [UInt8], seed: [UInt8], rounds: UInt64) throws(InteropError) -> [UInt8] {
        guard key.count == 32, seed.count == 32 else { throw .malformedFile("the AES-KDF seed is not 32 bytes") }
        let cipherKey = SymmetricKey(data: seed)
        let halves = Halves()
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            halves.set(
                half,
                Result { () throws(InteropError) in
                    try chainedEncryption(Array(key[(half * 16)..<(half * 16 + 16)]), key: cipherKey, rounds: rounds)
                })
        }
        return Array(SHA256.hash(data: try halves.get(0) + halves.get(1)))
    }

    /// The two halves' results, each written once by its own thread, read after both are done.
    private final class Halves: Sendable {
        private let results = Mutex<[Int: Result<[UInt8], InteropError>]>([:])

        func set(_ half: Int, _ result: Result<[UInt8], InteropError>) {
            results.withLock { $0[half] = result }
        }

        func get(_ half: Int) throws(InteropError) -> [UInt8] {
            try (results.withLock { $0[half] } ?? .failure(.malformedFile("the AES-KDF could not run"))).get()
        }
    }

    /// `block` encrypted `rounds` times, a chunk of rounds per CBC call.
    private static func chainedEncryption(_ block: [UInt8], key: SymmetricKey, rounds: UInt64) throws(InteropError) -> [UInt8] {
        let zeros = [UInt8](repeating: 0, count: aesKDFChunkBlocks * 16)
        var block = block
        var remaining = rounds
        while remaining > 0 {
            let count = Int(min(remaining, UInt64(aesKDFChunkBlocks)))
            do {
                let chained = try AES._CBC.encrypt(
                    zeros[..<(count * 16)], using: key, iv: AES._CBC.IV(ivBytes: block), noPadding: true)
                block = Array(chained.suffix(16))
            } catch {
                throw .malformedFile("the AES-KDF could not run")
            }
            remaining -= UInt64(count)
        }
        return block
    }

    /// AES-256-CBC with PKCS#7 padding.
    static func decryptAESCBC(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8]) throws(InteropError) -> [UInt8] {
        guard iv.count == 16 else { throw .malformedFile("the AES-256 IV is not 16 bytes") }
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else {
            throw .malformedFile("the AES-256 payload is not a whole number of blocks")
        }
        do {
            return Array(try AES._CBC.decrypt(ciphertext, using: SymmetricKey(data: key), iv: AES._CBC.IV(ivBytes: iv)))
        } catch {
            throw .malformedFile("the payload does not decrypt (bad padding)")
        }
    }

    /// ChaCha20 (RFC 8439: 12-byte nonce, 32-bit block counter from `counter`) applied to `data`.
    static func chaCha20(_ data: [UInt8], key: [UInt8], nonce: [UInt8], counter: UInt32 = 0) throws(InteropError) -> [UInt8] {
        guard key.count == 32, nonce.count == 12 else { throw .malformedFile("a ChaCha20 key or nonce has the wrong length") }
        do {
            return Array(
                try Insecure.ChaCha20CTR.encrypt(
                    data, using: SymmetricKey(data: key), counter: Insecure.ChaCha20CTR.Counter(offset: counter),
                    nonce: Insecure.ChaCha20CTR.Nonce(data: nonce)))
        } catch {
            throw .malformedFile("ChaCha20 could not run")
        }
    }

    /// One 64-byte Salsa20/20 block (Bernstein's specification): `key` 32 bytes, `nonce` 8 bytes, 64-bit `counter`.
    static func salsa20Block(key: [UInt8], nonce: [UInt8], counter: UInt64) -> [UInt8] {
        func word(_ bytes: [UInt8], _ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        let sigma: [UInt32] = [0x6170_7865, 0x3320_646E, 0x7962_2D32, 0x6B20_6574]  // "expand 32-byte k"
        let input: [UInt32] = [
            sigma[0], word(key, 0), word(key, 4), word(key, 8), word(key, 12), sigma[1], word(nonce, 0), word(nonce, 4),
            UInt32(truncatingIfNeeded: counter), UInt32(truncatingIfNeeded: counter >> 32), sigma[2], word(key, 16),
            word(key, 20), word(key, 24), word(key, 28), sigma[3],
        ]
        var x = input
        func quarter(_ a: Int, _ b: Int, _ c: Int, _ d: Int) {
            x[b] ^= (x[a] &+ x[d]).rotatedLeft(7)
            x[c] ^= (x[b] &+ x[a]).rotatedLeft(9)
            x[d] ^= (x[c] &+ x[b]).rotatedLeft(13)
            x[a] ^= (x[d] &+ x[c]).rotatedLeft(18)
        }
        for _ in 0..<10 {
            quarter(0, 4, 8, 12); quarter(5, 9, 13, 1); quarter(10, 14, 2, 6); quarter(15, 3, 7, 11)
            quarter(0, 1, 2, 3); quarter(5, 6, 7, 4); quarter(10, 11, 8, 9); quarter(15, 12, 13, 14)
        }
        var output: [UInt8] = []
        output.reserveCapacity(64)
        for index in 0..<16 {
            let value = x[index] &+ input[index]
            output += [
                UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
                UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24),
            ]
        }
        return output
    }
}

extension UInt32 {
    fileprivate func rotatedLeft(_ count: UInt32) -> UInt32 { self << count | self >> (32 - count) }
}

/// The stream that hides protected values (passwords, protected fields) inside a KeePass database's XML: every
/// protected value, in document order, is XORed with the next bytes of one keystream.
struct KeePassInnerStream {
    enum Cipher: UInt32 {
        case salsa20 = 2
        case chaCha20 = 3
    }

    /// KeePass's fixed Salsa20 nonce for the inner stream.
    private static let salsaNonce: [UInt8] = [0xE8, 0x30, 0x09, 0x4B, 0x97, 0x20, 0x5D, 0x2A]
    /// ChaCha20 blocks produced per refill.
    private static let chaChaRefillBlocks = 64

    let cipher: Cipher
    private let key: [UInt8]
    private let nonce: [UInt8]
    private var buffer: [UInt8] = []
    private var used = 0
    private var nextBlock: UInt64 = 0

    /// The stream for `cipher` from the database's inner key: ChaCha20 takes key and nonce from SHA-512 of it,
    /// Salsa20 its key from SHA-256 and KeePass's fixed nonce.
    init(cipher: Cipher, key innerKey: [UInt8]) {
        self.cipher = cipher
        switch cipher {
        case .chaCha20:
            let digest = Array(SHA512.hash(data: innerKey))
            key = Array(digest[0..<32])
            nonce = Array(digest[32..<44])
        case .salsa20:
            key = Array(SHA256.hash(data: innerKey))
            nonce = Self.salsaNonce
        }
    }

    /// `bytes` XORed with the next `bytes.count` bytes of the keystream.
    mutating func apply(_ bytes: [UInt8]) throws(InteropError) -> [UInt8] {
        var output = bytes
        for index in output.indices {
            if used == buffer.count { try refill() }
            output[index] ^= buffer[used]
            used += 1
        }
        return output
    }

    private mutating func refill() throws(InteropError) {
        switch cipher {
        case .salsa20:
            buffer = KeePassCrypto.salsa20Block(key: key, nonce: nonce, counter: nextBlock)
            nextBlock += 1
        case .chaCha20:
            guard nextBlock + UInt64(Self.chaChaRefillBlocks) <= UInt64(UInt32.max) else {
                throw .malformedFile("the protected values outrun the ChaCha20 stream")
            }
            buffer = try KeePassCrypto.chaCha20(
                [UInt8](repeating: 0, count: 64 * Self.chaChaRefillBlocks), key: key, nonce: nonce,
                counter: UInt32(nextBlock))
            nextBlock += UInt64(Self.chaChaRefillBlocks)
        }
        used = 0
    }
}
