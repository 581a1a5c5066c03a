import ArgumentParser
import CofferCLI
import CofferCrypto
import CofferKeystore
import CofferKit
import CofferLogging
import CofferPlatform
import CofferReporting
import CofferVault
import Foundation

@main
struct CofferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "A private vault for cards, 2FA codes, keys and notes.",
        discussion: """
            Secrets are read from the terminal (without echo) or from standard input, never from arguments. The \
            vault lives in $XDG_DATA_HOME/coffer/vault unless --vault or COFFER_VAULT says otherwise.

            Examples:
              coffer init --passphrase
              coffer add card Costco --symbology ean13
              coffer show Costco
              coffer code GitHub
            """,
        version: EverydayCommands.version,
        subcommands: [
            Init.self, Unlock.self, Add.self, List.self, Show.self, Code.self, Use.self, Edit.self, Remove.self,
            Restore.self, Sign.self, PassphraseCommand.self, RecoveryCodeCommand.self, Slots.self, RotateKey.self,
            Export.self, Import.self, Run.self, BarcodeCommand.self, OTPCommand.self, SyncCommand.self,
            PlacesCommand.self, NetworksCommand.self, NearCommand.self, RegionsCommand.self, CueCommand.self,
            KeystoreCommand.self, ClipboardRestore.self, AgentCommand.self, LockCommand.self,
        ])

    /// Runs what `coffer` handed over (``EverydayCommands`` does the everyday forms in `coffer` itself).
    static func main() async {
        AllocatorTuning.reuseLargeBlocks()
        CofferLog.bootstrap(environment: processEnvironment)
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let unknown = ArgumentHints.unknownCommandAskingForHelp(arguments) {
            // ArgumentParser would print the root help and exit 0, as if the command existed.
            let hint = ArgumentHints.nearestCommand(to: unknown).map { "did you mean `coffer \($0)`?" }
            ErrorReporter.exit(reporting: CLIError.other("unknown command '\(unknown)'", status: .usage, hint: hint))
        }
        do {
            try await execute(arguments)
        } catch {
            ErrorReporter.exit(reporting: error, of: CofferCommand.self, hint: { ArgumentHints.hint(for: arguments, message: $0) })
        }
    }

    /// Parses `arguments` and runs the command they name. Nonisolated, so that the command is made and run in one
    /// isolation domain rather than sent from the main actor.
    nonisolated static func execute(_ arguments: [String]) async throws {
        var command = try parseAsRoot(CueCommand.normalizedArguments(arguments))
        if var asyncCommand = command as? any AsyncParsableCommand {
            try await asyncCommand.run()
        } else {
            try command.run()
        }
    }
}

/// `--device-name NAME`, for the commands that give this device a device slot.
struct DeviceNameOption: ParsableArguments {
    @Option(name: .customLong("device-name"), help: ArgumentHelp("Name of this device's slot (default: the host name).", valueName: "name"))
    var deviceName: String?

    func validate() throws {
        if let deviceName, deviceName.isEmpty || deviceName.utf8.count > 128 || deviceName.contains(where: \.isNewline) {
            throw ValidationError("a device name is 1 to 128 bytes on one line")
        }
    }
}

struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a vault, opened by this device's key (and a passphrase with --passphrase).",
        discussion: """
            Without --passphrase, only this device opens the vault: add a passphrase or a recovery code before \
            relying on it.

            Examples:
              coffer init --passphrase
              coffer init --vault ~/vaults/work --keystore secret-service
            """)

    @OptionGroup var vaultOption: VaultOption
    @OptionGroup var device: DeviceNameOption
    @Flag(help: "Also protect the vault with a passphrase (asked twice, or read from stdin).")
    var passphrase = false
    @Flag(help: "Stretch the passphrase with scrypt (N=2^15, r=8, p=1) instead of PBKDF2-HMAC-SHA256 (600,000 iterations).")
    var scrypt = false
    @OptionGroup var newPassphrase: NewPassphraseOptions

    func run() throws {
        let secret = passphrase ? try newPassphrase.read() : nil
        let coffer = try Coffer.initialize(
            at: vaultOption.location(deviceName: device.deviceName), passphrase: secret, kdf: scrypt ? .defaultScrypt : .defaultPBKDF2)
        // On standard error even from a script: where the vault is matters there too, and stdout stays empty.
        Output.note("Created vault \(coffer.vaultID.lowercasedString) in \(coffer.directory); \(Self.whereTheKeyIs(coffer.keystore.kind))")
        if let warning = Self.fileStoreWarning(coffer.keystore, passphrase: passphrase) { Output.warning(warning) }
        if SecretInput.shared.interactive, !passphrase {
            Output.note(
                "Only this device can open it. Add a passphrase (`coffer passphrase set`) or a recovery code (`coffer recovery-code new`) before you rely on it."
            )
        }
    }
}

extension Init {
    /// Where a new vault's device key went, as `init` says it.
    static func whereTheKeyIs(_ kind: KeystoreKind) -> String {
        switch kind {
        case .tpm2: return "its device key is sealed by this machine's TPM."
        case .secretService: return "its device key is in the Secret Service (the login keyring)."
        case .keychain: return "its device key is in the keychain (this device only)."
        case .file: return "its device key is in a file of the file key store."
        case .memory: return "its device key is in memory only."
        }
    }

    /// What a device key in the file store means, said whenever that store is named; nil for any other store.
    static func fileStoreWarning(_ store: any DeviceKeystore, passphrase: Bool) -> String? {
        guard let file = store as? FileKeystore else { return nil }
        return "anyone with a copy of \(file.directory) and of the vault can open it: "
            + (passphrase
                ? "use a TPM or a keyring for its device key (`coffer keystore migrate`)"
                : "add a passphrase, or use a TPM (`coffer keystore migrate --to tpm2`)")
    }
}

struct Unlock: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open the vault with its passphrase or a recovery code and let this device open it from now on.",
        discussion: """
            Run it once on a new device (or after its slot was removed): the passphrase or recovery code opens the \
            vault and this device gets its own slot.

            Examples:
              coffer unlock
              coffer unlock --recovery-code --device-name laptop
            """)

    @OptionGroup var vaultOption: VaultOption
    @OptionGroup var device: DeviceNameOption
    @Flag(name: .customLong("recovery-code"), help: "Use a recovery code instead of the passphrase.")
    var recoveryCode = false

    func run() throws {
        let unlock: UnlockMethod =
            recoveryCode
            ? .recoveryCode(try SecretInput.shared.secret("Recovery code"))
            : .passphrase(try SecretInput.shared.secret("Passphrase"))
        let coffer = try Coffer.open(at: vaultOption.location(deviceName: device.deviceName), unlock: unlock)
        Slots.List.noteDeadSlots(try coffer.deadDeviceSlots())
    }
}
