import CofferCrypto
import CofferOTP
import Foundation

/// An Ed25519 private key held under a PIN. The seed is only ever stored inside the PIN box
/// (`PINProtection`), itself inside the item's box; the public key is kept in the clear of the item content.
public struct SigningKey: Sendable, Equatable {
    /// How the key is shown and imported.
    public enum Flavor: String, Codable, Sendable {
        /// A raw Ed25519 key; public key shown as hex.
        case ed25519
        /// A Stellar account key: imported from an `S…` seed, public key shown as a `G…` address.
        case stellar
    }

    public var name: String
    public var flavor: Flavor
    public var publicKey: [UInt8]
    /// Salt of the PIN key derivation.
    public var pinSalt: [UInt8]
    /// The seed sealed under the PIN key.
    public var pinBox: [UInt8]
    /// The vault the key was added to: its id is bound into the PIN box and names the device secret's key-store
    /// entry, so the key keeps working after an import into another vault on the same device.
    public var boundVaultID: [UInt8]
    /// Identifies the device secret the PIN key mixes in (`PINProtection.secretIdentifier`), so that a key
    /// restored on another device is reported as such instead of as a wrong PIN.
    public var deviceSecretID: [UInt8]
    /// Wrong PINs since the last right one.
    public var failedAttempts: Int
    public var tags: [String]
    public var notes: String?

    public init(
        name: String, flavor: Flavor, publicKey: [UInt8], pinSalt: [UInt8], pinBox: [UInt8], boundVaultID: [UInt8],
        deviceSecretID: [UInt8], failedAttempts: Int = 0, tags: [String] = [], notes: String? = nil
    ) throws(ModelError) {
        self.name = name
        self.flavor = flavor
        self.publicKey = publicKey
        self.pinSalt = pinSalt
        self.pinBox = pinBox
        self.boundVaultID = boundVaultID
        self.deviceSecretID = deviceSecretID
        self.failedAttempts = failedAttempts
        self.tags = tags
        self.notes = notes
        try validate()
    }

    public mutating func validate() throws(ModelError) {
        name = try Rules.name(name)
        guard publicKey.count == 32 else { throw .invalidField(field: "public key", rule: "must be 32 bytes") }
        guard (16...64).contains(pinSalt.count) else { throw .invalidField(field: "PIN salt", rule: "must be 16 to 64 bytes") }
        guard pinBox.count == 32 + Box.overhead else { throw .invalidField(field: "PIN box", rule: "wrong length") }
        guard boundVaultID.count == 16 else { throw .invalidField(field: "bound vault id", rule: "must be 16 bytes") }
        guard deviceSecretID.count == 16 else { throw .invalidField(field: "device secret id", rule: "must be 16 bytes") }
        guard (0...PINProtection.attemptLimit).contains(failedAttempts) else {
            throw .invalidField(field: "failed attempts", rule: "out of range")
        }
        tags = try Rules.labels(tags, field: "tags")
        notes = try Rules.optionalText(notes, field: "notes", limit: 65_536)
    }

    /// True once `PINProtection.attemptLimit` wrong PINs were entered in a row.
    public var isLocked: Bool { failedAttempts >= PINProtection.attemptLimit }

    /// The public key as users know it: a Stellar `G…` address, or hex.
    public var publicKeyText: String {
        switch flavor {
        case .stellar: return StellarStrKey.encode(publicKey, version: .accountID)
        case .ed25519: return Hex.encode(publicKey)
        }
    }
}

/// Stellar's StrKey: version byte ‖ payload ‖ CRC16-XModem (little-endian), in RFC 4648 base32 without padding.
public enum StellarStrKey {
    public enum Version: UInt8, Sendable {
        /// `G…` public account id.
        case accountID = 48  // 6 << 3
        /// `S…` secret seed.
        case seed = 144  // 18 << 3
        /// `M…` muxed account: the key, then a 64-bit id (SEP-23).
        case muxedAccount = 96  // 12 << 3
        /// `T…` pre-authorised transaction hash (a signer).
        case preAuthTransaction = 152  // 19 << 3
        /// `X…` SHA-256 hash whose preimage signs (a signer).
        case sha256Hash = 184  // 23 << 3
        /// `P…` signed payload (a signer, CAP-40).
        case signedPayload = 120  // 15 << 3
    }

    public enum StrKeyError: Error, Equatable, Sendable, CustomStringConvertible {
        case malformed
        case wrongVersion
        case badChecksum

        public var description: String {
            switch self {
            case .malformed: return "not a Stellar key: expected 56 base32 characters"
            case .wrongVersion: return "not a Stellar secret seed (it must start with S)"
            case .badChecksum: return "the Stellar key's checksum does not match (a typo?)"
            }
        }
    }

    /// Encodes a payload: 32 bytes for keys and hashes, more for muxed accounts and signed payloads.
    public static func encode(_ payload: [UInt8], version: Version) -> String {
        var raw = [version.rawValue] + payload
        let checksum = crc16XModem(raw)
        raw += [UInt8(checksum & 0xFF), UInt8(checksum >> 8)]
        return Base32.encode(raw, padding: false)
    }

    /// Decodes a seed (`S…`) into its 32 secret bytes, checking version and checksum. Strict: 56 upper-case
    /// base32 characters, as Stellar prints them.
    public static func decodeSeed(_ text: String) throws(StrKeyError) -> SecretBytes {
        let trimmed = text.trimmingWhitespace()
        let characters = Array(trimmed.utf8)
        guard characters.count == 56,
            characters.allSatisfy({ ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || ($0 >= UInt8(ascii: "2") && $0 <= UInt8(ascii: "7")) }),
            var raw = try? Base32.decode(trimmed)
        else { throw .malformed }
        defer { raw.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        guard raw.count == 35 else { throw .malformed }
        guard raw[0] == Version.seed.rawValue else { throw .wrongVersion }
        let checksum = crc16XModem(Array(raw[0..<33]))
        guard raw[33] == UInt8(checksum & 0xFF), raw[34] == UInt8(checksum >> 8) else { throw .badChecksum }
        return SecretBytes(raw[1..<33])
    }

    static func crc16XModem(_ bytes: [UInt8]) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }
}
