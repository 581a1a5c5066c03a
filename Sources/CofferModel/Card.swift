import CofferBarcode
import CofferCrypto
import Foundation

/// How a card's payload bytes should be read as text (for display and for exports that need text).
public enum PayloadCharset: String, Codable, Sendable, CaseIterable {
    case utf8 = "utf-8"
    case latin1 = "iso-8859-1"
    /// Arbitrary bytes: shown as hex, exported as base64.
    case binary
}

/// A membership or loyalty card, or a one-time pass (CardOnCue's card model). A card without a barcode (many
/// loyalty cards only print a number) has no symbology: it is shown by its name and its payload, the number.
public struct Card: Sendable, Equatable {
    public static let payloadLimit = 4096

    public var name: String
    /// How the payload is drawn; `nil` for a card without a barcode, which is shown by its number instead.
    public var symbology: Symbology?
    /// The exact bytes the barcode carries; for a card without a barcode, the number shown in its place.
    public var payload: [UInt8]
    public var payloadCharset: PayloadCharset
    /// The number printed on the card, when it differs from the payload.
    public var cardNumber: String?
    public var tags: [String]
    /// Store networks (slugs such as `costco`) where the card is used.
    public var networkIDs: [String]
    public var validFrom: Date?
    public var validTo: Date?
    public var oneTime: Bool
    public var usedAt: Date?
    public var archivedAt: Date?
    public var notes: String?
    /// Free key/value pairs (CardOnCue keeps `preferredForNetwork_<id>` and `lastUsedAt_<id>` here).
    public var metadata: [String: String]
    /// The card's photos (at most one per side), in the order front, back. The images live in rows of their own
    /// (`PhotoPart`); the vault writes and removes them with the card, and keeps this list in step.
    public var photos: [CardPhoto] = []

    /// The photo of `side`, if the card has one.
    public func photo(_ side: PhotoSide) -> CardPhoto? { photos.first { $0.side == side } }

    public init(
        name: String, symbology: Symbology?, payload: [UInt8], payloadCharset: PayloadCharset = .utf8,
        cardNumber: String? = nil, tags: [String] = [], networkIDs: [String] = [], validFrom: Date? = nil,
        validTo: Date? = nil, oneTime: Bool = false, usedAt: Date? = nil, archivedAt: Date? = nil,
        notes: String? = nil, metadata: [String: String] = [:]
    ) throws(ModelError) {
        self.name = name
        self.symbology = symbology
        self.payload = payload
        self.payloadCharset = payloadCharset
        self.cardNumber = cardNumber
        self.tags = tags
        self.networkIDs = networkIDs
        self.validFrom = validFrom
        self.validTo = validTo
        self.oneTime = oneTime
        self.usedAt = usedAt
        self.archivedAt = archivedAt
        self.notes = notes
        self.metadata = metadata
        try validate()
    }

    /// Normalises and checks every field.
    public mutating func validate() throws(ModelError) {
        name = try Rules.name(name)
        guard !payload.isEmpty else { throw .emptyField("payload") }
        guard payload.count <= Self.payloadLimit else { throw .tooLong(field: "payload", limit: Self.payloadLimit) }
        switch payloadCharset {
        case .utf8:
            guard String(validating: payload, as: UTF8.self) != nil else {
                throw .invalidField(field: "payload", rule: "is not valid UTF-8 (use the binary charset)")
            }
        case .latin1, .binary: break
        }
        cardNumber = try Rules.optionalText(cardNumber, field: "card number", limit: 200)
        tags = try Rules.labels(tags, field: "tags")
        networkIDs = try Rules.labels(networkIDs, field: "networks", lowercase: true)
        if let validFrom, let validTo, validTo < validFrom {
            throw .invalidField(field: "validity", rule: "valid-to is before valid-from")
        }
        if usedAt != nil && !oneTime { throw .notOneTime }
        notes = try Rules.optionalText(notes, field: "notes", limit: 65_536)
        do {
            _ = try barcode()
        } catch {
            throw .invalidField(field: "payload", rule: "cannot be drawn as \(error.description)")
        }
        guard metadata.count <= 64 else { throw .tooMany(field: "metadata entries", limit: 64) }
        for (key, value) in metadata where key.count > 128 || value.count > 1024 {
            throw .tooLong(field: "metadata", limit: 1024)
        }
        guard Set(photos.map(\.side)).count == photos.count else {
            throw .invalidField(field: "photos", rule: "a card has at most one photo per side")
        }
        for photo in photos { try photo.validate() }
        photos.sort { $0.side.code < $1.side.code }
    }

    /// The card's barcode, encoded from its exact payload bytes, or `nil` for a card without a barcode. Text
    /// payloads are labelled with their charset where the symbology can say it (QR's ECI); binary payloads travel as
    /// bytes.
    public func barcode(options: BarcodeOptions = BarcodeOptions()) throws(BarcodeError) -> EncodedBarcode? {
        guard let symbology else { return nil }
        var options = options
        options.charset = payloadCharset == .utf8 ? .utf8 : .iso8859_1
        return try CofferBarcode.encode(payload, as: symbology, options: options)
    }

    /// The payload as text, per its charset (hex for binary).
    public var payloadText: String {
        switch payloadCharset {
        case .utf8: return String(decoding: payload, as: UTF8.self)
        case .latin1: return String(payload.map { Character(Unicode.Scalar($0)) })
        case .binary: return Hex.encode(payload)
        }
    }

    /// Whether the card should be offered at the till: inside its validity window, and not a used one-time pass.
    public func isValid(at now: Date) -> Bool {
        if let validFrom, now < validFrom { return false }
        if let validTo, now > validTo { return false }
        return !(oneTime && usedAt != nil)
    }

    /// Past its end date, or a used one-time pass.
    public func isExpired(at now: Date) -> Bool {
        if let validTo, validTo < now { return true }
        return oneTime && usedAt != nil
    }

    public var isArchived: Bool { archivedAt != nil }

    /// Whole days from `now` until `validTo` (negative once past), counted in `calendar`'s days.
    public func daysUntilExpiration(at now: Date, calendar: Calendar = .current) -> Int? {
        guard let validTo else { return nil }
        let start = calendar.startOfDay(for: now)
        let end = calendar.startOfDay(for: validTo)
        return calendar.dateComponents([.day], from: start, to: end).day
    }

    /// The status line shown beside a card: "Used", "Expired", "Expires today", "Expires in N days" (within 30
    /// days), "Not valid until YYYY-MM-DD", or nil when there is nothing to say.
    public func validityLabel(at now: Date, calendar: Calendar = .current) -> String? {
        if oneTime && usedAt != nil { return "Used" }
        if let validFrom, now < validFrom {
            return "Not valid until \(Self.dayFormatter(calendar).string(from: validFrom))"
        }
        guard let days = daysUntilExpiration(at: now, calendar: calendar) else { return nil }
        if let validTo, validTo < now { return "Expired" }
        if days <= 0 { return days == 0 ? "Expires today" : "Expired" }
        if days == 1 { return "Expires tomorrow" }
        if days <= 30 { return "Expires in \(days) days" }
        return nil
    }

    /// Marks a one-time pass used.
    public mutating func markUsed(at now: Date) throws(ModelError) {
        guard oneTime else { throw .notOneTime }
        guard usedAt == nil else { throw .alreadyUsed }
        usedAt = now
    }

    static func dayFormatter(_ calendar: Calendar) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.calendar = calendar
        formatter.timeZone = calendar.timeZone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter
    }
}

/// Keys of `Card.metadata` that other apps' cards carry and Coffer keeps for the way back (docs/FORMAT.md §10).
public enum CardMetadata {
    /// The card's colour as `#RRGGBB` (Catima's header colour, Voucher Vault's colour).
    public static let color = "color"
    /// `true` for a card the user starred (Catima).
    public static let starred = "starred"
    /// When the card was last used, in milliseconds since 1970.
    public static let lastUsedAt = "lastUsedAt"

    /// `#RRGGBB` of a signed 32-bit ARGB colour (Android's `int` colours); the alpha is dropped.
    public static func hexColor(argb: Int32) -> String {
        let value = UInt32(bitPattern: argb) & 0xFF_FFFF
        let digits = String(value, radix: 16, uppercase: true)
        return "#" + String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// The opaque signed ARGB colour of `#RRGGBB`, or nil when it is not of that form.
    public static func argb(hexColor: String) -> Int32? {
        guard hexColor.count == 7, hexColor.first == "#", let rgb = UInt32(hexColor.dropFirst(), radix: 16) else { return nil }
        return Int32(bitPattern: 0xFF00_0000 | rgb)
    }
}
