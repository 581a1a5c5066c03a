import CofferTestSupport
import Crypto
import Foundation
import Testing

@_spi(Testing) @testable import CofferCrypto

@Suite("KDF parameters")
struct KDFParameterTests {
    @Test(
        "Production bounds refuse both too-weak and too-costly parameters",
        arguments: [
            PassphraseKDF.pbkdf2SHA256(iterations: 0), .pbkdf2SHA256(iterations: 1), .pbkdf2SHA256(iterations: 209_999),
            .pbkdf2SHA256(iterations: 10_000_001), .pbkdf2SHA256(iterations: .max),
            .scrypt(logN: 13, r: 8, p: 1), .scrypt(logN: 21, r: 8, p: 1), .scrypt(logN: 15, r: 0, p: 1),
            .scrypt(logN: 15, r: 8, p: 0), .scrypt(logN: 15, r: 33, p: 1), .scrypt(logN: 20, r: 32, p: 1),
        ])
    func outOfBounds(_ kdf: PassphraseKDF) {
        #expect(throws: CofferCryptoError.self) { try kdf.validate(.production) }
        #expect(throws: CofferCryptoError.self) { _ = try kdf.derive(SecretBytes(utf8: "pw"), salt: [1, 2], limits: .production) }
        #expect(throws: CofferCryptoError.self) { _ = try PassphraseKDF(encoded: kdf.encoded, limits: .production) }
    }

    @Test(
        "Defaults and their encodings are accepted and round-trip",
        arguments: [
            PassphraseKDF.defaultPBKDF2, .defaultScrypt, .pbkdf2SHA256(iterations: 210_000), .scrypt(logN: 20, r: 8, p: 1),
        ])
    func roundTrip(_ kdf: PassphraseKDF) throws {
        try kdf.validate(.production)
        #expect(try PassphraseKDF(encoded: kdf.encoded, limits: .production) == kdf)
    }

    @Test("Encodings are fixed: identifier byte then big-endian parameters")
    func encodingBytes() {
        #expect(PassphraseKDF.defaultPBKDF2.encoded == [1, 0x00, 0x09, 0x27, 0xC0])
        #expect(PassphraseKDF.defaultScrypt.encoded == [2, 15, 0, 0, 0, 8, 0, 0, 0, 1])
    }

    @Test("Malformed encodings are refused", arguments: [[UInt8](), [1], [1, 0, 0, 0], [2, 15, 0, 0, 0, 8], [3, 0, 0, 0, 0], [1, 0, 9, 39, 192, 0]])
    func malformed(_ bytes: [UInt8]) {
        #expect(throws: CofferCryptoError.self) { _ = try PassphraseKDF(encoded: bytes, limits: .production) }
    }
}

@Suite("Passphrases")
struct PassphraseTests {
    @Test("NFC and NFD spellings are the same passphrase")
    func normalization() throws {
        let composed = try Passphrase.bytes("caf\u{E9}")
        let decomposed = try Passphrase.bytes("cafe\u{301}")
        #expect(composed.isEqual(to: decomposed))
        #expect(composed.bytes == Array("caf\u{E9}".utf8))
    }

    @Test("Empty and NUL-bearing passphrases are refused")
    func refused() {
        #expect(throws: CofferCryptoError.self) { _ = try Passphrase.bytes("") }
        #expect(throws: CofferCryptoError.self) { _ = try Passphrase.bytes("abc\u{0}") }
    }

    @Test("Passphrases longer than an HMAC block are not truncated (Aegis #71)")
    func long() throws {
        let long = String(repeating: "a", count: 100)
        let kdf = PassphraseKDF.pbkdf2SHA256(iterations: 10)
        let salt = [UInt8](repeating: 7, count: 16)
        let full = try kdf.derive(try Passphrase.bytes(long), salt: salt, limits: .testing)
        let shorter = try kdf.derive(try Passphrase.bytes(String(long.prefix(64))), salt: salt, limits: .testing)
        #expect(!full.isEqual(to: shorter))
    }
}

@Suite("Slots")
struct SlotTests {
    let vaultID = SystemRandom().bytes(16)
    let master = SecretBytes(randomCount: 32)

    @Test("Each slot type opens with its secret and not with another", arguments: SlotType.allCases)
    func wrapUnwrap(_ type: SlotType) throws {
        let header = SlotHeader.new(type, kdf: .pbkdf2SHA256(iterations: 1000))
        let secret = SecretBytes(randomCount: 32)
        let kek = try header.keyEncryptionKey(secret: secret, limits: .testing)
        let wrapped = try header.wrap(masterKey: master, vaultID: vaultID, kek: kek)
        #expect(try header.unwrap(wrapped, vaultID: vaultID, kek: kek).isEqual(to: master))
        let wrong = try header.keyEncryptionKey(secret: SecretBytes(randomCount: 32), limits: .testing)
        #expect(throws: CofferCryptoError.authenticationFailed) { _ = try header.unwrap(wrapped, vaultID: vaultID, kek: wrong) }
        #expect(throws: CofferCryptoError.authenticationFailed) {
            _ = try header.unwrap(wrapped, vaultID: SystemRandom().bytes(16), kek: kek)
        }
    }

    @Test("Changing any header field (type, KDF, salt, id) breaks the wrapped key")
    func headerBinding() throws {
        let header = SlotHeader.new(.passphrase, kdf: .pbkdf2SHA256(iterations: 1000))
        let secret = SecretBytes(utf8: "pass")
        let kek = try header.keyEncryptionKey(secret: secret, limits: .testing)
        let wrapped = try header.wrap(masterKey: master, vaultID: vaultID, kek: kek)
        var variants: [SlotHeader] = []
        var changed = header
        changed.kdf = .pbkdf2SHA256(iterations: 999)
        variants.append(changed)
        changed = header
        changed.salt[0] ^= 1
        variants.append(changed)
        changed = header
        changed.slotID[15] ^= 0x80
        variants.append(changed)
        changed = header
        changed.type = .recovery
        variants.append(changed)
        for variant in variants {
            // Even with the original key-encryption key, the associated data no longer matches.
            #expect(throws: CofferCryptoError.authenticationFailed) { _ = try variant.unwrap(wrapped, vaultID: vaultID, kek: kek) }
        }
    }

    @Test("Headers from disk are checked: salt length, KDF presence")
    func validation() {
        var header = SlotHeader.new(.device)
        header.salt = [1, 2, 3]
        #expect(throws: CofferCryptoError.self) { try header.validate(limits: .production) }
        header = SlotHeader.new(.device)
        header.kdf = .defaultPBKDF2
        #expect(throws: CofferCryptoError.self) { try header.validate(limits: .production) }
        header = SlotHeader.new(.passphrase)
        header.kdf = nil
        #expect(throws: CofferCryptoError.self) { try header.validate(limits: .production) }
    }
}

@Suite("Recovery codes, secrets, PIN protection")
struct SecretHandlingTests {
    @Test("Recovery codes print as 8 groups of 4 and parse back leniently")
    func recoveryCodes() throws {
        let (secret, text) = RecoveryCode.generate()
        #expect(text.count == 39)
        #expect(text.split(separator: "-").count == 8)
        #expect(try RecoveryCode.parse(text).isEqual(to: secret))
        let sloppy = text.lowercased().replacingOccurrences(of: "-", with: " ").replacingOccurrences(of: "0", with: "o")
        #expect(try RecoveryCode.parse(sloppy).isEqual(to: secret))
        #expect(throws: CofferCryptoError.malformedRecoveryCode) { _ = try RecoveryCode.parse(String(text.dropLast())) }
        #expect(throws: CofferCryptoError.malformedRecoveryCode) { _ = try RecoveryCode.parse(text.replacingOccurrences(of: "-", with: "U")) }
    }

    @Test("Secret bytes never show their content")
    func redaction() {
        let canary = "CANARY-SECRET-7f3a"
        let secret = SecretBytes(utf8: canary)
        for rendering in [String(describing: secret), String(reflecting: secret), "\(secret)", dumped(secret)] {
            #expect(CanaryScan.encodings(of: canary, in: Data(rendering.utf8)).isEmpty)
        }
    }

    @Test("Error descriptions never contain inputs")
    func errorDescriptions() {
        let canary = "hunter2-CANARY"
        let error = #expect(throws: CofferCryptoError.self) { _ = try Passphrase.bytes(canary + "\u{0}") }
        #expect(error.map { CanaryScan.encodings(of: canary, in: Data($0.description.utf8)).isEmpty } == true)
    }

    @Test("PIN boxes need the PIN and the device secret, and are bound to vault and item")
    func pinProtection() throws {
        let seed = SecretBytes(randomCount: 32)
        let pin = try PINProtection.pinBytes("123456")
        let device = SecretBytes(randomCount: 32)
        let vaultID = SystemRandom().bytes(16)
        let itemID = SystemRandom().bytes(16)
        let sealed = try PINProtection.seal(seed, pin: pin, deviceSecret: device, vaultID: vaultID, itemID: itemID)
        let opened = try PINProtection.open(sealed.box, salt: sealed.salt, pin: pin, deviceSecret: device, vaultID: vaultID, itemID: itemID)
        #expect(opened.isEqual(to: seed))
        let attempts: [() throws -> SecretBytes] = [
            {
                try PINProtection.open(
                    sealed.box, salt: sealed.salt, pin: try PINProtection.pinBytes("123457"), deviceSecret: device, vaultID: vaultID, itemID: itemID)
            },
            { try PINProtection.open(sealed.box, salt: sealed.salt, pin: pin, deviceSecret: SecretBytes(randomCount: 32), vaultID: vaultID, itemID: itemID) },
            { try PINProtection.open(sealed.box, salt: sealed.salt, pin: pin, deviceSecret: device, vaultID: SystemRandom().bytes(16), itemID: itemID) },
            { try PINProtection.open(sealed.box, salt: sealed.salt, pin: pin, deviceSecret: device, vaultID: vaultID, itemID: SystemRandom().bytes(16)) },
        ]
        for attempt in attempts {
            #expect(throws: CofferCryptoError.authenticationFailed) { _ = try attempt() }
        }
    }

    @Test("PINs are 6 to 64 digits", arguments: ["", "12345", "12345a", "１２３４５６", String(repeating: "1", count: 65)])
    func badPINs(_ pin: String) {
        #expect(throws: CofferCryptoError.self) { _ = try PINProtection.pinBytes(pin) }
    }

    private func dumped(_ value: Any) -> String {
        var output = ""
        dump(value, to: &output)
        return output
    }
}

@Suite("Key schedule layout (golden)")
struct KeyScheduleGoldenTests {
    @Test("Associated data layout is length-prefixed fields after the label")
    func associatedDataLayout() {
        let bytes = KeySchedule.associatedData(label: "ab", fields: [[1], [], [2, 3]])
        #expect(bytes == [0, 0, 0, 2, 0x61, 0x62, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 2, 2, 3])
    }

    @Test("Item associated data for fixed inputs is byte-for-byte stable")
    func itemAAD() {
        let aad = KeySchedule.itemAssociatedData(
            vaultID: Array(repeating: 0x11, count: 16), itemID: Array(repeating: 0x22, count: 16), kind: "otp",
            revision: 3, updatedAt: 0x0102_0304_0506_0708, formatVersion: 1)
        #expect(
            TestSupport.hex(aad) == "0000000e636f666665722f76312f6974656d"
                + "00000010" + String(repeating: "11", count: 16) + "00000010" + String(repeating: "22", count: 16)
                + "000000036f7470" + "000000080000000000000003" + "000000080102030405060708" + "0000000400000001")
    }

    @Test("Items key for a fixed master key and vault id (known answer computed with Python cryptography HKDF)")
    func itemsKey() throws {
        let key = KeySchedule.itemsKey(masterKey: SecretBytes(Array(0..<32)), vaultID: Array(repeating: 0xAB, count: 16))
        let oracle = try TestSupport.openSSLOracle([
            [
                "op": "hkdf_sha256", "ikm": TestSupport.hex(Array(0..<32)), "salt": String(repeating: "ab", count: 16),
                "info": TestSupport.hex(Array("coffer/v1/items".utf8)), "length": 32,
            ]
        ])
        #expect(key.withUnsafeBytes { TestSupport.hex($0) } == oracle[0] as? String)
    }
}
