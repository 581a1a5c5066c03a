import ArgumentParser
import CofferCLI
import CofferKit
import Foundation

/// A card's `--symbology`: a symbology, or `none` for a card without a barcode (shown by its number).
struct CardSymbology: ExpressibleByArgument {
    let value: Symbology?

    init(_ value: Symbology?) {
        self.value = value
    }

    init?(argument: String) {
        if argument == "none" {
            value = nil
        } else if let symbology = Symbology(argument: argument) {
            value = symbology
        } else {
            return nil
        }
    }

    var defaultValueDescription: String { value?.rawValue ?? "none" }

    static var allValueStrings: [String] { Symbology.allValueStrings + ["none"] }
}

struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add an item. Secret values are read from the terminal or standard input.",
        discussion: """
            Secret values (a card's payload, a token's secret, a credential's value, a key's seed) are typed at a \
            terminal prompt or piped on standard input, never given as arguments.

            Examples:
              coffer add card Costco --symbology ean13 --network costco
              coffer add otp                  # paste an otpauth:// URI or a secret
              coffer add credential OpenAI --provider openai
              coffer add key 'Stellar main' --stellar-seed
              coffer add note Passport --template kyc
            """,
        subcommands: [Add.NewCard.self, Add.NewToken.self, Add.NewCredential.self, Add.NewKey.self, Add.NewNote.self])
}

/// Prints the new item's id (the only output of a successful add), or its JSON; warns on standard error when another
/// item already has its name (allowed: two cards of one store are common; but a lookup by that name then lists both).
func reportAdded(_ item: Item, in coffer: any OpenVault, json: Bool) throws {
    warnIfNameTaken(item, in: coffer)
    if json {
        try Output.json(ItemSummary(item, now: Date()))
    } else {
        Output.line(item.id.uuidString.lowercased())
    }
}

func warnIfNameTaken(_ item: Item, in coffer: any OpenVault) {
    guard let others = try? coffer.items(named: item.content.name, excluding: item.id), !others.isEmpty else { return }
    let ids = others.prefix(3).map { String($0.id.uuidString.prefix(8)).lowercased() }.joined(separator: ", ")
    let count = others.count == 1 ? "another item" : "\(others.count) other items"
    Output.warning("\(count) already named \"\(item.content.name)\" (\(ids)); a lookup by that name lists them all, ids tell them apart")
}

extension Add {
    struct NewCard: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "card",
            abstract: "Add a membership or loyalty card, or a one-time pass. The barcode payload (or, for a card without a barcode, its number) is read like a secret.",
            discussion: """
                At a terminal the payload is typed in view and shown back, as it will be drawn, before the card is \
                added. A card without a barcode (--symbology none) keeps the number printed on it instead.

                With --scan, the symbology and payload are read from a photo or screenshot (PNG or JPEG) instead; \
                --symbology then picks among several codes in the picture.

                Examples:
                  coffer add card Costco --symbology ean13 --network costco
                  coffer add card Costco --scan costco-photo.jpg
                  coffer add card Library --symbology code39 --tag city
                  coffer add card 'Gym' --symbology none          # shown by its number
                  printf '%s' "$PAYLOAD" | coffer add card Ticket --one-time
                """)

        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var output: JSONOption
        @Argument(help: "Card name, e.g. \"Costco\".") var name: String
        @Option(help: "Barcode symbology (by default the one the payload says: EAN-13, UPC-A or EAN-8 digits, QR for a link, Code 128 for a short text, else QR), or none for a card without a barcode (shown by its number).")
        var symbology: CardSymbology?
        @Option(help: ArgumentHelp("Read the barcode from a photo or screenshot (PNG or JPEG).", valueName: "image"))
        var scan: String?
        @Option(help: "How the payload is read: as text (utf-8, iso-8859-1), or binary: all of stdin, byte for byte.")
        var charset: PayloadCharset = .utf8
        @Option(name: .customLong("network"), help: "Store network slug (repeatable), e.g. costco.")
        var networks: [String] = []
        @Option(name: .customLong("tag"), help: "Tag (repeatable).")
        var tags: [String] = []
        @Option(name: .customLong("valid-from"), help: "First valid day, YYYY-MM-DD.")
        var validFrom: String?
        @Option(name: .customLong("valid-to"), help: "Last valid day, YYYY-MM-DD.")
        var validTo: String?
        @Flag(name: .customLong("one-time"), help: "A pass that is used once (`coffer use` marks it).")
        var oneTime = false
        @Flag(name: .customLong("card-number"), help: "Also ask for the number printed on the card (when it differs from the payload).")
        var askCardNumber = false

        /// The symbology of a typed payload: the one given, nil for `none`, else the one the payload says it is.
        private func typedSymbology(for payload: [UInt8]) -> Symbology? {
            symbology.map(\.value) ?? Symbology.suggested(for: payload)
        }

        func validate() throws {
            if scan != nil, symbology != nil, symbology?.value == nil {
                throw ValidationError("--scan reads a barcode; a card without one (--symbology none) has nothing to scan")
            }
        }

        func run() throws {
            if let scan {
                try addScanned(scan)
                return
            }
            let payload: [UInt8]
            if charset == .binary && !SecretInput.shared.interactive {
                payload = try SecretInput.shared.remainingBytes()
            } else if charset == .binary {
                throw CLIError.usage("binary payloads are read from standard input (pipe the bytes in)")
            } else {
                // Not a password: typed in view, and shown back before it is stored.
                let text = try SecretInput.shared.visibleLine(symbology != nil && symbology?.value == nil ? "Card number" : "Barcode payload")
                payload = charset == .latin1 ? try latin1Bytes(text) : Array(text.utf8)
            }
            let cardNumber = askCardNumber ? try SecretInput.shared.visibleLine("Printed card number") : nil
            let card = try Card(
                name: name, symbology: typedSymbology(for: payload), payload: payload, payloadCharset: charset,
                cardNumber: cardNumber, tags: tags, networkIDs: networks, validFrom: try validFrom.map { try Output.parseDate($0) },
                validTo: try validTo.map { try Output.parseDate($0, endOfDay: true) }, oneTime: oneTime)
            if SecretInput.shared.interactive, charset != .binary {
                try confirm(card)
            }
            let coffer = try vaultOption.openItems()
            let item = try coffer.add(.card(card))
            try reportAdded(item, in: coffer, json: output.json)
        }

        /// The card from the one barcode in a picture (or the one chosen, when there are several): shown, and
        /// confirmed at a terminal, as a typed payload is.
        private func addScanned(_ path: String) throws {
            var codes = try ImageScan.codes(in: path)
            if let wanted = symbology?.value { codes = codes.filter { $0.symbology == wanted } }
            let tokens = codes.filter { $0.kind != .card }
            codes = codes.filter { $0.kind == .card }
            guard !codes.isEmpty else {
                if !tokens.isEmpty {
                    throw CLIError.other("\(path): the code is a 2FA token, not a card", status: .badData,
                                         hint: "add it with: coffer add otp --scan \(path)")
                }
                if let wanted = symbology?.value {
                    throw CLIError.other("\(path): no \(wanted.rawValue) barcode found",
                                         status: .badData, hint: ImageScan.hint)
                }
                throw ImageScan.nothingFound(path)
            }
            let code = try choose(codes, in: path)
            var card = try ScannedCodes.card(named: name, from: code, tags: tags, networkIDs: networks)
            card.cardNumber = askCardNumber ? try SecretInput.shared.visibleLine("Printed card number") : nil
            card.validFrom = try validFrom.map { try Output.parseDate($0) }
            card.validTo = try validTo.map { try Output.parseDate($0, endOfDay: true) }
            card.oneTime = oneTime
            try card.validate()
            if SecretInput.shared.interactive {
                Output.note("Found \(code.symbology.rawValue) \(Self.shown(card)) (\(Output.count(codes.count, "barcode"))).")
                guard Terminal.confirm("Add this card?", defaultYes: true) == true else { throw CLIError.cancelled }
            }
            let coffer = try vaultOption.openItems()
            let item = try coffer.add(.card(card))
            try reportAdded(item, in: coffer, json: output.json)
        }

        /// The one code, or the one the user picks at a terminal; from a script, several codes are an error.
        private func choose(_ codes: [ScannedCodes.Code], in path: String) throws -> ScannedCodes.Code {
            guard codes.count > 1 else { return codes[0] }
            let kinds = codes.map(\.symbology.rawValue).joined(separator: ", ")
            guard SecretInput.shared.interactive else {
                throw CLIError.other("\(path): \(codes.count) barcodes found (\(kinds))",
                                     status: .usage, hint: "pick one with --symbology, or crop the picture to one code")
            }
            Output.note("\(path): \(codes.count) barcodes found:")
            for (index, code) in codes.enumerated() {
                let card = try? ScannedCodes.card(named: name, from: code)
                Output.note("  \(index + 1). \(code.symbology.rawValue) \(card.map(Self.shown) ?? "")")
            }
            let answer = try SecretInput.shared.visibleLine("Which one (1–\(codes.count))")
            guard let number = Int(answer.trimmingCharacters(in: .whitespaces)), (1...codes.count).contains(number) else {
                throw CLIError.usage("answer with a number from 1 to \(codes.count)")
            }
            return codes[number - 1]
        }

        /// The payload as the card will show it.
        private static func shown(_ card: Card) -> String {
            card.payloadCharset == .binary ? "(\(card.payload.count) bytes)" : card.payloadText
        }

        /// Shows the card as it will be stored and drawn (an EAN-13 typed with 12 digits shows its 13th) and asks.
        private func confirm(_ card: Card) throws {
            let what: String
            if let symbology = card.symbology {
                what = "\(symbology.rawValue) \(symbology.digitsWithCheckDigit(card.payload) ?? card.payloadText)"
            } else {
                what = "no barcode, number \(card.payloadText)"
            }
            Output.note("\(card.name): \(what)" + (card.cardNumber.map { ", printed number \($0)" } ?? ""))
            guard Terminal.confirm("Add this card?", defaultYes: true) == true else { throw CLIError.cancelled }
        }

        private func latin1Bytes(_ text: String) throws -> [UInt8] {
            try text.unicodeScalars.map { scalar in
                guard scalar.value <= 0xFF else { throw CLIError.usage("the payload has characters outside ISO-8859-1") }
                return UInt8(scalar.value)
            }
        }
    }
}

extension Add {
    struct NewToken: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "otp",
            abstract: "Add a 2FA token from an otpauth:// URI or a base32 secret.",
            discussion: """
                At a terminal, paste the otpauth:// URI or the base32 secret a site shows under "can't scan the \
                code?"; for a secret, the issuer and account are asked next. From a script, standard input holds the \
                URI (several, one a line, are added together: all of them, or none if one is not valid), or the \
                secret with --account.

                With --scan, the QR code is read from a screenshot or photo (PNG or JPEG): an otpauth:// code, or a \
                Google Authenticator export (otpauth-migration://), whose every token is added (their ids a line \
                each; with --json, an array, as one picture can hold several).

                Examples:
                  coffer add otp                     # then paste the URI or the secret
                  coffer add otp < uri.txt           # otpauth://totp/GitHub:alice?…
                  coffer add otp --scan github-2fa.png
                  coffer add otp --issuer GitHub --account alice   # then the secret
                """)

        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var output: JSONOption
        @Option(help: "Issuer (service name); fills in when a URI has none.") var issuer: String?
        @Option(help: "Account name; when given, a base32 secret is read instead of a URI.") var account: String?
        @Option(help: "totp, hotp or steam (with --account).") var type: String = "totp"
        @Option(help: "SHA1, SHA256 or SHA512 (with --account).") var algorithm: String = "SHA1"
        @Option(help: "Digits, 6 to 8 (with --account).") var digits: Int?
        @Option(help: "TOTP period in seconds (with --account).") var period: Int = 30
        @Option(help: "HOTP counter: the next value to use (with --account).") var counter: UInt64 = 0
        @Option(name: .customLong("tag"), help: "Tag (repeatable).") var tags: [String] = []
        @Option(help: ArgumentHelp("Read the token's QR code from a screenshot or photo (PNG or JPEG).", valueName: "image"))
        var scan: String?

        func validate() throws {
            if scan != nil, account != nil {
                throw ValidationError("--scan reads the token from its QR code; --account is for a typed secret")
            }
        }

        func run() throws {
            if let scan {
                try addScanned(scan)
                return
            }
            let otp: OTPItem
            let input = SecretInput.shared
            if let account {
                otp = try token(secret: try input.secret("Secret (base32)"), issuer: issuer ?? "", account: account)
            } else {
                let typed = try input.secret(input.interactive ? "otpauth:// URI or base32 secret" : "otpauth:// URI")
                    .trimmingCharacters(in: .whitespaces)
                if typed.lowercased().hasPrefix("otpauth://") {
                    otp = try OTPItem(token: try OTPToken(uri: typed), issuer: issuer, tags: tags)
                    // A script that pipes in a list: every URI is added, or none.
                    if !input.interactive {
                        let more = try input.remainingText("more otpauth:// URIs").split(whereSeparator: \.isNewline)
                            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                        if !more.isEmpty {
                            try addAll([otp] + more.enumerated().map { index, line in
                                do {
                                    return try OTPItem(token: try OTPToken(uri: line), issuer: issuer, tags: tags)
                                } catch {
                                    throw CLIError.badData("standard input, line \(index + 2): \(Self.reason(error)); nothing was added")
                                }
                            })
                            return
                        }
                    }
                } else if input.interactive {
                    // A bare secret, as sites show it under "can't scan the code?": checked first, then what it is for.
                    _ = try Self.decodedSecret(typed)
                    let issuerName = try issuer ?? input.visibleLine("Issuer (e.g. GitHub)")
                    let accountName = try input.visibleLine("Account (e.g. you@example.org)")
                    otp = try token(secret: typed, issuer: issuerName, account: accountName)
                } else {
                    throw CLIError.usage("standard input holds no otpauth:// URI; for a bare base32 secret give --account (and --issuer)")
                }
            }
            let coffer = try vaultOption.openItems()
            let item = try coffer.add(.otp(otp))
            try reportAdded(item, in: coffer, json: output.json)
        }

        /// Several tokens at once, in one transaction; those the vault already holds are skipped, as on import.
        private func addAll(_ tokens: [OTPItem]) throws {
            let coffer = try vaultOption.open()
            let summary = try coffer.addImported(tokens.map { .otp($0) })
            if !summary.duplicates.isEmpty {
                Output.note("Skipped \(summary.duplicates.count) already in the vault: \(summary.duplicates.joined(separator: ", "))")
            }
            if output.json {
                try Output.json(summary.items.map { ItemSummary($0, now: Date()) })
            } else {
                for item in summary.items { Output.line(item.id.uuidString.lowercased()) }
            }
        }

        private static func reason(_ error: any Error) -> String {
            (error as? any ReportableError)?.message ?? "not an otpauth:// URI"
        }

        /// Every token in the picture's codes, listed and confirmed at a terminal, added in one transaction.
        private func addScanned(_ path: String) throws {
            let codes = try ImageScan.codes(in: path)
            guard !codes.isEmpty else { throw ImageScan.nothingFound(path) }
            let read = ScannedCodes.tokens(codes)
            var tokens: [OTPItem] = []
            for case .otp(var token) in read.items {
                if token.issuer.isEmpty, let issuer { token.issuer = issuer }
                token.tags = Array(Set(token.tags + tags)).sorted()
                try token.validate()
                tokens.append(token)
            }
            for problem in read.problems { Output.warning(problem.description) }
            guard !tokens.isEmpty else {
                if codes.allSatisfy({ $0.kind == .card }) {
                    throw CLIError.other("\(path): the code holds no otpauth:// URI", status: .badData,
                                         hint: "a card's barcode is added with: coffer add card NAME --scan \(path)")
                }
                throw CLIError.badData("\(path): no token could be read")
            }
            if SecretInput.shared.interactive {
                Output.note("Found \(Output.count(tokens.count, "token")): \(tokens.map(\.displayName).joined(separator: ", ")).")
                guard Terminal.confirm(tokens.count == 1 ? "Add this token?" : "Add them?", defaultYes: true) == true else {
                    throw CLIError.cancelled
                }
            }
            // One transaction; a token the vault already holds (same secret and account) is skipped, as on import.
            try addAll(tokens)
        }

        /// A token from a base32 secret and the options' parameters.
        private func token(secret text: String, issuer: String, account: String) throws -> OTPItem {
            guard let algorithm = OTPAlgorithm(name: algorithm) else { throw OTPError.unsupportedAlgorithm }
            let kind: OTPParameters.Kind
            switch type.lowercased() {
            case "totp": kind = .totp(period: period)
            case "hotp": kind = .hotp(counter: counter)
            case "steam": kind = .steam
            default: throw OTPError.unsupportedType
            }
            let parameters = try OTPParameters(secret: try Self.decodedSecret(text), algorithm: algorithm, digits: digits, kind: kind)
            let otp = try OTPItem(issuer: issuer, account: account, parameters: parameters, tags: tags)
            // An account an otpauth:// URI cannot carry (a colon) would leave the token out of URI exports.
            _ = try otp.token()
            return otp
        }

        static func decodedSecret(_ text: String) throws -> [UInt8] {
            do {
                return try Base32.decode(text)
            } catch {
                throw CLIError.badData(base32Problem(text))
            }
        }

        /// Where a typed secret stops being base32. The position and the kind of character are named, never the
        /// character itself: it is part of a secret.
        static func base32Problem(_ text: String) -> String {
            let ignored = Set(" \t-=".unicodeScalars)
            for (offset, character) in text.unicodeScalars.enumerated() where !ignored.contains(character) {
                let upper = Character(character).uppercased()
                if upper.count == 1, let scalar = upper.unicodeScalars.first, ("A"..."Z").contains(scalar) || ("2"..."7").contains(scalar) {
                    continue
                }
                let digit = ("0"..."9").contains(character)
                return "the secret is not valid base32: character \(offset + 1) is "
                    + (digit ? "a digit base32 does not use (it has A–Z and 2–7; a 0, 1 or 8 is usually the letter O, I or B)"
                        : "not in its alphabet (A–Z and 2–7)")
            }
            return "the secret is not valid base32: data after the = padding"
        }
    }
}

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
                cannot be PIN-guessed elsewhere, and ten wrong PINs lock the key.

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
                Output.line("\(item.id.uuidString.lowercased()) \(key.publicKeyText)")
            }
        }

        private func hexSeed(_ text: String) throws -> SecretBytes {
            let digits = Array(text.trimmingCharacters(in: .whitespaces).utf8)
            guard digits.count == 64 else { throw CLIError.usage("an Ed25519 seed is 64 hex digits") }
            var bytes: [UInt8] = []
            for index in stride(from: 0, to: 64, by: 2) {
                guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                    throw CLIError.usage("an Ed25519 seed is 64 hex digits")
                }
                bytes.append(byte)
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
