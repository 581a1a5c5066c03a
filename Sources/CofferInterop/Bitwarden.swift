import CofferCrypto
import CofferModel
import CofferOTP
import Foundation

/// Reads the TOTP seeds from a Bitwarden unencrypted JSON export (`bitwarden_export_….json`).
///
/// Only `items[]` whose `login.totp` is set become tokens; every other item is a password, card or note and is
/// skipped without a problem. `login.totp` is an `otpauth://` URI, a `steam://SECRET` URI or a bare base32 secret
/// (TOTP, SHA1, 6 digits, 30 s). The issuer is the URI's, or the item name when the URI has none; the account is
/// `login.username`, or the URI's account when the username is empty. The item's folder becomes a tag.
/// A password-protected export (PBKDF2 or Argon2id) is opened with the password (``BitwardenEncryptedExport``); one
/// encrypted with the Bitwarden account's own key cannot be opened outside Bitwarden and is refused with
/// ``InteropError/unsupportedVersion(_:)``.
public enum BitwardenJSONImporter: Importer {
    public static let formatName = "bitwarden-json"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        guard let document = JSONValue.parse(data), case .object = document else {
            throw .malformedFile("a Bitwarden JSON export is a JSON object")
        }
        if document["encrypted"] == .bool(true) {
            guard document["passwordProtected"] == .bool(true) else {
                throw .unsupportedVersion("Bitwarden export encrypted with the account key (export with a password, or unencrypted)")
            }
            guard let password else { throw .passwordRequired }
            let plain = try BitwardenEncryptedExport.decrypt(document, password: password)
            guard let inner = JSONValue.parse(plain), case .object = inner, inner["encrypted"] != .bool(true) else {
                throw .malformedFile("the decrypted export is not an unencrypted Bitwarden JSON export")
            }
            return try read(plain, password: nil)
        }
        guard let items = document["items"]?.arrayValue else { throw .malformedFile("items is missing or not an array") }

        var folders: [String: String] = [:]
        for folder in document["folders"]?.arrayValue ?? [] {
            if let id = folder["id"]?.stringValue, let name = folder["name"]?.stringValue {
                folders[id] = name
            }
        }

        var result = ImportResult()
        for (index, item) in items.enumerated() {
            let name = item["name"]?.stringValue
            let username = item["login"]?["username"]?.stringValue
            do throws(ImportEntryError) {
                guard case .object = item else { throw ImportEntryError("the item is not a JSON object") }
                guard let login = item["login"], case .object = login else { continue }
                guard let totp = try login.string("totp"), OTPImport.nonEmpty(totp) != nil else { continue }
                // The folder only adds a tag: a folder id of the wrong type costs the tag, not the token.
                let folder = item["folderId"]?.stringValue.flatMap { folders[$0] }
                let otp = try BitwardenTOTP.item(
                    totp: totp, name: try item.string("name"), username: try login.string("username"),
                    tags: folder.map { [$0] } ?? [])
                result.items.append(.otp(otp))
            } catch {
                result.problems.append(
                    ImportProblem(
                        entry: OTPImport.entryName(issuer: name, account: username, index: index), reason: error.reason))
            }
        }
        return result
    }
}

/// Reads the TOTP seeds from a Bitwarden CSV export: a header row naming at least `name` and `login_totp`
/// (`login_username` and `folder` are used when present), then one row per item, quoted as RFC 4180 describes.
/// Rows are converted as in ``BitwardenJSONImporter``; rows with an empty `login_totp` are skipped silently.
public enum BitwardenCSVImporter: Importer {
    public static let formatName = "bitwarden-csv"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        let body = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data[...]
        guard String(validating: body, as: UTF8.self) != nil else { throw .malformedFile("the CSV is not UTF-8") }
        let records = try ImportCSV.records(body)
        guard let header = records.first?.fields.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) else {
            throw .malformedFile("the CSV has no header row")
        }
        guard let totpColumn = header.firstIndex(of: "login_totp") else {
            throw .malformedFile("the CSV has no login_totp column")
        }
        guard let nameColumn = header.firstIndex(of: "name") else { throw .malformedFile("the CSV has no name column") }
        let usernameColumn = header.firstIndex(of: "login_username")
        let folderColumn = header.firstIndex(of: "folder")

        var result = ImportResult()
        for record in records.dropFirst() where record.fields != [""] {
            let fields = record.fields
            let name = fields.indices.contains(nameColumn) ? fields[nameColumn] : nil
            let username = usernameColumn.flatMap { fields.indices.contains($0) ? fields[$0] : nil }
            let entry = OTPImport.entryName(issuer: name, account: username, index: record.line - 1)
            guard fields.count == header.count else {
                result.problems.append(
                    ImportProblem(
                        entry: entry, reason: "the row has \(fields.count) fields, the header has \(header.count)"))
                continue
            }
            guard OTPImport.nonEmpty(fields[totpColumn]) != nil else { continue }
            let folder = folderColumn.flatMap { OTPImport.nonEmpty(fields[$0]) }
            do {
                let otp = try BitwardenTOTP.item(
                    totp: fields[totpColumn], name: name, username: username, tags: folder.map { [$0] } ?? [])
                result.items.append(.otp(otp))
            } catch {
                result.problems.append(ImportProblem(entry: entry, reason: error.reason))
            }
        }
        return result
    }
}

/// Bitwarden's `totp` field as Coffer reads it, shared by the JSON and CSV importers.
enum BitwardenTOTP {
    static func item(totp: String, name: String?, username: String?, tags: [String]) throws(ImportEntryError) -> OTPItem {
        let text = totp.trimmingWhitespace()
        guard text.contains("://") else {
            let parameters = try OTPImport.parameters(
                secret: text, algorithm: nil, digits: nil, kind: .totp(period: OTPParameters.defaultPeriod))
            return try OTPImport.item(issuer: name, account: username, parameters: parameters, tags: tags)
        }
        let token: OTPToken
        do {
            token = try OTPToken(uri: text)
        } catch {
            throw ImportEntryError(error.description)
        }
        return try OTPImport.item(
            issuer: token.issuer ?? OTPImport.nonEmpty(name), account: OTPImport.nonEmpty(username) ?? token.account,
            parameters: token.parameters, tags: tags)
    }
}

/// The shared CSV reader (`CSV` in CofferCrypto) for the importers, its failures said as they say them.
enum ImportCSV {
    static func records(_ bytes: ArraySlice<UInt8>, delimiter: UInt8 = UInt8(ascii: ",")) throws(InteropError) -> [CSV.Record] {
        do {
            return try CSV.records(bytes, delimiter: delimiter)
        } catch {
            switch error {
            case .unclosedQuote(let line): throw .malformedFile("a quoted CSV field starting on line \(line) is not closed")
            case .textAfterQuote(let line): throw .malformedFile("text follows a closing quote on line \(line)")
            }
        }
    }
}
