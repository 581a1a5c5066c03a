import CofferTestSupport
import Crypto
import Foundation
import Testing

@_spi(Testing) @testable import CofferCrypto

private func hex(_ text: String) -> [UInt8] { TestSupport.hex(text) }
private func hex(_ bytes: some Sequence<UInt8>) -> String { TestSupport.hex(bytes) }

@Suite("Published vectors")
struct VectorTests {
    @Test("Wycheproof AES-256-GCM through Coffer's box", arguments: wycheproofAESGCM)
    func aesGCM(_ vector: AEADVector) throws {
        let key = SymmetricKey(data: hex(vector.key))
        let iv = hex(vector.iv)
        let box = Data(iv + hex(vector.ct) + hex(vector.tag))
        if vector.ivSize != 96 {
            // Coffer only ever uses 96-bit nonces: any other size must be refused, not silently accepted.
            #expect(throws: CofferCryptoError.self) {
                _ = try Box.seal(Data(hex(vector.msg)), key: key, associatedData: hex(vector.aad), fixedNonce: iv)
            }
            return
        }
        if vector.result == "valid" {
            let sealed = try Box.seal(Data(hex(vector.msg)), key: key, associatedData: hex(vector.aad), fixedNonce: iv)
            #expect(hex(sealed) == hex(box))
            let opened = try Box.open(box, key: key, associatedData: hex(vector.aad))
            #expect(hex(opened) == vector.msg)
        } else {
            #expect(throws: CofferCryptoError.authenticationFailed) {
                _ = try Box.open(box, key: key, associatedData: hex(vector.aad))
            }
        }
    }

    @Test("Wycheproof HKDF-SHA256 through the key schedule", arguments: wycheproofHKDFSHA256)
    func hkdf(_ vector: HKDFVector) throws {
        // HKDF-SHA256 can produce at most 255 * 32 bytes; the three "invalid" vectors ask for more and must be refused.
        guard vector.result == "valid" else {
            #expect(throws: CofferCryptoError.self) {
                _ = try KeySchedule.hkdf(
                    SecretBytes(hex(vector.ikm)), salt: hex(vector.salt), info: hex(vector.info), outputByteCount: vector.size)
            }
            return
        }
        let key = try KeySchedule.hkdf(
            SecretBytes(hex(vector.ikm)), salt: hex(vector.salt), info: hex(vector.info), outputByteCount: vector.size)
        #expect(key.withUnsafeBytes { hex($0) } == vector.okm)
    }

    @Test("Wycheproof and RFC 7914 PBKDF2-HMAC-SHA256", arguments: wycheproofPBKDF2HMACSHA256 + rfc7914PBKDF2HMACSHA256)
    func pbkdf2SHA256(_ vector: PBKDF2Vector) throws {
        let derived = try PBKDF2.derive(
            SecretBytes(hex(vector.password)), salt: hex(vector.salt), hash: .sha256, iterations: vector.iterationCount,
            outputByteCount: vector.dkLen)
        #expect(hex(derived.bytes) == vector.dk)
    }

    @Test("RFC 6070 PBKDF2-HMAC-SHA1 (for importers)", arguments: wycheproofPBKDF2HMACSHA1RFC6070)
    func pbkdf2SHA1(_ vector: PBKDF2Vector) throws {
        let derived = try PBKDF2.derive(
            SecretBytes(hex(vector.password)), salt: hex(vector.salt), hash: .sha1, iterations: vector.iterationCount,
            outputByteCount: vector.dkLen)
        #expect(hex(derived.bytes) == vector.dk)
    }

    @Test("PBKDF2 through PassphraseKDF matches the same vectors", arguments: rfc7914PBKDF2HMACSHA256)
    func passphraseKDFPBKDF2(_ vector: PBKDF2Vector) throws {
        let kdf = PassphraseKDF.pbkdf2SHA256(iterations: UInt32(vector.iterationCount))
        let derived = try kdf.derive(SecretBytes(hex(vector.password)), salt: hex(vector.salt), limits: .testing, outputByteCount: vector.dkLen)
        #expect(hex(derived.bytes) == vector.dk)
    }

    @Test("RFC 7914 scrypt through PassphraseKDF", arguments: rfc7914Scrypt)
    func scrypt(_ vector: ScryptVector) throws {
        let logN = UInt8(vector.n.trailingZeroBitCount)
        #expect(1 << Int(logN) == vector.n)
        let kdf = PassphraseKDF.scrypt(logN: logN, r: UInt32(vector.r), p: UInt32(vector.p))
        let derived = try kdf.derive(SecretBytes(hex(vector.password)), salt: hex(vector.salt), limits: .testing, outputByteCount: vector.dkLen)
        #expect(hex(derived.bytes) == vector.dk)
    }

    /// RFC 8032 §7.1, TEST 1 (empty message) and TEST 2 (one byte).
    @Test(
        "RFC 8032 Ed25519",
        arguments: [
            (
                "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
                "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
                "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
            ),
            (
                "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
                "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
                "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
            ),
        ])
    func ed25519(_ vector: (String, String, String, String)) throws {
        let seed = SecretBytes(hex(vector.0))
        #expect(hex(try Ed25519.publicKey(seed: seed)) == vector.1)
        #expect(hex(try Ed25519.sign(hex(vector.2), seed: seed)) == vector.3)
        #expect(Ed25519.verify(hex(vector.3), message: hex(vector.2), publicKey: hex(vector.1)))
        var tampered = hex(vector.3)
        tampered[0] ^= 1
        #expect(!Ed25519.verify(tampered, message: hex(vector.2), publicKey: hex(vector.1)))
    }
}
