import ArgumentParser
import CofferCLI
import CofferCrypto
import CofferInterop
import CofferKit
import CofferPlatform
import CofferReporting
import CofferSync
import CofferVault
import Foundation

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export the vault: an encrypted backup, plaintext JSON, or 2FA tokens for another app.",
        discussion: """
            A backup is encrypted and opens with the passphrase or the recovery code. Every other format holds the \
            secrets in plaintext (or, for Aegis, under a new password) and needs --plaintext; items a format cannot \
            hold are listed and left out.

            Examples:
              coffer export --format backup vault.coffer-backup
              coffer export --format json --plaintext > everything.json
              coffer export --to aegis aegis.json     # asks for its password
              coffer export --to otpauth --plaintext tokens.txt
              coffer export --to google --plaintext --qr
              coffer export --to catima --plaintext cards.zip
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

    func validate() throws {
        switch (format, to) {
        case (.backup?, nil) where file == nil: throw ValidationError("give the backup file: coffer export --format backup FILE")
        case (nil, .catima?) where file == nil: throw ValidationError("give the zip file: coffer export --to catima --plaintext FILE")
        case (nil, .aegis?) where file == nil: throw ValidationError("give the Aegis file: coffer export --to aegis FILE")
        case (_?, nil), (nil, _?): break
        default: throw ValidationError("give one of --format backup|json or --to aegis|otpauth|google|catima")
        }
    }

    func run() throws {
        if let file, !force, FileManager.default.fileExists(atPath: file) {
            throw CLIError.usage("\(file) exists; add --force to replace it")
        }
        switch (format, to) {
        case (.backup?, nil):
            guard let file else { return }
            let coffer = try vaultOption.open()
            try coffer.writeBackup(to: file)
        case (.json?, nil):
            try requirePlaintext("a JSON export")
            let coffer = try vaultOption.open()
            let items = try coffer.items()
            let export = PlaintextExport(
                items: items, vaultID: coffer.vaultID, createdAt: coffer.createdAt, photos: try coffer.photosByID(of: items))
            try emit(Array(try export.encoded()) + [0x0A])
            reportLeftOut(export.leftOut)
        case (nil, .catima?):
            try requirePlaintext("the catima export")
            let coffer = try vaultOption.open()
            let items = try coffer.items()
            let cardItems = items.filter { $0.kind == .card }
            let cards = cardItems.compactMap { item -> Card? in
                guard case .card(let card) = item.content else { return nil }
                return card
            }
            let photos = try coffer.photos(of: cardItems)
            try emit(CatimaExporter.export(cards, photos: photos))
            reportLeftOut(items.count - cards.count, "that are not cards")
            let gs1 = cards.filter { [.gs1_128, .itf14, .gs1DataMatrix].contains($0.symbology) }.count
            reportLeftOut(0, "", detail: gs1 > 0 ? "\(gs1) GS1/ITF-14 card(s) were written as Code 128, ITF or Data Matrix, which Catima has instead" : nil)
        case (nil, let target?):
            try exportTokens(to: target)
        default:
            return
        }
    }

    private func exportTokens(to target: Target) throws {
        if target != .aegis { try requirePlaintext("the \(target.rawValue) export") }
        let password = target == .aegis ? try SecretInput.shared.secret("New password for the Aegis file", confirm: true) : nil
        let coffer = try vaultOption.open()
        let items = try coffer.items()
        let tokens = items.compactMap { item -> OTPItem? in
            guard case .otp(let otp) = item.content else { return nil }
            return otp
        }
        reportLeftOut(items.count - tokens.count, "that are not 2FA tokens")
        switch target {
        case .aegis:
            guard let password else { return }
            try emit(Array(try AegisExporter.export(tokens, password: password, random: SystemRandom())))
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
        try PrivateFiles.write(bytes, to: file)
    }
}

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import another app's export (--from), or an encrypted Coffer backup (--format backup).",
        discussion: """
            Formats: \(Import.formatNames.joined(separator: ", ")). Passwords are asked on the terminal or read \
            from standard input. Entries already in the vault are skipped; entries that cannot be read are listed \
            with the reason. Everything read is added in one transaction. A backup restores when there is no vault \
            yet, else adds its items.

            --from image reads the barcodes in photos and screenshots (PNG or JPEG, several files): an otpauth:// \
            or Google Authenticator export QR code becomes tokens, any other code a card named after its file.

            Examples:
              coffer import --from aegis aegis-export.json
              coffer import --from image screenshots/*.png
              coffer import --from keepass Passwords.kdbx
              coffer import --from keepass Vault.kdbx --key-file Vault.keyx
              coffer import --from steam maFiles.zip
              coffer import --from pkpass passes.pkpasses
              coffer import --format backup vault.coffer-backup
            """)

    @OptionGroup var vaultOption: VaultOption
    @Option(help: "Another app's format: \(Import.formatNames.joined(separator: ", ")).") var from: String?
    @Option(help: "backup: an encrypted Coffer backup.") var format: String?
    @Flag(name: .customLong("recovery-code"), help: "Open a backup with a recovery code instead of the passphrase.")
    var recoveryCode = false
    @Option(name: .customLong("key-file"), help: "KeePass: the database's key file (the password, asked too, may then be empty).")
    var keyFile: String?
    @Argument(help: "The file to import (with --from image, one or more pictures).") var files: [String] = []

    /// The importers' names, and `image` (read by the barcode reader, which the importers' module does not carry).
    static var formatNames: [String] { ImportFormats.names + ["image"] }

    private var file: String { files[0] }

    func validate() throws {
        switch (from, format) {
        case (_?, nil), (nil, "backup"): break
        case (nil, let other?): throw ValidationError("unknown import format \(other); use --format backup or --from FORMAT")
        default: throw ValidationError("give --from FORMAT (another app) or --format backup (a Coffer backup)")
        }
        if let from, !Self.formatNames.contains(from.lowercased()) {
            throw ValidationError("unknown format \(from); known: \(Self.formatNames.joined(separator: ", "))")
        }
        guard !files.isEmpty else { throw ValidationError("give the file to import") }
        if keyFile != nil, from?.lowercased() != KeePassImporter.formatName {
            throw ValidationError("--key-file is for KeePass databases (--from keepass)")
        }
        if files.count > 1, from?.lowercased() != "image" {
            throw ValidationError("give one file (several only with --from image)")
        }
    }

    func run() throws {
        if from?.lowercased() == "image" {
            try importImages()
        } else if let from {
            try importFile(from: from)
        } else {
            try importBackup()
        }
    }

    /// Every barcode in every picture, as tokens and cards (a card named after its file), in one transaction. A
    /// picture that cannot be read or shows no code is listed with the others' problems; the rest still import.
    private func importImages() throws {
        var result = ImportResult()
        var codes: [ScannedCodes.Code] = []
        var stems: [String: String] = [:]
        // A photo takes a fraction of a second to read: a folder of them gets a bar.
        let bar = ProgressBar(label: "Reading pictures")
        for (index, path) in files.enumerated() {
            defer { bar.update(index + 1, of: files.count) }
            let name = (path as NSString).lastPathComponent
            do {
                let found = try ImageScan.codes(in: path)
                if found.isEmpty { result.problems.append(ImportProblem(entry: name, reason: "no barcode found")) }
                for code in found { stems[code.source] = ((name as NSString).deletingPathExtension) }
                codes += found
            } catch let error as CLIError {
                let message = error.description.hasPrefix(path + ": ") ? String(error.description.dropFirst(path.count + 2)) : error.description
                result.problems.append(ImportProblem(entry: name, reason: message))
            }
        }
        bar.finish()
        let read = ScannedCodes.items(codes) { code in
            let stem = stems[code.source] ?? "Scanned card"
            return code.source.contains(", code ") ? "\(stem) \(code.source.components(separatedBy: ", code ").last ?? "")" : stem
        }
        result.items += read.items
        result.problems += read.problems
        let coffer = try vaultOption.open()
        let summary = try coffer.addImported(result.items)
        for item in summary.items { Output.note("  added \(item.content.kind.rawValue) \(item.content.name)") }
        Output.note("Imported \(Output.count(summary.added, "item")) from \(Output.count(files.count, "image")).")
        if !summary.duplicates.isEmpty {
            Output.note("Skipped \(summary.duplicates.count) already in the vault: \(summary.duplicates.joined(separator: ", "))")
        }
        if !result.problems.isEmpty {
            Output.warning("\(Output.count(result.problems.count, "picture or code", "pictures or codes")) could not be imported:")
            for problem in result.problems { Output.note("  \(problem.description)") }
        }
        if summary.added == 0, summary.duplicates.isEmpty {
            throw CLIError.other("nothing imported", status: .badData, hint: ImageScan.hint)
        }
    }

    private func importFile(from name: String) throws {
        guard let importer = ImportFormats.importer(named: name) else { return }
        let data = try PrivateFiles.read(file, limit: importSizeLimit)
        let coffer = try vaultOption.open()
        let result = try read(data, with: importer)
        let bar = ProgressBar(label: "Importing")
        // The bar's line is ended before any message, whether the import succeeds or fails.
        let outcome = Result {
            try coffer.addImported(result.items, photos: result.photos) { done, total in bar.update(done, of: total) }
        }
        bar.finish()
        let summary = try outcome.get()
        let nothing = summary.added == 0 && summary.duplicates.isEmpty
        if !nothing { Output.note("Imported \(Output.count(summary.added, "item")) from \(name).") }
        if !summary.duplicates.isEmpty {
            Output.note("Skipped \(summary.duplicates.count) already in the vault: \(summary.duplicates.joined(separator: ", "))")
        }
        if !result.problems.isEmpty {
            Output.warning("\(Output.count(result.problems.count, "entry", "entries")) could not be imported:")
            for problem in result.problems { Output.note("  \(problem.description)") }
        }
        // A file that gave nothing is a failure a script must see, not "Imported 0 items".
        if nothing {
            throw CLIError.other(
                "nothing imported from \(file)", status: .badData,
                hint: result.problems.isEmpty ? "it holds no entry Coffer reads as --from \(name); is it the right format?" : nil)
        }
    }

    /// The file's entries, asking for its password when the format says it is encrypted; an empty file holds nothing
    /// to decrypt, so no password is asked for it.
    private func read(_ data: [UInt8], with importer: any Importer.Type) throws -> ImportResult {
        guard !data.isEmpty else { throw CLIError.other("\(file) is empty: nothing imported", status: .badData, hint: nil) }
        if let keyFile {
            // A key file may be all the database needs: an empty password is none.
            let key = try PrivateFiles.read(keyFile, limit: importSizeLimit)
            let password = try SecretInput.shared.secret("Password for \(file) (Return if it has none)")
            return try KeePassImporter.read(data, password: password, keyFile: key)
        }
        do {
            return try importer.read(data, password: nil)
        } catch .passwordRequired {
            return try importer.read(data, password: try SecretInput.shared.secret("Password for \(file)"))
        }
    }

    private func importBackup() throws {
        do {
            try restoreOrImportBackup()
        } catch VaultError.wrongPassphrase {
            throw CLIError.other(
                "wrong passphrase for this backup", status: .notPermitted,
                hint: "a backup opens with the passphrase or the recovery code it was made with (--recovery-code)")
        } catch VaultError.wrongRecoveryCode {
            throw CLIError.other(
                "wrong recovery code for this backup", status: .notPermitted,
                hint: "a backup opens with the passphrase or the recovery code it was made with (--recovery-code)")
        }
    }

    private func restoreOrImportBackup() throws {
        let unlock = try backupSecret()
        let location = vaultOption.location
        let coffer: Coffer
        var boundBefore: Set<UUID> = []
        if !location.vaultExists {
            coffer = try Coffer.restore(backup: file, to: location, unlock: unlock)
            let count = try coffer.itemCount()
            Output.note("Restored \(Output.count(count, "item")) into a new vault in \(coffer.directory).")
        } else {
            coffer = try vaultOption.open()
            boundBefore = Set(try coffer.signingKeysBoundElsewhere().map(\.id))
            let (imported, skipped) = try coffer.importBackup(file, unlock: unlock)
            Output.note("Imported \(Output.count(imported, "item"))\(skipped > 0 ? "; skipped \(skipped) already present" : "").")
        }
        // A PIN-held key's device secret stays on the device that added it: say so now, not at the first `sign`.
        let bound = try coffer.signingKeysBoundElsewhere().filter { !boundBefore.contains($0.id) }
        if !bound.isEmpty {
            let one = bound.count == 1
            let names = bound.map { "\"\($0.content.name)\"" }.joined(separator: ", ")
            Output.warning(
                "\(Output.count(bound.count, "signing key")) stay\(one ? "s" : "") bound to the device \(one ? "it was" : "they were") added on, and no PIN opens \(one ? "it" : "them") here: \(names)"
            )
            Output.note("To use \(one ? "it" : "one") here, add it again from its seed: `coffer rm --purge NAME`, then `coffer add key NAME`.")
        }
    }

    /// The backup's passphrase, or its recovery code: the one it holds when it holds only one (a backup of a vault
    /// that has no passphrase opens only with its recovery code, and asking for a passphrase would be a dead end).
    private func backupSecret() throws -> UnlockMethod {
        let opens: (passphrase: Bool, recoveryCode: Bool)?
        do {
            opens = try Coffer.backupOpensWith(file)
        } catch {
            switch error {
            case VaultError.notFound: throw CLIError.other("\(file) does not exist", status: .notFound, hint: nil)
            case VaultError.newerFormat: throw error
            case VaultError.notAVault, VaultError.tampered, VaultError.crypto:
                throw CLIError.other("\(file) is not a Coffer backup, or it is damaged", status: .badData, hint: nil)
            // The file could not be read that way (a directory this user cannot write to, with the file mid-WAL):
            // opening it with a secret still says what it is.
            default: opens = nil
            }
        }
        if let opens, !opens.passphrase, !opens.recoveryCode {
            throw CLIError.other(
                "\(file) holds neither a passphrase nor a recovery code: nothing can open it", status: .badData,
                hint:
                    "a backup opens with the passphrase or recovery code of the vault it was made from; add one (`coffer passphrase set`) and make the backup again"
            )
        }
        var useRecoveryCode = recoveryCode
        if recoveryCode, let opens, !opens.recoveryCode {
            throw CLIError.other(
                "\(file) has no recovery code: it opens with its passphrase", status: .usage, hint: "run the command again without --recovery-code")
        }
        if !recoveryCode, let opens, !opens.passphrase {
            Output.note("\(file) has no passphrase: it opens with its recovery code.")
            useRecoveryCode = true
        }
        return useRecoveryCode
            ? .recoveryCode(try SecretInput.shared.secret("Backup recovery code"))
            : .passphrase(try SecretInput.shared.secret("Backup passphrase"))
    }
}
