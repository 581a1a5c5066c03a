import CofferCrypto
import CofferModel
import CofferOTP
import Foundation

/// Reads Proton Authenticator's JSON export, plain or password-protected.
///
/// The plain file is `{"version": 1, "entries": [...]}`; each entry is `{"id", "content": {"uri", "entry_type",
/// "name"}, "note"}`. `content.uri` is an `otpauth://totp/…` URI, or `steam://SECRET` for a Steam entry; `name` is
/// the name the user sees, used when the URI carries no issuer or account. `note` becomes the item's notes.
///
/// The password-protected file (proton-pass-common's `export_entries_with_password`) is `{"version": 1, "salt",
/// "content"}`, both standard base64: the key is Argon2id (version 0x13, 19,456 KiB, 2 passes, 1 lane, 32 bytes) of
/// the password's UTF-8 bytes and the 16-byte salt; `content` is a 12-byte nonce, then AES-256-GCM ciphertext and
/// tag with associated data `proton.authenticator.export.v1`, of the plain file. The cost is fixed by the format,
/// not read from the file.
public enum ProtonAuthenticatorImporter: Importer {
    public static let formatName = "proton"

    /// Argon2id's cost in every password-protected export.
    static let encryptedParameters = FuzzingFloor.argon2(Argon2.Parameters(iterations: 2, memoryKiB: 19 * 1024, lanes: 1))
    static let encryptedAssociatedData = Array("proton.authenticator.export.v1".utf8)
    static let encryptedSaltByteCount = 16

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        guard let document = JSONValue.parse(data), case .object = document else {
            throw .malformedFile("a Proton Authenticator export is a JSON object")
        }
        if document["entries"] == nil, document["salt"] != nil || document["content"] != nil {
            guard let password else { throw .passwordRequired }
            let plain = try decrypt(document, password: password)
            guard let inner = JSONValue.parse(plain), case .object = inner, inner["entries"]?.arrayValue != nil else {
                throw .malformedFile("the decrypted export is not a Proton Authenticator export")
            }
            return try read(plain, password: nil)
        }
        guard let entries = document["entries"]?.arrayValue else {
            throw .malformedFile("entries is missing or not an array")
        }
        var result = ImportResult()
        for (index, entry) in entries.enumerated() {
            do {
                result.items.append(.otp(try item(entry)))
            } catch {
                let name = OTPImport.entryName(issuer: entry["content"]?["name"]?.stringValue, account: nil, index: index)
                result.problems.append(ImportProblem(entry: name, reason: error.reason))
            }
        }
        return result
    }

    /// The plain export inside a password-protected one.
    private static func decrypt(_ document: JSONValue, password: String) throws(InteropError) -> [UInt8] {
        guard document["version"]?.intValue == 1 else {
            throw .unsupportedVersion(document["version"]?.intValue.map(String.init) ?? "(missing)")
        }
        guard let saltText = document["salt"]?.stringValue, let salt = Data(base64Encoded: saltText),
            salt.count == encryptedSaltByteCount
        else {
            throw .malformedFile("salt is not base64 of \(encryptedSaltByteCount) bytes")
        }
        let nonceCount = OTPImport.gcmNonceByteCount
        guard let contentText = document["content"]?.stringValue, let content = Data(base64Encoded: contentText),
            content.count >= nonceCount + OTPImport.gcmTagByteCount
        else {
            throw .malformedFile("content is not base64 of a nonce, ciphertext and tag")
        }
        let key: SecretBytes
        do {
            key = try Argon2.derive(SecretBytes(password.utf8), salt: Array(salt), parameters: encryptedParameters)
        } catch {
            throw .kdfParametersOutOfBounds("Argon2id could not run (\(error.description))")
        }
        let bytes = Array(content)
        guard
            let plain = OTPImport.openAESGCM(
                Array(bytes[nonceCount...]), key: key, nonce: Array(bytes[..<nonceCount]), associatedData: encryptedAssociatedData)
        else {
            throw .wrongPassword
        }
        return plain
    }

    private static func item(_ entry: JSONValue) throws(ImportEntryError) -> OTPItem {
        guard case .object = entry else { throw ImportEntryError("the entry is not a JSON object") }
        guard let content = entry["content"], case .object = content else {
            throw ImportEntryError("content is missing or not a JSON object")
        }
        guard let uri = try content.string("uri") else { throw ImportEntryError("content.uri is missing") }
        let name = OTPImport.nonEmpty(try content.string("name"))
        let notes = OTPImport.nonEmpty(try entry.string("note"))
        let token: OTPToken
        do {
            token = try OTPToken(uri: uri)
        } catch {
            throw ImportEntryError(error.description)
        }
        var issuer = token.issuer
        if issuer == nil, token.parameters.kind == .steam { issuer = "Steam" }
        do {
            return try OTPItem(
                issuer: OTPImport.nonEmpty(issuer) ?? name ?? "",
                account: OTPImport.nonEmpty(token.account) ?? name ?? issuer ?? "Proton",
                parameters: token.parameters, notes: notes)
        } catch {
            throw ImportEntryError(error.description)
        }
    }
}

/// Reads Ente Auth's exports: the plain-text one (one `otpauth://` URI per line) and the encrypted one.
///
/// Ente appends its own query parameters (`codeDisplay=` with pin, trash and tag state as JSON, and others); the
/// URI parser ignores unknown parameters, so they are dropped. Blank lines are skipped; a line that is not a
/// usable URI becomes a problem named by its line number only, since the line holds a secret.
///
/// The encrypted export (Ente's `docs/auth/migration/export.md`, version 1) is `{"version": 1, "kdfParams":
/// {"memLimit", "opsLimit", "salt"}, "encryptedData", "encryptionNonce"}`: the key is libsodium's `crypto_pwhash`
/// (Argon2id v0x13, `opsLimit` passes, `memLimit` bytes, 1 lane, 32 bytes) of the password's UTF-8 bytes and the
/// 16-byte salt; `encryptedData` is one message of a `crypto_secretstream_xchacha20poly1305` stream whose 24-byte
/// header is `encryptionNonce` (``SodiumSecretStream``), holding the plain-text export. All three are standard
/// base64. The cost comes from the file and is bounded by ``Argon2/Limits/importing`` before any work.
public enum EnteAuthImporter: Importer {
    public static let formatName = "ente"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        if let document = JSONValue.parse(data), case .object = document, document["encryptedData"] != nil {
            guard let password else { throw .passwordRequired }
            return try OTPAuthListImporter.read(decrypt(document, password: password), password: nil)
        }
        return try OTPAuthListImporter.read(data, password: password)
    }

    private static func decrypt(_ document: JSONValue, password: String) throws(InteropError) -> [UInt8] {
        guard document["version"]?.intValue == 1 else {
            throw .unsupportedVersion(document["version"]?.intValue.map { "Ente export \($0)" } ?? "(missing)")
        }
        guard let parameters = document["kdfParams"], let memory = parameters["memLimit"]?.intValue,
            let passes = parameters["opsLimit"]?.intValue,
            let saltText = parameters["salt"]?.stringValue, let salt = Data(base64Encoded: saltText), salt.count == 16
        else {
            throw .malformedFile("kdfParams lacks memLimit, opsLimit or a base64 16-byte salt")
        }
        guard let nonceText = document["encryptionNonce"]?.stringValue, let header = Data(base64Encoded: nonceText),
            header.count == SodiumSecretStream.headerByteCount,
            let sealedText = document["encryptedData"]?.stringValue, let sealed = Data(base64Encoded: sealedText),
            sealed.count >= SodiumSecretStream.overheadByteCount
        else {
            throw .malformedFile("encryptionNonce is not base64 of 24 bytes, or encryptedData of a sealed message")
        }
        // Bytes in the file: checked as bytes first, so the conversion to KiB cannot overflow or round.
        let limits = Argon2.Limits.importing
        guard memory > 0, memory % 1024 == 0, memory / 1024 <= limits.memoryKiB.upperBound else {
            throw .kdfParametersOutOfBounds("memLimit must be whole KiB up to \(limits.memoryKiB.upperBound) KiB")
        }
        let key: SecretBytes
        do {
            key = try Argon2.derive(
                SecretBytes(password.utf8), salt: Array(salt),
                parameters: Argon2.Parameters(iterations: passes, memoryKiB: memory / 1024, lanes: 1))
        } catch {
            throw .kdfParametersOutOfBounds(error.description)
        }
        guard
            let opened = try SodiumSecretStream.openFirstMessage(
                Array(sealed), key: key.withUnsafeBytes { Array($0) }, header: Array(header))
        else {
            throw .wrongPassword
        }
        return opened.message
    }
}
