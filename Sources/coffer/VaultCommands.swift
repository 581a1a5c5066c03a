import ArgumentParser
import CofferKit
import CofferPlatform
import CofferSync
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
        @Flag(help: "Do not ask (needed when not at a terminal): the code written down before stops working.") var yes = false

        func run() throws {
            let coffer = try vaultOption.open()
            if try vaultCall({ () throws(VaultError) in try coffer.vault.slots() }).contains(where: { $0.type == .recovery }) {
                try SecretInput.shared.requireConfirmation(
                    "Replace the recovery code? The one written down will stop working.", confirmed: yes,
                    consequence: "a new recovery code voids the one written down")
            }
            let code = try vaultCall { () throws(VaultError) in try coffer.vault.newRecoveryCode() }
            Output.note("Write this code down and keep it offline. It opens the vault; it will not be shown again.")
            Output.line(code)
        }
    }
}

struct RotateKey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-key",
        abstract: "Replace the master key and re-encrypt every item in one transaction (after a suspected compromise).",
        discussion: """
            A synced vault is rotated through its sync server (asks for the sync passphrase too): the re-encrypted
            items, the account's new wrapped key and the new vault state land there in one step. Other devices then
            report that the key changed and take the new one with `coffer sync login` (the sync passphrase, once).
            """)
    @OptionGroup var vaultOption: VaultOption

    func run() throws {
        let coffer = try vaultOption.open()
        let slots = try vaultCall { () throws(VaultError) in try coffer.vault.slots() }
        let passphrase = slots.contains { $0.type == .passphrase } ? try SecretInput.shared.secret("Passphrase") : nil
        if try vaultCall({ () throws(VaultError) in try coffer.vault.syncAccount() }) != nil {
            let session = try SyncCLI.session(coffer)
            let accountPassphrase = try SecretInput.shared.secret("Sync passphrase")
            let bar = SyncCLI.Progress("re-encrypting")
            let report = try SyncCLI.wait {
                try await session.rotateMasterKey(accountPassphrase: accountPassphrase, vaultPassphrase: passphrase, progress: bar.update)
            }
            bar.finish()
            SyncCLI.announce(report.rotation)
            Output.note("other devices take the new key with `coffer sync login` (they ask for the sync passphrase once)")
            return
        }
        let bar = ProgressBar(label: "Re-encrypting")
        let result = try cli { () throws(CofferError) in
            try coffer.rotateMasterKey(passphrase: passphrase) { done, total in bar.update(done, of: total) }
        }
        bar.finish()
        SyncCLI.announce(result)
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export the vault: an encrypted backup, plaintext JSON, or 2FA tokens for another app.",
        discussion: """
            coffer export --format backup FILE                encrypted; opens with the passphrase or recovery code
            coffer export --format json --plaintext [FILE]    every secret in the clear (stdout without FILE)
            coffer export --to aegis FILE                     an encrypted Aegis vault (asks for its new password)
            coffer export --to otpauth --plaintext [FILE]     one otpauth:// URI per line
            coffer export --to google --plaintext [FILE]      Google Authenticator migration URIs
            coffer export --to catima --plaintext FILE        the cards as a Catima backup (zip)
            """)

    enum Format: String, ExpressibleByArgument {
        case json, backup
    }

    enum Target: String, ExpressibleByArgument {
        case aegis, otpauth, google, catima
    }

    @OptionGroup var vaultOption: VaultOption
    @Option(help: "backup or json.") var format: Format?
    @Option(help: "Another app's format: aegis, otpauth or google (tokens), catima (cards).") var to: Target?
    @Flag(help: "Confirm that a plaintext export (every secret readable) is wanted.") var plaintext = false
    @Flag(help: "Replace FILE if it exists.") var force = false
    @Flag(help: "With --to google: also draw each migration URI as a QR code, to scan with Google Authenticator.")
    var qr = false
    @OptionGroup var drawing: DrawingOptions
    @Argument(help: "Output file (required for backups and Aegis; stdout otherwise when omitted).") var file: String?

    func run() throws {
        if let file, !force, FileManager.default.fileExists(atPath: file) {
            throw CLIError.usage("\(file) exists; add --force to replace it")
        }
        switch (format, to) {
        case (.backup?, nil):
            guard let file else { throw CLIError.usage("give the backup file: coffer export --format backup FILE") }
            let coffer = try vaultOption.open()
            try vaultCall { () throws(VaultError) in try coffer.vault.writeBackup(to: file) }
        case (.json?, nil):
            try requirePlaintext("a JSON export")
            let coffer = try vaultOption.open()
            let items = try cli { () throws(CofferError) in try coffer.items() }
            let export = PlaintextExport(items: items, vaultID: coffer.vault.vaultID, createdAt: coffer.vault.createdAt)
            try emit(Array(try export.encoded()) + [0x0A])
            reportLeftOut(export.leftOut)
        case (nil, .catima?):
            try requirePlaintext("the catima export")
            guard file != nil else { throw CLIError.usage("give the zip file: coffer export --to catima --plaintext FILE") }
            let coffer = try vaultOption.open()
            let items = try cli { () throws(CofferError) in try coffer.items() }
            let cards = items.compactMap { item -> Card? in
                guard case .card(let card) = item.content else { return nil }
                return card
            }
            try emit(CatimaExporter.export(cards))
            reportLeftOut(items.count - cards.count, "that are not cards")
            let gs1 = cards.filter { [.gs1_128, .itf14, .gs1DataMatrix].contains($0.symbology) }.count
            reportLeftOut(0, "", detail: gs1 > 0 ? "\(gs1) GS1/ITF-14 card(s) were written as Code 128, ITF or Data Matrix, which Catima has instead" : nil)
        case (nil, let target?):
            try exportTokens(to: target)
        default:
            throw CLIError.usage("give one of --format backup|json or --to aegis|otpauth|google")
        }
    }

    private func exportTokens(to target: Target) throws {
        if target != .aegis { try requirePlaintext("the \(target.rawValue) export") }
        guard target != .aegis || file != nil else { throw CLIError.usage("give the Aegis file: coffer export --to aegis FILE") }
        let password = target == .aegis ? try SecretInput.shared.secret("New password for the Aegis file", confirm: true) : nil
        let coffer = try vaultOption.open()
        let items = try cli { () throws(CofferError) in try coffer.items() }
        let tokens = items.compactMap { item -> OTPItem? in
            guard case .otp(let otp) = item.content else { return nil }
            return otp
        }
        reportLeftOut(items.count - tokens.count, "that are not 2FA tokens")
        switch target {
        case .aegis:
            guard let password else { return }
            do {
                try emit(Array(try AegisExporter.export(tokens, password: password, random: SystemRandom())))
            } catch let error as AegisExporter.ExportError {
                throw CLIError.failure(error.description)
            }
        case .otpauth:
            let (text, leftOut) = OTPAuthListExporter.export(tokens)
            try emit(Array(text.utf8))
            reportLeftOut(leftOut)
        case .google:
            let (uris, leftOut) = GoogleAuthenticatorExporter.export(tokens)
            try emit(Array(uris.map { $0 + "\n" }.joined().utf8))
            reportLeftOut(leftOut)
            if qr {
                for (index, uri) in uris.enumerated() {
                    let barcode = try CofferBarcode.encode(Array(uri.utf8), as: .qr, options: BarcodeOptions(qrErrorCorrection: .L))
                    Output.note("QR code \(index + 1) of \(uris.count):")
                    Terminal.writeError(try drawing.draw(barcode))
                }
            }
        case .catima:
            return
        }
    }

    /// Says what an export could not carry.
    private func reportLeftOut(_ count: Int, _ what: String, detail: String? = nil) {
        if count > 0 { Output.warning("left out \(Output.count(count, "item")) \(what)") }
        if let detail { Output.warning(detail) }
    }

    /// Lists the items an export could not write, each with the reason; everything else was written.
    private func reportLeftOut(_ problems: [ExportProblem]) {
        guard !problems.isEmpty else { return }
        Output.warning("left out \(Output.count(problems.count, "item")) this format cannot hold; they stay in the vault:")
        for problem in problems { Output.note("  \(problem.description)") }
    }

    private func requirePlaintext(_ what: String) throws {
        guard plaintext else { throw CLIError.usage("\(what) holds every secret in plaintext; add --plaintext to confirm") }
        Output.warning("this export contains secrets in plaintext; keep it safe and delete it after use")
    }

    /// Writes to FILE (0600, atomically) or standard output.
    private func emit(_ bytes: [UInt8]) throws {
        guard let file else {
            FileHandle.standardOutput.write(Data(bytes))
            return
        }
        do {
            try PrivateFiles.write(bytes, to: file)
        } catch {
            throw CLIError.failure(error.description)
        }
    }
}

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import another app's export (--from), or an encrypted Coffer backup (--format backup).",
        discussion: """
            coffer import --from aegis aegis-export.json      formats: \(ImportFormats.names.joined(separator: ", "))
            coffer import --from coffer-json export.json      Coffer's own plaintext export (coffer export --format json)
            coffer import --from keepass Passwords.kdbx       KeePass/KeePassXC: credentials, OTP tokens and notes
            coffer import --from steam maFiles.zip            Steam Desktop Authenticator: a maFile, or the zipped folder
            coffer import --from pkpass passes.pkpasses       Apple Wallet: one pass, or a bundle of them
            coffer import --format backup vault.coffer-backup  restores when there is no vault yet, else adds its items
            Passwords are asked on the terminal or read from standard input. Entries already in the vault are skipped;
            entries that cannot be read are listed with the reason. Everything read is added in one transaction.
            """)

    @OptionGroup var vaultOption: VaultOption
    @Option(help: "Another app's format: \(ImportFormats.names.joined(separator: ", ")).") var from: String?
    @Option(help: "backup: an encrypted Coffer backup.") var format: String?
    @Flag(name: .customLong("recovery-code"), help: "Open a backup with a recovery code instead of the passphrase.")
    var recoveryCode = false
    @Argument(help: "The file to import.") var file: String

    func run() throws {
        switch (from, format) {
        case (let name?, nil): try importFile(from: name)
        case (nil, "backup"): try importBackup()
        case (nil, let other?): throw CLIError.usage("unknown import format \(other); use --format backup or --from FORMAT")
        default: throw CLIError.usage("give --from FORMAT (another app) or --format backup (a Coffer backup)")
        }
    }

    private func importFile(from name: String) throws {
        guard let importer = ImportFormats.importer(named: name) else {
            throw CLIError.usage("unknown format \(name); known: \(ImportFormats.names.joined(separator: ", "))")
        }
        let data: [UInt8]
        do {
            data = try PrivateFiles.read(file, limit: importSizeLimit)
        } catch {
            throw CLIError.failure(error.description)
        }
        let coffer = try vaultOption.open()
        var result: ImportResult
        do {
            result = try importer.read(data, password: nil)
        } catch .passwordRequired {
            let password = try SecretInput.shared.secret("Password for \(file)")
            result = try readWithPassword(importer, data, password)
        } catch {
            throw CLIError.badData(error.description)
        }
        let bar = ProgressBar(label: "Importing")
        // The bar's line is ended before any message, whether the import succeeds or fails.
        let outcome = Result {
            try cli { () throws(CofferError) in
                try coffer.addImported(result.items) { done, total in bar.update(done, of: total) }
            }
        }
        bar.finish()
        let summary = try outcome.get()
        Output.note("Imported \(Output.count(summary.added, "item")) from \(name).")
        if !summary.duplicates.isEmpty {
            Output.note("Skipped \(summary.duplicates.count) already in the vault: \(summary.duplicates.joined(separator: ", "))")
        }
        if !result.problems.isEmpty {
            Output.warning("\(Output.count(result.problems.count, "entry", "entries")) could not be imported:")
            for problem in result.problems { Output.note("  \(problem.description)") }
        }
    }

    private func readWithPassword(_ importer: any Importer.Type, _ data: [UInt8], _ password: String) throws -> ImportResult {
        do {
            return try importer.read(data, password: password)
        } catch .wrongPassword {
            throw CLIError.coffer(.vault(.wrongPassphrase))
        } catch {
            throw CLIError.badData(error.description)
        }
    }

    private func importBackup() throws {
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
        Output.note("Imported \(Output.count(imported, "item"))\(skipped > 0 ? "; skipped \(skipped) already present" : "").")
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
        let coffer = try vaultOption.openItems()
        var environment: [String: String] = [:]
        for mapping in mappings {
            guard let equals = mapping.firstIndex(of: "="), equals != mapping.startIndex else {
                throw CLIError.usage("--env takes VARIABLE=credential name")
            }
            let variable = String(mapping[..<equals])
            guard variable.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }), !(variable.first?.isNumber ?? true) else {
                throw CLIError.usage("\(variable) is not a valid environment variable name")
            }
            let name = String(mapping[mapping.index(after: equals)...])
            let item = try cli { () throws(CofferError) in
                let credential = Result { () throws(CofferError) in try coffer.find(name, kind: .credential) }
                if case .failure(.noMatch) = credential {
                    // Named, but not a credential: say what it is rather than "no item matches".
                    throw .wrongKind(expected: .credential, found: try coffer.find(name).kind)
                }
                return try credential.get()
            }
            guard case .credential(let credential) = item.content else { continue }
            environment[variable] = credential.value
        }
        try ProcessLauncher.replaceProcess(program: program, arguments: arguments, extraEnvironment: environment)
    }
}
