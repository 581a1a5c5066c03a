import CofferTestSupport
import Crypto
import Foundation
import Testing

@_spi(Testing) @testable import CofferCrypto

/// Cross-checks against OpenSSL through Python's `cryptography` and `hashlib` (Tests/oracles/openssl_oracle.py).
@Suite("OpenSSL oracle")
struct OpenSSLOracleTests {
    @Test("PBKDF2-HMAC-SHA256 at the production cost, scrypt, and HKDF agree with OpenSSL")
    func kdfs() throws {
        var generator = SystemRandomNumberGenerator()
        let password = "correct horse battery staple ✓ " + String(generator.next() as UInt32)
        let salt = SystemRandom().bytes(32)
        let passwordBytes = try Passphrase.bytes(password)
        let pbkdf2 = try PassphraseKDF.defaultPBKDF2.derive(passwordBytes, salt: salt, limits: .production)
        let scrypt = try PassphraseKDF.defaultScrypt.derive(passwordBytes, salt: salt, limits: .production)
        let ikm = SystemRandom().bytes(32)
        let vaultID = SystemRandom().bytes(16)
        let itemsKey = KeySchedule.itemsKey(masterKey: SecretBytes(ikm), vaultID: vaultID)

        let answers = try TestSupport.openSSLOracle([
            [
                "op": "pbkdf2_sha256", "password": TestSupport.hex(passwordBytes.bytes), "salt": TestSupport.hex(salt),
                "iterations": 600_000, "length": 32,
            ],
            [
                "op": "scrypt", "password": TestSupport.hex(passwordBytes.bytes), "salt": TestSupport.hex(salt),
                "n": 1 << 15, "r": 8, "p": 1, "length": 32,
            ],
            [
                "op": "hkdf_sha256", "ikm": TestSupport.hex(ikm), "salt": TestSupport.hex(vaultID),
                "info": TestSupport.hex(Array("coffer/v1/items".utf8)), "length": 32,
            ],
        ])
        #expect(answers[0] as? String == TestSupport.hex(pbkdf2.bytes))
        #expect(answers[1] as? String == TestSupport.hex(scrypt.bytes))
        #expect(answers[2] as? String == itemsKey.withUnsafeBytes { TestSupport.hex($0) })
    }

    @Test("Boxes sealed here open in OpenSSL and the other way round; a changed AAD fails in both")
    func boxesBothWays() throws {
        let keyBytes = SystemRandom().bytes(32)
        let key = SymmetricKey(data: keyBytes)
        let aad = KeySchedule.itemAssociatedData(
            vaultID: SystemRandom().bytes(16), itemID: SystemRandom().bytes(16), kind: "card", revision: 7,
            updatedAt: 1_790_000_000_000, formatVersion: 1)
        var wrongAAD = aad
        wrongAAD[wrongAAD.count - 1] ^= 1
        let plaintexts: [[UInt8]] = [[], Array("x".utf8), SystemRandom().bytes(1000), SystemRandom().bytes(70_000)]
        // Half sealed with the key prepared once (as the vault's items key is), half with a key used once.
        let prepared = try BoxKey(key)
        let ours = try plaintexts.enumerated().map { index, plaintext in
            index.isMultiple(of: 2)
                ? try Box.seal(Data(plaintext), key: prepared, associatedData: aad) : try Box.seal(Data(plaintext), key: key, associatedData: aad)
        }
        var requests: [[String: Any]] = []
        for box in ours {
            requests.append(["op": "aesgcm_open", "key": TestSupport.hex(keyBytes), "box": TestSupport.hex(box), "aad": TestSupport.hex(aad)])
            requests.append(["op": "aesgcm_open", "key": TestSupport.hex(keyBytes), "box": TestSupport.hex(box), "aad": TestSupport.hex(wrongAAD)])
        }
        for plaintext in plaintexts {
            requests.append([
                "op": "aesgcm_seal", "key": TestSupport.hex(keyBytes), "nonce": TestSupport.hex(SystemRandom().bytes(12)),
                "plaintext": TestSupport.hex(plaintext), "aad": TestSupport.hex(aad),
            ])
        }
        let answers = try TestSupport.openSSLOracle(requests)
        for (index, plaintext) in plaintexts.enumerated() {
            #expect(answers[2 * index] as? String == TestSupport.hex(plaintext))
            #expect(answers[2 * index + 1] is NSNull)
            let theirs = try #require(answers[2 * plaintexts.count + index] as? String)
            #expect(TestSupport.hex(try Box.open(Data(TestSupport.hex(theirs)), key: key, associatedData: aad)) == TestSupport.hex(plaintext))
            #expect(TestSupport.hex(try Box.open(Data(TestSupport.hex(theirs)), key: prepared, associatedData: aad)) == TestSupport.hex(plaintext))
            #expect(throws: CofferCryptoError.authenticationFailed) {
                _ = try Box.open(Data(TestSupport.hex(theirs)), key: key, associatedData: wrongAAD)
            }
            #expect(throws: CofferCryptoError.authenticationFailed) {
                _ = try Box.open(Data(TestSupport.hex(theirs)), key: prepared, associatedData: wrongAAD)
            }
        }
    }

    @Test("Ed25519 public keys and signatures agree with OpenSSL")
    func ed25519() throws {
        let seeds = (0..<8).map { _ in SystemRandom().bytes(32) }
        let message = SystemRandom().bytes(200)
        var requests: [[String: Any]] = []
        var signatures: [[UInt8]] = []
        for seed in seeds {
            let signature = try Ed25519.sign(message, seed: SecretBytes(seed))
            signatures.append(signature)
            requests.append(["op": "ed25519_public", "seed": TestSupport.hex(seed)])
            requests.append([
                "op": "ed25519_verify", "public": TestSupport.hex(try Ed25519.publicKey(seed: SecretBytes(seed))),
                "signature": TestSupport.hex(signature), "message": TestSupport.hex(message),
            ])
        }
        let answers = try TestSupport.openSSLOracle(requests)
        for (index, seed) in seeds.enumerated() {
            #expect(answers[2 * index] as? String == TestSupport.hex(try Ed25519.publicKey(seed: SecretBytes(seed))))
            #expect(answers[2 * index + 1] as? Bool == true)
        }
    }
}
