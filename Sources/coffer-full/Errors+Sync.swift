import CofferCLI
import CofferCue
import CofferKit
import CofferReporting
import CofferSync
import Foundation

extension PositionSourceError: ReportableError {
    package var status: ExitStatus { .unavailable }
}

extension SyncClientError: ReportableError {
    package var hint: String? {
        switch self {
        case .transport: return "local changes stay queued; run `coffer sync` again when online"
        case .server(401, "session_lost", _):
            return "nothing was changed here; log in again (coffer sync login --server URL --email EMAIL) and the next "
                + "`coffer sync` checks the state the server holds against the one this device verified"
        case .server(401, _, _): return "log in again: coffer sync login --server URL --email EMAIL"
        case .server(409, "account_exists", _): return "use `coffer sync login` to link this vault to the existing account"
        case .pinMismatch:
            return "if the server's key was changed as planned, pin the new one: coffer sync pin --sha256 NEW (or --reset --yes)"
        default: return nil
        }
    }

    package var status: ExitStatus {
        switch self {
        case .transport: return .unavailable
        // The server's state went back: reported as any state that does not verify is (EX_PROTOCOL).
        case .server(401, "session_lost", _): return .protocolViolation
        case .server(401, _, _), .credentialsRefused: return .notPermitted
        case .server(429, _, _): return .tryAgain
        case .server(409, "account_exists", _): return .alreadyExists
        case .invalidServerURL, .pinNeedsHTTPS: return .usage
        // EX_PROTOCOL: the remote side broke the protocol.
        case .pinMismatch: return .protocolViolation
        default: return .failure
        }
    }
}

extension SyncError: ReportableError {
    package var hint: String? {
        switch self {
        case .notLinked: return "run `coffer sync register` or `coffer sync login`"
        case .alreadyLinked, .differentVault: return "`coffer sync logout` unlinks this vault"
        case .verification(.newerKeyEpoch): return "it asks for the sync passphrase once; nothing here was changed"
        case .weakKDF, .accountParametersChanged:
            return "if you made the account that way or changed its passphrase elsewhere, pass --allow-weak-kdf or --accept-parameter-change"
        default: return nil
        }
    }

    package var status: ExitStatus {
        switch self {
        case .notLinked: return .usage
        case .alreadyLinked, .differentVault: return .alreadyExists
        case .wrongPassphrase, .verification(.newerKeyEpoch): return .notPermitted
        case .tooManyConflicts: return .tryAgain
        case .verification, .weakKDF, .unusableKDF, .accountParametersChanged: return .protocolViolation
        case .nothingToRepublish, .historyIncomplete, .vaultPassphraseNeeded: return .failure
        }
    }
}
