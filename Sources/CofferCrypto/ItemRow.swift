import Crypto
import Foundation

/// One item row exactly as it is stored in a vault, sent over the wire and kept by a server: the box and the fields
/// stored beside it in the clear, every one of which the box's associated data binds (docs/FORMAT.md §3, §4). The
/// vault, the sync wire and the server store all carry this one type, so a field can never be copied wrongly between
/// them.
public struct ItemRow: Sendable, Hashable {
    public var id: UUID
    /// The item's kind as text (`card`, `otp`, … or a kind a newer version or another client wrote).
    public var kind: String
    /// At least 1; one more on every write.
    public var revision: Int64
    /// Unix milliseconds (`UnixTime`), bound into the box's associated data.
    public var updatedAt: Int64
    /// A tombstone: the item was deleted and `box` is nil.
    public var deleted: Bool
    /// The sealed content; nil exactly when `deleted`.
    public var box: Data?

    public init(id: UUID, kind: String, revision: Int64, updatedAt: Int64, deleted: Bool, box: Data?) {
        self.id = id
        self.kind = kind
        self.revision = revision
        self.updatedAt = updatedAt
        self.deleted = deleted
        self.box = box
    }

    /// The rules every stored row keeps: revision at least 1, a time that is not negative, a box exactly when live.
    public var isWellFormed: Bool {
        revision >= 1 && updatedAt >= 0 && deleted == (box == nil)
    }

    /// The associated data the box was sealed with (docs/FORMAT.md §3); meaningful only for a well-formed row.
    public func associatedData(vaultID: [UInt8], formatVersion: UInt32) -> [UInt8] {
        KeySchedule.itemAssociatedData(
            vaultID: vaultID, itemID: id.bytes, kind: kind, revision: UInt64(max(revision, 0)),
            updatedAt: UInt64(max(updatedAt, 0)), formatVersion: formatVersion)
    }

    /// The row's commitment in a vault-state manifest (docs/FORMAT.md §8.6): SHA-256 over every field, so a changed
    /// revision, time, kind, box or deletion changes it.
    ///
    /// ```
    /// leaf = SHA-256(AD("coffer/v1/leaf", id, kind, u64 revision, u64 updated_at, u8 deleted, box or empty))
    /// ```
    public var leaf: [UInt8] {
        // The fields before the box are encoded in one buffer and the box is hashed where it lies: a pull or a push
        // computes 10,000 leaves, and copying every box into the encoding cost more than hashing it.
        var head = KeySchedule.associatedData(
            label: KeySchedule.leafLabel,
            fields: [
                id.bytes, Array(kind.utf8), BigEndian.bytes(UInt64(bitPattern: revision)),
                BigEndian.bytes(UInt64(bitPattern: updatedAt)), [deleted ? 1 : 0],
            ])
        head += BigEndian.bytes(UInt32(box?.count ?? 0))
        var hasher = SHA256()
        hasher.update(data: head)
        if let box { hasher.update(data: box) }
        return Array(hasher.finalize())
    }
}

/// The one conversion between dates and the Unix milliseconds that rows, boxes and the wire carry. Milliseconds
/// are rounded down, so a date converted twice gives the same number.
public enum UnixTime {
    /// Whole Unix milliseconds of `date`, rounded down; a date beyond what 64 bits of milliseconds hold (only a
    /// hostile file makes one) gives the nearest end of the range instead of trapping.
    public static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        if let exact = Int64(exactly: value) { return exact }
        return value.isNaN ? 0 : value < 0 ? .min : .max
    }

    /// The date `milliseconds` after the Unix epoch.
    public static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Whole Unix seconds of `date`, rounded down, with the same clamping as ``milliseconds(_:)``.
    public static func seconds(_ date: Date) -> Int64 {
        let value = date.timeIntervalSince1970.rounded(.down)
        if let exact = Int64(exactly: value) { return exact }
        return value.isNaN ? 0 : value < 0 ? .min : .max
    }

    /// The date `seconds` after the Unix epoch.
    public static func date(seconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(seconds))
    }
}
