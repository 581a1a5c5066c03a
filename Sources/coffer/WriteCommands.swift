import ArgumentParser
import CofferKit
import Foundation

struct Use: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark a one-time pass used (it then hides from the till).")

    @OptionGroup var vaultOption: VaultOption
    @Argument(help: "Card name or id.") var query: String

    func run() throws {
        let coffer = try vaultOption.open()
        let item = try cli { () throws(CofferError) in try coffer.find(query, kind: .card) }
        let now = Date()
        try vaultCall { () throws(VaultError) in
            _ = try coffer.vault.modify(id: item.id) { content in
                guard case .card(var card) = content else { throw ModelError.notOneTime }
                try card.markUsed(at: now)
                content = .card(card)
            }
        }
    }
}

struct Edit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change an item's fields (--payload reads a new card payload or credential value like a secret).")

    @OptionGroup var vaultOption: VaultOption
    @Argument(help: "Name, id or unique id prefix.") var query: String
    @Option(help: "New name (cards, credentials, keys, notes).") var name: String?
    @Option(name: .customLong("add-tag"), help: "Add a tag (repeatable).") var addTags: [String] = []
    @Option(name: .customLong("remove-tag"), help: "Remove a tag (repeatable).") var removeTags: [String] = []
    @Option(name: .customLong("add-network"), help: "Cards: add a store network (repeatable).") var addNetworks: [String] = []
    @Option(name: .customLong("remove-network"), help: "Cards: remove a store network (repeatable).") var removeNetworks: [String] = []
    @Option(name: .customLong("valid-from"), help: "Cards: first valid day (YYYY-MM-DD, or \"none\").") var validFrom: String?
    @Option(name: .customLong("valid-to"), help: "Cards: last valid day (YYYY-MM-DD, or \"none\").") var validTo: String?
    @Option(help: "Cards: barcode symbology.") var symbology: Symbology?
    @Flag(help: "Cards: read a new payload; credentials: read a new value.") var payload = false
    @Option(help: "Tokens: issuer.") var issuer: String?
    @Option(help: "Tokens: account.") var account: String?
    @Option(help: "Credentials: provider.") var provider: String?

    func run() throws {
        let coffer = try vaultOption.open()
        let item = try cli { () throws(CofferError) in try coffer.find(query) }
        var newSecret: String?
        if payload {
            switch item.kind {
            case .card: newSecret = try SecretInput.shared.secret("New barcode payload")
            case .credential: newSecret = try SecretInput.shared.secret("New value")
            default: throw CLIError.usage("--payload applies to cards and credentials")
            }
        }
        let validFromDate = try validFrom.map { $0 == "none" ? nil : try Output.parseDate($0) }
        let validToDate = try validTo.map { $0 == "none" ? nil : try Output.parseDate($0, endOfDay: true) }
        try vaultCall { () throws(VaultError) in
            _ = try coffer.vault.modify(id: item.id) { content in
                switch content {
                case .card(var card):
                    if let name { card.name = name }
                    card.tags = edited(card.tags)
                    card.networkIDs = card.networkIDs.filter { !removeNetworks.map { $0.lowercased() }.contains($0) } + addNetworks
                    if let validFromDate { card.validFrom = validFromDate }
                    if let validToDate { card.validTo = validToDate }
                    if let symbology { card.symbology = symbology }
                    if let newSecret { card.payload = Array(newSecret.utf8) }
                    try card.validate()
                    content = .card(card)
                case .otp(var otp):
                    if name != nil { throw CLIError.usage("tokens are named by --issuer and --account") }
                    if let issuer { otp.issuer = issuer }
                    if let account { otp.account = account }
                    otp.tags = edited(otp.tags)
                    try otp.validate()
                    content = .otp(otp)
                case .credential(var credential):
                    if let name { credential.name = name }
                    if let provider { credential.provider = provider }
                    if let newSecret { credential.value = newSecret }
                    credential.tags = edited(credential.tags)
                    try credential.validate()
                    content = .credential(credential)
                case .signingKey(var key):
                    if let name { key.name = name }
                    key.tags = edited(key.tags)
                    try key.validate()
                    content = .signingKey(key)
                case .note(var note):
                    if let name { note.name = name }
                    note.tags = edited(note.tags)
                    try note.validate()
                    content = .note(note)
                }
            }
        }
    }

    private func edited(_ tags: [String]) -> [String] {
        tags.filter { tag in !removeTags.contains { $0.caseInsensitiveCompare(tag) == .orderedSame } } + addTags
    }
}

struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Archive a card (restore brings it back), or delete an item for good with --purge.")

    @OptionGroup var vaultOption: VaultOption
    @Argument(help: "Name, id or unique id prefix.") var query: String
    @Flag(help: "Delete for good (any kind). Cannot be undone.") var purge = false

    func run() throws {
        let coffer = try vaultOption.open()
        let item = try cli { () throws(CofferError) in try coffer.find(query) }
        if purge {
            try vaultCall { () throws(VaultError) in try coffer.vault.purge(id: item.id) }
            return
        }
        guard item.kind == .card else {
            throw CLIError.usage("only cards can be archived; `coffer rm --purge` deletes a \(item.kind.rawValue) for good")
        }
        let now = Date()
        try vaultCall { () throws(VaultError) in
            _ = try coffer.vault.modify(id: item.id) { content in
                guard case .card(var card) = content else { return }
                card.archivedAt = now
                content = .card(card)
            }
        }
    }
}

struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Bring an archived card back.")

    @OptionGroup var vaultOption: VaultOption
    @Argument(help: "Card name or id.") var query: String

    func run() throws {
        let coffer = try vaultOption.open()
        let item = try cli { () throws(CofferError) in try coffer.find(query, kind: .card) }
        try vaultCall { () throws(VaultError) in
            _ = try coffer.vault.modify(id: item.id) { content in
                guard case .card(var card) = content else { return }
                card.archivedAt = nil
                content = .card(card)
            }
        }
    }
}

struct Sign: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign standard input with a PIN-held key; prints the signature in hex.",
        discussion: """
            The PIN is asked on the terminal. Without a terminal, the first line of standard input is the PIN and
            the rest is the message.
            """)

    @OptionGroup var vaultOption: VaultOption
    @OptionGroup var output: JSONOption
    @Argument(help: "Key name or id.") var query: String
    @Flag(help: "Print the signature in base64 instead of hex.") var base64 = false

    func run() throws {
        let coffer = try vaultOption.open()
        let item = try cli { () throws(CofferError) in try coffer.find(query, kind: .signingKey) }
        let pin: String
        // With the message piped in, a person at a terminal still types the PIN there.
        if !SecretInput.shared.interactive, Terminal.standardErrorIsTTY,
            let typed = Terminal.readSecret(prompt: "PIN for \(item.content.name): ")
        {
            pin = typed
        } else {
            pin = try SecretInput.shared.secret("PIN")
        }
        let message = try SecretInput.shared.remainingBytes()
        let signature = try cli { () throws(CofferError) in try coffer.sign(message, with: item, pin: pin) }
        let text = base64 ? Data(signature).base64EncodedString() : signature.map { String(format: "%02x", $0) }.joined()
        if output.json, case .signingKey(let key) = item.content {
            try Output.json(["signature": text, "public_key": key.publicKeyText])
        } else {
            Output.line(text)
        }
    }
}
