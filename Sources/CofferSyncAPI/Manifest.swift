import CofferCrypto
import Crypto
import Foundation

/// A vault-state manifest (docs/FORMAT.md §8.6): what a device that pushed says the whole synced item set is, chained
/// to the manifest before it and authenticated with a key derived from the vault's master key. The server stores
/// manifests and hands them out but can neither make nor change one; a device accepts a state only when a manifest it
/// can verify commits to exactly the rows it was given, and only when that manifest extends the newest one it has
/// verified.
///
/// ```
/// manifest = "CFM1" ‖ vault_id (16) ‖ u64 epoch ‖ previous (32) ‖ root (32) ‖ u32 count ‖ device (16)
///            ‖ u64 made_at ‖ u32 key_epoch ‖ account (32) ‖ tag (32)                          = 188 bytes
/// ```
public struct Manifest: Sendable, Equatable {
    /// The first four bytes: format and version.
    public static let magic: [UInt8] = Array("CFM1".utf8)
    /// The length of every version-1 manifest, tag included.
    public static let byteCount = 188
    /// The length of the part the tag authenticates.
    public static let bodyByteCount = byteCount - 32

    public var vaultID: UUID
    /// 1 for the first manifest of a vault's history, one more for each after it.
    public var epoch: Int64
    /// SHA-256 of the previous manifest's bytes (tag included); 32 zero bytes at epoch 1.
    public var previous: [UInt8]
    /// `StateRoot` of the synced item set.
    public var root: [UInt8]
    /// How many rows (live items and tombstones) the set holds.
    public var count: UInt32
    /// The device that made it (its sync link's id).
    public var device: UUID
    /// When it was made, Unix milliseconds, by the device's clock.
    public var madeAt: Int64
    /// The vault's key epoch whose master key authenticates it.
    public var keyEpoch: UInt32
    /// `AccountCommitment` of the account's passphrase slot (its KDF parameters and salt).
    public var account: [UInt8]
    /// HMAC-SHA256 of the body under the manifest key; empty until signed.
    public var tag: [UInt8]

    public init(
        vaultID: UUID, epoch: Int64, previous: [UInt8], root: [UInt8], count: UInt32, device: UUID, madeAt: Int64,
        keyEpoch: UInt32, account: [UInt8], tag: [UInt8] = []
    ) {
        self.vaultID = vaultID
        self.epoch = epoch
        self.previous = previous
        self.root = root
        self.count = count
        self.device = device
        self.madeAt = madeAt
        self.keyEpoch = keyEpoch
        self.account = account
        self.tag = tag
    }

    /// The bytes the tag authenticates.
    public var body: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.byteCount)
        bytes += Self.magic
        bytes += vaultID.bytes
        bytes += Self.bigEndian(UInt64(bitPattern: epoch))
        bytes += previous
        bytes += root
        bytes += Self.bigEndian(count)
        bytes += device.bytes
        bytes += Self.bigEndian(UInt64(bitPattern: madeAt))
        bytes += Self.bigEndian(keyEpoch)
        bytes += account
        return bytes
    }

    /// Body and tag: what is stored and sent.
    public var bytes: [UInt8] { body + tag }

    /// SHA-256 of `bytes`: what the next manifest's `previous` holds, and the head's fingerprint.
    public var hash: [UInt8] { Array(SHA256.hash(data: bytes)) }

    /// Parses a manifest; the tag is not checked here (only the vault's key can check it).
    public init(bytes: [UInt8]) throws(ManifestError) {
        guard bytes.count == Self.byteCount else { throw .malformed("a manifest is \(Self.byteCount) bytes") }
        guard Array(bytes[0..<4]) == Self.magic else { throw .malformed("not a version-1 manifest") }
        var reader = Reader(bytes: bytes, offset: 4)
        vaultID = UUID(bytes: reader.take(16))
        epoch = Int64(bitPattern: reader.uint64())
        previous = reader.take(32)
        root = reader.take(32)
        count = reader.uint32()
        device = UUID(bytes: reader.take(16))
        madeAt = Int64(bitPattern: reader.uint64())
        keyEpoch = reader.uint32()
        account = reader.take(32)
        tag = reader.take(32)
        guard epoch >= 1 else { throw .malformed("a manifest's epoch is at least 1") }
        guard epoch > 1 || previous == Self.noPrevious else { throw .malformed("the first manifest links to nothing") }
    }

    /// `previous` of the first manifest.
    public static let noPrevious = [UInt8](repeating: 0, count: 32)

    /// The manifest as the wire carries it (standard base64).
    public var base64: String { Data(bytes).base64EncodedString() }

    /// Parses a manifest from the wire; the text is capped before decoding.
    public init(base64 text: String) throws(ManifestError) {
        guard text.utf8.count <= (Self.byteCount + 2) / 3 * 4, let data = Data(base64Encoded: text) else {
            throw .malformed("a manifest is \(Self.byteCount) bytes in base64")
        }
        try self.init(bytes: Array(data))
    }

    /// The head's fingerprint as people compare it: the epoch and the first 80 bits of `hash` in Crockford's base32,
    /// `42:7KQ2-M9XD-4F1A-ZT0C`.
    public var fingerprint: String {
        "\(epoch):" + Fingerprint.words(Array(hash.prefix(10)))
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
    private static func bigEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    private struct Reader {
        let bytes: [UInt8]
        var offset: Int

        mutating func take(_ count: Int) -> [UInt8] {
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }

        mutating func uint64() -> UInt64 { take(8).reduce(0) { $0 << 8 | UInt64($1) } }
        mutating func uint32() -> UInt32 { take(4).reduce(0) { $0 << 8 | UInt32($1) } }
    }
}

/// A manifest that cannot be read.
public enum ManifestError: Error, Sendable, Equatable, CustomStringConvertible {
    case malformed(String)

    public var description: String {
        switch self {
        case .malformed(let rule): return "malformed vault-state manifest: \(rule)"
        }
    }
}

/// The commitment of a whole synced item set: SHA-256 over the label and every row's leaf (`ItemRow.leaf`), in the
/// order of the item ids' bytes. Every device holds the whole set, so no membership proofs are needed and a flat
/// hash commits as firmly as a Merkle tree would.
///
/// ```
/// root = SHA-256(u32 len(label) ‖ "coffer/v1/state" ‖ leaf_1 ‖ … ‖ leaf_n)
/// ```
public enum StateRoot {
    public static let label = "coffer/v1/state"

    /// The root of `leaves`, keyed by item id.
    public static func root(_ leaves: [UUID: [UInt8]]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: KeySchedule.associatedData(label: label, fields: []))
        for (_, leaf) in leaves.sorted(by: { $0.key.byteOrder < $1.key.byteOrder }) {
            hasher.update(data: leaf)
        }
        return Array(hasher.finalize())
    }

    /// Rows of these kinds are written by the server itself for CardOnCue's clients (`/v1/cards`), not by a device:
    /// they are outside every manifest's set.
    public static func isServerFace(kind: String) -> Bool { kind.hasPrefix("cardoncue.") }
}

/// The commitment to an account's passphrase slot parameters: SHA-256 of the KDF encoding (docs/FORMAT.md §2) and
/// the salt. A manifest carries it, so a server that serves an older slot (or weaker parameters) is caught.
public enum AccountCommitment {
    public static func of(kdf: PassphraseKDF, salt: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: KeySchedule.associatedData(label: "coffer/v1/account", fields: [kdf.encoded, salt])))
    }
}

/// Short, typeable renderings of hashes.
public enum Fingerprint {
    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// Crockford base32 of `bytes` (a multiple of 5 bytes), in groups of four joined by `-`.
    public static func words(_ bytes: [UInt8]) -> String {
        var characters: [Character] = []
        var buffer: UInt64 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt64(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                characters.append(alphabet[Int((buffer >> UInt64(bits)) & 31)])
            }
        }
        return stride(from: 0, to: characters.count, by: 4)
            .map { String(characters[$0..<min($0 + 4, characters.count)]) }
            .joined(separator: "-")
    }

    /// `text` as `words` writes it: upper case, `O`→`0`, `I`/`L`→`1`, dashes and spaces ignored, for comparing what a
    /// person typed.
    public static func normalised(_ text: String) -> String {
        String(
            text.uppercased().compactMap { character -> Character? in
                switch character {
                case "-", " ": return nil
                case "O": return "0"
                case "I", "L": return "1"
                default: return character
                }
            })
    }
}
