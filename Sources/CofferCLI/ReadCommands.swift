import ArgumentParser
import CofferCrypto
import CofferKit
import CofferPlatform
import Foundation

/// An item as `list --json` and `add --json` print it: no secret values (no payload, OTP secret, credential
/// value or note field values).
package struct ItemSummary: Encodable {
    package let id: String
    package let kind: String
    package let name: String
    package let tags: [String]
    package let revision: UInt64
    package let createdAt: Date
    package let updatedAt: Date
    package var status: String?
    package var valid: Bool?
    package var symbology: String?
    package var networks: [String]?
    package var validFrom: Date?
    package var validTo: Date?
    package var oneTime: Bool?
    package var usedAt: Date?
    package var archivedAt: Date?
    package var issuer: String?
    package var account: String?
    package var type: String?
    package var algorithm: String?
    package var digits: Int?
    package var period: Int?
    package var counter: UInt64?
    package var provider: String?
    package var maskedValue: String?
    package var publicKey: String?
    package var locked: Bool?
    package var template: String?
    package var fieldLabels: [String]?

    package enum CodingKeys: String, CodingKey {
        case id, kind, name, tags, revision, status, valid, symbology, networks, issuer, account, type, algorithm
        case digits, period, counter, provider, locked, template
        case createdAt = "created_at", updatedAt = "updated_at", validFrom = "valid_from", validTo = "valid_to"
        case oneTime = "one_time", usedAt = "used_at", archivedAt = "archived_at", maskedValue = "masked_value"
        case publicKey = "public_key", fieldLabels = "field_labels"
    }

    package init(_ item: Item, now: Date) {
        id = item.id.lowercasedString
        kind = item.kind.rawValue
        name = item.content.name
        tags = item.content.tags
        revision = item.revision
        createdAt = item.createdAt
        updatedAt = item.updatedAt
        switch item.content {
        case .card(let card):
            status = card.isArchived ? "Archived" : card.validityLabel(at: now)
            valid = card.isValid(at: now)
            symbology = card.symbology?.rawValue
            networks = card.networkIDs
            validFrom = card.validFrom
            validTo = card.validTo
            oneTime = card.oneTime
            usedAt = card.usedAt
            archivedAt = card.archivedAt
        case .otp(let otp):
            issuer = otp.issuer.isEmpty ? nil : otp.issuer
            account = otp.account
            algorithm = otp.parameters.algorithm.name
            digits = otp.parameters.digits
            switch otp.parameters.kind {
            case .totp(let seconds):
                type = "totp"
                period = seconds
            case .hotp(let next):
                type = "hotp"
                counter = next
            case .steam:
                type = "steam"
                period = OTPParameters.steamPeriod
            }
        case .credential(let credential):
            provider = credential.provider
            maskedValue = credential.maskedValue
        case .signingKey(let key):
            publicKey = key.publicKeyText
            locked = key.isLocked
            type = key.flavor.rawValue
        case .note(let note):
            template = note.template.rawValue
            fieldLabels = note.fields.map(\.label)
        }
    }
}

package struct List: ParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        abstract: "List items (archived cards only with --archived).",
        discussion: """
            Words given search names, tags, issuers, accounts, providers, user names, URLs, store networks, \
            note fields and notes, without case or accents; an item is listed when it has every word.

            Examples:
              coffer list
              coffer list --kind card --tag travel
              coffer list --network costco --json
              coffer list plumber               # searches names, tags, notes…
            """)

    @OptionGroup package var vaultOption: VaultOption
    @OptionGroup package var output: JSONOption
    @Option(help: "Only this kind.") package var kind: ItemKind?
    @Option(help: "Only items with this tag.") package var tag: String?
    @Option(help: "Only cards for this store network.") package var network: String?
    @Flag(help: "Include archived cards.") package var archived = false
    @Argument(help: "Only items with these words in their names, tags, issuers, accounts or notes.")
    package var words: [String] = []

    /// What this command does, in plain values.
    package var work: Work {
        Work(vault: vaultOption.selection, json: output.json, kind: kind, tag: tag, network: network, archived: archived, words: words)
    }

    package func run() throws { try work.run() }

    package struct Work: EverydayWork {
        package var vault: VaultSelection
        package var json = false
        package var kind: ItemKind?
        package var tag: String?
        package var network: String?
        package var archived = false
        /// Search words, folded for comparison (`ItemLookup.folded`).
        package var words: [String] = []

        package init(
            vault: VaultSelection, json: Bool = false, kind: ItemKind? = nil, tag: String? = nil, network: String? = nil,
            archived: Bool = false, words: [String] = []
        ) {
            self.vault = vault
            self.json = json
            self.kind = kind
            self.tag = tag
            self.network = network
            self.archived = archived
            self.words = words.flatMap { $0.split(whereSeparator: \.isWhitespace) }.map { ItemLookup.folded(String($0)) }
        }

        package func run() throws {
            let coffer = try vault.openItems()
            defer { coffer.closeBeforeExit() }
            let now = Date()
            // Each item becomes what is printed as it is opened (its summary for JSON, else its line): a listing of a
            // large vault holds its lines, not every item.
            if json {
                Output.jsonArray(try coffer.items(kind: kind) { item in wanted(item) ? try Output.jsonElement(ItemSummary(item, now: now)) : nil })
                return
            }
            let lines = try coffer.items(kind: kind) { item in wanted(item) ? List.line(ItemSummary(item, now: now)) : nil }
            if lines.isEmpty, !words.isEmpty {
                Output.note("No item has " + (words.count == 1 ? "that word." : "all of those words."))
            } else if lines.isEmpty, kind == nil, tag == nil, network == nil {
                Output.note("The vault is empty. Add an item with `coffer add card NAME` (or otp, credential, key, note), or `coffer import`.")
            }
            // A write per thousand lines, not per line.
            for start in stride(from: 0, to: lines.count, by: 1_000) {
                Output.raw(lines[start..<min(start + 1_000, lines.count)].joined(separator: "\n") + "\n")
            }
        }

        /// Whether the options keep `item`.
        private func wanted(_ item: Item) -> Bool {
            if let tag, !item.content.tags.contains(where: { $0.caseInsensitiveCompare(tag) == .orderedSame }) { return false }
            if !ItemLookup.contentMatches(item.content, allOf: words) { return false }
            if case .card(let card) = item.content {
                if card.isArchived && !archived { return false }
                if let network, !card.networkIDs.contains(network.lowercased()) { return false }
            } else if network != nil {
                return false
            }
            return true
        }
    }

    package static func line(_ summary: ItemSummary) -> String {
        var line = "\(String(summary.id.prefix(8)))  \(pad(summary.kind, 11))  \(summary.name)"
        if let status = summary.status {
            let tone: Output.Tone = status == "Expired" || status == "Used" ? .red : .yellow
            line += "  " + Output.styled(status, tone)
        }
        if summary.locked == true { line += "  " + Output.styled("Locked", .red) }
        if !summary.tags.isEmpty { line += "  " + Output.styled(summary.tags.map { "#\($0)" }.joined(separator: " "), .dim) }
        return line
    }
}

package func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

package struct Code: ParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        abstract: "Print current one-time codes (all time-based tokens, or the one named).",
        discussion: """
            Piped, only the code is printed. For an HOTP token the counter is advanced and stored before its code is \
            printed.

            Examples:
              coffer code
              coffer code GitHub
              coffer code git --clip                # copied, cleared in 45 s
            """)

    @OptionGroup package var vaultOption: VaultOption
    @OptionGroup package var output: JSONOption
    @Argument(help: "Token name (\"Issuer (account)\", issuer, account, or id).", completion: ItemCompletion.names(.otp))
    var query: String?
    @Flag(help: "Copy the code to the clipboard instead of printing it (cleared after 45 s, or $COFFER_CLIP_TIME).") var clip = false

    package func validate() throws {
        if clip, query == nil { throw ValidationError("--clip copies one code: name the token") }
    }

    package struct CodeLine: Encodable {
        package let id: String
        package let name: String
        package let code: String
        package let secondsRemaining: Int?

        package enum CodingKeys: String, CodingKey {
            case id, name, code
            case secondsRemaining = "seconds_remaining"
        }
    }

    /// What this command does, in plain values.
    package var work: Work { Work(vault: vaultOption.selection, query: query, json: output.json, clip: clip) }

    package func run() throws { try work.run() }

    package struct Work: EverydayWork {
        package var vault: VaultSelection
        package var query: String?
        package var json = false
        package var clip = false

        package init(vault: VaultSelection, query: String?, json: Bool = false, clip: Bool = false) {
            self.vault = vault
            self.query = query
            self.json = json
            self.clip = clip
        }

        package func run() throws {
            let coffer = try vault.openItems()
            defer { coffer.closeBeforeExit() }
            let lines = try coffer.codes(matching: query, at: Date()).map { code in
                CodeLine(id: code.id.lowercasedString, name: code.name, code: code.code, secondsRemaining: code.secondsRemaining)
            }
            if clip, let line = lines.first {
                try Clipboard.copy(line.code, what: "the code for \(line.name)")
                return
            }
            if json {
                try Output.json(lines)
                return
            }
            if query != nil, let line = lines.first {
                // Piped, the bare code (what a script or `xargs` wants); at a terminal, grouped with its seconds left.
                guard Terminal.standardOutputIsTTY else {
                    Output.line(line.code)
                    return
                }
                let remaining = line.secondsRemaining.map { "  " + Output.styled("\($0)s", $0 <= 5 ? .red : .dim) } ?? ""
                Output.line(OTPCodeFormat.grouped(line.code) + remaining)
                return
            }
            let width = lines.map(\.name.count).max() ?? 0
            for line in lines {
                let remaining = line.secondsRemaining.map { Output.styled("\($0)s", $0 <= 5 ? .red : .dim) } ?? ""
                Output.line("\(pad(line.name, width))  \(Output.styled(OTPCodeFormat.grouped(line.code), .bold))  \(remaining)")
            }
        }
    }
}
