import ArgumentParser
import CofferKit
import CofferLogging
import Foundation

/// The environment, read once: Foundation builds the dictionary anew on every read, and an everyday command asks
/// several times.
let processEnvironment = ProcessInfo.processInfo.environment

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
        version: "0.1.0",
        subcommands: [
            Init.self, Unlock.self, Add.self, List.self, Show.self, Code.self, Use.self, Edit.self, Remove.self,
            Restore.self, Sign.self, PassphraseCommand.self, RecoveryCodeCommand.self, Slots.self, RotateKey.self,
            Export.self, Import.self, Run.self, BarcodeCommand.self, OTPCommand.self, SyncCommand.self,
            PlacesCommand.self, NetworksCommand.self, NearCommand.self, RegionsCommand.self, CueCommand.self,
            KeystoreCommand.self, ClipboardRestore.self, AgentCommand.self, LockCommand.self,
        ])

    static func main() async {
        // Before anything else: a plain stdin-to-image run needs neither the command tree nor logging.
        if let barcode = BarcodeFastPath(arguments: CommandLine.arguments.dropFirst()) { barcode.run() }
        // The same line ArgumentParser prints, without building the command tree first.
        if CommandLine.arguments.dropFirst().elementsEqual(["--version"]) {
            print(configuration.version)
            return
        }
        CofferLog.bootstrap(environment: processEnvironment)
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let unknown = ArgumentHints.unknownCommandAskingForHelp(arguments) {
            // ArgumentParser would print the root help and exit 0, as if the command existed.
            let hint = ArgumentHints.nearestCommand(to: unknown).map { "did you mean `coffer \($0)`?" }
            exit(reporting: CLIError.other("unknown command '\(unknown)'", status: .usage, hint: hint))
        }
        do {
            // The everyday commands are synchronous: run here, on the main thread, without a hop to the concurrency
            // runtime's threads (on a busy machine each hop waits for a core).
            if var leaf = leafCommand(arguments) {
                try leaf.run()
            } else {
                try await execute(arguments)
            }
        } catch let error as any ReportableError {
            exit(reporting: error)
        } catch {
            // ArgumentParser's own errors: help, --version, and its parse and validation errors.
            let code = exitCode(for: error)
            if code == .success {
                exit(withError: error)
            }
            // ArgumentParser's message starts with its own "Error: "; ours already says "coffer: error:".
            var message = fullMessage(for: error)
            if message.hasPrefix("Error: ") { message.removeFirst("Error: ".count) }
            let hint = ArgumentHints.hint(for: arguments, message: message)
            exit(reporting: CLIError.other(message, status: ExitStatus(rawValue: code.rawValue) ?? .usage, hint: hint))
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

    /// The commands people run many times a day, parsed on their own: building the whole command tree (every
    /// command's options, by reflection) costs more than such a command's work. Anything these arguments do not
    /// parse into cleanly, help included, goes to the root parser, so messages and exit codes stay its own.
    static func leafCommand(_ arguments: [String]) -> (any ParsableCommand)? {
        guard let name = arguments.first, !arguments.contains(where: { $0 == "-h" || $0 == "--help" || $0 == "--version" }) else {
            return nil
        }
        let rest = Array(arguments.dropFirst())
        if let plain = plainForm(name, rest) { return plain }
        switch name {
        case "code": return try? Code.parse(rest)
        case "show": return try? Show.parse(rest)
        case "list": return try? List.parse(rest)
        case "use": return try? Use.parse(rest)
        default: return nil
        }
    }

    /// The commonest forms, a command and at most one name without options, made without the parser: parsing even
    /// one command reflects over all its options, which costs about as much as the lookup itself. Every property is
    /// set here to what parsing these arguments gives; anything else (an option, a name starting with "-") is left to
    /// the parser. `CLITests` runs these forms throughout, and `KindnessTests.plainForms` checks them against it.
    static func plainForm(_ name: String, _ rest: [String]) -> (any ParsableCommand)? {
        guard rest.count <= 1, !(rest.first?.hasPrefix("-") ?? false) else { return nil }
        let query = rest.first
        var vaultOption = VaultOption()
        vaultOption.vault = nil
        vaultOption.keystore = nil
        guard (try? vaultOption.validate()) != nil else { return nil }
        var output = JSONOption()
        output.json = false
        switch (name, query) {
        case ("code", _):
            var command = Code()
            command.vaultOption = vaultOption
            command.output = output
            command.query = query
            command.clip = false
            return command
        case ("show", let query?):
            var drawing = DrawingOptions()
            drawing.invert = false
            drawing.noColor = false
            var command = Show()
            command.vaultOption = vaultOption
            command.output = output
            command.query = query
            command.reveal = false
            command.noBarcode = false
            command.clip = false
            command.drawing = drawing
            var photoOutput = PhotoOutputOptions()
            photoOutput.side = nil
            photoOutput.out = nil
            photoOutput.force = false
            command.photoOutput = photoOutput
            return command
        case ("list", nil):
            var command = List()
            command.vaultOption = vaultOption
            command.output = output
            command.kind = nil
            command.tag = nil
            command.network = nil
            command.archived = false
            return command
        case ("use", let query?):
            var command = Use()
            command.vaultOption = vaultOption
            command.query = query
            return command
        default:
            return nil
        }
    }

    /// Prints `failure` (and its hint) the way every command reports errors, and exits with its code.
    static func exit(reporting failure: any ReportableError) -> Never {
        Terminal.writeError("coffer: error: \(failure.message)\n")
        if let hint = failure.hint { Terminal.writeError("coffer: hint: \(hint)\n") }
        Foundation.exit(failure.status.rawValue)
    }
}

/// `--vault PATH` and `--keystore STORE`, shared by every command that opens a vault.
struct VaultOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Vault directory (default: $COFFER_VAULT or $XDG_DATA_HOME/coffer/vault).", valueName: "path"))
    var vault: String?
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Key store for this device's keys: \(KeystoreChoice.names.joined(separator: ", ")) (default: $COFFER_KEYSTORE, else the one this device recorded for the vault; auto for a new vault).",
            valueName: "store"))
    var keystore: String?

    func validate() throws {
        if let keystore, KeystoreChoice(keystore) == nil {
            throw ValidationError("unknown key store \"\(keystore)\"; use \(KeystoreChoice.names.joined(separator: ", "))")
        }
        if let variable = processEnvironment["COFFER_KEYSTORE"], !variable.isEmpty, KeystoreChoice(variable) == nil {
            throw ValidationError("COFFER_KEYSTORE names an unknown key store; use \(KeystoreChoice.names.joined(separator: ", "))")
        }
    }

    var location: CofferLocation { location(deviceName: nil) }

    func location(deviceName: String?) -> CofferLocation {
        CofferLocation.standard(
            environment: processEnvironment, vaultOverride: vault, keystore: keystore.flatMap(KeystoreChoice.init),
            deviceName: deviceName)
    }

    /// Opens the vault with this device's key; on a device without one, or whose key store is locked or out of
    /// reach, asks for the passphrase on a terminal (without adding a device slot or a key: a vault whose device slot
    /// was removed keeps asking; `coffer unlock` adds one). The agent serves only `openItems()`'s commands: when it
    /// holds the vault, the user is told why the passphrase is asked all the same.
    func open() throws -> Coffer {
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
    func openItems() throws -> any OpenVault {
        let location = location
        switch try openWithDeviceKey(location) {
        case .opened(let coffer): return coffer
        case .needsPassphrase(let reason):
            if let held = heldByAgent(location) { return held }
            return try openWithPassphrase(location, because: reason)
        }
    }

    private enum DeviceKeyOpen {
        case opened(Coffer)
        /// No device key here (`.needsSecret`), or its store cannot answer.
        case needsPassphrase(CofferError)
    }

    private func openWithDeviceKey(_ location: CofferLocation) throws -> DeviceKeyOpen {
        do {
            return .opened(try Coffer.open(at: location))
        } catch .needsSecret {
            return .needsPassphrase(.needsSecret)
        } catch {
            guard case .keystore(let failure) = error, failure.storeCannotAnswer else { throw error }
            return .needsPassphrase(error)
        }
    }

    private func openWithPassphrase(_ location: CofferLocation, because reason: CofferError) throws -> Coffer {
        guard SecretInput.shared.interactive else { throw reason }
        if case .keystore(let failure) = reason {
            Output.warning("\(failure.description); the passphrase opens the vault this time")
        }
        let passphrase = try SecretInput.shared.secret("Passphrase")
        return try Coffer.open(at: location, unlock: .passphrase(passphrase), addDeviceSlot: false)
    }

    /// The vault as the agent serves it, when an agent runs and holds it. An agent that cannot be trusted (its socket
    /// is another user's) is never sent anything: the command warns and goes on without it.
    private func heldByAgent(_ location: CofferLocation) -> AgentVault? {
        do {
            return try Agent.open(location, socket: AgentCommand.socket)
        } catch {
            Output.warning("\(error.description); going on without the agent")
            return nil
        }
    }
}

extension KeystoreError {
    /// Locked or unreachable: the store could not say whether it holds the key.
    var storeCannotAnswer: Bool {
        switch self {
        case .locked, .unreachable: return true
        case .invalidAccountName, .corruptEntry: return false
        }
    }
}

/// `--json`, shared by read commands.
struct JSONOption: ParsableArguments {
    @Flag(name: .long, help: "Print JSON for scripts.")
    var json = false
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
        Output.note("Created vault \(coffer.vaultID.uuidString.lowercased()) in \(coffer.directory)")
        if SecretInput.shared.interactive, !passphrase {
            Output.note("Only this device can open it. Add a passphrase (`coffer passphrase set`) or a recovery code (`coffer recovery-code new`) before you rely on it.")
        }
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
        _ = try Coffer.open(at: vaultOption.location(deviceName: device.deviceName), unlock: unlock)
    }
}
