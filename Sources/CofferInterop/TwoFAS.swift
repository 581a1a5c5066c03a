import CofferCrypto
import CofferModel
import CofferOTP
import Crypto
import CryptoExtras
import Foundation

/// Reads 2FAS Authenticator backups (`.2fas`, schema versions 1 to 4), plaintext or password-encrypted.
///
/// The file is a JSON object. `groups` (`[{id, name}]`) is always in the clear; the tokens are either in
/// `services` or, in an encrypted backup, in `servicesEncrypted`: three base64 parts joined by `:`, namely the
/// AES-256-GCM ciphertext with its 16-byte tag appended, the PBKDF2 salt and the 12-byte IV. The key is
/// PBKDF2-HMAC-SHA256 of the password's UTF-8 bytes, 10,000 iterations, 32 bytes (2fas-android `BackupCipherImpl`).
///
/// Each service gives `otp.issuer` (or the service `name`) as issuer, `otp.account` (or the part of `otp.label`
/// after its last colon) as account, `tokenType` TOTP, HOTP or STEAM, and its group's name as a tag.
public enum TwoFASImporter: Importer {
    public static let formatName = "2fas"

    /// 2FAS's fixed iteration count; the file does not carry one, so there is nothing hostile to bound.
    static let iterations = FuzzingFloor.iterations(10_000)
    /// The newest schema this importer has been written against.
    static let supportedSchemas = 1...4

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        guard let document = JSONValue.parse(data), case .object = document else {
            throw .malformedFile("a 2FAS backup is a JSON object")
        }
        guard let schema = document["schemaVersion"] else { throw .malformedFile("schemaVersion is missing") }
        guard let version = schema.intValue else { throw .malformedFile("schemaVersion is not a whole number") }
        guard supportedSchemas.contains(version) else { throw .unsupportedVersion("2FAS schema \(version)") }

        let groupNames = groupNames(document["groups"])
        let services: [JSONValue]
        if let encrypted = document["servicesEncrypted"], encrypted != .null, encrypted.stringValue != "" {
            guard let text = encrypted.stringValue else { throw .malformedFile("servicesEncrypted is not a string") }
            guard let password else { throw .passwordRequired }
            services = try decryptServices(text, password: password)
        } else {
            guard let list = document["services"]?.arrayValue else {
                throw .malformedFile("services is missing or not an array")
            }
            services = list
        }

        var result = ImportResult()
        for (index, service) in services.enumerated() {
            do {
                result.items.append(.otp(try item(service, groupNames: groupNames)))
            } catch {
                result.problems.append(
                    ImportProblem(entry: entryName(service, index: index), reason: error.reason))
            }
        }
        return result
    }

    private static func decryptServices(_ text: String, password: String) throws(InteropError) -> [JSONValue] {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformedFile("servicesEncrypted does not have three parts") }
        guard let sealed = Data(base64Encoded: String(parts[0])), let salt = Data(base64Encoded: String(parts[1])),
            let nonce = Data(base64Encoded: String(parts[2]))
        else { throw .malformedFile("servicesEncrypted is not base64") }
        guard sealed.count >= OTPImport.gcmTagByteCount else {
            throw .malformedFile("servicesEncrypted is shorter than its authentication tag")
        }
        guard nonce.count == OTPImport.gcmNonceByteCount else {
            throw .malformedFile("the IV is not \(OTPImport.gcmNonceByteCount) bytes")
        }
        guard (1...1024).contains(salt.count) else { throw .malformedFile("the salt is empty or over 1 KiB") }

        let key = try OTPImport.pbkdf2(password, salt: Array(salt), hash: .sha256, iterations: iterations)
        guard let plaintext = OTPImport.openAESGCM(Array(sealed), key: key, nonce: Array(nonce)) else {
            throw .wrongPassword
        }
        guard let services = JSONValue.parse(plaintext)?.arrayValue else {
            throw .malformedFile("the decrypted services are not a JSON array")
        }
        return services
    }

    private static func groupNames(_ groups: JSONValue?) -> [String: String] {
        var names: [String: String] = [:]
        // Groups only add tags: an unreadable group costs its tag, never the import.
        for group in groups?.arrayValue ?? [] {
            if let id = group["id"]?.stringValue, let name = group["name"]?.stringValue {
                names[id] = name
            }
        }
        return names
    }

    private static func item(_ service: JSONValue, groupNames: [String: String]) throws(ImportEntryError) -> OTPItem {
        guard case .object = service else { throw ImportEntryError("the entry is not a JSON object") }
        let name = try service.string("name")
        guard let secret = try service.string("secret") else { throw ImportEntryError("the secret is missing") }
        let otp = service["otp"] ?? .object([:])
        guard case .object = otp else { throw ImportEntryError("otp is not a JSON object") }

        let algorithm = try otp.string("algorithm")
        let digits = try otp.int("digits")
        let kind = try OTPImport.kind(type: try otp.string("tokenType"), in: otp)
        let parameters = try OTPImport.parameters(secret: secret, algorithm: algorithm, digits: digits, kind: kind)

        var account = try otp.string("account")
        if OTPImport.nonEmpty(account) == nil, let label = try otp.string("label") {
            account = OTPImport.accountPart(ofLabel: label)
        }
        let groupID = try service.string("groupId")
        let tags = groupID.flatMap { groupNames[$0] }.map { [$0] } ?? []
        let issuer = try otp.string("issuer")
        return try OTPImport.item(
            issuer: OTPImport.nonEmpty(issuer) ?? name, account: account, parameters: parameters, tags: tags)
    }

    private static func entryName(_ service: JSONValue, index: Int) -> String {
        OTPImport.entryName(
            issuer: service["otp"]?["issuer"]?.stringValue ?? service["name"]?.stringValue,
            account: service["otp"]?["account"]?.stringValue, index: index)
    }
}

// MARK: - Shared by the importers in this module

/// Why one entry of a file could not be imported. The reason names the rule, never the value.
struct ImportEntryError: Error {
    let reason: String

    init(_ reason: String) {
        self.reason = reason
    }
}

/// Conversions every OTP importer here shares: secrets, parameters, names, tags and the AES-GCM opening.
enum OTPImport {
    /// The token kind named `type` (TOTP when absent, case-insensitive), with its `period` or `counter` read
    /// from `json`.
    static func kind(type: String?, in json: JSONValue) throws(ImportEntryError) -> OTPParameters.Kind {
        switch type?.uppercased() ?? "TOTP" {
        case "TOTP":
            return .totp(period: try json.int("period") ?? OTPParameters.defaultPeriod)
        case "HOTP":
            guard let counter = try json.uint64("counter") else { throw ImportEntryError("an HOTP token has no counter") }
            return .hotp(counter: counter)
        case "STEAM":
            return .steam
        default:
            throw ImportEntryError("the token type is not TOTP, HOTP or STEAM")
        }
    }

    static let gcmNonceByteCount = 12
    static let gcmTagByteCount = 16
    /// The bound every importer applies to an iteration count read from a file (Aegis uses the same cap).
    static let pbkdf2IterationRange = 1...(FuzzingFloor.active ? 16 : 10_000_000)

    static func checkSize(_ data: [UInt8]) throws(InteropError) {
        guard data.count <= importSizeLimit else { throw .tooLarge(limit: importSizeLimit) }
    }

    /// Validated parameters from a base32 secret and optional algorithm name and digits. Steam ignores the
    /// stored algorithm and digits: they are fixed, and apps write varying placeholders there.
    static func parameters(
        secret: String, algorithm: String?, digits: Int?, kind: OTPParameters.Kind
    ) throws(ImportEntryError) -> OTPParameters {
        let bytes: [UInt8]
        do {
            bytes = try Base32.decode(secret)
        } catch {
            throw ImportEntryError(error.description)
        }
        guard !bytes.isEmpty else { throw ImportEntryError("the secret is empty") }
        var hash = OTPAlgorithm.sha1
        var digits = digits
        if kind == .steam {
            digits = nil
        } else if let algorithm {
            guard let named = OTPAlgorithm(name: algorithm) else {
                throw ImportEntryError("the algorithm is not SHA1, SHA256 or SHA512")
            }
            hash = named
        }
        do {
            return try OTPParameters(secret: bytes, algorithm: hash, digits: digits, kind: kind)
        } catch {
            throw ImportEntryError(error.description)
        }
    }

    /// An item named as the entry names it: a missing issuer stays missing (the account is the token's name), and a
    /// missing account is filled from the issuer, as Coffer requires one. An account holding a whole label
    /// (`Issuer:account`) is split first (``splitLabel(issuer:account:)``).
    static func item(
        issuer: String?, account: String?, parameters: OTPParameters, tags: [String]
    ) throws(ImportEntryError) -> OTPItem {
        let (issuer, account) = splitLabel(issuer: issuer, account: account)
        guard let accountText = nonEmpty(account) ?? nonEmpty(issuer) else {
            throw ImportEntryError("the entry has neither an issuer nor an account name")
        }
        do {
            return try OTPItem(
                issuer: nonEmpty(issuer) ?? "", account: accountText, parameters: parameters,
                tags: usableTags(tags))
        } catch {
            throw ImportEntryError(error.description)
        }
    }

    /// Tags Coffer can store (1–64 characters, no control characters, at most 50); the rest are dropped so a
    /// decorative label never costs the token.
    static func usableTags(_ tags: [String]) -> [String] {
        let usable = tags.map { $0.trimmingWhitespace() }.filter { tag in
            (1...64).contains(tag.count)
                && !tag.unicodeScalars.contains { $0.properties.generalCategory == .control }
        }
        return Array(usable.prefix(50))
    }

    /// An account that holds a whole `otpauth://` label ("Airbnb:Elijah", as older andOTP versions kept it) split by
    /// the Key URI rules (``OTPToken/splitLabel(_:)``): at the last colon, into the issuer prefix and the account. The
    /// split is made when the entry names no issuer (the prefix becomes it) or names the prefix as its issuer; an
    /// account whose prefix is not the entry's issuer ("carol:admin" at "Big Corp") is kept whole rather than cut,
    /// and an export lists it. An entry with an issuer but no account has its one name read as a label, since it
    /// would otherwise become the account too.
    static func splitLabel(issuer: String?, account: String?) -> (issuer: String?, account: String?) {
        guard let account = nonEmpty(account) else {
            guard let issuer = nonEmpty(issuer), issuer.unicodeScalars.contains(":") else { return (nonEmpty(issuer), nil) }
            let label = OTPToken.splitLabel(issuer)
            return (label.issuer ?? nonEmpty(label.account), nonEmpty(label.account))
        }
        guard account.unicodeScalars.contains(":") else { return (nonEmpty(issuer), account) }
        let label = OTPToken.splitLabel(account)
        guard let issuer = nonEmpty(issuer) else { return (label.issuer, nonEmpty(label.account)) }
        guard label.issuer?.caseInsensitiveCompare(issuer) == .orderedSame else { return (issuer, account) }
        return (issuer, nonEmpty(label.account))
    }

    static func nonEmpty(_ text: String?) -> String? {
        guard let trimmed = text?.trimmingWhitespace(), !trimmed.isEmpty else {
            return nil
        }
        return trimmed
    }

    /// The account of an `Issuer:account` label: the text after the last colon, or the whole label.
    static func accountPart(ofLabel label: String) -> String {
        guard let colon = label.lastIndex(of: ":") else { return label }
        return String(label[label.index(after: colon)...])
    }

    /// How a problem names its entry: "issuer (account)", either alone, or its position in the file.
    static func entryName(issuer: String?, account: String?, index: Int) -> String {
        switch (nonEmpty(issuer), nonEmpty(account)) {
        case (let issuer?, let account?): "\(issuer) (\(account))"
        case (let issuer?, nil): issuer
        case (nil, let account?): account
        case (nil, nil): "entry \(index + 1)"
        }
    }

    /// PBKDF2 over the password's UTF-8 bytes as the other apps feed it (no normalisation: a different byte
    /// sequence would be a different password to them). Callers have bounded `iterations`.
    static func pbkdf2(
        _ password: String, salt: [UInt8], hash: PBKDF2.Hash, iterations: Int
    ) throws(InteropError) -> SecretBytes {
        do {
            return try PBKDF2.derive(
                SecretBytes(password.utf8), salt: salt, hash: hash, iterations: iterations, outputByteCount: 32)
        } catch {
            throw .kdfParametersOutOfBounds("PBKDF2 could not run with the file's parameters")
        }
    }

    /// Whether a box that did not open was sealed under the key tried after all: its first block, deciphered without
    /// the tag or padding check, is the start of JSON text (`[` or `{`, then printable ASCII). Such a box is damaged or
    /// cut short, and saying "wrong password" would send the user after the wrong cause; under a wrong key, 16 bytes
    /// come out like that about once in 10⁸ tries.
    static func startsLikeJSON(_ firstBlock: [UInt8]?) -> Bool {
        guard let firstBlock, firstBlock.count == 16,
            let first = firstBlock.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }),
            first == UInt8(ascii: "[") || first == UInt8(ascii: "{")
        else { return false }
        return firstBlock.allSatisfy { (0x20...0x7E).contains($0) || [0x09, 0x0A, 0x0D].contains($0) }
    }

    /// The first plaintext block of AES-GCM `ciphertext` under `key` and a 12-byte `nonce`, without checking the tag
    /// (GCM is counter mode: the first block's counter is the nonce and 2).
    static func gcmFirstBlock(_ ciphertext: some Collection<UInt8>, key: SecretBytes, nonce: [UInt8]) -> [UInt8]? {
        guard nonce.count == gcmNonceByteCount, ciphertext.count >= 16 else { return nil }
        var stream = nonce + [0, 0, 0, 2]
        guard (try? key.withUnsafeBytes { try AES.permute(&stream, key: SymmetricKey(data: $0)) }) != nil else { return nil }
        return zip(ciphertext.prefix(16), stream).map { $0 ^ $1 }
    }

    /// The first plaintext block of AES-CBC `ciphertext` under `key` and `iv`, without the padding check.
    static func cbcFirstBlock(_ ciphertext: some Collection<UInt8>, key: SecretBytes, iv: [UInt8]) -> [UInt8]? {
        guard iv.count == 16, ciphertext.count >= 16 else { return nil }
        var block = Array(ciphertext.prefix(16))
        guard (try? key.withUnsafeBytes { try AES.inversePermute(&block, key: SymmetricKey(data: $0)) }) != nil else { return nil }
        return zip(block, iv).map { $0 ^ $1 }
    }

    /// The error for a box that `key` did not open: damage when its start deciphers as JSON, else a wrong password.
    static let damagedBackup = InteropError.malformedFile(
        "the backup is damaged or cut short: the password opens its start, but the rest does not check out")

    /// Opens AES-256-GCM `ciphertext || tag` with `associatedData` (none by default); `nil` when authentication
    /// fails.
    static func openAESGCM(_ sealed: [UInt8], key: SecretBytes, nonce: [UInt8], associatedData: [UInt8] = []) -> [UInt8]? {
        guard sealed.count >= gcmTagByteCount, nonce.count == gcmNonceByteCount else { return nil }
        let split = sealed.count - gcmTagByteCount
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce), ciphertext: sealed[..<split], tag: sealed[split...])
            let symmetricKey = key.withUnsafeBytes { SymmetricKey(data: $0) }
            return Array(try AES.GCM.open(box, using: symmetricKey, authenticating: associatedData))
        } catch {
            return nil
        }
    }
}
