/// Reads Authenticator Plus's export (Settings → Backup & Restore → Export as Text and HTML): a ZIP protected by the
/// backup password (traditional PKWARE encryption, or WinZip AES) holding `Accounts.txt`, one `otpauth://` URI per
/// line (``OTPAuthListImporter``), beside an HTML copy that is not needed.
public enum AuthenticatorPlusImporter: Importer {
    public static let formatName = "authenticator-plus"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        guard ZipArchive.looksLikeZip(data) else {
            throw .malformedFile("an Authenticator Plus export is a ZIP file holding Accounts.txt")
        }
        let archive = try ZipArchive(data)
        guard let entry = archive.entry(named: "Accounts.txt") else {
            throw .malformedFile("the ZIP file holds no Accounts.txt")
        }
        if entry.isEncrypted, password == nil { throw .passwordRequired }
        return try OTPAuthListImporter.read(try archive.contents(of: entry, password: password), password: nil)
    }
}
