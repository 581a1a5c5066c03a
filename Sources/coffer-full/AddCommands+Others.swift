import ArgumentParser
import CofferCLI
import CofferCrypto
import CofferKeystore
import CofferKit
import CofferPlatform
import Foundation

extension Add {
    struct NewCredential: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "credential", abstract: "Add an API key, token or password (value read like a secret).",
            discussion: """
                Examples:
                  coffer add credential OpenAI --provider openai   # then type the key
                  coffer add credential Mail --username ada --url https://mail.example.org
                  pass show github/token | coffer add credential GitHub
                """)

        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var output: JSONOption
        @Argument(help: "Name, e.g. \"OpenAI\".") var name: String
        @Option(help: "Provider, e.g. openai.") var provider: String?
        @Option(help: "The user name or login the value goes with.") var username: String?
        @Option(help: "Where the value is used, e.g. the sign-in page.") var url: String?
        @Option(name: .customLong("tag"), help: "Tag (repeatable).") var tags: [String] = []

        func run() throws {
            let value = try SecretInput.shared.secret("Value")
            let credential = try Credential(name: name, provider: provider, value: value, tags: tags, username: username, url: url)
            let coffer = try vaultOption.openItems()
            let item = try coffer.add(.credential(credential))
            try reportAdded(item, in: coffer, json: output.json)
        }
    }
}

extension Add {
    struct NewKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "key",
            abstract: "Add an Ed25519 signing key held under a PIN (seed, then PIN, from the terminal or stdin lines).",
            discussion: """
                The key's seed is sealed under the PIN and a secret that never leaves this device: a copied vault \
                cannot be PIN-guessed elsewhere. Where the TPM keeps this vault's keys (`--keystore tpm2`), that \
                secret is sealed by the TPM behind the PIN: the chip checks every PIN and locks out after its own \
                limit of wrong ones (it forgets one after its recovery time). Elsewhere the vault counts, and ten \
                wrong PINs in a row lock the key. Either way the key opens only on this device: keep the seed's own \
                backup somewhere else.

                Examples:
                  coffer add key Release                  # 64 hex digits, then the PIN
                  coffer add key 'Stellar main' --stellar-seed
                """)

        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var output: JSONOption
        @Argument(help: "Name, e.g. \"Stellar main\".") var name: String
        @Flag(name: .customLong("stellar-seed"), help: "The seed is a Stellar secret key (S…); the public key shows as G….")
        var stellar = false
        @Option(name: .customLong("tag"), help: "Tag (repeatable).") var tags: [String] = []

        func run() throws {
            let seedText = try SecretInput.shared.secret(stellar ? "Stellar secret seed (S…)" : "Ed25519 seed (64 hex digits)")
            let seed: SecretBytes
            if stellar {
                seed = try StellarStrKey.decodeSeed(seedText)
            } else {
                seed = try hexSeed(seedText)
            }
            let pin = try SecretInput.shared.secret("New PIN (6+ digits)", confirm: true) { typed in
                try Coffer.checkPIN(typed)
            }
            let coffer = try vaultOption.open()
            let item = try coffer.addSigningKey(name: name, seed: seed, flavor: stellar ? .stellar : .ed25519, pin: pin, tags: tags)
            warnIfNameTaken(item, in: coffer)
            if output.json {
                try Output.json(ItemSummary(item, now: Date()))
            } else if case .signingKey(let key) = item.content {
                Output.line("\(item.id.lowercasedString) \(key.publicKeyText)")
            }
            if case .signingKey(let key) = item.content { Output.note(try Self.whoChecksThePIN(key, in: coffer)) }
        }

        /// Said once the key is added: what counts wrong PINs, and that the seed needs a backup of its own.
        static func whoChecksThePIN(_ key: SigningKey, in coffer: Coffer) throws -> String {
            let keep = "Keep the seed's own backup somewhere else: this key opens only on this device"
            guard let tpm = try coffer.tpmLockoutState(for: key) else {
                return "\(keep); \(PINProtection.attemptLimit) wrong PINs in a row lock it."
            }
            var limit = "\(tpm.maximumFailures) wrong PINs lock the TPM out"
            if tpm.recoverySeconds > 0 { limit += ", and it forgets one every \(KeystoreError.duration(tpm.recoverySeconds))" }
            return "\(keep); its PIN is checked by this machine's TPM: \(limit)."
        }

        private func hexSeed(_ text: String) throws -> SecretBytes {
            guard var bytes = Hex.decode(text.trimmingCharacters(in: .whitespaces)), bytes.count == 32 else {
                throw CLIError.usage("an Ed25519 seed is 64 hex digits")
            }
            defer { bytes.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
            return SecretBytes(bytes)
        }
    }
}

extension Add {
    struct NewNote: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "note",
            abstract: "Add a note of labelled fields (contacts, KYC) and free text.",
            discussion: """
                Standard input holds `Label: value` lines; the first line that is not of that form, and everything \
                after it, is the note's free text. On a terminal the template's fields are asked for one by one.

                Examples:
                  coffer add note Passport --template kyc
                  coffer add note Plumber < plumber.txt     # Phone: 555-0100, then text
                """)

        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var output: JSONOption
        @Argument(help: "Name, e.g. \"KYC\".") var name: String
        @Option(help: "Field template: free, contact or kyc.") var template: Note.Template = .free
        @Option(name: .customLong("tag"), help: "Tag (repeatable).") var tags: [String] = []

        func run() throws {
            var fields: [Note.Field] = []
            var text: String?
            if SecretInput.shared.interactive {
                var typed = try Note.suggestedLabels(for: template).map { label in
                    Note.Field(label: label, value: try SecretInput.shared.visibleLine(label).trimmingCharacters(in: .whitespaces))
                }
                if !typed.isEmpty { try Self.review(&typed) }
                fields = typed.filter { !$0.value.isEmpty }
                let rest = try SecretInput.shared.remainingText("free text (optional)")
                text = rest.isEmpty ? nil : rest
            } else {
                let input = try SecretInput.shared.remainingText("note")
                var lines = input.split(separator: "\n", omittingEmptySubsequences: false)[...]
                while let line = lines.first, let colon = line.firstIndex(of: ":"), colon != line.startIndex {
                    let label = line[..<colon].trimmingCharacters(in: .whitespaces)
                    guard !label.isEmpty, label.count <= 100 else { break }
                    fields.append(Note.Field(label: label, value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
                    lines = lines.dropFirst()
                }
                let rest = lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
                text = rest.isEmpty ? nil : rest
            }
            let note = try Note(name: name, template: template, fields: fields, text: text, tags: tags)
            let coffer = try vaultOption.openItems()
            let item = try coffer.add(.note(note))
            try reportAdded(item, in: coffer, json: output.json)
        }

        /// Shows the template's fields as typed and lets the user correct any by its number before the note is saved
        /// (an empty answer keeps them all; a field left empty is not saved).
        static func review(_ fields: inout [Note.Field]) throws {
            while true {
                let width = fields.map(\.label.count).max() ?? 0
                var listing = ""
                for (index, field) in fields.enumerated() {
                    let label = field.label + ":" + String(repeating: " ", count: width - field.label.count)
                    listing += "  \(index + 1). \(label) \(field.value.isEmpty ? "(empty)" : field.value)\n"
                }
                Terminal.writeError(listing)
                let answer = try SecretInput.shared.visibleLine("Number of a field to correct, or Return to keep these")
                    .trimmingCharacters(in: .whitespaces)
                if answer.isEmpty { return }
                guard let number = Int(answer), fields.indices.contains(number - 1) else {
                    Terminal.writeError("Type a number from 1 to \(fields.count).\n")
                    continue
                }
                fields[number - 1].value = try SecretInput.shared.visibleLine(fields[number - 1].label).trimmingCharacters(in: .whitespaces)
            }
        }
    }
}
