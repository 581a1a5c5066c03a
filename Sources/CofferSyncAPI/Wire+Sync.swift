import CofferCrypto
import Foundation

// Items on the wire: pushes, the change feed, manifests and master-key rotations (docs/openapi.yaml, tag sync).

/// One write of a push: the new row and the revision it replaces (0 for an item the server has never seen).
@dynamicMemberLookup
public struct PushItem: Codable, Sendable, Equatable {
    public var item: ItemRow
    public var baseRevision: Int64

    enum CodingKeys: String, CodingKey {
        case item
        case baseRevision = "base_revision"
    }

    public init(item: ItemRow, baseRevision: Int64) {
        self.item = item
        self.baseRevision = baseRevision
    }

    public subscript<Value>(dynamicMember field: KeyPath<ItemRow, Value>) -> Value { item[keyPath: field] }
}

/// `POST /v1/sync/push`: every write lands, or none does.
public struct PushRequest: Codable, Sendable {
    public var items: [PushItem]
    /// The epoch of the server head the device verified before pushing (0: none yet); with `manifest`.
    public var baseEpoch: Int64?
    /// Base64 of the manifest (docs/FORMAT.md §8.6) that commits to the state after this push, the epoch after the
    /// last of `chain` (or `baseEpoch + 1`). Required once the account has a manifest; without one, only the first
    /// push of an older client.
    public var manifest: String?
    /// Manifests the server lost (restored from a backup) that a device puts back before `manifest`: epochs
    /// `baseEpoch + 1`, … in order.
    public var chain: [String]?

    enum CodingKeys: String, CodingKey {
        case items, manifest, chain
        case baseEpoch = "base_epoch"
    }

    public init(items: [PushItem], baseEpoch: Int64? = nil, manifest: String? = nil, chain: [String]? = nil) {
        self.items = items
        self.baseEpoch = baseEpoch
        self.manifest = manifest
        self.chain = chain
    }
}

/// `POST /v1/sync/rotations/{rotation}/items`: re-sealed rows of a master-key rotation (docs/FORMAT.md §8.8), staged
/// until the rotation commits; at most `SyncLimits.maxPushItems` per request, checked as a push's.
public struct RotationItemsRequest: Codable, Sendable {
    public var items: [PushItem]

    public init(items: [PushItem]) {
        self.items = items
    }
}

/// The answer to staging rotation rows: how many the rotation holds now.
public struct RotationItemsResponse: Codable, Sendable, Equatable {
    public var staged: Int

    public init(staged: Int) {
        self.staged = staged
    }
}

/// `POST /v1/sync/rotations/{rotation}/commit`: the staged rows, the account slot wrapping the new master key and the
/// manifest of the new state land in one transaction (answered like a push). The slot keeps the account's KDF
/// parameters and salt, so the auth key does not change; `auth_key` proves the passphrase.
public struct RotationCommitRequest: Codable, Sendable {
    public var authKey: String
    public var slot: WrappedSlot
    public var baseEpoch: Int64
    /// Base64 of the manifest of epoch `base_epoch + 1`, made under the new master key.
    public var manifest: String
    /// How many rows the device staged: a commit of a rotation holding another number is refused.
    public var items: Int

    enum CodingKeys: String, CodingKey {
        case slot, manifest, items
        case authKey = "auth_key"
        case baseEpoch = "base_epoch"
    }

    public init(authKey: String, slot: WrappedSlot, baseEpoch: Int64, manifest: String, items: Int) {
        self.authKey = authKey
        self.slot = slot
        self.baseEpoch = baseEpoch
        self.manifest = manifest
        self.items = items
    }
}

/// The answer to an accepted push.
public struct PushResponse: Codable, Sendable, Equatable {
    /// The change cursor after this push.
    public var cursor: Int64
    public var accepted: Int
    public init(cursor: Int64, accepted: Int) {
        self.cursor = cursor
        self.accepted = accepted
    }
}

/// `GET /v1/sync/manifests?after=EPOCH&limit=N`: the chain of manifests after `after`, oldest first.
public struct ManifestsResponse: Codable, Sendable, Equatable {
    /// Base64 of each manifest.
    public var manifests: [String]
    public var hasMore: Bool

    enum CodingKeys: String, CodingKey {
        case manifests
        case hasMore = "has_more"
    }

    public init(manifests: [String], hasMore: Bool) {
        self.manifests = manifests
        self.hasMore = hasMore
    }
}

/// `GET /v1/sync/changes?since=CURSOR&limit=N`.
public struct ChangesResponse: Codable, Sendable {
    public var items: [ItemRow]
    /// Pass this as `since` next time.
    public var cursor: Int64
    public var hasMore: Bool
    /// On the last page (`has_more` false): base64 of the newest manifest stored at or before `cursor`, the one that
    /// describes the rows a client holds once it has read up to `cursor`; absent when the account has none.
    public var head: String?

    enum CodingKeys: String, CodingKey {
        case items, cursor, head
        case hasMore = "has_more"
    }

    public init(items: [ItemRow], cursor: Int64, hasMore: Bool, head: String? = nil) {
        self.items = items
        self.cursor = cursor
        self.hasMore = hasMore
        self.head = head
    }
}
