import CofferCrypto
import CofferBarcode
import CofferModel
import CofferOTP
import Foundation

/// Reads Coffer's own plaintext export (`coffer export --format json --plaintext`, docs/FORMAT.md §7: `format`
/// `"coffer-export"`, `version` 1) back into items.
///
/// The reading is strict, because the file is Coffer's own: every key the exporter writes must be there with its
/// JSON type, and a key it never writes is refused (a newer writer's field would otherwise be dropped silently).
/// Optional fields may be left out or `null`. A broken file structure or another `format` or `version` stops the
/// import; a broken entry is reported and the others are imported. Tokens take their secret and code parameters
/// from `uri` and their issuer and account from the entry's own fields.
///
/// Signing keys are listed as not imported: the export carries only their public key. Ids and creation times are
/// checked but not kept (imported items are new items of this vault).
public enum CofferJSONImporter: Importer {
    public static let formatName = "coffer-json"

    /// The `format` value the exporter writes.
    public static let formatTag = "coffer-export"

    /// The export versions this importer reads.
    public static let supportedVersions = 1...1

    /// Why a signing key is listed as not imported.
    public static let signingKeyReason = "not imported: a signing key's seed never leaves its PIN box"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        guard data.count <= importSizeLimit else { throw .tooLarge(limit: importSizeLimit) }
        guard let root = JSONValue.parse(data) else { throw .malformedFile("not valid JSON (truncated or damaged)") }
        guard case .object(let top) = root else { throw .malformedFile("the export is not a JSON object") }
        guard case .string(let format)? = top["format"], format == formatTag else {
            throw .malformedFile("\"format\" is not \"\(formatTag)\"")
        }
        guard let versionValue = top["version"] else { throw .malformedFile("\"version\" is missing") }
        let whole: Int
        switch versionValue {
        case .integer, .unsignedInteger:
            guard let value = versionValue.intValue else { throw .unsupportedVersion("beyond \(Int.max)") }
            whole = value
        case .fraction(let value):
            guard let value = Int(exactly: value) else { throw .malformedFile("\"version\" is not a whole number") }
            whole = value
        default:
            throw .malformedFile("\"version\" is not a number")
        }
        guard supportedVersions.contains(whole) else { throw .unsupportedVersion(String(whole)) }
        let sections = ["cards", "otp", "credentials", "signing_keys", "notes"]
        if let unknown = top.keys.sorted().first(where: { !(["format", "version", "user"] + sections).contains($0) }) {
            throw .malformedFile("the export has an unknown key \(JSONValue.quotedKey(unknown))")
        }
        try checkUser(top["user"])
        var lists: [String: [JSONValue]] = [:]
        for section in sections {
            guard let value = top[section] else { throw .malformedFile("\"\(section)\" is missing") }
            guard case .array(let entries) = value else { throw .malformedFile("\"\(section)\" is not a list") }
            lists[section] = entries
        }

        var result = ImportResult()
        read(lists["cards"] ?? [], kind: "card", into: &result, photos: cardPhotos) { entry throws(EntryFailure) in
            .card(try card(entry))
        }
        read(lists["otp"] ?? [], kind: "token", into: &result) { entry throws(EntryFailure) in .otp(try token(entry)) }
        read(lists["credentials"] ?? [], kind: "credential", into: &result) { entry throws(EntryFailure) in
            .credential(try credential(entry))
        }
        read(lists["signing_keys"] ?? [], kind: "signing key", into: &result) { entry throws(EntryFailure) in
            try checkSigningKey(entry)
            throw EntryFailure(signingKeyReason)
        }
        read(lists["notes"] ?? [], kind: "note", into: &result) { entry throws(EntryFailure) in .note(try note(entry)) }
        return result
    }

    // MARK: Structure

    /// A reason an entry was not imported (never a value from it).
    struct EntryFailure: Error {
        let reason: String

        init(_ reason: String) {
            self.reason = reason
        }
    }

    /// Reads one section's entries, each into an item (with its photos, for cards) or a problem naming the entry.
    private static func read(
        _ entries: [JSONValue], kind: String, into result: inout ImportResult,
        photos: (Entry) throws(EntryFailure) -> [PhotoSide: Data] = { _ in [:] },
        _ convert: (Entry) throws(EntryFailure) -> ItemContent
    ) {
        for (position, value) in entries.enumerated() {
            let fallback = "\(kind) \(position + 1)"
            guard case .object(let object) = value else {
                result.problems.append(ImportProblem(entry: fallback, reason: "not a JSON object"))
                continue
            }
            let entry = Entry(object)
            do {
                let content = try convert(entry)
                let images = try photos(entry)
                if !images.isEmpty { result.photos[result.items.count] = images }
                result.items.append(content)
            } catch {
                result.problems.append(ImportProblem(entry: entry.label(kind: kind, fallback: fallback), reason: error.reason))
            }
        }
    }

    private static func checkUser(_ value: JSONValue?) throws(InteropError) {
        guard case .object(let object)? = value else { throw .malformedFile("\"user\" is missing or not an object") }
        let user = Entry(object)
        do {
            try user.allowOnly(["id", "email", "created_at"])
            _ = try user.id()
            _ = try user.optionalString("email")
            _ = try user.date("created_at")
        } catch {
            throw .malformedFile("user: \(error.reason)")
        }
    }

    // MARK: Kinds

    private static func card(_ entry: Entry) throws(EntryFailure) -> Card {
        try entry.allowOnly([
            "id", "name", "barcode_type", "payload", "payload_encoding", "card_number", "tags", "network_ids",
            "valid_from", "valid_to", "one_time", "used_at", "archived_at", "metadata", "notes", "created_at",
            "updated_at", "photos",
        ])
        try entry.bookkeeping()
        _ = try entry.date("updated_at")
        // Left out (or null) for a card without a barcode.
        let symbology = try entry.optionalString("barcode_type").map { type throws(EntryFailure) in
            guard let symbology = Symbology(rawValue: type) else { throw EntryFailure("barcode_type is not a known symbology") }
            return symbology
        }
        let text = try entry.string("payload")
        let payload: [UInt8]
        let charset: PayloadCharset
        switch try entry.string("payload_encoding") {
        case PayloadCharset.utf8.rawValue:
            (payload, charset) = (Array(text.utf8), .utf8)
        case PayloadCharset.latin1.rawValue:
            guard text.unicodeScalars.allSatisfy({ $0.value <= 0xFF }) else {
                throw EntryFailure("an iso-8859-1 payload has characters outside ISO 8859-1")
            }
            (payload, charset) = (text.unicodeScalars.map { UInt8($0.value) }, .latin1)
        case "base64":
            guard text.utf8.count <= (Card.payloadLimit + 2) / 3 * 4, let bytes = Data(base64Encoded: text) else {
                throw EntryFailure("a base64 payload is not base64 of at most \(Card.payloadLimit) bytes")
            }
            (payload, charset) = (Array(bytes), .binary)
        default:
            throw EntryFailure("payload_encoding is not utf-8, iso-8859-1 or base64")
        }
        let name = try entry.string("name")
        let cardNumber = try entry.optionalString("card_number")
        let tags = try entry.strings("tags")
        let networkIDs = try entry.strings("network_ids")
        let validFrom = try entry.optionalDate("valid_from")
        let validTo = try entry.optionalDate("valid_to")
        let oneTime = try entry.bool("one_time")
        let usedAt = try entry.optionalDate("used_at")
        let archivedAt = try entry.optionalDate("archived_at")
        let notes = try entry.optionalString("notes")
        let metadata = try entry.stringMap("metadata")
        return try model { () throws(ModelError) in
            try Card(
                name: name, symbology: symbology, payload: payload, payloadCharset: charset, cardNumber: cardNumber,
                tags: tags, networkIDs: networkIDs, validFrom: validFrom, validTo: validTo, oneTime: oneTime,
                usedAt: usedAt, archivedAt: archivedAt, notes: notes, metadata: metadata)
        }
    }

    /// A card's `photos` (since format 1.4): each `{"side", "type", "data"}`, the data base64 of a PNG or JPEG of at
    /// most 2 MiB whose first bytes are of `type`; one that is not breaks the entry.
    private static func cardPhotos(_ entry: Entry) throws(EntryFailure) -> [PhotoSide: Data] {
        guard let value = entry.object["photos"], value != .null else { return [:] }
        guard case .array(let list) = value else { throw EntryFailure("photos is not a list") }
        var images: [PhotoSide: Data] = [:]
        for element in list {
            guard case .object(let object) = element else { throw EntryFailure("a photo is not a JSON object") }
            let photo = Entry(object)
            try photo.allowOnly(["side", "type", "data"])
            guard let side = PhotoSide(rawValue: try photo.string("side")), images[side] == nil else {
                throw EntryFailure("a photo's side is not front or back, or is given twice")
            }
            let text = try photo.string("data")
            guard text.utf8.count <= (CardPhoto.maximumBytes + 2) / 3 * 4, let data = Data(base64Encoded: text) else {
                throw EntryFailure("a photo's data is not base64 of at most 2 MiB")
            }
            let type: PhotoType
            do {
                type = try CardPhoto.checkedType(of: data)
            } catch {
                throw EntryFailure(error.description)
            }
            guard try photo.string("type") == type.rawValue else { throw EntryFailure("a photo's type is not that of its data") }
            images[side] = data
        }
        return images
    }

    private static func token(_ entry: Entry) throws(EntryFailure) -> OTPItem {
        try entry.allowOnly(["id", "issuer", "account", "uri", "tags", "notes", "created_at"])
        try entry.bookkeeping()
        let uri = try entry.string("uri")
        let parsed: OTPToken
        do {
            parsed = try OTPToken(uri: uri)
        } catch {
            throw EntryFailure("uri: \(error.description)")
        }
        let issuer = try entry.string("issuer")
        let account = try entry.string("account")
        let tags = try entry.strings("tags")
        let notes = try entry.optionalString("notes")
        return try model { () throws(ModelError) in
            let item = try OTPItem(issuer: issuer, account: account, parameters: parsed.parameters, tags: tags, notes: notes)
            // What the exporter writes always fits its URI; an account with a colon never came from it.
            _ = try item.token()
            return item
        }
    }

    private static func credential(_ entry: Entry) throws(EntryFailure) -> Credential {
        try entry.allowOnly(["id", "name", "provider", "value", "tags", "notes", "username", "url", "created_at"])
        try entry.bookkeeping()
        let name = try entry.string("name")
        let provider = try entry.optionalString("provider")
        let value = try entry.string("value")
        let tags = try entry.strings("tags")
        let notes = try entry.optionalString("notes")
        let username = try entry.optionalString("username")
        let url = try entry.optionalString("url")
        return try model { () throws(ModelError) in
            try Credential(name: name, provider: provider, value: value, tags: tags, notes: notes, username: username, url: url)
        }
    }

    private static func checkSigningKey(_ entry: Entry) throws(EntryFailure) {
        try entry.allowOnly(["id", "name", "algorithm", "flavor", "public_key"])
        _ = try entry.id()
        _ = try entry.string("name")
        guard try entry.string("algorithm") == "ed25519" else { throw EntryFailure("algorithm is not ed25519") }
        guard SigningKey.Flavor(rawValue: try entry.string("flavor")) != nil else {
            throw EntryFailure("flavor is not a known signing key flavor")
        }
        _ = try entry.string("public_key")
    }

    private static func note(_ entry: Entry) throws(EntryFailure) -> Note {
        try entry.allowOnly(["id", "name", "template", "fields", "text", "tags", "created_at"])
        try entry.bookkeeping()
        guard let template = Note.Template(rawValue: try entry.string("template")) else {
            throw EntryFailure("template is not free, contact or kyc")
        }
        guard case .array(let values)? = entry.object["fields"] else { throw EntryFailure("fields is missing or not a list") }
        var fields: [Note.Field] = []
        for value in values {
            guard case .object(let object) = value else { throw EntryFailure("a field is not an object") }
            let field = Entry(object)
            do {
                try field.allowOnly(["label", "value"])
                fields.append(Note.Field(label: try field.string("label"), value: try field.string("value")))
            } catch {
                throw EntryFailure("a field: \(error.reason)")
            }
        }
        let name = try entry.string("name")
        let text = try entry.optionalString("text")
        let tags = try entry.strings("tags")
        return try model { () throws(ModelError) in
            try Note(name: name, template: template, fields: fields, text: text, tags: tags)
        }
    }

    /// Runs a model initialiser, turning its rule into the entry's reason.
    private static func model<Content>(_ make: () throws(ModelError) -> Content) throws(EntryFailure) -> Content {
        do {
            return try make()
        } catch {
            throw EntryFailure(error.description)
        }
    }
}

/// One JSON object of the export, read field by field; failures name the key and the rule, never the value.
private struct Entry {
    let object: [String: JSONValue]

    init(_ object: [String: JSONValue]) {
        self.object = object
    }

    typealias Failure = CofferJSONImporter.EntryFailure

    /// How a problem names the entry: its name (tokens: issuer and account), else its place in the list.
    func label(kind: String, fallback: String) -> String {
        if case .string(let issuer)? = object["issuer"], case .string(let account)? = object["account"] {
            return OTPImportNaming.entryName(issuer: issuer, account: account, fallback: fallback)
        }
        if case .string(let name)? = object["name"], !name.trimmingWhitespace().isEmpty {
            return name
        }
        return fallback
    }

    func allowOnly(_ keys: Set<String>) throws(Failure) {
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            throw Failure("unknown field \(JSONValue.quotedKey(unknown))")
        }
    }

    /// The `id` and `created_at` every item entry carries.
    func bookkeeping() throws(Failure) {
        _ = try id()
        _ = try date("created_at")
    }

    func id() throws(Failure) -> UUID {
        guard let id = UUID(uuidString: try string("id")) else { throw Failure("id is not a UUID") }
        return id
    }

    func string(_ key: String) throws(Failure) -> String {
        guard let text = try optionalString(key) else { throw Failure("\(key) is missing") }
        return text
    }

    func optionalString(_ key: String) throws(Failure) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw Failure("\(key) is not a string")
        }
    }

    func bool(_ key: String) throws(Failure) -> Bool {
        switch object[key] {
        case nil: throw Failure("\(key) is missing")
        case .bool(let flag)?: return flag
        default: throw Failure("\(key) is not true or false")
        }
    }

    func strings(_ key: String) throws(Failure) -> [String] {
        guard case .array(let values)? = object[key] else { throw Failure("\(key) is missing or not a list") }
        var result: [String] = []
        for value in values {
            guard case .string(let text) = value else { throw Failure("\(key) holds something other than strings") }
            result.append(text)
        }
        return result
    }

    func stringMap(_ key: String) throws(Failure) -> [String: String] {
        guard case .object(let values)? = object[key] else { throw Failure("\(key) is missing or not an object") }
        var result: [String: String] = [:]
        for (name, value) in values {
            guard case .string(let text) = value else { throw Failure("\(key) holds something other than strings") }
            result[name] = text
        }
        return result
    }

    func date(_ key: String) throws(Failure) -> Date {
        guard let date = try optionalDate(key) else { throw Failure("\(key) is missing") }
        return date
    }

    /// An ISO 8601 time as the exporter writes it (`2026-01-31T12:00:00Z`), fractional seconds allowed.
    func optionalDate(_ key: String) throws(Failure) -> Date? {
        guard let text = try optionalString(key) else { return nil }
        guard text.utf8.count <= 40,
            let date = (try? Date.ISO8601FormatStyle().parse(text))
                ?? (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
        else {
            throw Failure("\(key) is not an ISO 8601 time")
        }
        return date
    }
}
