import CofferVault
import Foundation

/// Changes to a card's photos made with an edit (`Coffer.update(_:photos:_:)`).
public typealias PhotoChanges = CofferVault.Vault.PhotoChanges

extension Coffer {
    /// Changes an item as `update(_:_:)` does, and a card's photos with it in the same transaction: images to set
    /// (each checked: PNG or JPEG, at most 2 MiB) and sides to remove.
    @discardableResult
    public func update(_ item: Item, photos changes: PhotoChanges, _ change: (inout ItemContent) throws -> Void) throws -> Item {
        try vault.modify(id: item.id, photos: changes, change)
    }

    /// The image of `card`'s photo of `side`, checked against the card (docs/FORMAT.md §5b); nil when it has none.
    public func photo(_ side: PhotoSide, of card: Item) throws -> (photo: CardPhoto, image: Data)? {
        try vault.photo(side, of: card)
    }

    /// Every photo of every card among `items`, by the item's index (for exports that carry images).
    public func photos(of items: [Item]) throws -> [Int: [PhotoSide: Data]] {
        var photos: [Int: [PhotoSide: Data]] = [:]
        for (index, item) in items.enumerated() {
            guard case .card(let card) = item.content else { continue }
            for record in card.photos {
                if let (_, image) = try photo(record.side, of: item) { photos[index, default: [:]][record.side] = image }
            }
        }
        return photos
    }

    /// Every photo of every card among `items`, by item id (for the plaintext export).
    public func photosByID(of items: [Item]) throws -> [UUID: [PhotoSide: Data]] {
        var byID: [UUID: [PhotoSide: Data]] = [:]
        for (index, images) in try photos(of: items) { byID[items[index].id] = images }
        return byID
    }
}
