import ArgumentParser
import CofferKit
import CofferPlatform
import Foundation

struct PassphraseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passphrase",
        abstract: "Set, change or remove the vault passphrase (re-wraps one key; no item is rewritten).",
        subcommands: [Set.self, Change.self, RemovePassphrase.self])

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a passphrase slot.")
        @OptionGroup var vaultOption: VaultOption
        @Flag(help: "Use scrypt (N=2^15, r=8, p=1) instead of PBKDF2-HMAC-SHA256 (600,000 iterations).") var scrypt = false

        func run() throws {
            let coffer = try vaultOption.open()
            let slots = try vaultCall { () throws(VaultError) in try coffer.vault.slots() }
            if slots.contains(where: { $0.type == .passphrase }) {
                throw CLIError.usage("the vault already has a passphrase; use `coffer passphrase change`")
            }
            let passphrase = try SecretInput.shared.secret("New passphrase", confirm: true)
            try vaultCall { () throws(VaultError) in
                _ = try coffer.vault.setPassphrase(passphrase, kdf: scrypt ? .defaultScrypt : .defaultPBKDF2)
            }
        }
    }

    struct Change: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Replace the passphrase (asks for the current one first).")
        @OptionGroup var vaultOption: VaultOption
        @Flag(help: "Use scrypt for the new passphrase.") var scrypt = false

        func run() throws {
            let coffer = try vaultOption.open()
            let current = try SecretInput.shared.secret("Current passphrase")
            // Proves the person changing it knows it; opening checks it against the slot.
            _ = try vaultCall { () throws(VaultError) in
                try Vault.open(in: coffer.vault.directory, unlock: .passphrase(current), options: coffer.location.options)
            }
            let passphrase = try SecretInput.shared.secret("New passphrase", confirm: true)
            try vaultCall { () throws(VaultError) in
                _ = try coffer.vault.setPassphrase(passphrase, kdf: scrypt ? .defaultScrypt : .defaultPBKDF2)
            }
        }
    }

    struct RemovePassphrase: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove the passphrase slot.")
        @OptionGroup var vaultOption: VaultOption

        func run() throws {
            let coffer = try vaultOption.open()
            try vaultCall { () throws(VaultError) in try coffer.vault.removeSlots(ofType: .passphrase) }
        }
    }
}

struct RecoveryCodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recovery-code", abstract: "Manage the recovery code.", subcommands: [New.self])

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new recovery code once (any previous code stops working). Store it offline.")
        @OptionGroup var vaultOption: VaultOption

        func run() throws {
            let coffer = try vaultOption.open()
            let code = try vaultCall { () throws(VaultError) in try coffer.vault.newRecoveryCode() }
            Output.note("Write this code down and keep it offline. It opens the vault; it will not be shown again.")
            Output.line(code)
        }
    }
}

struct Slots: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the ways the vault can be opened.", subcommands: [ListSlots.self, RemoveSlot.self],
        defaultSubcommand: ListSlots.self)
}

extension SlotType: ExpressibleByArgument {
    public init?(argument: String) {
        guard let type = SlotType.allCases.first(where: { $0.name == argument }) else { return nil }
        self = type
    }

    public static var allValueStrings: [String] { allCases.map(\.name) }
}

struct RemoveSlot: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove the device, passphrase or recovery slot (never the last one).")
    @OptionGroup var vaultOption: VaultOption
    @Argument(help: "device, passphrase or recovery.") var type: SlotType

    func run() throws {
        let coffer = try vaultOption.open()
        try vaultCall { () throws(VaultError) in try coffer.vault.removeSlots(ofType: type) }
    }
}

struct ListSlots: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the slots.")
    @OptionGroup var vaultOption: VaultOption
    @OptionGroup var output: JSONOption

    struct SlotLine: Encodable {
        let id: String
        let type: String
        let kdf: String?
    }

    func run() throws {
        let coffer = try vaultOption.open()
        let slots = try vaultCall { () throws(VaultError) in try coffer.vault.slots() }
        let lines = slots.map { SlotLine(id: $0.id.uuidString.lowercased(), type: $0.type.name, kdf: $0.kdf?.description) }
        if output.json {
            try Output.json(lines)
            return
        }
        for line in lines {
            Output.line("\(String(line.id.prefix(8)))  \(pad(line.type, 10))  \(line.kdf ?? "")")
        }
    }
}

struct RotateKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-key",
        abstract: "Replace the master key and re-encrypt every item in one transaction (after a suspected compromise).")
    @OptionGroup var vaultOption: VaultOption

    func run() throws {
        let coffer = try vaultOption.open()
        let slots = try vaultCall { () throws(VaultError) in try coffer.vault.slots() }
        let passphrase = slots.contains { $0.type == .passphrase } ? try SecretInput.shared.secret("Passphrase") : nil
        let bar = ProgressBar(label: "Re-encrypting")
        let result = try cli { () throws(CofferError) in
            try coffer.rotateMasterKey(passphrase: passphrase) { done, total in bar.update(done, of: total) }
        }
        bar.finish()
        if let code = result.recoveryCode {
            Output.note("The old recovery code no longer works. New recovery code (shown once):")
            Output.line(code)
        }
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export the vault: an encrypted backup, or plaintext JSON (with --plaintext).",
        discussion: """
            coffer export --format backup FILE          encrypted; opens with the passphrase or recovery code
            coffer export --format json --plaintext [FILE]   every secret in the clear (stdout without FILE)
            """)

    enum Format: String, ExpressibleByArgument {
        case json, backup
    }

    @OptionGroup var vaultOption: VaultOption
    @Option(help: "backup or json.") var format: Format
    @Flag(help: "Confirm that a plaintext export (every secret readable) is wanted.") var plaintext = false
    @Flag(help: "Replace FILE if it exists.") var force = false
    @Argument(help: "Output file (required for backups; stdout for JSON when omitted).") var file: String?

    func run() throws {
        if let file, !force, FileManager.default.fileExists(atPath: file) {
            throw CLIError.usage("\(file) exists; add --force to replace it")
        }
        let coffer = try vaultOption.open()
        switch format {
        case .backup:
            guard let file else { throw CLIError.usage("give the backup file: coffer export --format backup FILE") }
            try vaultCall { () throws(VaultError) in try coffer.vault.writeBackup(to: file) }
        case .json:
            guard plaintext else {
                throw CLIError.usage("a JSON export holds every secret in plaintext; add --plaintext to confirm")
            }
            Output.warning("this export contains every secret in plaintext; keep it safe and delete it after use")
            let items = try cli { () throws(CofferError) in try coffer.items() }
            let export = try PlaintextExport(items: items, vaultID: coffer.vault.vaultID, createdAt: coffer.vault.createdAt)
            let data = try export.encoded()
            if let file {
                do {
                    try PrivateFiles.write(Array(data) + [0x0A], to: file)
                } catch {
                    throw CLIError.failure(error.description)
                }
            } else {
                FileHandle.standardOutput.write(data + Data([0x0A]))
            }
        }
    }
}

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import an encrypted backup: restores it when there is no vault yet, otherwise adds its items.")

    @OptionGroup var vaultOption: VaultOption
    @Option(help: "backup.") var format: String
    @Flag(name: .customLong("recovery-code"), help: "Open the backup with a recovery code instead of the passphrase.")
    var recoveryCode = false
    @Argument(help: "Backup file.") var file: String

    func run() throws {
        guard format == "backup" else { throw CLIError.usage("unknown import format \(format); supported: backup") }
        let unlock: UnlockMethod =
            recoveryCode
            ? .recoveryCode(try SecretInput.shared.secret("Backup recovery code"))
            : .passphrase(try SecretInput.shared.secret("Backup passphrase"))
        let location = vaultOption.location
        if !Vault.exists(in: location.vaultDirectory) {
            _ = try cli { () throws(CofferError) in try Coffer.restore(backup: file, to: location, unlock: unlock) }
            return
        }
        let coffer = try vaultOption.open()
        let (imported, skipped) = try cli { () throws(CofferError) in try coffer.importBackup(file, unlock: unlock) }
        Output.note("Imported \(imported) item(s)\(skipped > 0 ? "; skipped \(skipped) already present" : "").")
    }
}

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a program with credentials in its environment; nothing is printed.",
        discussion: "Example: coffer run --env OPENAI_API_KEY=OpenAI -- python app.py")

    @OptionGroup var vaultOption: VaultOption
    @Option(name: .customLong("env"), help: "VARIABLE=credential name (repeatable).") var mappings: [String] = []
    @Argument(parsing: .captureForPassthrough, help: "The program and its arguments, after --.") var command: [String] = []

    func run() throws {
        let arguments = command.first == "--" ? Array(command.dropFirst()) : command
        guard let program = arguments.first else { throw CLIError.usage("give the program to run after --") }
        guard !mappings.isEmpty else { throw CLIError.usage("give at least one --env VARIABLE=credential") }
        let coffer = try vaultOption.open()
        var environment: [String: String] = [:]
        for mapping in mappings {
            guard let equals = mapping.firstIndex(of: "="), equals != mapping.startIndex else {
                throw CLIError.usage("--env takes VARIABLE=credential name")
            }
            let variable = String(mapping[..<equals])
            guard variable.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }), !(variable.first?.isNumber ?? true) else {
                throw CLIError.usage("\(variable) is not a valid environment variable name")
            }
            let item = try cli { () throws(CofferError) in try coffer.find(String(mapping[mapping.index(after: equals)...]), kind: .credential) }
            guard case .credential(let credential) = item.content else { continue }
            environment[variable] = credential.value
        }
        try ProcessLauncher.replaceProcess(program: program, arguments: arguments, extraEnvironment: environment)
    }
}
