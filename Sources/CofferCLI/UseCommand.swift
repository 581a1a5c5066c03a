import ArgumentParser
import CofferKit
import Foundation

package struct Use: ParsableCommand {
    package init() {}

    package static let configuration = CommandConfiguration(
        abstract: "Record that a card was used at the till: a one-time pass is then used up; any card comes first next time at its stores.",
        discussion: """
            Examples:
              coffer use Costco
              coffer use 'Museum ticket'           # a one-time pass is used up
            """)

    @OptionGroup package var vaultOption: VaultOption
    @Argument(help: "Card name or id.", completion: ItemCompletion.names(.card)) package var query: String

    /// What this command does, in plain values.
    package var work: Work { Work(vault: vaultOption.selection, query: query) }

    package func run() throws { try work.run() }

    package struct Work: EverydayWork {
        package var vault: VaultSelection
        package var query: String

        package init(vault: VaultSelection, query: String) {
            self.vault = vault
            self.query = query
        }

        package func run() throws {
            let coffer = try vault.open()
            let item = try coffer.find(query, kind: .card)
            let now = Date()
            _ = try coffer.update(item) { content in
                guard case .card(var card) = content else { throw ModelError.notOneTime }
                if card.oneTime { try card.markUsed(at: now) }
                card.metadata[CardPlaces.lastUsedKey] = now.formatted(.iso8601)
                content = .card(card)
            }
        }
    }
}
