import CofferKeystore
import CofferTestSupport
import Foundation
import GRDB
import Testing

@_spi(Testing) @testable import CofferCrypto
@_spi(Sync) @testable import CofferKit
@testable import CofferVault

/// One device slot per device, and a key store that is locked or unreachable never taken for an empty one.
@Suite("Device slots")
struct DeviceSlotTests {
    static func label(_ name: String, _ seconds: TimeInterval = 1_800_000_000) -> DeviceLabel {
        DeviceLabel(name: name, keystore: "file", createdAt: Date(timeIntervalSince1970: seconds))
    }

    @Test("adding a device slot never removes another; a key that already opens one adds nothing; labels are sealed")
    func oneSlotPerDevice() throws {
        let test = try TestVault()
        let other = SecretBytes(randomCount: 32)
        let first = try test.vault.addDeviceSlot(test.deviceKey, label: Self.label("laptop"))
        let second = try test.vault.addDeviceSlot(other, label: Self.label("desktop", 1_800_000_123.456))
        #expect(first.device == nil, "the key already had a slot: returned unchanged")
        #expect(try test.vault.addDeviceSlot(other, label: Self.label("again")).id == second.id)
        let devices = try test.vault.slots().filter { $0.type == .device }
        #expect(devices.count == 2)
        #expect(devices.first { $0.id == second.id }?.device == Self.label("desktop", 1_800_000_123.456))
        _ = try Vault.open(in: test.directory, unlock: .deviceKey(test.deviceKey), options: testOptions)
        let opened = try Vault.open(in: test.directory, unlock: .deviceKey(other), options: testOptions)
        #expect(opened.openedSlotID == second.id)
        #expect(try test.vault.deviceSlotID(opening: other) == second.id)

        // The file names no device, and the label's box is bound to its slot: every bit flip is caught.
        let raw = try Data(contentsOf: URL(fileURLWithPath: test.path))
        #expect(raw.range(of: Data("desktop".utf8)) == nil)
        let box = try test.database().read { db in try Data.fetchOne(db, sql: "SELECT box FROM slot_label")! }
        for bit in stride(from: 0, to: box.count * 8, by: 7) {
            var flipped = box
            flipped[bit / 8] ^= 1 << (bit % 8)
            try test.database().write { db in try db.execute(sql: "UPDATE slot_label SET box = ?", arguments: [flipped]) }
            #expect(Self.failure { _ = try test.vault.slots() } == VaultError.tampered("a slot label").description)
        }
        try test.database().write { db in try db.execute(sql: "UPDATE slot_label SET box = ?", arguments: [box]) }

        try test.vault.removeSlot(id: second.id)
        #expect(
            Self.failure { _ = try Vault.open(in: test.directory, unlock: .deviceKey(other), options: testOptions) }
                == VaultError.deviceKeyMismatch.description)
        #expect(try test.database().read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM slot_label") } == 0)
        #expect(Self.failure { try test.vault.removeSlot(id: second.id) } == VaultError.slotNotFound.description)
    }

    /// The description of the vault error `body` throws, or nil when it throws none.
    static func failure(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as VaultError {
            return error.description
        } catch {
            return "\(error)"
        }
    }

    @Test("the independent reader opens each device label as FORMAT.md §4 describes")
    func labelsReadByOracle() throws {
        let test = try TestVault()
        try test.vault.addDeviceSlot(
            SecretBytes(randomCount: 32),
            label: DeviceLabel(name: "Ada's phone ✓", keystore: "secret-service", createdAt: Date(timeIntervalSince1970: 1_800_000_000.5)))
        let answer = try #require(
            try TestSupport.openSSLOracle([
                ["op": "read_vault", "path": test.path, "secret_kind": "passphrase", "secret": "correct horse"]
            ]).first as? [String: Any])
        let labels = try #require(answer["device_labels"] as? [[String: Any]])
        #expect(labels.count == 1)
        #expect(labels.first?["name"] as? String == "Ada's phone ✓")
        #expect(labels.first?["keystore"] as? String == "secret-service")
        #expect(labels.first?["created_at"] as? Int == 1_800_000_000_500)
    }

    @Test("rotation keeps one device slot, this device's, with its label; other devices' slots go")
    func rotationKeepsThisDevice() throws {
        let test = try TestVault()
        let mine = SecretBytes(randomCount: 32)
        try test.vault.addDeviceSlot(mine, label: Self.label("mine"))
        try test.vault.addDeviceSlot(SecretBytes(randomCount: 32), label: Self.label("theirs"))
        let vault = try Vault.open(in: test.directory, unlock: .deviceKey(mine), options: testOptions)
        let newKey = SecretBytes(randomCount: 32)
        _ = try vault.rotateMasterKey(deviceKey: newKey, passphrase: "correct horse")
        let devices = try vault.slots().filter { $0.type == .device }
        #expect(devices.count == 1 && devices.first?.device?.name == "mine")
        _ = try Vault.open(in: test.directory, unlock: .deviceKey(newKey), options: testOptions)
    }

    @Test("a locked or unreachable store: open fails as such, unlock adds no key and no slot, nothing changes")
    func lockedStore() throws {
        let root = try TestSupport.temporaryDirectory("locked")
        let store = InMemoryKeystore()
        let location = CofferLocation(vaultDirectory: root + "/vault", keystore: store, options: testOptions)
        let coffer = try Coffer.initialize(at: location, passphrase: "pass phrase", kdf: cheapKDF)
        let before = try coffer.vault.slots()
        for state in [KeystoreStatus.locked, .unreachable("no bus")] {
            store.setStatus(state)
            #expect(throws: KeystoreError.self) { _ = try Coffer.open(at: location) }
            do {
                _ = try Coffer.open(at: location)
            } catch let error as KeystoreError {
                #expect(error.description.contains(state == .locked ? "locked" : "no bus"), "never 'no device key'")
            }
            #expect(throws: KeystoreError.self) { _ = try Coffer.open(at: location, unlock: .passphrase("pass phrase")) }
            store.setStatus(.available)
            #expect(try coffer.vault.slots() == before)
        }
        _ = try Coffer.open(at: location)
    }

    @Test("a vault written before device labels lists its device slot unnamed, and gets labels from then on")
    func olderVault() throws {
        let test = try TestVault()
        try test.database().write { db in try db.execute(sql: "DELETE FROM slot_label") }
        #expect(try test.vault.slots().first { $0.type == .device }?.device == nil)
        try test.vault.addDeviceSlot(SecretBytes(randomCount: 32), label: Self.label("new"))
        #expect(try test.vault.slots().compactMap(\.device?.name) == ["new"])
    }
}
