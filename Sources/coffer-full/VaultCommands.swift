import ArgumentParser
import CofferCLI
import CofferCrypto
import CofferKit
import CofferPlatform
import CofferSync
import CofferVault
import Foundation

struct PassphraseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passphrase",
        abstract: "Set, change or remove the vault passphrase (re-wraps one key; no item is rewritten).",
        discussion: """
            Examples:
              coffer passphrase set
              coffer passphrase change --scrypt
              coffer passphrase remove
            """,
        subcommands: [Set.self, Change.self, RemovePassphrase.self])

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a passphrase slot.",
            discussion: """
                A new passphrase is asked twice; its strength is shown, and one that is easy to guess is refused \
                unless --allow-weak-passphrase insists.

                Examples:
                  coffer passphrase set
                  coffer passphrase set --scrypt
                """)
        @OptionGroup var vaultOption: VaultOption
        @Flag(help: "Use scrypt (N=2^15, r=8, p=1) instead of PBKDF2-HMAC-SHA256 (600,000 iterations).") var scrypt = false
        @OptionGroup var newPassphrase: NewPassphraseOptions

        func run() throws {
            let coffer = try vaultOption.open()
            let slots = try coffer.slots()
            if slots.contains(where: { $0.type == .passphrase }) {
                throw CLIError.usage("the vault already has a passphrase; use `coffer passphrase change`")
            }
            let passphrase = try newPassphrase.read()
            _ = try coffer.setPassphrase(passphrase, kdf: scrypt ? .defaultScrypt : .defaultPBKDF2)
        }
    }

    struct Change: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace the passphrase (asks for the current one first).",
            discussion: """
                Examples:
                  coffer passphrase change
                """)
        @OptionGroup var vaultOption: VaultOption
        @Flag(help: "Use scrypt for the new passphrase.") var scrypt = false
        @OptionGroup var newPassphrase: NewPassphraseOptions

        func run() throws {
            let coffer = try vaultOption.open()
            let current = try SecretInput.shared.secret("Current passphrase")
            // Proves the person changing it knows it; opening checks it against the slot.
            try coffer.checkPassphrase(current)
            let passphrase = try newPassphrase.read()
            _ = try coffer.setPassphrase(passphrase, kdf: scrypt ? .defaultScrypt : .defaultPBKDF2)
        }
    }

    struct RemovePassphrase: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove the passphrase slot.",
            discussion: """
                Examples:
                  coffer passphrase remove
                """)
        @OptionGroup var vaultOption: VaultOption

        func run() throws {
            let coffer = try vaultOption.open()
            try coffer.removeSlots(ofType: .passphrase)
        }
    }
}

struct RecoveryCodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recovery-code", abstract: "Manage the recovery code.",
        discussion: """
            Examples:
              coffer recovery-code new
            """, subcommands: [New.self])

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new recovery code once (any previous code stops working). Store it offline.",
            discussion: """
                Examples:
                  coffer recovery-code new
                  coffer recovery-code new --yes > /media/usb/coffer-recovery.txt
                """)
        @OptionGroup var vaultOption: VaultOption
        @Flag(help: "Do not ask (needed when not at a terminal): the code written down before stops working.") var yes = false

        func run() throws {
            let coffer = try vaultOption.open()
            if (try coffer.slots()).contains(where: { $0.type == .recovery }) {
                try SecretInput.shared.requireConfirmation(
                    "Replace the recovery code? The one written down will stop working.", confirmed: yes,
                    consequence: "a new recovery code voids the one written down")
            }
            let code = try coffer.newRecoveryCode()
            Output.note("Write this code down and keep it offline. It opens the vault; it will not be shown again.")
            Output.line(code)
        }
    }
}

struct RotateKey: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-key",
        abstract: "Replace the master key and re-encrypt every item in one transaction (after a suspected compromise).",
        discussion: """
            A synced vault is rotated through its sync server (asks for the sync passphrase too): the re-encrypted \
            items, the account's new wrapped key and the new vault state land there in one step. Other devices then \
            report that the key changed and take the new one with `coffer sync login` (the sync passphrase, once).

            Examples:
              coffer rotate-key
            """)
    @OptionGroup var vaultOption: VaultOption

    func run() async throws {
        let coffer = try vaultOption.open()
        let slots = try coffer.slots()
        let passphrase = slots.contains { $0.type == .passphrase } ? try SecretInput.shared.secret("Passphrase") : nil
        if (try coffer.syncAccount()) != nil {
            let session = try SyncCLI.session(coffer)
            let accountPassphrase = try SecretInput.shared.secret("Sync passphrase")
            let bar = SyncCLI.Progress("re-encrypting")
            let report = try await session.rotateMasterKey(accountPassphrase: accountPassphrase, vaultPassphrase: passphrase, progress: bar.update)
            bar.finish()
            SyncCLI.announce(report.rotation)
            Output.note("other devices take the new key with `coffer sync login` (they ask for the sync passphrase once)")
            return
        }
        let bar = ProgressBar(label: "Re-encrypting")
        let result = try coffer.rotateMasterKey(passphrase: passphrase) { done, total in bar.update(done, of: total) }
        bar.finish()
        SyncCLI.announce(result)
    }
}

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a program with credentials in its environment; nothing is printed.",
        discussion: """
            The credentials exist only in the program's environment: nothing is printed, and the program's exit \
            status becomes coffer's.

            Examples:
              coffer run --env OPENAI_API_KEY=OpenAI -- python app.py
              coffer run --env GH_TOKEN=GitHub --env NPM_TOKEN=npm -- make release
            """)

    @OptionGroup var vaultOption: VaultOption
    @Option(name: .customLong("env"), help: "VARIABLE=credential name (repeatable).") var mappings: [String] = []
    @Argument(parsing: .captureForPassthrough, help: "The program and its arguments, after --.") var command: [String] = []

    private var arguments: [String] { command.first == "--" ? Array(command.dropFirst()) : command }

    func validate() throws {
        guard !arguments.isEmpty else { throw ValidationError("give the program to run after --") }
        guard !mappings.isEmpty else { throw ValidationError("give at least one --env VARIABLE=credential") }
        for mapping in mappings {
            guard let equals = mapping.firstIndex(of: "="), equals != mapping.startIndex else {
                throw ValidationError("--env takes VARIABLE=credential name")
            }
            let variable = mapping[..<equals]
            guard variable.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }), !(variable.first?.isNumber ?? true) else {
                throw ValidationError("\(variable) is not a valid environment variable name")
            }
        }
    }

    func run() throws {
        let arguments = arguments
        guard let program = arguments.first else { return }
        let coffer = try vaultOption.openItems()
        var environment: [String: String] = [:]
        for mapping in mappings {
            guard let equals = mapping.firstIndex(of: "=") else { continue }
            let variable = String(mapping[..<equals])
            let name = String(mapping[mapping.index(after: equals)...])
            let credential = Result { try coffer.find(name, kind: .credential) }
            if case .failure(CofferError.noMatch) = credential {
                // Named, but not a credential: say what it is rather than "no item matches".
                throw CofferError.wrongKind(expected: .credential, found: try coffer.find(name).kind)
            }
            let item = try credential.get()
            guard case .credential(let credential) = item.content else { continue }
            environment[variable] = credential.value
        }
        try ProcessLauncher.replaceProcess(program: program, arguments: arguments, extraEnvironment: environment)
    }
}
