import ArgumentParser
import CofferAgentWire
import CofferCrypto
import CofferInterop
import CofferKeystore
import CofferKit
import CofferPlatform
import CofferReporting
import CofferVault
import Foundation

/// Errors the command line itself raises.
package enum CLIError: ReportableError, CustomStringConvertible {
    case usage(String)
    case noInput(String)
    case failure(String)
    /// Input a command cannot use (exit 65), from a layer without its own error type here.
    case badData(String)
    /// The user ended a prompt with Ctrl-D, or answered no to a confirmation.
    case cancelled
    /// The terminal is too narrow for the symbol (exit 75: widen it and try again, or write an image).
    case narrowTerminal(String)
    /// `coffer run` could not start its program: 127 when there is none, 126 when it cannot be executed (as shells do).
    case launch(String, status: ExitStatus)
    /// A failure with its own code and hint, for the few messages only a command can word (places, positions).
    case other(String, status: ExitStatus, hint: String?)

    package var description: String {
        switch self {
        case .usage(let message), .failure(let message), .badData(let message), .narrowTerminal(let message): return message
        case .noInput(let what): return "no \(SecretInput.lowercasedFirst(what)) given: type it on a terminal or pipe it on standard input"
        case .launch(let message, _), .other(let message, _, _): return message
        case .cancelled: return "cancelled; nothing changed"
        }
    }

    package var hint: String? {
        switch self {
        case .narrowTerminal: return "or write an image to scan from another screen: coffer barcode NAME --png FILE"
        case .other(_, _, let hint): return hint
        default: return nil
        }
    }

    package var status: ExitStatus {
        switch self {
        case .usage, .noInput: return .usage
        case .failure, .cancelled: return .failure
        case .badData: return .badData
        case .narrowTerminal: return .tryAgain
        case .launch(_, let status), .other(_, let status, _): return status
        }
    }
}

extension CofferError: ReportableError {
    package var hint: String? {
        switch self {
        case .needsSecret:
            return
                "run `coffer unlock` (passphrase) or `coffer unlock --recovery-code` once on this device, or `coffer agent start` to keep a passphrase-only vault unlocked for a while"
        case .ambiguous: return "give the full name or an id prefix (4+ characters) of the one you mean"
        case .syncedVault: return "a synced vault is rotated through its server: `coffer rotate-key` does that"
        case .keyBoundElsewhere: return "PIN-held keys never leave the device they were added on; keep the seed's own backup"
        case .noMatch, .wrongKind, .keystoreNotRecorded, .keystoreUnchanged, .keystoreCopyDiffers: return nil
        case .agentNotRunning, .agentUnusable, .agent: return nil
        }
    }

    package var status: ExitStatus {
        switch self {
        case .noMatch: return .notFound
        case .ambiguous: return .usage
        case .wrongKind: return .badData
        case .needsSecret, .keyBoundElsewhere: return .notPermitted
        case .syncedVault, .keystoreNotRecorded, .keystoreUnchanged, .keystoreCopyDiffers: return .failure
        case .agentNotRunning, .agentUnusable: return .unavailable
        case .agent(let failure):
            switch failure.code {
            case .wrongPassphrase: return .notPermitted
            case .noMatch, .notHeld, .cannotOpen: return .notFound
            case .ambiguous, .badRequest: return .usage
            case .wrongKind: return .badData
            case .failed: return .failure
            }
        }
    }
}

extension VaultError: ReportableError {
    package var hint: String? {
        switch self {
        case .notFound: return "create one with `coffer init`, or point --vault / COFFER_VAULT at an existing vault"
        case .newerFormat, .unknownMigrations: return "this vault was written by a newer Coffer; install that version to open it"
        case .noSlot(.passphrase): return "add one with `coffer passphrase set` or `coffer recovery-code new`"
        case .wrongPassphrase: return "forgotten it? a recovery code opens the vault too, if one was made: `coffer unlock --recovery-code`"
        case .tampered:
            return "`coffer rm --purge ID` removes a damaged item; a backup restores into a fresh vault (`coffer import --format backup FILE --vault NEW`)"
        case .deviceKeyMismatch:
            return "this device's slot was removed or replaced; `coffer unlock` (passphrase or recovery code) gives it a new one"
        case .model(let error): return error.hint
        default: return nil
        }
    }

    package var status: ExitStatus {
        switch self {
        case .notFound, .itemNotFound, .slotNotFound, .noSlot: return .notFound
        case .wrongPassphrase, .wrongRecoveryCode, .deviceKeyMismatch: return .notPermitted
        case .alreadyExists: return .alreadyExists
        case .conflict, .keyRotatedElsewhere: return .tryAgain
        case .newerFormat, .unknownMigrations, .tampered, .notAVault, .crypto: return .badData
        case .model(let error): return error.status
        case .lastSlot, .noPreparedRotation, .storage, .file: return .failure
        }
    }
}

extension ModelError: ReportableError {
    package var hint: String? {
        switch self {
        case .keyLocked, .wrongPIN(remainingAttempts: ...0):
            return "the seed's own backup brings the key back: `coffer rm --purge` it, then `coffer add key`"
        default: return nil
        }
    }

    /// A wrong PIN and a locked key are refusals, not bad data: the item itself is fine.
    package var status: ExitStatus {
        switch self {
        case .wrongPIN, .keyLocked: return .notPermitted
        default: return .badData
        }
    }
}

extension KeystoreError: ReportableError {
    package var hint: String? {
        switch self {
        case .locked:
            return "unlock the key store (log in to the desktop session, or unlock the keyring) and run the command again; nothing was changed"
        case .unreachable:
            return "`coffer keystore status` shows which store holds this vault's keys here; once it answers, `coffer keystore migrate --to file` moves them"
        case .sealedElsewhere:
            return "the key never leaves that machine's TPM: `coffer unlock` (with the passphrase, or `--recovery-code`) gives this device a key of its own"
        case .pinRefused(0, let recovery), .pinLockout(let recovery):
            let wait = recovery > 0 ? "it forgets one wrong PIN every \(Self.duration(recovery)), and then allows one more try; " : ""
            return wait + "the TPM's owner can clear the lockout now (`tpm2_dictionarylockout -c`, with the lockout password if one is set)"
        case .pinRefused, .invalidAccountName, .corruptEntry: return nil
        }
    }

    package var status: ExitStatus {
        switch self {
        case .locked, .pinLockout: return .tryAgain
        case .unreachable, .sealedElsewhere: return .unavailable
        case .pinRefused: return .notPermitted
        case .invalidAccountName, .corruptEntry: return .failure
        }
    }

    /// A TPM's recovery interval as people say it: "10 minutes", "2 hours", "45 seconds".
    package static func duration(_ seconds: UInt32) -> String {
        func unit(_ count: UInt32, _ name: String) -> String { "\(count) \(name)\(count == 1 ? "" : "s")" }
        if seconds >= 7_200 { return unit((seconds + 1_800) / 3_600, "hour") }
        if seconds >= 120 { return unit((seconds + 30) / 60, "minute") }
        return unit(seconds, "second")
    }
}

extension OTPError: ReportableError {
    package var status: ExitStatus { .badData }
}

extension BarcodeError: ReportableError {
    package var status: ExitStatus { .badData }
}

extension CofferCryptoError: ReportableError {
    package var status: ExitStatus { .badData }
}

extension StellarStrKey.StrKeyError: ReportableError {
    package var message: String { "seed: \(description)" }
    package var status: ExitStatus { .badData }
}

extension PlacesError: ReportableError {
    package var status: ExitStatus { .badData }
}

extension InteropError: ReportableError {
    package var status: ExitStatus {
        switch self {
        case .wrongPassword, .wrongKey: return .notPermitted
        case .passwordRequired: return .usage
        case .readerUnavailable: return .unavailable
        default: return .badData
        }
    }
}

extension AegisExporter.ExportError: ReportableError {
    package var status: ExitStatus { .failure }
}

extension PrivateFileError: ReportableError {
    package var hint: String? {
        if case .alreadyExists = self { return "add --force to replace it" }
        return nil
    }

    package var status: ExitStatus {
        switch self {
        case .notFound: return .notFound
        case .alreadyExists: return .alreadyExists
        case .tooLarge: return .badData
        default: return .failure
        }
    }
}

extension ErrorReporter {
    /// `coffer`'s and `coffer-full`'s reporter.
    package static let coffer = ErrorReporter(program: "coffer")

    /// Reports `failure` as `coffer: error: …` and exits with its code.
    package static func exit(reporting failure: any ReportableError) -> Never {
        coffer.exit(reporting: failure)
    }

    /// Reports an error a command's work throws outside parsing: ours as above, any other as ArgumentParser would.
    package static func exit(reporting error: any Error) -> Never {
        // ArgumentParser's reporting asks for a command type; outside parsing, any gives the same answer.
        coffer.exit(reporting: error, of: VaultOption.self)
    }

    /// Reports any error a command's parsing or run throws (`ErrorReporter.exit(reporting:of:hint:)`).
    package static func exit(
        reporting error: any Error, of command: any ParsableArguments.Type, hint: (String) -> String?
    ) -> Never {
        coffer.exit(reporting: error, of: command, hint: hint)
    }
}

extension CLIError {
    /// Standard input read whole by `read`, its failures said as every command says them.
    static func reading(_ read: () throws(StandardInputError) -> [UInt8]) throws(CLIError) -> [UInt8] {
        do {
            return try read()
        } catch {
            switch error {
            case .unreadable(let reason): throw .failure("cannot read standard input: \(reason)")
            case .tooLarge(let limit): throw .usage("standard input is larger than \(limit >> 20) MiB")
            }
        }
    }
}
