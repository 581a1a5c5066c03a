#if canImport(CCryptoBoringSSL)
internal import CCryptoBoringSSL
#endif
import Crypto
import Foundation

/// Every label and derivation of the vault's key schedule (docs/FORMAT.md §2). Labels carry a version so a future
/// schedule can live beside this one.
public enum KeySchedule {
    /// HKDF info of the key that seals item boxes.
    public static let itemsKeyLabel = "coffer/v1/items"
    /// HKDF info of a slot's key-encryption key, per slot type.
    public static func keyEncryptionLabel(_ type: SlotType) -> String { "coffer/v1/kek/\(type.name)" }
    /// HKDF info of a PIN-held item's key.
    public static let pinKeyLabel = "coffer/v1/pin"
    /// HKDF info of the key that seals this device's local state (never synced).
    public static let localStateKeyLabel = "coffer/v1/local"
    /// HKDF info of the key that names local-state rows (HMAC-SHA256 of the logical name).
    public static let localNameKeyLabel = "coffer/v1/local-names"
    /// First field of a local-state box's associated data.
    public static let localAssociatedDataLabel = "coffer/v1/local-box"
    /// First field of every item box's associated data.
    public static let itemAssociatedDataLabel = "coffer/v1/item"
    /// First field of every slot's associated data.
    public static let slotAssociatedDataLabel = "coffer/v1/slot"
    /// First field of a PIN box's associated data.
    public static let pinAssociatedDataLabel = "coffer/v1/pin-box"
    /// First field of an item row's commitment in a vault-state manifest.
    public static let leafLabel = "coffer/v1/leaf"
    /// HKDF info of the key that authenticates vault-state manifests.
    public static let manifestKeyLabel = "coffer/v1/manifest"
    /// HKDF info of the key that seals a prepared rotation's new master key under the current one, and its new
    /// recovery code under the new one (docs/FORMAT.md §8.8).
    public static let rotationKeyLabel = "coffer/v1/rotation"
    /// HKDF info of the key that seals device slots' labels (name, key store, date), and the first field of a
    /// label box's associated data (docs/FORMAT.md §4).
    public static let slotLabelKeyLabel = "coffer/v1/slot-label"

    /// HKDF info of the key that seals card photo parts (docs/FORMAT.md §2, §5b).
    public static let photoKeyLabel = "coffer/v1/photos"
    /// The first field of a photo part box's associated data (docs/FORMAT.md §3).
    public static let photoAssociatedDataLabel = "coffer/v1/photo"

    /// The key that seals every item box of a vault: HKDF-SHA256(ikm: master key, salt: vault id, info: label).
    public static func itemsKey(masterKey: SecretBytes, vaultID: [UInt8]) -> SymmetricKey {
        hkdf(masterKey, salt: vaultID, label: itemsKeyLabel)
    }

    /// HKDF-SHA256 with extract and expand, 32 bytes of output, `label` as info.
    public static func hkdf(_ inputKeyMaterial: SecretBytes, salt: [UInt8], label: String) -> SymmetricKey {
        derive(inputKeyMaterial, salt: salt, info: Array(label.utf8), outputByteCount: 32)
    }

    /// The most HKDF-SHA256 can produce: 255 blocks of 32 bytes (RFC 5869 §2.3).
    public static let hkdfMaximumOutputByteCount = 255 * 32

    /// HKDF-SHA256 (RFC 5869), extract then expand. A length outside 1 … 8160 bytes is refused with an error
    /// rather than reaching swift-crypto, which traps on it.
    public static func hkdf(
        _ inputKeyMaterial: SecretBytes, salt: [UInt8], info: [UInt8], outputByteCount: Int
    ) throws(CofferCryptoError) -> SymmetricKey {
        guard (1...hkdfMaximumOutputByteCount).contains(outputByteCount) else {
            throw .kdfParametersOutOfBounds("HKDF-SHA256 output of \(outputByteCount) bytes (1 to \(hkdfMaximumOutputByteCount))")
        }
        return derive(inputKeyMaterial, salt: salt, info: info, outputByteCount: outputByteCount)
    }

    /// HKDF-SHA256 for the lengths this module fixes itself (16 and 32 bytes), always within range.
    static func derive(_ inputKeyMaterial: SecretBytes, salt: [UInt8], info: [UInt8], outputByteCount: Int) -> SymmetricKey {
        #if canImport(CCryptoBoringSSL)
        // BoringSSL's HKDF (swift-crypto's own), one C call: the generic `HKDF<SHA256>` instantiates its types on
        // first use, which cost `coffer code` about 0.25 ms of its 6.
        var output = [UInt8](repeating: 0, count: outputByteCount)
        defer { output.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        let derived = inputKeyMaterial.withUnsafeBytes { ikm in
            CCryptoBoringSSL_HKDF(
                &output, outputByteCount, CCryptoBoringSSL_EVP_sha256(), ikm.bindMemory(to: UInt8.self).baseAddress, ikm.count, salt,
                salt.count, info, info.count)
        }
        // HKDF fails only for an output longer than 255 blocks, which every caller has ruled out.
        precondition(derived == 1, "HKDF-SHA256 failed")
        return SymmetricKey(data: output)
        #else
        inputKeyMaterial.withUnsafeBytes { ikm in
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: ikm), salt: salt, info: info, outputByteCount: outputByteCount)
        }
        #endif
    }

    /// Unambiguous concatenation used for all associated data: each field as a 4-byte big-endian length followed by
    /// its bytes, the label first.
    public static func associatedData(label: String, fields: [[UInt8]]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(4 + label.utf8.count + fields.reduce(0) { $0 + 4 + $1.count })
        appendField(label.utf8, to: &result)
        for field in fields { appendField(field, to: &result) }
        return result
    }

    private static func appendField<Field: Collection>(_ field: Field, to result: inout [UInt8]) where Field.Element == UInt8 {
        let count = UInt32(field.count)
        result.append(UInt8(truncatingIfNeeded: count >> 24))
        result.append(UInt8(truncatingIfNeeded: count >> 16))
        result.append(UInt8(truncatingIfNeeded: count >> 8))
        result.append(UInt8(truncatingIfNeeded: count))
        result.append(contentsOf: field)
    }

    /// Associated data of a local-state box: vault id, the row's name (the HMAC of its logical name) and the format
    /// version, so a box moved to another row or vault fails to open.
    public static func localAssociatedData(vaultID: [UInt8], rowName: [UInt8], formatVersion: UInt32) -> [UInt8] {
        associatedData(label: localAssociatedDataLabel, fields: [vaultID, rowName, BigEndian.bytes(formatVersion)])
    }

    /// Associated data of an item box: vault id, item id, kind, revision, update time (Unix milliseconds) and box
    /// format version. Everything about an item that is stored in the clear is bound here.
    public static func itemAssociatedData(
        vaultID: [UInt8], itemID: [UInt8], kind: String, revision: UInt64, updatedAt: UInt64, formatVersion: UInt32
    ) -> [UInt8] {
        associatedData(
            label: itemAssociatedDataLabel,
            fields: [
                vaultID, itemID, Array(kind.utf8), BigEndian.bytes(revision), BigEndian.bytes(updatedAt),
                BigEndian.bytes(formatVersion),
            ])
    }

    /// Associated data of a photo part box: vault id, the part's row id, revision, update time (Unix milliseconds)
    /// and box format version (docs/FORMAT.md §3). The card's id and the side are inside the authenticated plaintext.
    public static func photoAssociatedData(
        vaultID: [UInt8], partID: [UInt8], revision: UInt64, updatedAt: UInt64, formatVersion: UInt32
    ) -> [UInt8] {
        associatedData(
            label: photoAssociatedDataLabel,
            fields: [vaultID, partID, BigEndian.bytes(revision), BigEndian.bytes(updatedAt), BigEndian.bytes(formatVersion)])
    }
}
