import Foundation

/// How a person names an item on the command line, and which item that is.
///
/// An item is found by its full id; by a name it carries exactly; by that name in another case or without its accents
/// (`cafe` finds `Café`); by a unique id prefix (four hex digits or more); and then by a unique prefix or substring of
/// a name (`git` finds `GitHub`). Each rule is tried only when the ones before it found nothing, so an exact name always
/// wins over looser matches; when a rule finds several items the lookup stops there and lists them.
public enum ItemLookup {
    /// One item as the lookup sees it.
    public struct Candidate: Sendable, Equatable {
        public let id: UUID
        public let kind: ItemKind
        /// The name shown for the item.
        public let name: String
        /// Every name the item is found by (for tokens: the display name, issuer, account and `issuer:account`).
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
            let names = ItemLookup.names(of: content)
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
        var names = [otp.displayName, otp.issuer, otp.account, "\(otp.issuer):\(otp.account)"]
        names.removeAll { $0.isEmpty }
        return names
    }

    /// The form in which names are compared: Unicode-normalised, without case, accents or width differences.
    public static func folded(_ text: String) -> String {
        text.precomposedStringWithCanonicalMapping.folding(
            options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    /// The item `query` names among `candidates` (the lookup's rules are in the type's documentation).
    public static func find(_ query: String, in candidates: [Candidate]) -> Outcome {
        let lowered = query.lowercased()
        if let exact = candidates.first(where: { $0.id.uuidString.lowercased() == lowered }) { return .found(exact.id) }
        let folded = Self.folded(query)
        let normalized = query.precomposedStringWithCanonicalMapping
        var rules: [(Candidate) -> Bool] = [
            { $0.names.contains { $0.precomposedStringWithCanonicalMapping == normalized } },
            { $0.foldedNames.contains(folded) },
        ]
        if lowered.count >= 4, lowered.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
            rules.append { $0.id.uuidString.lowercased().hasPrefix(lowered) }
        }
        if !folded.isEmpty {
            rules.append { $0.foldedNames.contains { $0.hasPrefix(folded) } }
            rules.append { $0.foldedNames.contains { $0.contains(folded) } }
        }
        for rule in rules {
            let matching = candidates.filter(rule)
            if matching.count == 1 { return .found(matching[0].id) }
            if matching.count > 1 { return .ambiguous(matching) }
        }
        return .none
    }

    /// The candidates other than `excluding` that carry `name` (compared folded): a second item of that name is
    /// allowed, but worth a warning.
    public static func sameName(_ name: String, in candidates: [Candidate], excluding: UUID? = nil) -> [Candidate] {
        let folded = Self.folded(name)
        return candidates.filter { $0.id != excluding && $0.foldedNames.first == folded }
    }
}
