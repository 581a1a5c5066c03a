import CofferCrypto
import CofferModel
import CofferOTP
import Foundation

/// Reads a plain text file with one `otpauth://` or `steam://` URI per line, the lowest common denominator that
/// most authenticators (and password managers such as KeePassXC, Bitwarden and Ente) can write.
///
/// Blank lines and lines starting with `#` are ignored; surrounding whitespace and a leading UTF-8 byte order mark
/// are tolerated. A line that is not a usable URI becomes an ``ImportProblem`` named by its line number only: the
/// line holds a secret, so neither it nor any part of it is repeated.
public enum OTPAuthListImporter: Importer {
    public static let formatName = "otpauth"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        guard data.count <= importSizeLimit else { throw .tooLarge(limit: importSizeLimit) }
        var result = ImportResult()
        for line in OTPListLines.split(data) {
            let entry = "line \(line.number)"
            let token: OTPToken
            do {
                token = try OTPToken(uri: line.text)
            } catch {
                result.problems.append(ImportProblem(entry: entry, reason: error.description))
                continue
            }
            do {
                let item = try OTPImportNaming.item(
                    issuer: token.issuer, account: token.account, parameters: token.parameters)
                result.items.append(.otp(item))
            } catch {
                result.problems.append(ImportProblem(entry: entry, reason: error.description))
            }
        }
        return result
    }
}

/// Writes items as a text file of `otpauth://` URIs, one per line (the file contains every secret in the clear).
public enum OTPAuthListExporter {
    /// One canonical URI per item, each line ending in a newline. Tags and notes have no place in a URI and are
    /// not written.
    ///
    /// - Returns: the text, and the items the URI format cannot represent (an account name containing a colon),
    ///   each with the reason; every other item is written.
    public static func export(_ items: [OTPItem]) -> (text: String, leftOut: [ExportProblem]) {
        var text = ""
        var leftOut: [ExportProblem] = []
        for item in items {
            do {
                text += try item.token().uri + "\n"
            } catch {
                leftOut.append(ExportProblem(entry: item.displayName, reason: error.description))
            }
        }
        return (text, leftOut)
    }
}

/// Splits an import file into its meaningful lines.
enum OTPListLines {
    struct Line {
        /// 1-based, as editors count.
        let number: Int
        /// Trimmed of surrounding whitespace; never empty, never a comment.
        let text: String
    }

    /// Non-blank, non-comment lines. Bytes that are not UTF-8 are replaced, so a damaged line fails on its own
    /// instead of failing the file.
    static func split(_ data: [UInt8]) -> [Line] {
        var bytes = data[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        var lines: [Line] = []
        var number = 0
        for raw in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            let text = String(decoding: raw, as: UTF8.self).trimmingWhitespace()
            guard !text.isEmpty, !text.hasPrefix("#") else { continue }
            lines.append(Line(number: number, text: text))
        }
        return lines
    }
}

/// How the OTP importers name what they import: Coffer requires an account, while sources often have only an
/// issuer; a token without an issuer keeps none.
enum OTPImportNaming {
    /// An item whose missing account is the issuer; a missing issuer stays missing. Steam tokens without any name (a
    /// bare `steam://` URI) are called "Steam", the service they are for. An account holding a whole label is split
    /// first (``OTPImport/splitLabel(issuer:account:)``).
    static func item(
        issuer: String?, account: String?, parameters: OTPParameters, tags: [String] = [], notes: String? = nil
    ) throws(ModelError) -> OTPItem {
        let named = OTPImport.splitLabel(issuer: issuer, account: account)
        var issuer = named.issuer ?? ""
        let account = named.account ?? ""
        if issuer.isEmpty, account.isEmpty, parameters.kind == .steam { issuer = "Steam" }
        return try OTPItem(issuer: issuer, account: account.isEmpty ? issuer : account, parameters: parameters, tags: tags, notes: notes)
    }

    /// How an entry is named in a problem: "issuer (account)", or whichever exists, or `fallback`.
    static func entryName(issuer: String, account: String, fallback: String) -> String {
        let issuer = issuer.trimmingWhitespace()
        let account = account.trimmingWhitespace()
        switch (issuer.isEmpty, account.isEmpty) {
        case (false, false): return "\(issuer) (\(account))"
        case (false, true): return issuer
        case (true, false): return account
        case (true, true): return fallback
        }
    }
}
