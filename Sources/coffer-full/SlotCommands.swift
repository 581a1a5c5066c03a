import ArgumentParser
import CofferCLI
import CofferCrypto
import CofferKit
import CofferVault
import Foundation

struct Slots: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the ways the vault can be opened: one device slot per device, the passphrase, the recovery code.",
        discussion: """
            Examples:
              coffer slots
              coffer slots remove 5c1e9a02
            """,
        subcommands: [Slots.List.self, Slots.Remove.self], defaultSubcommand: Slots.List.self)
}

extension SlotType: ExpressibleByArgument {
    public init?(argument: String) {
        guard let type = SlotType.allCases.first(where: { $0.name == argument }) else { return nil }
        self = type
    }

    public static var allValueStrings: [String] { allCases.map(\.name) }
}

extension Slots {
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove",
            abstract: "Remove one slot by id (`coffer slots` shows them), or the passphrase or recovery slot (never the last one).",
            discussion: """
                Examples:
                  coffer slots remove 5c1e9a02       # a device slot, by id
                  coffer slots remove recovery
                """)
        @OptionGroup var vaultOption: VaultOption
        @Argument(help: "A slot id or a unique prefix of 4+ characters; or passphrase, recovery, or device when there is one device slot.")
        var slot: String
        @Flag(help: "Do not ask before removing this device's own slot (needed when not at a terminal).") var yes = false

        func run() throws {
            let coffer = try vaultOption.open()
            let slots = try coffer.slots()
            let id = try Self.resolve(slot, in: slots)
            if id == coffer.openedSlotID {
                // The slot this command opened the vault with: afterwards this device needs the passphrase again.
                try SecretInput.shared.requireConfirmation(
                    "Remove this device's own slot? The vault will then ask for its passphrase here.", confirmed: yes,
                    consequence: "that is this device's own slot; removing it locks this device out until `coffer unlock`")
            }
            try coffer.removeSlot(id: id)
        }

        /// The one slot `query` names: a type with exactly one slot, or an id prefix.
        static func resolve(_ query: String, in slots: [SlotInfo]) throws -> UUID {
            if let type = SlotType(argument: query) {
                let matching = slots.filter { $0.type == type }
                guard !matching.isEmpty else { throw VaultError.noSlot(type) }
                guard matching.count == 1 else {
                    throw CLIError.usage("the vault has \(matching.count) \(type.name) slots; name one by id (`coffer slots`)")
                }
                return matching[0].id
            }
            let lowered = query.lowercased()
            guard lowered.count >= 4 else { throw CLIError.usage("a slot id prefix has at least 4 characters") }
            let matching = slots.filter { $0.id.lowercasedString.hasPrefix(lowered) }
            guard matching.count == 1 else {
                if matching.isEmpty { throw VaultError.slotNotFound }
                throw CLIError.usage("\(matching.count) slots start with \(query); give more of the id")
            }
            return matching[0].id
        }
    }
}

extension Slots {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the slots.",
            discussion: """
                Examples:
                  coffer slots list
                  coffer slots list --json
                """)
        @OptionGroup var vaultOption: VaultOption
        @OptionGroup var output: JSONOption

        struct SlotLine: Encodable {
            let id: String
            let type: String
            let kdf: String?
            /// A device slot's name, key store and date, and whether it is this device's.
            let name: String?
            let keystore: String?
            let created: Date?
            let thisDevice: Bool?
            /// A slot this device made whose key is gone from its store: nothing opens it.
            let dead: Bool?

            enum CodingKeys: String, CodingKey {
                case id, type, kdf, name, keystore, created, dead
                case thisDevice = "this_device"
            }
        }

        func run() throws {
            let coffer = try vaultOption.open()
            let slots = try coffer.slots()
            let dead = Set(try coffer.deadDeviceSlots())
            let lines = slots.map { slot in
                SlotLine(
                    id: slot.id.lowercasedString, type: slot.type.name, kdf: slot.kdf?.description, name: slot.device?.name,
                    keystore: slot.device?.keystore, created: slot.device?.createdAt,
                    thisDevice: slot.type == .device ? slot.id == coffer.openedSlotID : nil,
                    dead: slot.type == .device ? dead.contains(slot.id) : nil)
            }
            if output.json {
                try Output.json(lines)
                return
            }
            for line in lines {
                var detail = line.kdf ?? ""
                if line.type == SlotType.device.name {
                    let day = line.created.map { Output.isoDay.string(from: $0) } ?? "(before names)"
                    detail =
                        "\(pad(line.name ?? "unnamed", 16))  \(pad(line.keystore ?? "", 14))  \(day)"
                        + (line.thisDevice == true ? "  (this device)" : "") + (line.dead == true ? "  (dead: its key is gone)" : "")
                }
                Output.line("\(String(line.id.prefix(8)))  \(pad(line.type, 10))  \(detail)")
            }
            Self.noteDeadSlots(Array(dead))
        }

        /// Offers to remove the device slots this device made and lost the keys of.
        static func noteDeadSlots(_ dead: [UUID]) {
            guard !dead.isEmpty else { return }
            let ids = dead.map { String($0.lowercasedString.prefix(8)) }
            Output.note(
                dead.count == 1
                    ? "Slot \(ids[0]) was this device's, and its key is gone from the key store: nothing opens it. `coffer slots remove \(ids[0])` removes it."
                    : "Slots \(ids.joined(separator: ", ")) were this device's, and their keys are gone from the key store: nothing opens them. `coffer slots remove ID` removes each."
            )
        }
    }
}
