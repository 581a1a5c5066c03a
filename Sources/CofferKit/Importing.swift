import CofferCrypto
import CofferKeystore
import CofferVault
import Foundation

extension Coffer {
    /// What adding imported items did.
    public struct ImportSummary: Sendable, Equatable {
        /// Items added.
        public let added: Int
        /// Items skipped because the vault (or the same import) already holds them.
        public let duplicates: [String]
        /// The items added, in the order given.
        public let items: [Item]
    }

    /// Adds imported items in one transaction (all or nothing), skipping duplicates: a token with the same secret,
    /// type and account as one already present, or a card with the same symbology and payload.
    ///
    /// `progress` is called with (entries handled, entries in all): as the entries are checked against the vault
    /// (every `progressInterval` entries; a duplicate is handled once found), as the new items are written inside the
    /// transaction (every 256), and once it has committed, with (n, n). `photos` holds the images of the cards among
    /// `contents`, by index (`ImportResult.photos`); they are added with their cards in the same transaction.
    public func addImported(
        _ contents: [ItemContent], photos: [Int: [PhotoSide: Data]] = [:],
        progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws -> ImportSummary {
        // Only the keys are kept, read a batch of items at a time: holding every item of a vault of 111,000 as well
        // doubled an import's memory.
        var seen = Set(try items { $0.content.duplicateKey })
        var fresh: [ItemContent] = []
        var freshPhotos: [[PhotoSide: Data]] = []
        var duplicates: [String] = []
        for (index, content) in contents.enumerated() {
            if seen.insert(content.duplicateKey).inserted {
                fresh.append(content)
                freshPhotos.append(photos[index] ?? [:])
            } else {
                duplicates.append(content.name)
            }
            if (index + 1) % Self.progressInterval == 0 { progress(duplicates.count, contents.count) }
        }
        progress(duplicates.count, contents.count)
        let handled = duplicates.count
        let added = try vault.addAll(fresh, photos: freshPhotos) { written, _ in progress(handled + written, contents.count) }
        progress(contents.count, contents.count)
        return ImportSummary(added: fresh.count, duplicates: duplicates, items: added)
    }

    /// How many entries pass between progress reports (a report per entry would cost more than the check).
    static let progressInterval = 256
}

extension ItemContent {
    /// Identity for duplicate detection: what makes two entries the same secret, whatever they are called.
    var duplicateKey: [UInt8] {
        switch self {
        case .otp(let otp):
            let kind: String
            switch otp.parameters.kind {
            case .totp(let period): kind = "totp/\(period)"
            case .hotp: kind = "hotp"
            case .steam: kind = "steam"
            }
            return Array("otp/\(kind)/\(otp.account.lowercased())/".utf8) + otp.parameters.secret
        case .card(let card):
            return Array("card/\(card.symbology?.rawValue ?? "none")/".utf8) + card.payload
        case .credential(let credential):
            return Array("credential/\(credential.name)/\(credential.value)".utf8)
        case .note(let note):
            return Array("note/\(note.name)/\(note.text ?? "")".utf8) + note.fields.flatMap { Array("\($0.label)=\($0.value)".utf8) }
        case .signingKey(let key):
            return Array("key/".utf8) + key.publicKey
        }
    }
}
