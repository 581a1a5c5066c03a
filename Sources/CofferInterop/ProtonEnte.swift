import CofferModel
import CofferOTP
import Foundation

/// Reads Proton Authenticator's unencrypted JSON export.
///
/// The file is `{"version": 1, "entries": [...]}`; each entry is `{"id", "content": {"uri", "entry_type", "name"},
/// "note"}`. `content.uri` is an `otpauth://totp/…` URI, or `steam://SECRET` for a Steam entry; `name` is the name
/// the user sees, used when the URI carries no issuer or account. `note` becomes the item's notes.
public enum ProtonAuthenticatorImporter: Importer {
    public static let formatName = "proton"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        guard let document = ImportJSON.parse(data), case .object = document else {
            throw .malformedFile("a Proton Authenticator export is a JSON object")
        }
        guard let entries = document["entries"]?.arrayValue else {
            // A password-protected export has no clear entries; say so instead of only "malformed".
            throw .malformedFile("entries is missing or not an array (password-protected exports are not read)")
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

    private static func item(_ entry: ImportJSON) throws(ImportEntryError) -> OTPItem {
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
                issuer: OTPImport.nonEmpty(issuer) ?? name ?? OTPImport.nonEmpty(token.account) ?? "Proton",
                account: OTPImport.nonEmpty(token.account) ?? name ?? issuer ?? "Proton",
                parameters: token.parameters, notes: notes)
        } catch {
            throw ImportEntryError(error.description)
        }
    }
}

/// Reads Ente Auth's plain-text export: one `otpauth://` URI per line.
///
/// Ente appends its own query parameters (`codeDisplay=` with pin, trash and tag state as JSON, and others); the
/// URI parser ignores unknown parameters, so they are dropped. Blank lines are skipped; a line that is not a
/// usable URI becomes a problem named by its line number only, since the line holds a secret.
public enum EnteAuthImporter: Importer {
    public static let formatName = "ente"

    /// Ente's plaintext export is an otpauth URI list; its extra parameters (`codeDisplay=` …) are ignored.
    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPAuthListImporter.read(data, password: password)
    }
}
