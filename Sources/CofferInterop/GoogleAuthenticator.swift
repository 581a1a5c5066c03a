import CofferCrypto
import CofferModel
import CofferOTP
import Crypto
import Foundation

/// Reads Google Authenticator's "Transfer accounts" export: a text file with one
/// `otpauth-migration://offline?data=…` URI per line, one per QR code of the export.
///
/// `data` is URL-encoded base64 of a protobuf `MigrationPayload` (schema in Aegis' `google_auth.proto`), parsed by
/// hand here. Rules:
/// - a raw `+` inside `data` is base64, not a space (the "plus problem"); a space is read back as `+`;
/// - unspecified algorithm, digits or type mean SHA1, 6 digits and TOTP; TOTP always has a 30-second period
///   (the format has no period field);
/// - an empty issuer with a name `issuer:account` is split; a name that repeats the issuer as `issuer:` prefix
///   loses the prefix;
/// - MD5 tokens, empty secrets and unknown enum values are reported as problems;
/// - unknown protobuf fields are skipped; a damaged payload keeps the entries read before the damage;
/// - every batch `0..<batch_size` of every `batch_id` must be present, else "batch i of n missing".
public enum GoogleAuthenticatorImporter: Importer {
    public static let formatName = "google"

    /// The app's own database (`databases/databases` of `com.google.android.apps.authenticator2`, up to version
    /// 5.10; SQLite): table `accounts` with `email` (the name, `issuer:account` or the account), `issuer`, `secret`
    /// (base32, any case, spaces and dashes allowed), `type` (0 TOTP, 1 HOTP) and `counter`; codes are always HMAC-SHA1,
    /// 6 digits, every 30 seconds. A row marked `isencrypted` (later versions) cannot be read and is reported.
    static func readAppDatabase(_ data: [UInt8]) throws(InteropError) -> ImportResult {
        guard let rows = try SQLiteFile.rows(of: "accounts", requiring: ["email", "secret", "type"], in: data, format: "Google Authenticator")
        else {
            throw .malformedFile("the database is not Google Authenticator's (databases/databases, with its accounts table)")
        }
        guard rows.count <= SQLiteFile.entryLimit else { throw .malformedFile("the database holds more than \(SQLiteFile.entryLimit) accounts") }
        var result = ImportResult()
        for (index, row) in rows.enumerated() {
            let issuer = row.text("issuer"), email = row.text("email")
            let label = OTPImport.splitLabel(issuer: issuer, account: email)
            do throws(ImportEntryError) {
                if let encrypted = row.integer("isencrypted"), encrypted > 0 {
                    throw ImportEntryError("the app encrypted this secret with a key kept in the phone; transfer it by QR code instead")
                }
                let kind: OTPParameters.Kind
                switch row.integer("type") {
                case 0: kind = .totp(period: 30)
                case 1:
                    guard let counter = row.integer("counter"), let value = UInt64(exactly: counter) else {
                        throw ImportEntryError("an HOTP token has no counter")
                    }
                    kind = .hotp(counter: value)
                default: throw ImportEntryError("the token type is not TOTP or HOTP")
                }
                let secret = try MicrosoftAuthenticatorImporter.cleaned(row.text("secret"))
                let parameters = try OTPImport.parameters(secret: secret, algorithm: "SHA1", digits: 6, kind: kind)
                result.items.append(.otp(try OTPImport.item(issuer: issuer, account: email, parameters: parameters, tags: [])))
            } catch {
                result.problems.append(
                    ImportProblem(entry: OTPImport.entryName(issuer: label.issuer, account: label.account, index: index), reason: error.reason))
            }
        }
        return result
    }

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        guard data.count <= importSizeLimit else { throw .tooLarge(limit: importSizeLimit) }
        if SQLiteFile.looksLikeSQLite(data) { return try readAppDatabase(data) }
        let lines = OTPListLines.split(data)
        guard !lines.isEmpty else { throw .malformedFile("no otpauth-migration URI found") }
        var result = ImportResult()
        var batches: [Int32: (size: Int32, seen: Set<Int32>)] = [:]
        var seenPayloads: [BatchKey: [UInt8]] = [:]
        for line in lines {
            let lineName = "line \(line.number)"
            let payloadBytes: [UInt8]
            do {
                payloadBytes = try MigrationURI.payloadBytes(line.text)
            } catch {
                result.problems.append(ImportProblem(entry: lineName, reason: error.reason))
                continue
            }
            var reader = ProtobufReader(payloadBytes)
            let payload = MigrationPayload.parse(&reader)
            if let size = payload.batchSize, size > 1 || payload.batchIndex != nil {
                let index = payload.batchIndex ?? 0
                let key = BatchKey(id: payload.batchID ?? 0, index: index)
                // A QR code scanned twice is the same batch again, not new entries.
                if seenPayloads[key] == payloadBytes { continue }
                seenPayloads[key] = payloadBytes
                var batch = batches[key.id] ?? (size: size, seen: [])
                batch.size = max(batch.size, size)
                batch.seen.insert(index)
                batches[key.id] = batch
            }
            for (position, parameters) in payload.entries.enumerated() {
                switch parameters.item() {
                case .success(let item): result.items.append(.otp(item))
                case .failure(let failure):
                    let name = OTPImportNaming.entryName(
                        issuer: parameters.issuer, account: parameters.name,
                        fallback: "\(lineName), entry \(position + 1)")
                    result.problems.append(ImportProblem(entry: name, reason: failure.text))
                }
            }
            if let damage = payload.damage {
                result.problems.append(
                    ImportProblem(
                        entry: lineName,
                        reason: "the migration data is damaged after \(payload.entries.count) entries: \(damage)"))
            }
        }
        for id in batches.keys.sorted() {
            guard let batch = batches[id] else { continue }
            result.problems += missingBatches(size: batch.size, seen: batch.seen)
        }
        return result
    }

    /// At most ten "batch i of n missing" problems (1-based), then one summary, so a hostile `batch_size` of 2^31
    /// costs nothing.
    private static func missingBatches(size: Int32, seen: Set<Int32>) -> [ImportProblem] {
        guard size > 0 else { return [] }
        let missingCount = Int(size) - seen.filter { (0..<size).contains($0) }.count
        guard missingCount > 0 else { return [] }
        var problems: [ImportProblem] = []
        var index: Int32 = 0
        while index < size, problems.count < min(10, missingCount) {
            if !seen.contains(index) {
                problems.append(ImportProblem(entry: "export", reason: "batch \(index + 1) of \(size) missing"))
            }
            index += 1
        }
        if missingCount > problems.count {
            problems.append(
                ImportProblem(
                    entry: "export", reason: "\(missingCount - problems.count) more batches of \(size) missing"))
        }
        return problems
    }

    private struct BatchKey: Hashable {
        let id: Int32
        let index: Int32
    }
}

/// Writes items as Google Authenticator migration URIs, `batchSize` entries per URI (one QR code each).
public enum GoogleAuthenticatorExporter {
    /// The migration URIs and the items the format cannot hold: Google Authenticator knows only SHA1/SHA256/SHA512,
    /// 6 or 8 digits, 30-second TOTP and HOTP. Steam tokens, other periods and 7-digit codes are left out and listed.
    ///
    /// The `batch_id` is derived from the content, so the same items always give the same URIs. Tags and notes are
    /// not part of the format.
    public static func export(_ items: [OTPItem], batchSize: Int = 10) -> (uris: [String], leftOut: [ExportProblem]) {
        var leftOut: [ExportProblem] = []
        var encoded: [[UInt8]] = []
        for item in items {
            switch MigrationPayload.encode(item) {
            case .success(let bytes): encoded.append(bytes)
            case .failure(let failure): leftOut.append(ExportProblem(entry: item.displayName, reason: failure.text))
            }
        }
        let perBatch = max(1, batchSize)
        let chunks = stride(from: 0, to: encoded.count, by: perBatch).map {
            Array(encoded[$0..<min($0 + perBatch, encoded.count)])
        }
        let digest = SHA256.hash(data: encoded.flatMap { $0 })
        let batchID = Int32(bitPattern: digest.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        var uris: [String] = []
        for (index, chunk) in chunks.enumerated() {
            var writer = ProtobufWriter()
            for entry in chunk { writer.bytes(field: 1, entry) }
            writer.varint(field: 2, 1)
            writer.varint(field: 3, UInt64(chunks.count))
            writer.varint(field: 4, UInt64(index))
            writer.varint(field: 5, UInt64(bitPattern: Int64(batchID)))
            uris.append(MigrationURI.make(writer.output))
        }
        return (uris, leftOut)
    }
}

// MARK: - URI

private enum MigrationURI {
    struct Failure: Error {
        let reason: String
    }

    static let prefix = "otpauth-migration://offline"

    /// The decoded `data` parameter of one migration URI.
    static func payloadBytes(_ uri: String) throws(Failure) -> [UInt8] {
        guard uri.lowercased().hasPrefix("otpauth-migration://") else {
            throw Failure(reason: "not an otpauth-migration URI")
        }
        guard let questionMark = uri.firstIndex(of: "?") else { throw Failure(reason: "the URI has no data parameter") }
        var value: Substring?
        for field in uri[uri.index(after: questionMark)...].split(separator: "&") {
            guard field.lowercased().hasPrefix("data=") else { continue }
            guard value == nil else { throw Failure(reason: "the data parameter appears more than once") }
            value = field.dropFirst(5)
        }
        guard let value, !value.isEmpty else { throw Failure(reason: "the URI has no data parameter") }
        // Percent-decoding only: a raw '+' is a base64 digit, and a space is a '+' that something form-decoded.
        guard let text = value.removingPercentEncoding else {
            throw Failure(reason: "the data parameter has a bad percent escape")
        }
        var base64 = String(text.map { $0 == " " ? "+" : $0 })
        base64 = base64.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.utf8.count % 4 != 0 { base64 += "=" }
        guard let bytes = Data(base64Encoded: base64) else {
            throw Failure(reason: "the data parameter is not valid base64")
        }
        return Array(bytes)
    }

    static func make(_ payload: [UInt8]) -> String {
        let base64 = Data(payload).base64EncodedString()
        var escaped = ""
        for character in base64 {
            switch character {
            case "+": escaped += "%2B"
            case "/": escaped += "%2F"
            case "=": escaped += "%3D"
            default: escaped.append(character)
            }
        }
        return prefix + "?data=" + escaped
    }
}

// MARK: - Protobuf

/// A bounds-checked reader of the protobuf wire format (only what MigrationPayload needs).
private struct ProtobufReader {
    enum Failure: Error, CustomStringConvertible {
        case truncated
        case overlongVarint
        case badWireType
        case badFieldNumber

        var description: String {
            switch self {
            case .truncated: "the protobuf data ends inside a field"
            case .overlongVarint: "a protobuf varint is longer than 10 bytes"
            case .badWireType: "a protobuf field has an unsupported wire type"
            case .badFieldNumber: "a protobuf field number is 0"
            }
        }
    }

    enum Value {
        case varint(UInt64)
        case bytes(ArraySlice<UInt8>)
        case other
    }

    private let bytes: ArraySlice<UInt8>
    private var position: Int

    init(_ bytes: some Collection<UInt8>) {
        self.bytes = ArraySlice(bytes)
        position = self.bytes.startIndex
    }

    var isAtEnd: Bool { position >= bytes.endIndex }

    mutating func varint() throws(Failure) -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: UInt64(0), to: 70, by: 7) {
            guard position < bytes.endIndex else { throw .truncated }
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
        }
        throw .overlongVarint
    }

    /// The next field's number and value; groups are refused, fixed-width values are skipped.
    mutating func field() throws(Failure) -> (number: UInt64, value: Value) {
        let key = try varint()
        let number = key >> 3
        guard number > 0 else { throw .badFieldNumber }
        switch key & 7 {
        case 0: return (number, .varint(try varint()))
        case 1: try skip(8)
        case 2:
            let length = try varint()
            guard length <= UInt64(bytes.endIndex - position) else { throw .truncated }
            let start = position
            position += Int(length)
            return (number, .bytes(bytes[start..<position]))
        case 5: try skip(4)
        default: throw .badWireType
        }
        return (number, .other)
    }

    private mutating func skip(_ count: Int) throws(Failure) {
        guard bytes.endIndex - position >= count else { throw .truncated }
        position += count
    }
}

private struct ProtobufWriter {
    private(set) var output: [UInt8] = []

    mutating func rawVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            output.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        output.append(UInt8(value))
    }

    mutating func varint(field: UInt64, _ value: UInt64) {
        rawVarint(field << 3)
        rawVarint(value)
    }

    mutating func bytes(field: UInt64, _ value: some Collection<UInt8>) {
        rawVarint(field << 3 | 2)
        rawVarint(UInt64(value.count))
        output += value
    }
}

// MARK: - MigrationPayload

private struct MigrationPayload {
    var entries: [OTPEntry] = []
    var batchSize: Int32?
    var batchIndex: Int32?
    var batchID: Int32?
    /// Why reading stopped early, if it did.
    var damage: String?

    /// One `OtpParameters` message; enum values are kept raw so unknown ones can be reported.
    struct OTPEntry {
        var secret: [UInt8] = []
        var name = ""
        var issuer = ""
        var algorithm: UInt64 = 0
        var digits: UInt64 = 0
        var type: UInt64 = 0
        var counter: UInt64 = 0
        var damage: String?

        static func parse(_ bytes: ArraySlice<UInt8>) -> OTPEntry {
            var entry = OTPEntry()
            var reader = ProtobufReader(bytes)
            do {
                while !reader.isAtEnd {
                    let (number, value) = try reader.field()
                    switch (number, value) {
                    case (1, .bytes(let data)): entry.secret = Array(data)
                    case (2, .bytes(let data)): entry.name = String(decoding: data, as: UTF8.self)
                    case (3, .bytes(let data)): entry.issuer = String(decoding: data, as: UTF8.self)
                    case (4, .varint(let raw)): entry.algorithm = raw
                    case (5, .varint(let raw)): entry.digits = raw
                    case (6, .varint(let raw)): entry.type = raw
                    case (7, .varint(let raw)): entry.counter = raw
                    default: continue
                    }
                }
            } catch {
                entry.damage = error.description
            }
            return entry
        }

        /// The item, or why there is none. Reasons never include the secret.
        func item() -> Result<OTPItem, ImportProblemReason> {
            if let damage { return .failure(ImportProblemReason(damage)) }
            guard !secret.isEmpty else { return .failure("the secret is empty") }
            let algorithm: OTPAlgorithm
            switch self.algorithm {
            case 0, 1: algorithm = .sha1
            case 2: algorithm = .sha256
            case 3: algorithm = .sha512
            case 4: return .failure("MD5 tokens are not supported")
            default: return .failure("unknown algorithm \(self.algorithm)")
            }
            let digits: Int
            switch self.digits {
            case 0, 1: digits = 6
            case 2: digits = 8
            default: return .failure("unknown digit count \(self.digits)")
            }
            let kind: OTPParameters.Kind
            switch type {
            case 0, 2: kind = .totp(period: 30)
            case 1:
                guard Int64(bitPattern: counter) >= 0 else { return .failure("the HOTP counter is negative") }
                kind = .hotp(counter: counter)
            default: return .failure("unknown OTP type \(type)")
            }
            let (issuer, account) = names()
            do {
                let parameters = try OTPParameters(secret: secret, algorithm: algorithm, digits: digits, kind: kind)
                return .success(try OTPImportNaming.item(issuer: issuer, account: account, parameters: parameters))
            } catch let error as OTPError {
                return .failure(ImportProblemReason(error.description))
            } catch {
                return .failure(ImportProblemReason(String(describing: error)))
            }
        }

        private func names() -> (issuer: String, account: String) {
            let issuer = issuer.trimmingWhitespace()
            let parts = name.split(separator: ":", omittingEmptySubsequences: false)
            if issuer.isEmpty, parts.count == 2 {
                return (String(parts[0]), String(parts[1]))
            }
            if !issuer.isEmpty, parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == issuer {
                return (issuer, String(parts[1]))
            }
            return (issuer, name)
        }
    }

    static func parse(_ reader: inout ProtobufReader) -> MigrationPayload {
        var payload = MigrationPayload()
        do {
            while !reader.isAtEnd {
                let (number, value) = try reader.field()
                switch (number, value) {
                case (1, .bytes(let data)): payload.entries.append(OTPEntry.parse(data))
                // int32 fields: negative values arrive sign-extended to 64 bits (10-byte varints).
                case (3, .varint(let raw)): payload.batchSize = Int32(truncatingIfNeeded: raw)
                case (4, .varint(let raw)): payload.batchIndex = Int32(truncatingIfNeeded: raw)
                case (5, .varint(let raw)): payload.batchID = Int32(truncatingIfNeeded: raw)
                default: continue
                }
            }
        } catch {
            payload.damage = error.description
        }
        return payload
    }

    /// One `OtpParameters` message for `item`, or why the format cannot hold it.
    static func encode(_ item: OTPItem) -> Result<[UInt8], ImportProblemReason> {
        let parameters = item.parameters
        var writer = ProtobufWriter()
        writer.bytes(field: 1, parameters.secret)
        writer.bytes(field: 2, Array(item.account.utf8))
        writer.bytes(field: 3, Array(item.issuer.utf8))
        let algorithm: UInt64 =
            switch parameters.algorithm {
            case .sha1: 1
            case .sha256: 2
            case .sha512: 3
            }
        writer.varint(field: 4, algorithm)
        switch parameters.digits {
        case 6: writer.varint(field: 5, 1)
        case 8: writer.varint(field: 5, 2)
        default: return .failure("Google Authenticator shows only 6 or 8 digits")
        }
        switch parameters.kind {
        case .totp(let period):
            guard period == 30 else { return .failure("Google Authenticator supports only 30-second periods") }
            writer.varint(field: 6, 2)
        case .hotp(let counter):
            guard counter <= UInt64(Int64.max) else { return .failure("the HOTP counter is too large for the format") }
            writer.varint(field: 6, 1)
            writer.varint(field: 7, counter)
        case .steam:
            return .failure("Steam tokens are not supported by Google Authenticator")
        }
        return .success(writer.output)
    }
}

/// A problem's reason as an `Error`, so it can travel in a `Result`.
private struct ImportProblemReason: Error, ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
    let text: String

    init(_ text: String) { self.text = text }
    init(stringLiteral value: String) { text = value }
}
