import CofferCrypto
import Foundation

/// How a person names an item on the command line, and which item that is.
///
/// An item is found by its full id; by a name it carries exactly; by that name in another case or without its accents
/// (`cafe` finds `Café`); by a unique id prefix (four hex digits or more); and then by a unique prefix or substring of
/// a name (`git` finds `GitHub`). Each rule counts only when the ones before it match nothing, so an exact name always
/// wins over looser matches; when the best rule matches several items, they are listed.
public enum ItemLookup {
    /// One item as the lookup sees it.
    public struct Candidate: Sendable, Equatable {
        public let id: UUID
        public let kind: ItemKind
        /// The name shown for the item.
        public let name: String
        /// Every name the item is found by (for tokens: the display name, issuer, account and `issuer:account`), in
        /// Unicode NFC.
        public let names: [String]
        /// `names` in their compared form (`ItemLookup.folded`).
        public let foldedNames: [String]

        public init(id: UUID, kind: ItemKind, name: String, names: [String], foldedNames: [String]) {
            self.id = id
            self.kind = kind
            self.name = name
            self.names = names
            self.foldedNames = foldedNames
        }

        public init(id: UUID, content: ItemContent) {
            let names = ItemLookup.names(of: content).map(ItemLookup.composed)
            self.init(id: id, kind: content.kind, name: content.name, names: names, foldedNames: names.map(ItemLookup.folded))
        }
    }

    /// What a query found.
    public enum Outcome: Sendable, Equatable {
        case found(UUID)
        /// Several items match equally well, in the order given.
        case ambiguous([Candidate])
        case none
    }

    /// The names `content` is found by.
    public static func names(of content: ItemContent) -> [String] {
        guard case .otp(let otp) = content else { return [content.name] }
        return otp.lookupNames
    }

    /// The text a search looks through: names, tags, issuer and account, provider, user name and URL, store
    /// networks, a note's fields and text, and every kind's notes. Never a secret (a credential's value, a card's
    /// payload, a token's seed, a key).
    public static func searchableTexts(of content: ItemContent) -> [String] {
        var texts = names(of: content) + content.tags
        switch content {
        case .card(let card):
            texts += card.networkIDs
            texts.append(card.notes ?? "")
        case .otp(let otp):
            texts.append(otp.notes ?? "")
        case .credential(let credential):
            texts += [credential.provider ?? "", credential.username ?? "", credential.url ?? "", credential.notes ?? ""]
        case .signingKey(let key):
            texts.append(key.notes ?? "")
        case .note(let note):
            texts += note.fields.flatMap { [$0.label, $0.value] }
            texts.append(note.text ?? "")
        }
        return texts.filter { !$0.isEmpty }
    }

    /// Whether every one of `words` (folded, as `folded` makes them) is found in some of `content`'s searchable text.
    public static func contentMatches(_ content: ItemContent, allOf words: [String]) -> Bool {
        guard !words.isEmpty else { return true }
        let texts = searchableTexts(of: content).map(folded)
        return words.allSatisfy { word in texts.contains { $0.contains(word) } }
    }

    /// The form in which names are compared: Unicode-normalised, without case, accents or width differences.
    public static func folded(_ text: String) -> String {
        // ASCII, most names, folds to its lower case: Foundation's folding cost 40 µs a name, most of an import's
        // catalogue update (checked against Foundation for every ASCII character).
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            return String(decoding: text.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
        }
        return text.precomposedStringWithCanonicalMapping.folding(
            options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// `text` in Unicode's canonical composition (NFC); ASCII is already.
    static func composed(_ text: String) -> String {
        text.utf8.allSatisfy({ $0 < 0x80 }) ? text : text.precomposedStringWithCanonicalMapping
    }

    /// A query prepared once and compared with many items as bytes (a vault's catalogue holds thousands).
    public struct Query: Sendable {
        public let text: String
        private let id: UUID?
        private let normalized: [UInt8]
        private let folded: [UInt8]
        /// Hex digits of an id prefix (4 or more, dashes dropped), as nibble values.
        private let idPrefix: [UInt8]?

        public init(_ text: String) {
            self.text = text
            id = UUID(text: text)
            normalized = Array(ItemLookup.composed(text).utf8)
            folded = Array(ItemLookup.folded(text).utf8)
            let digits = text.filter { $0 != "-" }
            if digits.count >= 4, digits.count <= 32, text.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                idPrefix = digits.compactMap { $0.hexDigitValue.map(UInt8.init) }
            } else {
                idPrefix = nil
            }
        }

        /// Whether the query is a full item id (rule 0), which only a look at every item answers.
        public var isItemID: Bool { id != nil }

        /// The query in the form names are compared in (`ItemLookup.folded`), as UTF-8.
        public var foldedUTF8: [UInt8] { folded }

        /// Rule 1 (the name exactly) or 2 (the name folded) for one name of an item, given as UTF-8 in NFC and
        /// folded; nil for neither. An item's best over its names is what `rank` says when that is 1 or 2.
        public func nameRank(_ name: ArraySlice<UInt8>, folded foldedName: ArraySlice<UInt8>) -> Int? {
            if name.elementsEqual(normalized) { return 1 }
            if foldedName.elementsEqual(folded) { return 2 }
            return nil
        }

        /// The best rule an item matches — 0 its full id, 1 a name exactly, 2 a name folded, 3 an id prefix, 4 a
        /// folded name's prefix, 5 a folded name's substring — or nil. `name(i)` and `foldedName(i)` give its names
        /// (NFC, and folded) as UTF-8.
        public func rank(
            id candidate: UUID, nameCount: Int, name: (Int) -> ArraySlice<UInt8>, foldedName: (Int) -> ArraySlice<UInt8>
        ) -> Int? {
            if let id, id == candidate { return 0 }
            if (0..<nameCount).contains(where: { name($0).elementsEqual(normalized) }) { return 1 }
            if (0..<nameCount).contains(where: { foldedName($0).elementsEqual(folded) }) { return 2 }
            if let idPrefix, Self.hasPrefix(candidate, idPrefix) { return 3 }
            guard !folded.isEmpty else { return nil }
            if (0..<nameCount).contains(where: { foldedName($0).starts(with: folded) }) { return 4 }
            if (0..<nameCount).contains(where: { Self.contains(foldedName($0), folded) }) { return 5 }
            return nil
        }

        public func rank(_ candidate: Candidate) -> Int? {
            rank(
                id: candidate.id, nameCount: candidate.names.count, name: { Array(candidate.names[$0].utf8)[...] },
                foldedName: { Array(candidate.foldedNames[$0].utf8)[...] })
        }

        private static func hasPrefix(_ id: UUID, _ nibbles: [UInt8]) -> Bool {
            let bytes = id.uuid
            return withUnsafeBytes(of: bytes) { raw in
                nibbles.indices.allSatisfy { index in
                    let byte = raw[index / 2]
                    return (index % 2 == 0 ? byte >> 4 : byte & 0x0F) == nibbles[index]
                }
            }
        }

        private static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
            guard haystack.count >= needle.count else { return false }
            var start = haystack.startIndex
            while start + needle.count <= haystack.endIndex {
                if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
                start += 1
            }
            return false
        }
    }

    /// The item `query` names among `candidates` (the lookup's rules are in the type's documentation).
    public static func find(_ query: String, in candidates: [Candidate]) -> Outcome {
        let prepared = Query(query)
        return outcome(candidates.compactMap { candidate in prepared.rank(candidate).map { (candidate, $0) } })
    }

    /// The outcome given each matching candidate with its rank: the best-ranked one, or the several that share the
    /// best rank, in the order given.
    public static func outcome(_ ranked: [(Candidate, Int)]) -> Outcome {
        guard let best = ranked.map(\.1).min() else { return .none }
        let matching = ranked.filter { $0.1 == best }.map(\.0)
        return matching.count == 1 ? .found(matching[0].id) : .ambiguous(matching)
    }

    /// The candidates other than `excluding` that carry `name` (compared folded): a second item of that name is
    /// allowed, but worth a warning.
    public static func sameName(_ name: String, in candidates: [Candidate], excluding: UUID? = nil) -> [Candidate] {
        let folded = Self.folded(name)
        return candidates.filter { $0.id != excluding && $0.foldedNames.first == folded }
    }
}
