import CofferModel
import CofferOTP
import Foundation

/// Reads a KeePass or KeePassXC database (`.kdbx`, KDBX 4 and 3.1) opened with its password, its key file
/// (``KeePassKeyFile``), or both; a database that needs a hardware key cannot be opened here. A key that does not open
/// the database gives ``InteropError/wrongKey(_:)``, naming what was tried.
///
/// Each entry (outside history and the recycle bin) becomes:
/// - a **credential** when it has a password: named by its title (else its URL's host, else its user name), with
///   its user name and URL, the URL's host as the provider, and its notes after the other unprotected fields as
///   `Label: value` lines (a credential holds one secret, so other protected fields are reported, not kept);
/// - an **OTP token** when it has one, in any of the forms KeePass apps write: an `otp` field holding an
///   `otpauth://` URI (KeePassXC 2.6 and later) or KeeOtp's `key=…&step=…&size=…&otpHashMode=…`; KeePassXC's
///   older `TOTP Seed` with `TOTP Settings` (`period;digits`, digits `S` for Steam); or KeePass 2.47's
///   `TimeOtp-Secret-Base32` with `TimeOtp-Length`, `-Period` and `-Algorithm`. The issuer is the URI's, else the
///   title; the account the URI's, else the user name;
/// - a **note** when it has neither but holds a user name, URL, notes or fields;
/// - a **card** without a barcode when pictures (PNG or JPEG, at most 2 MiB) are attached to it: its front and back
///   photos (a file named "…back…" is the back, "…front…" the front, else the order decides); its number is the user name (else the card is known by its name), and the
///   URL, fields and notes are its notes. It is made beside the credential or token the entry also becomes, and
///   instead of the note.
///
/// Every other attached file, and a third picture, is named as left out. The entry's group (below the root) and its
/// tags become tags.
public enum KeePassImporter: Importer {
    public static let formatName = "keepass"

    /// Fields every entry has, and the OTP fields, which are read for what they are rather than kept as text.
    static let standardFields: Set = ["Title", "UserName", "Password", "URL", "Notes"]
    static let otpFields: Set = [
        "otp", "TOTP Seed", "TOTP Settings", "TimeOtp-Secret-Base32", "TimeOtp-Length", "TimeOtp-Period",
        "TimeOtp-Algorithm",
    ]

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try read(data, password: password, keyFile: nil)
    }

    /// Reads a database that opens with `password`, its key file's bytes `keyFile`, or both (an empty password is
    /// none, as KeePassXC takes it when a key file is given).
    public static func read(_ data: [UInt8], password: String?, keyFile: [UInt8]?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        guard KeePassDatabase.looksLikeKeePass(data) else {
            throw .malformedFile("not a KeePass database (signature)")
        }
        let password = keyFile != nil && password == "" ? nil : password
        guard password != nil || keyFile != nil else { throw .passwordRequired }
        let key = KeePassCompositeKey(password: password, keyFile: try keyFile.map(KeePassKeyFile.key))
        let database = try KeePassDatabase(data, key: key)
        let entries = try KeePassXMLReader.entries(database.xml, stream: database.innerStream, binaries: database.binaries)
        var result = ImportResult()
        for (index, entry) in entries.enumerated() {
            convert(entry, index: index, into: &result)
        }
        return result
    }

    private static func convert(_ entry: KeePassEntry, index: Int, into result: inout ImportResult) {
        let title = OTPImport.nonEmpty(entry.value("Title"))
        let username = OTPImport.nonEmpty(entry.value("UserName"))
        let url = OTPImport.nonEmpty(entry.value("URL"))
        let host = url.flatMap { URL(string: $0)?.host }.flatMap { OTPImport.nonEmpty($0) }
        let name = title ?? host ?? username ?? "entry \(index + 1)"
        var tags = OTPImport.usableTags(entry.tags + (entry.group.map { [$0] } ?? []))
        tags = tags.reduce(into: []) { if !$0.contains($1) { $0.append($1) } }

        var pictures: [(name: String, bytes: [UInt8])] = []
        for attachment in entry.attachments {
            guard let bytes = attachment.bytes else {
                result.problems.append(
                    ImportProblem(
                        entry: name, reason: "the attached file \"\(attachment.name)\" is missing from the database and was left out"))
                continue
            }
            guard (try? CardPhoto.checkedType(of: bytes)) != nil else {
                let why =
                    bytes.count > CardPhoto.maximumBytes && Self.looksLikePicture(bytes)
                    ? "is larger than 2 MiB" : "is not a PNG or JPEG picture"
                result.problems.append(
                    ImportProblem(
                        entry: name, reason: "the attached file \"\(attachment.name)\" \(why), and was left out (Coffer keeps pictures as a card's photos)"))
                continue
            }
            guard pictures.count < 2 else {
                result.problems.append(
                    ImportProblem(
                        entry: name, reason: "the attached picture \"\(attachment.name)\" was left out (a card keeps a front and a back photo)"))
                continue
            }
            pictures.append((attachment.name, bytes))
        }
        let extra = entry.fields.filter { !standardFields.contains($0.key) && !otpFields.contains($0.key) }
        for field in extra where field.protected {
            result.problems.append(
                ImportProblem(
                    entry: name, reason: "the protected field \"\(field.key)\" is not kept (a credential holds one secret)"))
        }
        let lines = extra.filter { !$0.protected && OTPImport.nonEmpty($0.value) != nil }.map { "\($0.key): \($0.value)" }
        let notes = OTPImport.nonEmpty(entry.value("Notes"))
        let details = lines.isEmpty ? notes : lines.joined(separator: "\n") + (notes.map { "\n\n" + $0 } ?? "")

        var converted = false
        if let password = entry.value("Password"), !password.isEmpty {
            converted = true
            do {
                result.items.append(
                    .credential(
                        try Credential(
                            name: name, provider: host, value: password, tags: tags, notes: details, username: username, url: url)))
            } catch {
                result.problems.append(ImportProblem(entry: name, reason: error.description))
            }
        }
        do {
            if let parameters = try otp(entry) {
                converted = true
                result.items.append(.otp(try token(parameters, title: title, username: username, name: name, tags: tags)))
            }
        } catch {
            converted = true
            result.problems.append(ImportProblem(entry: name, reason: error.reason))
        }
        var fields: [Note.Field] = []
        if let username { fields.append(Note.Field(label: "Username", value: username)) }
        if let url { fields.append(Note.Field(label: "URL", value: url)) }
        for field in extra where !field.protected && OTPImport.nonEmpty(field.value) != nil {
            fields.append(Note.Field(label: field.key, value: field.value))
        }
        if !pictures.isEmpty {
            // A card's number is what KeePass users keep in the user name; without one, the card is known by its name.
            let lines = fields.filter { $0.label != "Username" }.map { "\($0.label): \($0.value)" }
            let cardNotes = OTPImport.nonEmpty((lines + (notes.map { [$0] } ?? [])).joined(separator: "\n"))
            do {
                result.items.append(
                    .card(
                        try Card(
                            name: name, symbology: nil, payload: Array((username ?? name).utf8), cardNumber: username, tags: tags, notes: cardNotes)))
                result.photos[result.items.count - 1] = Self.sides(of: pictures)
            } catch {
                result.problems.append(ImportProblem(entry: name, reason: error.description))
            }
            return
        }
        guard !converted else { return }
        guard !fields.isEmpty || notes != nil else { return }  // an empty entry: nothing to keep
        do {
            result.items.append(.note(try Note(name: name, fields: fields, text: notes, tags: tags)))
        } catch {
            result.problems.append(ImportProblem(entry: name, reason: error.description))
        }
    }

    /// Which picture is the front and which the back: one whose file name says "back" is the back, one that says
    /// "front" the front, and the others take the sides left in the order they are attached (KeePassXC lists
    /// attachments by name, so their order alone does not tell).
    static func sides(of pictures: [(name: String, bytes: [UInt8])]) -> [PhotoSide: Data] {
        var sides: [PhotoSide: Data] = [:]
        var unnamed: [[UInt8]] = []
        for picture in pictures {
            let name = picture.name.lowercased()
            if name.contains("back"), sides[.back] == nil {
                sides[.back] = Data(picture.bytes)
            } else if name.contains("front"), sides[.front] == nil {
                sides[.front] = Data(picture.bytes)
            } else {
                unnamed.append(picture.bytes)
            }
        }
        for side in PhotoSide.allCases where sides[side] == nil && !unnamed.isEmpty {
            sides[side] = Data(unnamed.removeFirst())
        }
        return sides
    }

    /// Whether `bytes` start as a PNG or a JPEG does, whatever their size.
    private static func looksLikePicture(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) || bytes.starts(with: [0xFF, 0xD8, 0xFF])
    }

    /// The token's issuer and account: the URI's when it names them, else the title and the user name.
    private static func token(
        _ parsed: (parameters: OTPParameters, issuer: String?, account: String?), title: String?, username: String?,
        name: String, tags: [String]
    ) throws(ImportEntryError) -> OTPItem {
        try OTPImport.item(
            issuer: parsed.issuer ?? title ?? name, account: parsed.account ?? username ?? title,
            parameters: parsed.parameters, tags: tags)
    }

    /// The entry's OTP parameters in whichever form it holds them; `nil` when it has none.
    static func otp(_ entry: KeePassEntry) throws(ImportEntryError) -> (parameters: OTPParameters, issuer: String?, account: String?)? {
        if let otp = OTPImport.nonEmpty(entry.value("otp")) {
            if otp.lowercased().hasPrefix("otpauth://") {
                do {
                    let token = try OTPToken(uri: otp)
                    return (token.parameters, token.issuer, OTPImport.nonEmpty(token.account))
                } catch {
                    throw ImportEntryError("otp: \(error.description)")
                }
            }
            return (try keeOtp(otp), nil, nil)
        }
        if let seed = OTPImport.nonEmpty(entry.value("TOTP Seed")) {
            let settings = (entry.value("TOTP Settings") ?? "").split(separator: ";").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let period = settings.first.flatMap { Int($0) } ?? OTPParameters.defaultPeriod
            if settings.count >= 2, settings[1] == "S" {
                return (try OTPImport.parameters(secret: seed, algorithm: nil, digits: nil, kind: .steam), nil, nil)
            }
            guard settings.count < 2 || Int(settings[1]) != nil else {
                throw ImportEntryError("TOTP Settings is not \"period;digits\"")
            }
            let digits = settings.count >= 2 ? Int(settings[1]) : nil
            return (try OTPImport.parameters(secret: seed, algorithm: nil, digits: digits, kind: .totp(period: period)), nil, nil)
        }
        if let seed = OTPImport.nonEmpty(entry.value("TimeOtp-Secret-Base32")) {
            let algorithm = entry.value("TimeOtp-Algorithm").map { $0.replacingOccurrences(of: "HMAC-", with: "") }
            let period = entry.value("TimeOtp-Period").flatMap { Int($0) } ?? OTPParameters.defaultPeriod
            let digits = entry.value("TimeOtp-Length").flatMap { Int($0) }
            return (
                try OTPImport.parameters(
                    secret: seed, algorithm: algorithm?.replacingOccurrences(of: "-", with: ""), digits: digits,
                    kind: .totp(period: period)), nil, nil
            )
        }
        return nil
    }

    /// KeeOtp's `key=BASE32&step=30&size=6&otpHashMode=Sha256` (KeePassXC reads it too).
    private static func keeOtp(_ text: String) throws(ImportEntryError) -> OTPParameters {
        var values: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            values[parts[0].lowercased()] = String(parts[1]).removingPercentEncoding ?? String(parts[1])
        }
        guard let key = values["key"] else { throw ImportEntryError("otp is neither an otpauth URI nor KeeOtp's key=…") }
        guard values["type"].map({ $0.lowercased() == "totp" }) ?? true else {
            throw ImportEntryError("otp: only KeeOtp's TOTP type is read")
        }
        let period = values["step"].flatMap { Int($0) } ?? OTPParameters.defaultPeriod
        return try OTPImport.parameters(
            secret: key, algorithm: values["otphashmode"], digits: values["size"].flatMap { Int($0) },
            kind: .totp(period: period))
    }
}
