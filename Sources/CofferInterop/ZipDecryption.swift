import CofferCrypto
import Crypto
import CryptoExtras
import Foundation

/// Decrypts encrypted ZIP entries, the two schemes the apps Coffer imports from use:
/// - traditional PKWARE encryption (APPNOTE.TXT §6.1; Authenticator Plus's exports): three 32-bit keys stirred by the
///   password through CRC-32 steps; a 12-byte header whose last byte must match the CRC's high byte (or, with a data
///   descriptor, the modification time's), which is the only password check there is.
/// - WinZip AES (AE-1 and AE-2; zip4j's, as Catima writes with a password): salt (8, 12 or 16 bytes for AES-128, -192,
///   -256), a 2-byte password verifier, AES-CTR data with a little-endian counter from 1, and the first 10 bytes of
///   HMAC-SHA1 over the encrypted data; keys and verifier from PBKDF2-HMAC-SHA1 of the password, 1,000 iterations.
enum ZipDecryption {
    static func decrypt(_ data: ArraySlice<UInt8>, entry: ZipArchive.Entry, password: String) throws(InteropError) -> [UInt8] {
        if let aes = entry.aes { return try decryptAES(data, strength: aes.strength, password: password) }
        return try decryptTraditional(data, entry: entry, password: password)
    }

    // MARK: Traditional PKWARE encryption

    private static let crcTable: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    private struct TraditionalKeys {
        var keys: (UInt32, UInt32, UInt32) = (0x1234_5678, 0x2345_6789, 0x3456_7890)

        mutating func update(_ byte: UInt8) {
            keys.0 = ZipDecryption.crcTable[Int((keys.0 ^ UInt32(byte)) & 0xFF)] ^ (keys.0 >> 8)
            keys.1 = (keys.1 &+ (keys.0 & 0xFF)) &* 134_775_813 &+ 1
            keys.2 = ZipDecryption.crcTable[Int((keys.2 ^ (keys.1 >> 24)) & 0xFF)] ^ (keys.2 >> 8)
        }

        mutating func decrypt(_ byte: UInt8) -> UInt8 {
            let temp = (keys.2 | 2) & 0xFFFF
            let plain = byte ^ UInt8(truncatingIfNeeded: (temp &* (temp ^ 1)) >> 8)
            update(plain)
            return plain
        }
    }

    private static func decryptTraditional(_ data: ArraySlice<UInt8>, entry: ZipArchive.Entry, password: String) throws(InteropError) -> [UInt8] {
        guard data.count >= 12 else { throw .malformedFile("an encrypted ZIP entry is shorter than its header") }
        var keys = TraditionalKeys()
        for byte in password.utf8 { keys.update(byte) }
        var check: UInt8 = 0
        for byte in data.prefix(12) { check = keys.decrypt(byte) }
        // With a data descriptor (flag bit 3) the CRC is not known before the data, so the time's high byte stands in.
        let expected = entry.flags & 8 != 0 ? UInt8(entry.modificationTime >> 8) : UInt8(entry.crc32 >> 24)
        guard check == expected else { throw .wrongPassword }
        return data.dropFirst(12).map { keys.decrypt($0) }
    }

    // MARK: WinZip AES

    private static func decryptAES(_ data: ArraySlice<UInt8>, strength: UInt8, password: String) throws(InteropError) -> [UInt8] {
        let keyLength = 8 + 8 * Int(strength)
        let saltLength = keyLength / 2
        guard data.count >= saltLength + 2 + 10 else { throw .malformedFile("an AES-encrypted ZIP entry is too short") }
        let salt = Array(data.prefix(saltLength))
        let verifier = Array(data.dropFirst(saltLength).prefix(2))
        let encrypted = data.dropFirst(saltLength + 2).dropLast(10)
        let authentication = Array(data.suffix(10))
        let derived: SecretBytes
        do {
            derived = try PBKDF2.derive(
                SecretBytes(password.utf8), salt: salt, hash: .sha1, iterations: FuzzingFloor.iterations(1_000), outputByteCount: 2 * keyLength + 2)
        } catch {
            throw .kdfParametersOutOfBounds("PBKDF2 could not run")
        }
        return try derived.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws(InteropError) -> [UInt8] in
            guard Array(raw[(2 * keyLength)...]) == verifier else { throw .wrongPassword }
            let encryptionKey = SymmetricKey(data: raw[..<keyLength])
            let authenticationKey = SymmetricKey(data: raw[keyLength..<(2 * keyLength)])
            let code = HMAC<Insecure.SHA1>.authenticationCode(for: Array(encrypted), using: authenticationKey)
            guard Array(code.prefix(10)) == authentication else {
                throw .malformedFile("an AES-encrypted ZIP entry fails its authentication code (it is damaged)")
            }
            var plain = Array(encrypted)
            var counter = [UInt8](repeating: 0, count: 16)
            var offset = 0
            while offset < plain.count {
                // Little-endian increment across the whole block, starting from 1.
                for index in counter.indices {
                    counter[index] &+= 1
                    if counter[index] != 0 { break }
                }
                var stream = counter
                do {
                    try AES.permute(&stream, key: encryptionKey)
                } catch {
                    throw .malformedFile("AES could not run")
                }
                for index in 0..<min(16, plain.count - offset) { plain[offset + index] ^= stream[index] }
                offset += 16
            }
            return plain
        }
    }
}
