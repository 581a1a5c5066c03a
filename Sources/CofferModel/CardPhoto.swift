import CofferCrypto
import Foundation

/// Which face of a card a photo shows.
public enum PhotoSide: String, Sendable, CaseIterable, Codable {
    case front
    case back

    /// The side's byte in a photo part (docs/FORMAT.md §5b).
    var code: UInt8 {
        switch self {
        case .front: return 1
        case .back: return 2
        }
    }

    init?(code: UInt8) {
        switch code {
        case 1: self = .front
        case 2: self = .back
        default: return nil
        }
    }
}

/// The image formats a card photo may have, told apart by their first bytes (never by a file name).
public enum PhotoType: String, Sendable, CaseIterable, Codable {
    case png = "image/png"
    case jpeg = "image/jpeg"

    /// The usual file name extension.
    public var fileExtension: String {
        switch self {
        case .png: return "png"
        case .jpeg: return "jpg"
        }
    }

    /// The format whose signature `bytes` start with: PNG's eight-byte signature (`89 50 4E 47 0D 0A 1A 0A`) or a
    /// JPEG start-of-image marker followed by another marker (`FF D8 FF`); nil for anything else.
    public static func detect(_ bytes: some Collection<UInt8>) -> PhotoType? {
        let head = Array(bytes.prefix(8))
        if head == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] { return .png }
        if head.count >= 3, head[0] == 0xFF, head[1] == 0xD8, head[2] == 0xFF { return .jpeg }
        return nil
    }
}

/// A card's record of one of its photos, kept in the card's own box (docs/FORMAT.md §5, tag 30): what `show` needs
/// to say which photos a card has without opening them, and the ids of the rows that hold the image.
///
/// The image itself lives in photo part rows (`PhotoPart`), apart from the card, so listing and lookups never read
/// it; each part is at most `PhotoPart.maximumBytes` of the image, so that every box fits the sync wire's box limit.
public struct CardPhoto: Sendable, Equatable {
    /// The largest image kept: 2 MiB. A card photo is taken to be read by a person at a till or a desk, not printed:
    /// a 12-megapixel phone JPEG at normal quality, or Catima's own downscaled PNGs, fit with room; larger images are
    /// refused rather than resampled (Coffer has no image codec), and the user can shrink them. It also bounds what
    /// one card adds to every sync of a new device (two sides: 4 MiB, 70 parts).
    public static let maximumBytes = 2 * 1024 * 1024

    public var side: PhotoSide
    public var type: PhotoType
    /// The image's length in bytes.
    public var size: Int
    /// SHA-256 of the image: a reader checks the parts it joined against it.
    public var digest: [UInt8]
    /// The rows holding the image, in order.
    public var parts: [UUID]

    public init(side: PhotoSide, type: PhotoType, size: Int, digest: [UInt8], parts: [UUID]) {
        self.side = side
        self.type = type
        self.size = size
        self.digest = digest
        self.parts = parts
    }

    /// Checks an image before it is stored: PNG or JPEG by its first bytes, 1 byte to `maximumBytes`.
    public static func checkedType(of image: some Collection<UInt8>) throws(ModelError) -> PhotoType {
        guard !image.isEmpty else { throw .emptyField("photo") }
        guard image.count <= maximumBytes else {
            throw .invalidField(field: "photo", rule: "is larger than 2 MiB (\(image.count) bytes); shrink it first")
        }
        guard let type = PhotoType.detect(image) else { throw .invalidField(field: "photo", rule: "is not a PNG or JPEG image") }
        return type
    }

    /// The number of parts an image of `size` bytes is cut into.
    public static func partCount(size: Int) -> Int { (size + PhotoPart.maximumBytes - 1) / PhotoPart.maximumBytes }

    /// The rules a stored record keeps (checked when a card is sealed).
    func validate() throws(ModelError) {
        guard (1...Self.maximumBytes).contains(size), digest.count == 32, parts.count == Self.partCount(size: size),
            Set(parts).count == parts.count
        else { throw .invalidField(field: "photo", rule: "its record is inconsistent") }
    }
}

/// One part of a card photo: the plaintext of a photo box (docs/FORMAT.md §5b).
///
/// ```
/// part = u8 version (1) ‖ card id (16) ‖ u8 side (1 front, 2 back) ‖ u16 index ‖ u16 count ‖ image bytes
/// ```
///
/// The card's id, the side and the part's place are inside the authenticated plaintext, and every reader checks them
/// against the card that names the part: a part cannot be shown for another card, another side or another place.
public struct PhotoPart: Sendable, Equatable {
    /// The kind of a photo part's row (the `kind` column, in the clear like every row's kind).
    public static let kind = "card_photo"
    /// Image bytes per part: 60 KiB, so that a part's box (plus its 22-byte header and the box's 28 bytes) stays
    /// under the sync wire's 64 KiB box limit.
    public static let maximumBytes = 60 * 1024
    static let version: UInt8 = 1
    static let headerLength = 22

    public var cardID: UUID
    public var side: PhotoSide
    public var index: Int
    public var count: Int
    public var bytes: [UInt8]

    public init(cardID: UUID, side: PhotoSide, index: Int, count: Int, bytes: [UInt8]) {
        self.cardID = cardID
        self.side = side
        self.index = index
        self.count = count
        self.bytes = bytes
    }

    /// The plaintext to seal.
    public var encoded: [UInt8] {
        var out: [UInt8] = [Self.version]
        out.reserveCapacity(Self.headerLength + bytes.count)
        out += cardID.bytes
        out.append(side.code)
        for value in [UInt16(clamping: index), UInt16(clamping: count)] { out += [UInt8(value >> 8), UInt8(value & 0xFF)] }
        out += bytes
        return out
    }

    /// Parses an opened photo box: the header's version, side and place, and a body of 1 to `maximumBytes` bytes.
    public init(decoding plaintext: some Collection<UInt8>) throws(ModelError) {
        let bytes = Array(plaintext)
        guard bytes.count > Self.headerLength else { throw .malformedContent("photo part too short") }
        guard bytes[0] == Self.version else {
            throw bytes[0] > Self.version ? .unsupportedContentVersion(Int(bytes[0])) : .malformedContent("photo part version")
        }
        guard let side = PhotoSide(code: bytes[17]) else { throw .malformedContent("unknown photo side") }
        let index = Int(bytes[18]) << 8 | Int(bytes[19])
        let count = Int(bytes[20]) << 8 | Int(bytes[21])
        guard index < count, bytes.count - Self.headerLength <= Self.maximumBytes else {
            throw .malformedContent("photo part out of range")
        }
        self.init(
            cardID: UUID(bytes: Array(bytes[1..<17])), side: side, index: index, count: count,
            bytes: Array(bytes[Self.headerLength...]))
    }

    /// Cuts `image` into the parts of `card`'s photo of `side`.
    public static func split(_ image: [UInt8], cardID: UUID, side: PhotoSide) -> [PhotoPart] {
        let count = CardPhoto.partCount(size: image.count)
        return (0..<count).map { index in
            let start = index * maximumBytes
            return PhotoPart(
                cardID: cardID, side: side, index: index, count: count,
                bytes: Array(image[start..<min(start + maximumBytes, image.count)]))
        }
    }
}
