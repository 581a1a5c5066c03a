import ArgumentParser
import CofferKeystore
import CofferKit
import CofferReporting
import CofferVault
import Foundation

/// The environment, read once: Foundation builds the dictionary anew on every read, and an everyday command asks
/// several times.
package let processEnvironment = ProcessInfo.processInfo.environment

/// `--vault PATH` and `--keystore STORE`, shared by every command that opens a vault.
package struct VaultOption: ParsableArguments {
    package init() {}

    @Option(name: .long, help: ArgumentHelp("Vault directory (default: $COFFER_VAULT or $XDG_DATA_HOME/coffer/vault).", valueName: "path"))
    package var vault: String?
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Key store for this device's keys: \(KeystoreChoice.names.joined(separator: ", ")) (default: $COFFER_KEYSTORE, else the one this device recorded for the vault; auto for a new vault).",
            valueName: "store"))
    package var keystore: String?

    /// The same choice as plain values.
    package var selection: VaultSelection { VaultSelection(vault: vault, keystore: keystore) }

    package func validate() throws { try selection.validate() }

    package var location: CofferLocation { selection.location }

    package func location(deviceName: String?) -> CofferLocation { selection.location(deviceName: deviceName) }

    /// ``VaultSelection/open()``.
    package func open() throws -> Coffer { try selection.open() }

    /// ``VaultSelection/openItems()``.
    package func openItems() throws -> any OpenVault { try selection.openItems() }
}

/// The vault a command works on, as `--vault` and `--keystore` chose it, in plain values: the everyday commands are
/// made from these without the parser (``EverydayCommands``), whose option wrappers cost more to make than a lookup.
package struct VaultSelection: Equatable, Sendable {
    package var vault: String?
    package var keystore: String?

    package init(vault: String? = nil, keystore: String? = nil) {
        self.vault = vault
        self.keystore = keystore
    }

    package func validate() throws {
        if let keystore, KeystoreChoice(keystore) == nil {
            throw ValidationError("unknown key store \"\(keystore)\"; use \(KeystoreChoice.names.joined(separator: ", "))")
        }
        if let variable = processEnvironment["COFFER_KEYSTORE"], !variable.isEmpty, KeystoreChoice(variable) == nil {
            throw ValidationError("COFFER_KEYSTORE names an unknown key store; use \(KeystoreChoice.names.joined(separator: ", "))")
        }
    }

    package var location: CofferLocation { location(deviceName: nil) }

    package func location(deviceName: String?) -> CofferLocation {
        CofferLocation.standard(
            environment: processEnvironment, vaultOverride: vault, keystore: keystore.flatMap(KeystoreChoice.init),
            deviceName: deviceName)
    }

    /// Opens the vault with this device's key; on a device without one, or whose key store is locked or out of
    /// reach, asks for the passphrase on a terminal (without adding a device slot or a key: a vault whose device slot
    /// was removed keeps asking; `coffer unlock` adds one). The agent serves only `openItems()`'s commands: when it
    /// holds the vault, the user is told why the passphrase is asked all the same.
    package func open() throws -> Coffer {
        let location = location
        switch try openWithDeviceKey(location) {
        case .opened(let coffer): return coffer
        case .needsPassphrase(let reason):
            if SecretInput.shared.interactive, heldByAgent(location) != nil {
                Output.note("the agent does not serve this command; the passphrase opens the vault this time")
            }
            return try openWithPassphrase(location, because: reason)
        }
    }

    /// Opens the vault for the everyday item commands: with this device's key, else through the agent when it holds
    /// the vault (no passphrase asked, no KDF run), else with the passphrase as `open()` does.
    package func openItems() throws -> any OpenVault {
        let location = location
        switch try openWithDeviceKey(location) {
        case .opened(let coffer): return coffer
        case .needsPassphrase(let reason):
            if let held = heldByAgent(location) { return held }
            return try openWithPassphrase(location, because: reason)
        }
    }

    /// The vault when it opens without asking anything (this device's key, or the agent holding it), else nil; never
    /// a prompt or a warning: for shell completion, which runs at the user's terminal on every Tab.
    package func openWithoutAsking() -> (any OpenVault)? {
        let location = location
        if case .opened(let coffer)? = try? openWithDeviceKey(location) { return coffer }
        return (try? Agent.open(location, socket: Agent.socketPath(environment: processEnvironment))) ?? nil
    }

    private enum DeviceKeyOpen {
        case opened(Coffer)
        /// No device key here (`CofferError.needsSecret`), or its store cannot answer (a `KeystoreError`).
        case needsPassphrase(any Error)
    }

    private func openWithDeviceKey(_ location: CofferLocation) throws -> DeviceKeyOpen {
        do {
            return .opened(try Coffer.open(at: location))
        } catch CofferError.needsSecret {
            return .needsPassphrase(CofferError.needsSecret)
        } catch let failure as KeystoreError where failure.storeCannotAnswer {
            return .needsPassphrase(failure)
        }
    }

    private func openWithPassphrase(_ location: CofferLocation, because reason: any Error) throws -> Coffer {
        guard SecretInput.shared.interactive else { throw reason }
        if let failure = reason as? KeystoreError {
            Output.warning("\(failure.description); the passphrase opens the vault this time")
        }
        let passphrase = try SecretInput.shared.secret("Passphrase")
        return try Coffer.open(at: location, unlock: .passphrase(passphrase), addDeviceSlot: false)
    }

    /// The vault as the agent serves it, when an agent runs and holds it. An agent that cannot be trusted (its socket
    /// is another user's) is never sent anything: the command warns and goes on without it.
    private func heldByAgent(_ location: CofferLocation) -> AgentVault? {
        do {
            return try Agent.open(location, socket: Agent.socketPath(environment: processEnvironment))
        } catch {
            let reason = (error as? any ReportableError)?.message ?? "the agent cannot be used"
            Output.warning("\(reason); going on without the agent")
            return nil
        }
    }
}

extension KeystoreError {
    /// Locked or unreachable: the store could not say whether it holds the key.
    package var storeCannotAnswer: Bool {
        switch self {
        case .locked, .unreachable, .sealedElsewhere: return true
        case .invalidAccountName, .corruptEntry, .pinRefused, .pinLockout: return false
        }
    }
}

/// `--json`, shared by read commands.
package struct JSONOption: ParsableArguments {
    package init() {}

    @Flag(name: .long, help: "Print JSON for scripts.")
    package var json = false
}

// Library values as command-line arguments, for the everyday commands and the full tree alike.
/// A symbology as people type it: any case, with or without `-`, `_` or spaces ("EAN13", "EAN-13", "UPC-A",
/// "Code 128", "QR code"); `--help` lists the canonical names.
extension Symbology: ExpressibleByArgument {
    public init?(argument: String) {
        let wanted = Self.folded(argument)
        guard let match = Self.allCases.first(where: { Self.folded($0.rawValue) == wanted || Self.folded($0.rawValue) + "code" == wanted })
        else { return nil }
        self = match
    }

    private static func folded(_ text: String) -> String { String(text.lowercased().filter { $0.isLetter || $0.isNumber }) }
}
extension PayloadCharset: ExpressibleByArgument {}
/// Kinds as people type them: `key` (as `coffer add key` says) for signing keys, plurals, `token` for OTP tokens.
extension ItemKind: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument.lowercased() {
        case "card", "cards": self = .card
        case "otp", "otps", "token", "tokens", "totp", "hotp": self = .otp
        case "credential", "credentials": self = .credential
        case "key", "keys", "signing-key", "signing_key", "signing-keys": self = .signingKey
        case "note", "notes": self = .note
        default: return nil
        }
    }

    public static var allValueStrings: [String] { ["card", "otp", "credential", "key", "note"] }
}
extension Note.Template: ExpressibleByArgument {}
