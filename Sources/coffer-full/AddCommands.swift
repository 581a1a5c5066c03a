import ArgumentParser
import CofferCLI
import CofferCrypto
import CofferInterop
import CofferKit
import CofferPlatform
import CofferReporting
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
        Output.line(item.id.lowercasedString)
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
            abstract:
                "Add a membership or loyalty card, or a one-time pass. The barcode payload (or, for a card without a barcode, its number) is read like a secret.",
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
        @Option(
            help:
                "Barcode symbology (by default the one the payload says: EAN-13, UPC-A or EAN-8 digits, QR for a link, Code 128 for a short text, else QR), or none for a card without a barcode (shown by its number)."
        )
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
                    throw CLIError.other(
                        "\(path): the code is a 2FA token, not a card", status: .badData,
                        hint: "add it with: coffer add otp --scan \(path)")
                }
                if let wanted = symbology?.value {
                    throw CLIError.other(
                        "\(path): no \(wanted.rawValue) barcode found",
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
                throw CLIError.other(
                    "\(path): \(codes.count) barcodes found (\(kinds))",
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
