import CofferBarcode
import CofferCrypto
import CofferOTP
import Foundation

/// Writes the tag–length–value fields of item content (docs/FORMAT.md §5): each field is a one-byte tag, its
/// length as an unsigned LEB128 varint, then its bytes.
struct FieldWriter {
    private(set) var bytes: [UInt8] = []

    init(version: UInt8? = nil) {
        bytes.reserveCapacity(256)
        if let version { bytes.append(version) }
    }

    mutating func bytes(_ tag: UInt8, _ value: some Collection<UInt8>) {
        bytes.append(tag)
        var length = UInt64(value.count)
        repeat {
            let low = UInt8(length & 0x7F)
            length >>= 7
            bytes.append(length == 0 ? low : low | 0x80)
        } while length != 0
        bytes.append(contentsOf: value)
    }

    mutating func string(_ tag: UInt8, _ value: String) { bytes(tag, value.utf8) }

    mutating func string(_ tag: UInt8, _ value: String?) {
        if let value { string(tag, value) }
    }

    mutating func strings(_ tag: UInt8, _ values: [String]) {
        for value in values { string(tag, value) }
    }

    mutating func integer(_ tag: UInt8, _ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes(tag, $0) }
    }

    mutating func date(_ tag: UInt8, _ value: Date?) {
        if let value { integer(tag, UInt64(bitPattern: UnixTime.milliseconds(value))) }
    }

    mutating func flag(_ tag: UInt8, _ value: Bool) {
        if value { bytes(tag, [1]) }
    }

    /// A nested group of fields (map entries, note fields).
    mutating func group(_ tag: UInt8, _ build: (inout FieldWriter) -> Void) {
        var nested = FieldWriter()
        build(&nested)
        bytes(tag, nested.bytes)
    }
}

/// Reads tag–length–value fields. Unknown tags are skipped, so a later version may add fields; a field that
/// runs past the end, or a length that does not fit, is malformed.
struct FieldReader {
    private var fields: [(tag: UInt8, value: ArraySlice<UInt8>)] = []

    init(_ bytes: ArraySlice<UInt8>) throws(ModelError) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let tag = bytes[index]
            index += 1
            var length: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard index < bytes.endIndex, shift < 63 else { throw .malformedContent("truncated field length") }
                let byte = bytes[index]
                index += 1
                length |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { break }
                shift += 7
            }
            guard length <= UInt64(bytes.endIndex - index) else { throw .malformedContent("field runs past the end") }
            let end = index + Int(length)
            fields.append((tag, bytes[index..<end]))
            index = end
        }
    }

    /// Every value of `tag`, in order.
    func all(_ tag: UInt8) -> [ArraySlice<UInt8>] {
        fields.compactMap { $0.tag == tag ? $0.value : nil }
    }

    /// The last value of `tag`.
    func value(_ tag: UInt8) -> ArraySlice<UInt8>? {
        fields.last { $0.tag == tag }?.value
    }

    func bytes(_ tag: UInt8, _ name: String) throws(ModelError) -> [UInt8] {
        guard let value = value(tag) else { throw .malformedContent("missing \(name)") }
        return Array(value)
    }

    func string(_ tag: UInt8, _ name: String) throws(ModelError) -> String {
        guard let value = try optionalString(tag, name) else { throw .malformedContent("missing \(name)") }
        return value
    }

    func optionalString(_ tag: UInt8, _ name: String) throws(ModelError) -> String? {
        guard let value = value(tag) else { return nil }
        guard let text = Self.text(value) else { throw .malformedContent("\(name) is not UTF-8") }
        return text
    }

    func strings(_ tag: UInt8, _ name: String) throws(ModelError) -> [String] {
        try all(tag).map { value throws(ModelError) in
            guard let text = Self.text(value) else { throw .malformedContent("\(name) is not UTF-8") }
            return text
        }
    }

    /// `bytes` as text if they are valid UTF-8. Through a buffer pointer, so the validation is the standard
    /// library's specialised one: on an array slice it ran generically, looking up type metadata for every field of
    /// every item a listing decodes.
    static func text(_ bytes: ArraySlice<UInt8>) -> String? {
        bytes.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) }
    }

    func optionalInteger(_ tag: UInt8, _ name: String) throws(ModelError) -> UInt64? {
        guard let value = value(tag) else { return nil }
        guard value.count == 8 else { throw .malformedContent("\(name) is not a 64-bit integer") }
        return value.reduce(0) { $0 << 8 | UInt64($1) }
    }

    func integer(_ tag: UInt8, _ name: String) throws(ModelError) -> UInt64 {
        guard let value = try optionalInteger(tag, name) else { throw .malformedContent("missing \(name)") }
        return value
    }

    func int(_ tag: UInt8, _ name: String) throws(ModelError) -> Int {
        guard let value = Int(exactly: try integer(tag, name)) else { throw .malformedContent("\(name) is out of range") }
        return value
    }

    func date(_ tag: UInt8, _ name: String) throws(ModelError) -> Date? {
        try optionalInteger(tag, name).map { UnixTime.date(milliseconds: Int64(bitPattern: $0)) }
    }

    func flag(_ tag: UInt8) -> Bool {
        value(tag) == [1]
    }

    /// Nested groups of `tag`, each read as its own fields.
    func groups(_ tag: UInt8) throws(ModelError) -> [FieldReader] {
        try all(tag).map { value throws(ModelError) in try FieldReader(value) }
    }

    func raw<Value: RawRepresentable>(_ tag: UInt8, _ name: String, as type: Value.Type) throws(ModelError) -> Value
    where Value.RawValue == String {
        guard let value = try optionalRaw(tag, name, as: type) else { throw .malformedContent("missing \(name)") }
        return value
    }

    func optionalRaw<Value: RawRepresentable>(_ tag: UInt8, _ name: String, as type: Value.Type) throws(ModelError) -> Value?
    where Value.RawValue == String {
        guard let text = try optionalString(tag, name) else { return nil }
        guard let value = Value(rawValue: text) else { throw .malformedContent("unknown \(name)") }
        return value
    }
}

// Field tags per kind (docs/FORMAT.md §5). Tag 1 is the creation time in every kind; kind fields start at 16.

extension Card {
    func write(to fields: inout FieldWriter) {
        fields.string(16, name)
        fields.string(17, symbology?.rawValue)
        fields.bytes(18, payload)
        fields.string(19, payloadCharset.rawValue)
        fields.string(20, cardNumber)
        fields.strings(21, tags)
        fields.strings(22, networkIDs)
        fields.date(23, validFrom)
        fields.date(24, validTo)
        fields.flag(25, oneTime)
        fields.date(26, usedAt)
        fields.date(27, archivedAt)
        fields.string(28, notes)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            fields.group(29) { entry in
                entry.string(1, key)
                entry.string(2, value)
            }
        }
        for photo in photos {
            fields.group(30) { entry in
                entry.string(1, photo.side.rawValue)
                entry.string(2, photo.type.rawValue)
                entry.integer(3, UInt64(photo.size))
                entry.bytes(4, photo.digest)
                for part in photo.parts { entry.bytes(5, part.bytes) }
            }
        }
    }

    init(fields: FieldReader) throws(ModelError) {
        self.photos = try fields.groups(30).map { entry throws(ModelError) in
            let parts = try entry.all(5).map { id throws(ModelError) in
                guard id.count == 16 else { throw .malformedContent("a photo part id is not 16 bytes") }
                return UUID(bytes: Array(id))
            }
            return CardPhoto(
                side: try entry.raw(1, "photo side", as: PhotoSide.self), type: try entry.raw(2, "photo type", as: PhotoType.self),
                size: try entry.int(3, "photo size"), digest: try entry.bytes(4, "photo digest"), parts: parts)
        }
        var metadata: [String: String] = [:]
        for entry in try fields.groups(29) {
            metadata[try entry.string(1, "metadata key")] = try entry.string(2, "metadata value")
        }
        self.name = try fields.string(16, "name")
        self.symbology = try fields.optionalRaw(17, "symbology", as: Symbology.self)
        self.payload = try fields.bytes(18, "payload")
        self.payloadCharset = try fields.raw(19, "payload charset", as: PayloadCharset.self)
        self.cardNumber = try fields.optionalString(20, "card number")
        self.tags = try fields.strings(21, "tag")
        self.networkIDs = try fields.strings(22, "network")
        self.validFrom = try fields.date(23, "valid-from")
        self.validTo = try fields.date(24, "valid-to")
        self.oneTime = fields.flag(25)
        self.usedAt = try fields.date(26, "used-at")
        self.archivedAt = try fields.date(27, "archived-at")
        self.notes = try fields.optionalString(28, "notes")
        self.metadata = metadata
    }
}

extension OTPItem {
    func write(to fields: inout FieldWriter) {
        // Left out for a token without an issuer (since 1.11).
        fields.string(16, issuer.isEmpty ? nil : issuer)
        fields.string(17, account)
        switch parameters.kind {
        case .totp(let period):
            fields.string(18, "totp")
            fields.integer(22, UInt64(period))
        case .hotp(let counter):
            fields.string(18, "hotp")
            fields.integer(23, counter)
        case .steam:
            fields.string(18, "steam")
        }
        fields.bytes(19, parameters.secret)
        fields.string(20, parameters.algorithm.name)
        fields.integer(21, UInt64(parameters.digits))
        fields.strings(24, tags)
        fields.string(25, notes)
    }

    init(fields: FieldReader) throws(ModelError) {
        guard let algorithm = OTPAlgorithm(name: try fields.string(20, "algorithm")) else {
            throw .malformedContent("unknown OTP algorithm")
        }
        let kind: OTPParameters.Kind
        switch try fields.string(18, "OTP type") {
        case "totp": kind = .totp(period: try fields.int(22, "period"))
        case "hotp": kind = .hotp(counter: try fields.integer(23, "counter"))
        case "steam": kind = .steam
        default: throw .malformedContent("unknown OTP type")
        }
        let secret = try fields.bytes(19, "secret")
        let digits = try fields.int(21, "digits")
        do {
            parameters = try OTPParameters(secret: secret, algorithm: algorithm, digits: digits, kind: kind)
        } catch {
            throw .malformedContent("OTP parameters: \(error.description)")
        }
        issuer = try fields.optionalString(16, "issuer") ?? ""
        account = try fields.string(17, "account")
        tags = try fields.strings(24, "tag")
        notes = try fields.optionalString(25, "notes")
    }
}

extension Credential {
    func write(to fields: inout FieldWriter) {
        fields.string(16, name)
        fields.string(17, provider)
        fields.string(18, value)
        fields.strings(19, tags)
        fields.string(20, notes)
        fields.string(21, username)
        fields.string(22, url)
    }

    init(fields: FieldReader) throws(ModelError) {
        name = try fields.string(16, "name")
        provider = try fields.optionalString(17, "provider")
        value = try fields.string(18, "value")
        tags = try fields.strings(19, "tag")
        notes = try fields.optionalString(20, "notes")
        username = try fields.optionalString(21, "username")
        url = try fields.optionalString(22, "url")
    }
}

extension SigningKey {
    func write(to fields: inout FieldWriter) {
        fields.string(16, name)
        fields.string(17, flavor.rawValue)
        fields.bytes(18, publicKey)
        fields.bytes(19, pinSalt)
        fields.bytes(20, pinBox)
        fields.bytes(21, boundVaultID)
        fields.bytes(22, deviceSecretID)
        fields.integer(23, UInt64(failedAttempts))
        fields.strings(24, tags)
        fields.string(25, notes)
    }

    init(fields: FieldReader) throws(ModelError) {
        try self.init(
            name: try fields.string(16, "name"), flavor: try fields.raw(17, "flavor", as: Flavor.self),
            publicKey: try fields.bytes(18, "public key"), pinSalt: try fields.bytes(19, "PIN salt"),
            pinBox: try fields.bytes(20, "PIN box"), boundVaultID: try fields.bytes(21, "bound vault id"),
            deviceSecretID: try fields.bytes(22, "device secret id"),
            failedAttempts: try fields.int(23, "failed attempts"), tags: try fields.strings(24, "tag"),
            notes: try fields.optionalString(25, "notes"))
    }
}

extension Note {
    func write(to fields: inout FieldWriter) {
        fields.string(16, name)
        fields.string(17, template.rawValue)
        for field in self.fields {
            fields.group(18) { entry in
                entry.string(1, field.label)
                entry.string(2, field.value)
            }
        }
        fields.string(19, text)
        fields.strings(20, tags)
    }

    init(fields: FieldReader) throws(ModelError) {
        name = try fields.string(16, "name")
        template = try fields.raw(17, "template", as: Template.self)
        self.fields = try fields.groups(18).map { entry throws(ModelError) in
            Field(label: try entry.string(1, "field label"), value: try entry.string(2, "field value"))
        }
        text = try fields.optionalString(19, "text")
        tags = try fields.strings(20, "tag")
    }
}
