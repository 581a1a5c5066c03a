import ArgumentParser
import CofferCLI
import CofferCrypto
import CofferKit
import CofferPlatform
import CofferStellar
import Foundation

struct Edit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change an item's fields (--payload reads a new card payload or credential value like a secret).",
        discussion: """
            --notes opens the notes (a note's text) in $VISUAL or $EDITOR, kept in memory-backed /dev/shm while \
            you edit; with standard input not a terminal, they are read from it instead. --field asks for the \
            field's new value, shown as you type it (or reads the next line of standard input).

            Examples:
              coffer edit Costco --add-network costco --prefer-at costco
              coffer edit GitHub --account alice@example.org
              coffer edit OpenAI --payload              # then type the new value
              coffer edit 'Gym' --valid-to 2027-06-30 --add-tag sport
              coffer edit Plumber --notes               # opens $EDITOR
              coffer edit Passport --field 'ID number' --remove-field Phone
            """)

    @OptionGroup var vaultOption: VaultOption
    @Argument(help: "Name, id or unique id prefix.", completion: ItemCompletion.names()) var query: String
    @Option(help: "New name (cards, credentials, keys, notes).") var name: String?
    @Option(name: .customLong("add-tag"), help: "Add a tag (repeatable).") var addTags: [String] = []
    @Option(name: .customLong("remove-tag"), help: "Remove a tag (repeatable).") var removeTags: [String] = []
    @Option(name: .customLong("add-network"), help: "Cards: add a store network (repeatable).") var addNetworks: [String] = []
    @Option(name: .customLong("remove-network"), help: "Cards: remove a store network (repeatable).") var removeNetworks: [String] = []
    @Option(name: .customLong("prefer-at"), help: "Cards: show this card first at this network's stores (repeatable).")
    var preferAt: [String] = []
    @Option(name: .customLong("no-prefer-at"), help: "Cards: stop preferring this card at a network (repeatable).")
    var noPreferAt: [String] = []
    @Option(name: .customLong("valid-from"), help: "Cards: first valid day (YYYY-MM-DD, or \"none\").") var validFrom: String?
    @Option(name: .customLong("valid-to"), help: "Cards: last valid day (YYYY-MM-DD, or \"none\").") var validTo: String?
    @Option(help: "Cards: barcode symbology, or none for a card shown by its number.") var symbology: CardSymbology?
    @Flag(help: "Cards: read a new payload; credentials: read a new value.") var payload = false
    @Option(help: "Tokens: issuer (none to remove it).") var issuer: String?
    @Option(help: "Tokens: account.") var account: String?
    @Option(help: "Credentials: provider.") var provider: String?
    @Option(help: "Credentials: user name (\"none\" removes it).") var username: String?
    @Option(help: "Credentials: URL (\"none\" removes it).") var url: String?
    @Flag(help: "Edit the notes (a note's text) in $EDITOR, or read them from standard input.") var notes = false
    @Option(name: .customLong("field"), help: "Notes: set this field, asking for its value (repeatable).") var setFields: [String] = []
    @Option(name: .customLong("remove-field"), help: "Notes: remove this field (repeatable).") var removeFields: [String] = []
    @OptionGroup var photos: PhotoEditOptions

    func validate() throws {
        for network in preferAt + noPreferAt where !Network.isSlug(network) {
            throw ValidationError("--prefer-at takes a network id (a–z, 0–9 and -): see `coffer networks`")
        }
    }

    func run() throws {
        let coffer = try vaultOption.open()
        let item = try coffer.find(query)
        try checkOptions(for: item.kind)
        try checkRemovedFields(of: item.content)
        var newSecret: String?
        if payload {
            newSecret = try SecretInput.shared.secret(item.kind == .card ? "New barcode payload" : "New value")
        }
        // Whatever can be refused is refused here: an error thrown inside the vault's transaction is a storage error.
        var newPayload: [UInt8]?
        if let newSecret, case .card(let card) = item.content { newPayload = try payloadBytes(newSecret, charset: card.payloadCharset) }
        let fieldValues = try setFields.map { label in (label: label, value: try SecretInput.shared.visibleLine(label)) }
        let currentNotes = Self.notes(of: item.content)
        // Only --notes touches the notes: the transaction below keeps whatever another process wrote there meanwhile.
        let newNotes = notes ? try editedNotes(currentNotes, of: item) : currentNotes
        if notes, newNotes == currentNotes, Set(givenOptions.filter(\.1).map(\.0)) == ["--notes"] {
            if SecretInput.shared.interactive { Terminal.writeError("The notes of \(item.content.name) are unchanged.\n") }
            return
        }
        let validFromDate = try validFrom.map { $0 == "none" ? nil : try Output.parseDate($0) }
        let validToDate = try validTo.map { $0 == "none" ? nil : try Output.parseDate($0, endOfDay: true) }
        let photoChanges = try photos.changes()
        _ = try coffer.update(item, photos: photoChanges) { content in
            switch content {
            case .card(var card):
                if let name { card.name = name }
                card.tags = edited(card.tags)
                card.networkIDs = card.networkIDs.filter { !removeNetworks.map { $0.lowercased() }.contains($0) } + addNetworks
                for network in noPreferAt { card.metadata[CardPlaces.preferredPrefix + network] = nil }
                for network in preferAt { card.metadata[CardPlaces.preferredPrefix + network] = "true" }
                if let validFromDate { card.validFrom = validFromDate }
                if let validToDate { card.validTo = validToDate }
                if let symbology { card.symbology = symbology.value }
                if let newPayload { card.payload = newPayload }
                if notes { card.notes = newNotes }
                try card.validate()
                content = .card(card)
            case .otp(var otp):
                if let issuer { otp.issuer = issuer == "none" ? "" : issuer }
                if let account { otp.account = account }
                otp.tags = edited(otp.tags)
                if notes { otp.notes = newNotes }
                try otp.validate()
                // A new account must fit an otpauth:// URI (no colon); an older one that does not is kept.
                if account != nil { _ = try otp.token() }
                content = .otp(otp)
            case .credential(var credential):
                if let name { credential.name = name }
                if let provider { credential.provider = provider }
                if let username { credential.username = username == "none" ? nil : username }
                if let url { credential.url = url == "none" ? nil : url }
                if let newSecret { credential.value = newSecret }
                credential.tags = edited(credential.tags)
                if notes { credential.notes = newNotes }
                try credential.validate()
                content = .credential(credential)
            case .signingKey(var key):
                if let name { key.name = name }
                key.tags = edited(key.tags)
                if notes { key.notes = newNotes }
                try key.validate()
                content = .signingKey(key)
            case .note(var note):
                if let name { note.name = name }
                note.tags = edited(note.tags)
                if notes { note.text = newNotes }
                editFields(of: &note, setting: fieldValues)
                try note.validate()
                content = .note(note)
            }
        }
    }

    /// Refuses options that do not apply to `kind`, and an edit that changes nothing.
    private func checkOptions(for kind: ItemKind) throws {
        let given = givenOptions
        if name != nil, kind == .otp {
            // A token's name is "Issuer (account)": it changes with the two parts it is made of.
            throw CLIError.usage("a token is named by its issuer and account: use --issuer and --account")
        }
        for (option, isGiven, kinds) in given where isGiven && !kinds.contains(kind) {
            throw CLIError.usage("\(option) does not apply to \(kind.rawValue) items")
        }
        guard given.contains(where: \.1) else { throw CLIError.usage("nothing to change: give at least one option") }
    }

    /// Each option group, whether it was given, and the kinds it applies to.
    private var givenOptions: [(String, Bool, Set<ItemKind>)] {
        [
            ("--name", name != nil, [.card, .credential, .signingKey, .note]),
            ("--add-network/--remove-network", !addNetworks.isEmpty || !removeNetworks.isEmpty, [.card]),
            ("--prefer-at/--no-prefer-at", !preferAt.isEmpty || !noPreferAt.isEmpty, [.card]),
            ("--valid-from/--valid-to", validFrom != nil || validTo != nil, [.card]),
            ("--symbology", symbology != nil, [.card]),
            ("--payload", payload, [.card, .credential]),
            ("--issuer/--account", issuer != nil || account != nil, [.otp]),
            ("--provider/--username/--url", provider != nil || username != nil || url != nil, [.credential]),
            ("--photo/--remove-photo", photos.isGiven, [.card]),
            ("--field/--remove-field", !setFields.isEmpty || !removeFields.isEmpty, [.note]),
            ("--add-tag/--remove-tag", !addTags.isEmpty || !removeTags.isEmpty, Set(ItemKind.allCases)),
            ("--notes", notes, Set(ItemKind.allCases)),
        ]
    }

    /// The free text an item carries: a note's text, every other kind's notes.
    private static func notes(of content: ItemContent) -> String? {
        switch content {
        case .card(let card): return card.notes
        case .otp(let otp): return otp.notes
        case .credential(let credential): return credential.notes
        case .signingKey(let key): return key.notes
        case .note(let note): return note.text
        }
    }

    /// The notes as the user leaves them: edited in their editor on a terminal, else standard input's remaining text.
    /// Surrounding blank space is dropped, as when a note is added; nothing left removes the notes.
    private func editedNotes(_ current: String?, of item: Item) throws -> String? {
        let text: String
        if SecretInput.shared.interactive {
            text = try TextEditor.edit(current ?? "", fileName: item.content.name)
        } else {
            text = try SecretInput.shared.remainingText("notes")
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// Whether a field is the one `label` names (any case, surrounding blanks ignored).
    private static func fieldMatching(_ label: String) -> (Note.Field) -> Bool {
        { $0.label.caseInsensitiveCompare(label.trimmingCharacters(in: .whitespaces)) == .orderedSame }
    }

    /// Refuses --remove-field of a field the note does not have, before anything is asked or changed.
    private func checkRemovedFields(of content: ItemContent) throws {
        guard case .note(let note) = content else { return }
        for label in removeFields where !note.fields.contains(where: Self.fieldMatching(label)) {
            let known = note.fields.map(\.label).joined(separator: ", ")
            throw CLIError.usage("\(note.name) has no field \"\(label)\"" + (known.isEmpty ? "" : "; its fields: \(known)"))
        }
    }

    /// Applies --remove-field, then --field: a label already there (in any case) gets the new value in its place,
    /// a new one is added at the end; an empty value removes the field.
    private func editFields(of note: inout Note, setting values: [(label: String, value: String)]) {
        let matches = Self.fieldMatching
        for label in removeFields { note.fields.removeAll(where: matches(label)) }
        for (label, value) in values {
            let value = value.trimmingCharacters(in: .whitespaces)
            if let index = note.fields.firstIndex(where: matches(label)) {
                if value.isEmpty { note.fields.remove(at: index) } else { note.fields[index].value = value }
            } else if !value.isEmpty {
                note.fields.append(Note.Field(label: label.trimmingCharacters(in: .whitespaces), value: value))
            }
        }
    }

    /// The payload's bytes in the card's own charset (binary payloads are given as hex when edited).
    private func payloadBytes(_ text: String, charset: PayloadCharset) throws -> [UInt8] {
        switch charset {
        case .utf8: return Array(text.utf8)
        case .latin1:
            return try text.unicodeScalars.map { scalar in
                guard scalar.value <= 0xFF else { throw CLIError.usage("the payload has characters outside ISO-8859-1") }
                return UInt8(scalar.value)
            }
        case .binary:
            guard let bytes = Hex.decode(text) else { throw CLIError.usage("give a binary payload as hex digits") }
            return bytes
        }
    }

    private func edited(_ tags: [String]) -> [String] {
        tags.filter { tag in !removeTags.contains { $0.caseInsensitiveCompare(tag) == .orderedSame } } + addTags
    }
}

struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Archive a card (restore brings it back), or delete an item for good with --purge.",
        discussion: """
            Examples:
              coffer rm Costco                       # archived; restore brings it back
              coffer rm OpenAI --purge
              coffer rm 3f2a9c10-… --purge --yes   # from a script
            """)

    @OptionGroup var vaultOption: VaultOption
    @Argument(help: "Name, id or unique id prefix.", completion: ItemCompletion.names()) var query: String
    @Flag(help: "Delete for good (any kind). Cannot be undone.") var purge = false
    @Flag(help: "With --purge: do not ask (needed when not at a terminal).") var yes = false

    func run() throws {
        let coffer = try vaultOption.open()
        // A full id purges without opening the item, so even a damaged item can be removed.
        if purge, let id = UUID(uuidString: query) {
            try SecretInput.shared.requireConfirmation(
                "Delete item \(id.lowercasedString) for good?", confirmed: yes, consequence: "--purge deletes for good")
            try coffer.purge(id: id)
            return
        }
        let item = try coffer.find(query)
        if purge {
            try SecretInput.shared.requireConfirmation(
                "Delete \(item.kind.rawValue.replacingOccurrences(of: "_", with: " ")) \"\(item.content.name)\" for good? It cannot be undone.",
                confirmed: yes, consequence: "--purge deletes for good")
            try coffer.purge(id: item.id)
            return
        }
        guard item.kind == .card else {
            throw CLIError.usage("only cards can be archived; `coffer rm --purge` deletes a \(item.kind.rawValue) for good")
        }
        let now = Date()
        _ = try coffer.update(item) { content in
            guard case .card(var card) = content else { return }
            card.archivedAt = now
            content = .card(card)
        }
    }
}

struct Restore: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring an archived card back.",
        discussion: """
            Examples:
              coffer restore Costco
            """)

    @OptionGroup var vaultOption: VaultOption
    @Argument(help: "Card name or id.", completion: ItemCompletion.names(.card)) var query: String

    func run() throws {
        let coffer = try vaultOption.open()
        let item = try coffer.find(query, kind: .card)
        _ = try coffer.update(item) { content in
            guard case .card(var card) = content else { return }
            card.archivedAt = nil
            content = .card(card)
        }
    }
}

struct Sign: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign standard input, or a Stellar transaction, with a PIN-held key.",
        discussion: """
            The PIN is asked on the terminal. Without a terminal, the first line of standard input is the PIN and \
            the rest is the message (or the transaction envelope, with --stellar-tx -).

            With --stellar-tx, the transaction envelope (base64 XDR, as wallets and Stellar Laboratory give it) is \
            decoded and shown in full on standard error: network, source, sequence, fee, time bounds, memo and every \
            operation. The PIN is asked only after that, and the signed envelope is printed. Coffer does not fetch \
            account state: balances and an account's signers are not checked.

            Examples:
              coffer sign Release < release.tar.gz
              printf 'hello' | coffer sign 'Stellar main' --base64
              coffer sign 'Stellar main' --stellar-tx tx.xdr --network testnet
            """)

    @OptionGroup var vaultOption: VaultOption
    @OptionGroup var output: JSONOption
    @Argument(help: "Key name or id.", completion: ItemCompletion.names(.signingKey)) var query: String
    @Flag(help: "Print the signature in base64 instead of hex.") var base64 = false
    @Option(
        name: .customLong("stellar-tx"),
        help: ArgumentHelp("A Stellar transaction envelope to sign: a file of base64 XDR, or - for standard input.", valueName: "file"))
    var stellarTransaction: String?
    @Option(help: "The transaction's network: public, testnet or futurenet (with --stellar-tx).") var network: String?
    @Option(help: "The transaction's network by its passphrase (with --stellar-tx).") var networkPassphrase: String?
    @Flag(help: "Sign a Stellar transaction without a terminal to show it at (the summary still goes to standard error).")
    var yes = false
    @Flag(help: "Sign though the key is not the transaction's source: a co-signer of a multi-signature account.")
    var cosign = false

    func validate() throws {
        guard stellarTransaction != nil else {
            if network != nil || networkPassphrase != nil || yes || cosign {
                throw ValidationError("--network, --network-passphrase, --yes and --cosign go with --stellar-tx")
            }
            return
        }
        if base64 { throw ValidationError("--base64 is for raw signatures; --stellar-tx prints the signed envelope") }
        switch (network, networkPassphrase) {
        case (nil, nil): throw ValidationError("say which network the transaction is for: --network public, testnet or futurenet, or --network-passphrase")
        case (.some, .some): throw ValidationError("give --network or --network-passphrase, not both")
        case (.some(let name), nil) where StellarNetwork(name: name) == nil:
            throw ValidationError("unknown network '\(name)': public, testnet or futurenet (or --network-passphrase)")
        case (nil, .some(let passphrase)) where passphrase.isEmpty || passphrase.utf8.count > 256:
            throw ValidationError("the network passphrase must be 1 to 256 bytes")
        default: break
        }
    }

    func run() throws {
        let coffer = try vaultOption.open()
        let item = try coffer.find(query, kind: .signingKey)
        if let stellarTransaction {
            let network = network.flatMap(StellarNetwork.init(name:)) ?? StellarNetwork(passphrase: networkPassphrase ?? "")
            try StellarTransactionSigner(
                source: stellarTransaction, network: network, confirmed: yes, cosign: cosign,
                json: output.json
            ).run(coffer, item)
            return
        }
        // A locked key, another device's key or a TPM in lockout is said before a PIN is asked that no PIN could use.
        try coffer.checkBeforePIN(item)
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
        let signature = try coffer.sign(message, with: item, pin: pin)
        let text = base64 ? Data(signature).base64EncodedString() : Hex.encode(signature)
        if output.json, case .signingKey(let key) = item.content {
            try Output.json(["signature": text, "public_key": key.publicKeyText])
        } else {
            Output.line(text)
        }
    }
}
