import CofferKit
import Foundation

/// Errors the command line reports; each maps to a documented exit code (README "Exit codes").
enum CLIError: Error, CustomStringConvertible {
    case usage(String)
    case noInput(String)
    case coffer(CofferError)
    case failure(String)
    /// Input a command cannot use (exit 65), from a layer without its own error type here.
    case badData(String)
    /// A sync failure, with its sysexits code and an optional hint.
    case sync(String, exitCode: Int32, hint: String?)
    /// The user ended a prompt with Ctrl-D, or answered no to a confirmation.
    case cancelled
    /// The terminal is too narrow for the symbol (exit 75: widen it and try again, or write an image).
    case narrowTerminal(String)
    /// `coffer run` could not start its program: 127 when there is none, 126 when it cannot be executed (as shells do).
    case launch(String, exitCode: Int32)

    var description: String {
        switch self {
        case .usage(let message): return message
        case .noInput(let what): return "no \(SecretInput.lowercasedFirst(what)) given: type it on a terminal or pipe it on standard input"
        case .coffer(let error): return error.description
        case .failure(let message), .badData(let message): return message
        case .sync(let message, _, _): return message
        case .launch(let message, _): return message
        case .cancelled: return "cancelled; nothing changed"
        case .narrowTerminal(let message): return message
        }
    }

    /// A follow-up line for errors a user can fix.
    var hint: String? {
        switch self {
        case .sync(_, _, let hint): return hint
        case .narrowTerminal: return "or write an image to scan from another screen: coffer barcode NAME --png FILE"
        case .coffer(.needsSecret):
            return "run `coffer unlock` (passphrase) or `coffer unlock --recovery-code` once on this device, or `coffer agent start` to keep a passphrase-only vault unlocked for a while"
        case .coffer(.vault(.notFound)):
            return "create one with `coffer init`, or point --vault / COFFER_VAULT at an existing vault"
        case .coffer(.vault(.newerFormat)), .coffer(.vault(.unknownMigrations)):
            return "this vault was written by a newer Coffer; install that version to open it"
        case .coffer(.ambiguous):
            return "give the full name or an id prefix (4+ characters) of the one you mean"
        case .coffer(.vault(.noSlot(.passphrase))):
            return "add one with `coffer passphrase set` or `coffer recovery-code new`"
        case .coffer(.vault(.tampered)):
            return "`coffer rm --purge ID` removes a damaged item; a backup restores into a fresh vault (`coffer import --format backup FILE --vault NEW`)"
        case .coffer(.syncedVault):
            return "a synced vault is rotated through its server: `coffer rotate-key` does that"
        case .coffer(.vault(.deviceKeyMismatch)):
            return "this device's slot was removed or replaced; `coffer unlock` (passphrase or recovery code) gives it a new one"
        case .coffer(.keystore(.locked)):
            return "unlock the key store (log in to the desktop session, or unlock the keyring) and run the command again; nothing was changed"
        case .coffer(.keystore(.unreachable)):
            return "`coffer keystore status` shows which store holds this vault's keys here; once it answers, `coffer keystore migrate --to file` moves them"
        case .coffer(.keyBoundElsewhere):
            return "PIN-held keys never leave the device they were added on; keep the seed's own backup"
        default: return nil
        }
    }

    /// Exit codes follow sysexits(3).
    var exitCode: Int32 {
        switch self {
        case .usage, .noInput: return 64
        case .failure: return 1
        case .badData: return 65
        case .sync(_, let code, _): return code
        case .launch(_, let code): return code
        case .cancelled: return 1
        case .narrowTerminal: return 75
        case .coffer(let error):
            switch error {
            case .noMatch, .vault(.notFound), .vault(.itemNotFound), .vault(.slotNotFound), .vault(.noSlot): return 66
            case .ambiguous: return 64
            case .wrongKind, .model, .otp: return 65
            case .needsSecret, .keyBoundElsewhere, .vault(.wrongPassphrase), .vault(.wrongRecoveryCode), .vault(.deviceKeyMismatch):
                return 77
            case .vault(.alreadyExists): return 73
            case .keystore(.locked): return 75
            case .keystore(.unreachable), .agentNotRunning, .agentUnusable: return 69
            case .agent(let failure) where failure.code == .wrongPassphrase: return 77
            case .vault(.conflict), .vault(.keyRotatedElsewhere): return 75
            case .vault(.newerFormat), .vault(.unknownMigrations), .vault(.tampered), .vault(.notAVault), .vault(.crypto):
                return 65
            default: return 1
            }
        }
    }

    static func from(_ error: any Error) -> CLIError {
        switch error {
        case let error as CLIError: return error
        case let error as CofferError: return .coffer(error)
        case let error as VaultError: return .coffer(.vault(error))
        case let error as ModelError: return .coffer(.model(error))
        case let error as OTPError: return .coffer(.otp(error))
        case let error as KeystoreError: return .coffer(.keystore(error))
        case let error as CofferCryptoError: return .coffer(.vault(.crypto(error)))
        case let error as BarcodeError: return .badData(error.description)
        case let error as StellarStrKey.StrKeyError: return .coffer(.model(.invalidField(field: "seed", rule: error.description)))
        default: return .failure("unexpected \(String(describing: type(of: error)))")
        }
    }
}
