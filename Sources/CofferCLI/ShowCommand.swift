import ArgumentParser
import CofferKit
import CofferReporting
import Foundation

package struct Show: ParsableCommand {
    package init() {}

    /// `query` as a shell word, for a command line shown to the user.
    package static func quoted(_ query: String) -> String {
        query.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) } ? query : "'" + query.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    package static let configuration = CommandConfiguration(
        abstract: "Show one item's fields (credential values masked unless --reveal).",
        discussion: """
            A name finds its item when it is the exact name, the name without case or accents, an id prefix, or a \
            unique prefix or part of a name. A card's barcode is drawn below its fields.

            Examples:
              coffer show Costco
              coffer show OpenAI --reveal
              coffer show OpenAI --clip             # the value, cleared in 45 s
              coffer show 3f2a --json
            """)

    @OptionGroup package var vaultOption: VaultOption
    @OptionGroup package var output: JSONOption
    @Argument(help: "Name, id or unique id prefix.", completion: ItemCompletion.names()) package var query: String
    @Flag(help: "Print a credential's full value.") package var reveal = false
    @Flag(help: "Copy a credential's value or a card's number to the clipboard (cleared after 45 s, or $COFFER_CLIP_TIME).")
    package var clip = false
    @Flag(name: .customLong("no-barcode"), help: "Do not draw a card's barcode.") var noBarcode = false
    @OptionGroup package var drawing: DrawingOptions
    @OptionGroup package var photoOutput: PhotoOutputOptions

    package func run() throws {
        if photoOutput.isAsked {
            // Photos are read from the vault itself (the agent does not serve them).
            let coffer = try vaultOption.open()
            try photoOutput.write(try coffer.find(query), from: coffer)
            return
        }
        try work.run()
    }

    /// What this command does, in plain values (photos aside: `run()` writes those).
    package var work: Work {
        Work(
            vault: vaultOption.selection, query: query, json: output.json, reveal: reveal, clip: clip, noBarcode: noBarcode,
            drawing: drawing.drawing)
    }

    package struct Work: EverydayWork {
        package var vault: VaultSelection
        package var query: String
        package var json = false
        package var reveal = false
        package var clip = false
        package var noBarcode = false
        package var drawing = BarcodeDrawing()

        package init(
            vault: VaultSelection, query: String, json: Bool = false, reveal: Bool = false, clip: Bool = false,
            noBarcode: Bool = false, drawing: BarcodeDrawing = BarcodeDrawing()
        ) {
            self.vault = vault
            self.query = query
            self.json = json
            self.reveal = reveal
            self.clip = clip
            self.noBarcode = noBarcode
            self.drawing = drawing
        }

        package func run() throws {
            let coffer = try vault.openItems()
            defer { coffer.closeBeforeExit() }
            let item = try coffer.find(query)
            if clip {
                switch item.content {
                case .credential(let credential): return try Clipboard.copy(credential.value, what: "the value of \(credential.name)")
                case .card(let card): return try Clipboard.copy(card.payloadText, what: "the number of \(card.name)")
                case .otp: throw CLIError.usage("a token's code is copied with `coffer code NAME --clip`")
                case .signingKey, .note: throw CLIError.usage("--clip copies a credential's value or a card's number")
                }
            }
            let now = Date()
            let summary = ItemSummary(item, now: now)
            if json {
                var detail = ItemDetail(summary: summary)
                switch item.content {
                case .card(let card):
                    detail.payload = card.payloadText
                    detail.payloadCharset = card.payloadCharset.rawValue
                    detail.cardNumber = card.cardNumber
                    detail.notes = card.notes
                    detail.photos = card.photos.map(PhotoSummary.init)
                case .credential(let credential):
                    if reveal { detail.value = credential.value }
                    detail.username = credential.username
                    detail.url = credential.url
                    detail.notes = credential.notes
                case .note(let note):
                    detail.fields = note.fields.map { ["label": $0.label, "value": $0.value] }
                    detail.text = note.text
                case .otp(let otp):
                    detail.notes = otp.notes
                case .signingKey(let key):
                    detail.notes = key.notes
                }
                try Output.json(detail)
                return
            }
            var rows: [(String, String)] = [("Name", summary.name), ("Kind", summary.kind), ("Id", summary.id)]
            switch item.content {
            case .card(let card):
                if let symbology = card.symbology {
                    rows.append(("Symbology", symbology.rawValue))
                    // As the symbol carries it: an EAN-13 stored without its check digit shows all 13.
                    rows.append(("Payload", symbology.digitsWithCheckDigit(card.payload) ?? card.payloadText))
                } else {
                    rows.append(("Barcode", "none"))
                    rows.append(("Number", card.payloadText))
                }
                if let number = card.cardNumber { rows.append(("Card number", number)) }
                if !card.networkIDs.isEmpty { rows.append(("Networks", card.networkIDs.joined(separator: ", "))) }
                if let from = card.validFrom { rows.append(("Valid from", Output.isoDay.string(from: from))) }
                if let to = card.validTo { rows.append(("Valid to", Output.isoDay.string(from: to))) }
                if card.oneTime { rows.append(("One-time use", card.usedAt == nil ? "Available" : "Used")) }
                if let status = summary.status { rows.append(("Status", status)) }
                if let notes = card.notes { rows.append(("Notes", notes)) }
                if !card.photos.isEmpty { rows.append(("Photos", card.photos.map { PhotoSummary($0).text }.joined(separator: ", "))) }
            case .otp(let otp):
                if !otp.issuer.isEmpty { rows.append(("Issuer", otp.issuer)) }
                rows.append(("Account", otp.account))
                rows.append(("Type", summary.type ?? ""))
                rows.append(("Algorithm", otp.parameters.algorithm.name))
                rows.append(("Digits", String(otp.parameters.digits)))
                if let period = summary.period { rows.append(("Period", "\(period) s")) }
                if let counter = summary.counter { rows.append(("Next counter", String(counter))) }
                if let notes = otp.notes { rows.append(("Notes", notes)) }
            case .credential(let credential):
                if let provider = credential.provider { rows.append(("Provider", provider)) }
                if let username = credential.username { rows.append(("Username", username)) }
                if let url = credential.url { rows.append(("URL", url)) }
                rows.append(("Value", reveal ? credential.value : credential.maskedValue))
                if let notes = credential.notes { rows.append(("Notes", notes)) }
            case .signingKey(let key):
                rows.append(("Public key", key.publicKeyText))
                rows.append(("Algorithm", "Ed25519"))
                switch try coffer.pinHolder(for: key) {
                case .anotherDevice: rows.append(("Status", "Bound to another device"))
                case .thisMachinesTPM: rows.append(("PIN", "Checked and counted by this machine's TPM"))
                case .thisDevice where key.isLocked: rows.append(("Status", "Locked after too many wrong PINs"))
                case .thisDevice: break
                }
                if let notes = key.notes { rows.append(("Notes", notes)) }
            case .note(let note):
                for field in note.fields { rows.append((field.label, field.value)) }
                if let text = note.text { rows.append(("Text", text)) }
            }
            if !summary.tags.isEmpty { rows.append(("Tags", summary.tags.joined(separator: ", "))) }
            let width = rows.map(\.0.count).max() ?? 0
            // Lines after the first (note text, multi-line notes) start under the first line's value.
            let indent = String(repeating: " ", count: width + 2)
            for (label, value) in rows {
                let lines = value.split(separator: "\n", omittingEmptySubsequences: false)
                let text = lines.enumerated().map { $0.offset == 0 || $0.element.isEmpty ? String($0.element) : indent + $0.element }
                Output.line("\(Output.styled(pad(label + ":", width + 1), .bold)) \(text.joined(separator: "\n"))")
            }
            if case .card(let card) = item.content, !noBarcode {
                Output.line()
                do {
                    if let barcode = try card.barcode() {
                        Output.raw(try drawing.draw(barcode))
                    } else {
                        Output.line("This card has no barcode: show its number, \(Output.styled(card.payloadText, .bold)).")
                    }
                } catch {
                    // The details are shown; only the drawing failed.
                    let message = (error as? any ReportableError)?.message ?? "\(type(of: error))"
                    Output.warning("cannot draw the barcode: \(message)")
                    if case CLIError.narrowTerminal = error {
                        Output.note("coffer: hint: write an image to scan from another screen: coffer barcode \(Show.quoted(query)) --png FILE")
                    }
                }
            }
        }
    }
}

/// `show --json`: the summary plus the item's readable values.
package struct ItemDetail: Encodable {
    package let summary: ItemSummary
    package var payload: String?
    package var payloadCharset: String?
    package var cardNumber: String?
    package var value: String?
    package var username: String?
    package var url: String?
    package var fields: [[String: String]]?
    package var text: String?
    package var notes: String?
    package var photos: [PhotoSummary]?

    package enum CodingKeys: String, CodingKey {
        case payload, value, username, url, fields, text, notes, photos
        case payloadCharset = "payload_charset", cardNumber = "card_number"
    }

    package func encode(to encoder: any Encoder) throws {
        try summary.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(payload, forKey: .payload)
        try container.encodeIfPresent(payloadCharset, forKey: .payloadCharset)
        try container.encodeIfPresent(cardNumber, forKey: .cardNumber)
        try container.encodeIfPresent(value, forKey: .value)
        try container.encodeIfPresent(username, forKey: .username)
        try container.encodeIfPresent(url, forKey: .url)
        try container.encodeIfPresent(fields, forKey: .fields)
        try container.encodeIfPresent(text, forKey: .text)
        try container.encodeIfPresent(notes, forKey: .notes)
        try container.encodeIfPresent(photos, forKey: .photos)
    }
}
