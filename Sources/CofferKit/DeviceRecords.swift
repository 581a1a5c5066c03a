import CofferCrypto
import CofferKeystore
import CofferPlatform
import CofferVault
import Foundation

/// A key store as a person chooses it: a kind, or `auto` (the OS's store when it answers, else the file store),
/// which applies only when this device first keeps keys for a vault.
public enum KeystoreChoice: Sendable, Equatable {
    case auto
    case kind(KeystoreKind)

    /// Parses `auto`, `file`, `secret-service`, `keychain`.
    public init?(_ text: String) {
        if text == "auto" {
            self = .auto
        } else if let kind = KeystoreKind(rawValue: text), kind != .memory {
            self = .kind(kind)
        } else {
            return nil
        }
    }

    /// Every name `init` accepts.
    public static let names = ["auto"] + KeystoreKind.allCases.filter { $0 != .memory }.map(\.rawValue)
}

/// This device's records of which key store holds each vault's keys: one small file per vault,
/// `<directory>/<vault id>.json` holding `{"keystore":"<kind>"}`, and `"previous":"<kind>"` while a move is not
/// finished (docs/FORMAT.md §1). They live in the device's
/// data directory, not in the vault, because a vault folder shared by several devices is opened by devices whose
/// keys live in different stores.
public struct DeviceRecords: Sendable {
    /// Where the records are (`$XDG_DATA_HOME/coffer/vaults`).
    public let directory: String

    /// Records kept in `directory`.
    public init(directory: String) {
        self.directory = directory
    }

    /// One vault's record: the store that holds its keys, and, while a move is being finished, the store they came
    /// from (its copies are deleted last); the device slot this device's key opens, and the slots it opened before
    /// its key was lost (dead slots, which nothing opens any more).
    public struct Record: Sendable, Equatable {
        /// The store that holds the keys.
        public let keystore: KeystoreKind
        /// The store a move has yet to delete copies from.
        public let previous: KeystoreKind?
        /// The device slot this device's key opens.
        public var slot: UUID?
        /// Device slots this device made whose keys are gone from its store.
        public var replaced: [UUID]?

        /// A record of `keystore`, and of an unfinished move from `previous`.
        public init(keystore: KeystoreKind, previous: KeystoreKind? = nil, slot: UUID? = nil, replaced: [UUID]? = nil) {
            self.keystore = keystore
            self.previous = previous
            self.slot = slot
            self.replaced = replaced
        }

        /// A record read from its file: `keystore` required; `previous`, `slot` and `replaced` absent or null when
        /// not set; names this version does not know are ignored (as an older version ignores `slot`). Read without
        /// `JSONDecoder`, whose set-up costs `coffer code` more than the rest of reading the record.
        init?(json: JSONValue) {
            guard case .object(let members) = json, let keystore = members["keystore"]?.stringValue.flatMap(KeystoreKind.init(rawValue:))
            else { return nil }
            func optional<Value>(_ name: String, _ read: (JSONValue) -> Value?) -> Value?? {
                guard let value = members[name], value != .null else { return .some(nil) }
                return read(value).map { .some($0) }
            }
            guard let previous = optional("previous", { $0.stringValue.flatMap(KeystoreKind.init(rawValue:)) }),
                let slot = optional("slot", { $0.stringValue.flatMap(UUID.init(uuidString:)) }),
                let replaced = optional(
                    "replaced",
                    { value -> [UUID]? in
                        guard let elements = value.arrayValue else { return nil }
                        let ids = elements.compactMap { $0.stringValue.flatMap(UUID.init(uuidString:)) }
                        return ids.count == elements.count ? ids : nil
                    })
            else { return nil }
            self.init(keystore: keystore, previous: previous, slot: slot, replaced: replaced)
        }

        /// The record as written: `{"keystore":…,"previous":…,"slot":…,"replaced":[…]}`, absent keys left out.
        var text: String {
            var fields = ["\"keystore\":\"\(keystore.rawValue)\""]
            if let previous { fields.append("\"previous\":\"\(previous.rawValue)\"") }
            if let slot { fields.append("\"slot\":\"\(slot.lowercasedString)\"") }
            if let replaced, !replaced.isEmpty {
                fields.append("\"replaced\":[" + replaced.map { "\"\($0.lowercasedString)\"" }.joined(separator: ",") + "]")
            }
            return "{" + fields.joined(separator: ",") + "}\n"
        }
    }

    /// The recorded store of vault `vaultID`, or nil when this device has no record of it.
    public func keystore(for vaultID: UUID) throws -> KeystoreKind? {
        try record(for: vaultID)?.keystore
    }

    /// This device's record of vault `vaultID`, or nil.
    public func record(for vaultID: UUID) throws -> Record? {
        let bytes: [UInt8]
        do {
            bytes = try PrivateFiles.read(path(vaultID), limit: 4096)
        } catch .notFound {
            return nil
        } catch {
            throw VaultError.file(error)
        }
        guard let record = JSONValue.parse(bytes).flatMap(Record.init(json:)) else {
            throw VaultError.tampered("the device record \(path(vaultID))")
        }
        return record
    }

    /// Records that vault `vaultID`'s keys live in a store of `kind` (atomically: the old record or the new one);
    /// `previous` names the store a move has yet to delete them from.
    public func record(_ kind: KeystoreKind, previous: KeystoreKind? = nil, for vaultID: UUID) throws {
        let existing = try? record(for: vaultID)
        try write(Record(keystore: kind, previous: previous, slot: existing?.slot, replaced: existing?.replaced), for: vaultID)
    }

    /// Records that this device's key opens device slot `slot`; a different slot recorded before is kept as dead
    /// (its key is gone from this device's store). Writes nothing when `slot` is already the one recorded, or when
    /// there is no record yet.
    public func recordSlot(_ slot: UUID, for vaultID: UUID) throws {
        guard var current = try record(for: vaultID), current.slot != slot else { return }
        if let earlier = current.slot, !(current.replaced ?? []).contains(earlier) {
            current.replaced = (current.replaced ?? []) + [earlier]
        }
        current.slot = slot
        try write(current, for: vaultID)
    }

    private func write(_ record: Record, for vaultID: UUID) throws {
        do {
            try PrivateFiles.createDirectory(directory)
            try PrivateFiles.write(Array(record.text.utf8), to: path(vaultID))
        } catch {
            throw VaultError.file(error)
        }
    }

    func path(_ vaultID: UUID) -> String { "\(directory)/\(vaultID.lowercasedString).json" }
}

/// How a location finds the store for a vault's keys.
public enum KeystoreSelection: Sendable {
    /// Always this store, with no record kept (tests, programs that bring their own store).
    case fixed(any DeviceKeystore)
    /// As the command line chooses: `explicit` (`--keystore`, else `COFFER_KEYSTORE`) wins; else this device's
    /// record for the vault; else, for a vault this device already knows, the file store (where every key lived
    /// before records existed), and for a vault this device starts keeping keys for, `auto`. `sessionBus` tells
    /// whether there is a session bus for `auto` to look for a Secret Service on; `tpmTCTI` how the TPM is reached.
    case chosen(explicit: KeystoreChoice?, directories: KeystoreDirectories, sessionBus: Bool, tpmTCTI: String)
}

/// The store a location resolved for one vault, and why.
public struct ResolvedKeystore: Sendable {
    /// The store to use.
    public let store: any DeviceKeystore
    /// Where the choice came from: `option` (flag or environment), `record`, `default` or `auto`.
    public let source: String
}

extension CofferLocation {
    /// This device's records, when the location keeps them.
    public var deviceRecords: DeviceRecords? {
        guard case .chosen(_, let directories, _, _) = selection else { return nil }
        return DeviceRecords(directory: "\(directories.data)/vaults")
    }

    /// The store that holds (or, with `creating`, will hold) vault `vaultID`'s keys on this device.
    public func keystore(for vaultID: UUID, creating: Bool) throws -> ResolvedKeystore {
        guard case .chosen(let explicit, let directories, let sessionBus, let tcti) = selection, let records = deviceRecords else {
            return ResolvedKeystore(store: keystore, source: "default")
        }
        let recorded = try records.keystore(for: vaultID)
        switch explicit {
        case .kind(let kind)?:
            return ResolvedKeystore(store: Keystores.open(kind, directories: directories, tpmTCTI: tcti), source: "option")
        case .auto? where recorded == nil:
            return ResolvedKeystore(store: Keystores.automatic(directories: directories, sessionBus: sessionBus, tpmTCTI: tcti), source: "auto")
        default:
            if let recorded { return ResolvedKeystore(store: Keystores.open(recorded, directories: directories, tpmTCTI: tcti), source: "record") }
            if creating {
                return ResolvedKeystore(store: Keystores.automatic(directories: directories, sessionBus: sessionBus, tpmTCTI: tcti), source: "auto")
            }
            return ResolvedKeystore(store: keystore, source: "default")
        }
    }
}
