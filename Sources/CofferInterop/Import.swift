import CofferModel
import Foundation

/// Why another app's file could not be read. Descriptions name the rule broken, never a secret or a password.
public enum InteropError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file is not in the format, or is damaged beyond reading any entry.
    case malformedFile(String)
    /// The file is encrypted and no password was given.
    case passwordRequired
    /// The password does not open the file.
    case wrongPassword
    /// What was given (a password, a key file, or both) does not open the file; the detail says which, and what else
    /// the file may need.
    case wrongKey(String)
    /// A format version this Coffer does not read.
    case unsupportedVersion(String)
    /// Larger than the importer accepts.
    case tooLarge(limit: Int)
    /// KDF parameters in the file are outside the accepted range (a hostile or broken file).
    case kdfParametersOutOfBounds(String)
    /// A library this format's reader needs is not installed (the detail names it).
    case readerUnavailable(String)

    public var description: String {
        switch self {
        case .malformedFile(let detail): return "the file is not readable: \(detail)"
        case .passwordRequired: return "the file is encrypted: a password is needed"
        case .wrongPassword: return "wrong password for this file"
        case .wrongKey(let detail): return detail
        case .unsupportedVersion(let version): return "unsupported file version \(version)"
        case .tooLarge(let limit): return "the file is larger than \(limit) bytes"
        case .kdfParametersOutOfBounds(let detail): return "key-derivation parameters out of bounds: \(detail)"
        case .readerUnavailable(let detail): return detail
        }
    }
}

/// An entry that could not be imported, and why. `entry` names it the way the source app shows it (issuer and
/// account, or a card name) so the user can find it; it never holds a secret.
public struct ImportProblem: Sendable, Equatable, CustomStringConvertible {
    public let entry: String
    public let reason: String

    public init(entry: String, reason: String) {
        self.entry = entry
        self.reason = reason
    }

    public var description: String { "\(entry): \(reason)" }
}

/// An item an export could not write, and why: the same shape as an import's problem, naming the item as the user
/// sees it, never a secret. Exports write every other item (one item never blocks the user's way out).
public typealias ExportProblem = ImportProblem

/// What an importer read: the items it could convert, and every entry it could not, with the reason
/// (a partial import, never all-or-nothing silence).
public struct ImportResult: Sendable, Equatable {
    public var items: [ItemContent]
    public var problems: [ImportProblem]
    /// Card photos read with the items, by the index of their card in `items`: each already checked to be a PNG or
    /// JPEG of at most `CardPhoto.maximumBytes` (an image that is not was reported in `problems` and left out).
    public var photos: [Int: [PhotoSide: Data]]

    public init(items: [ItemContent] = [], problems: [ImportProblem] = [], photos: [Int: [PhotoSide: Data]] = [:]) {
        self.items = items
        self.problems = problems
        self.photos = photos
    }
}

/// Reads one other app's export. Files are hostile: implementations cap sizes and KDF parameters before using them.
public protocol Importer {
    /// The `--from` name, e.g. `aegis`.
    static var formatName: String { get }
    /// Reads `data`; `password` is needed for encrypted files.
    static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult
}

/// The largest file any importer reads.
public let importSizeLimit = 16 << 20

/// Every importer, by its `--from` name.
public enum ImportFormats {
    public static var all: [any Importer.Type] {
        [
            AegisImporter.self, TwoFASImporter.self, AndOTPImporter.self, GoogleAuthenticatorImporter.self,
            BitwardenJSONImporter.self, BitwardenCSVImporter.self, FreeOTPPlusImporter.self,
            ProtonAuthenticatorImporter.self, EnteAuthImporter.self, OTPAuthListImporter.self, CatimaImporter.self,
            PKPassImporter.self, CofferJSONImporter.self, KeePassImporter.self, SteamMaFileImporter.self,
            DuoImporter.self, FidMeImporter.self, StratumImporter.self, AuthyImporter.self, AuthenticatorPlusImporter.self,
            BattleNetImporter.self, FreeOTPImporter.self, TOTPAuthenticatorImporter.self, MicrosoftAuthenticatorImporter.self,
            VoucherVaultImporter.self,
        ]
    }

    /// The importer called `name`.
    public static func importer(named name: String) -> (any Importer.Type)? {
        all.first { $0.formatName == name.lowercased() }
    }

    public static var names: [String] { all.map { $0.formatName } }
}
