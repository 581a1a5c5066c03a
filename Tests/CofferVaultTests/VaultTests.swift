import CofferTestSupport
import Foundation
import GRDB
import Testing

@_spi(Testing) @testable import CofferCrypto
@_spi(Sync) @testable import CofferKit
@testable import CofferModel
@testable import CofferVault
import CofferPlatform

/// Cheap KDF parameters for vault tests (production bounds are tested in CofferCryptoTests).
let testOptions = VaultOptions(limits: .testing)
let cheapKDF = PassphraseKDF.pbkdf2SHA256(iterations: 1000)

/// Contents in a stable order for comparisons (several items can share a creation millisecond).
func sortedByName(_ contents: [ItemContent]) -> [ItemContent] {
    contents.sorted { $0.name < $1.name }
}

func sampleContents() throws -> [ItemContent] {
    [
        .card(try Card(name: "Costco", symbology: .code128, payload: Array("CANARY-PAYLOAD-111".utf8), tags: ["grocery"], networkIDs: ["costco"])),
        .otp(try OTPItem(issuer: "GitHub", account: "canary-account", parameters: try OTPParameters(secret: Array("CANARYSECRET1234".utf8)))),
        .credential(try Credential(name: "OpenAI", provider: "openai", value: "sk-CANARY-CREDENTIAL")),
        .note(try Note(name: "KYC record", template: .kyc, fields: [.init(label: "ID number", value: "CANARY-KYC-ID")])),
    ]
}

extension Array where Element == ItemContent {
    var sortedByName: [ItemContent] { CofferVaultTests.sortedByName(self) }
}

struct TestVault {
    let directory: String
    let deviceKey = SecretBytes(randomCount: 32)
    let vault: Vault

    init(passphrase: String? = "correct horse", items: Bool = true) throws {
        directory = try TestSupport.temporaryDirectory("vault") + "/v"
        vault = try Vault.create(in: directory, deviceKey: deviceKey, passphrase: passphrase, kdf: cheapKDF, options: testOptions)
        if items {
            for content in try sampleContents() { try vault.add(content) }
        }
    }

    var path: String { Vault.databasePath(in: directory) }

    func reopen() throws -> Vault {
        try Vault.open(in: directory, unlock: .deviceKey(deviceKey), options: testOptions)
    }

    /// A raw connection for inspecting and damaging the file; CHECK constraints off so any bit can be flipped.
    func database() throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA ignore_check_constraints = ON") }
        return try DatabaseQueue(path: path, configuration: configuration)
    }
}

@Suite("Vault store")
struct VaultStoreTests {
    @Test("Create, add, reopen with each slot type, list")
    func lifecycle() throws {
        let test = try TestVault()
        let code = try test.vault.newRecoveryCode()
        for unlock in [UnlockMethod.deviceKey(test.deviceKey), .passphrase("correct horse"), .recoveryCode(code)] {
            let vault = try Vault.open(in: test.directory, unlock: unlock, options: testOptions)
            let items = try vault.items()
            #expect(items.map(\.content).sortedByName == sortedByName(try sampleContents()))
            #expect(items.allSatisfy { $0.revision == 1 })
        }
    }

    @Test("Wrong secrets give clear errors and change nothing")
    func wrongSecrets() throws {
        let test = try TestVault()
        _ = try test.vault.newRecoveryCode()
        let before = try Data(contentsOf: URL(fileURLWithPath: test.path))
        #expect(throws: VaultError.self) { _ = try Vault.open(in: test.directory, unlock: .passphrase("wrong"), options: testOptions) }
        #expect(throws: VaultError.self) {
            _ = try Vault.open(in: test.directory, unlock: .recoveryCode("0000-0000-0000-0000-0000-0000-0000-0000"), options: testOptions)
        }
        #expect(throws: VaultError.self) { _ = try Vault.open(in: test.directory, unlock: .recoveryCode("nonsense"), options: testOptions) }
        #expect(throws: VaultError.self) { _ = try Vault.open(in: test.directory, unlock: .deviceKey(SecretBytes(randomCount: 32)), options: testOptions) }
        do {
            _ = try Vault.open(in: test.directory, unlock: .passphrase("wrong"), options: testOptions)
        } catch {
            #expect(error.description == "wrong passphrase")
        }
        let after = try Data(contentsOf: URL(fileURLWithPath: test.path))
        #expect(before == after)
    }

    @Test("Directory is 0700 and every vault file 0600")
    func fileModes() throws {
        let test = try TestVault()
        #expect(PrivateFiles.mode(of: test.directory) == 0o700)
        for suffix in ["", "-wal", "-shm"] where PrivateFiles.exists(test.path + suffix) {
            #expect(PrivateFiles.mode(of: test.path + suffix) == 0o600)
        }
        chmod(test.path, 0o644)
        _ = try test.reopen()
        #expect(PrivateFiles.mode(of: test.path) == 0o600)
    }

    @Test("The schema declares no foreign keys: connections leave SQLite's enforcement off, so one would go unchecked")
    func noForeignKeys() throws {
        let test = try TestVault()
        let schema = try test.database().read { db in try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL") }
        #expect(schema.count > 10)
        #expect(schema.allSatisfy { !$0.uppercased().contains("REFERENCES") })
    }

    @Test("A vault closed before exit has removed its -wal and -shm files, refuses further use, and opens again")
    func closeBeforeExit() throws {
        let test = try TestVault()
        let count = try test.vault.items().count
        #expect(PrivateFiles.exists(test.path + "-wal"))
        test.vault.closeBeforeExit()
        #expect(!PrivateFiles.exists(test.path + "-wal") && !PrivateFiles.exists(test.path + "-shm"))
        #expect(throws: VaultError.self) { _ = try test.vault.items() }
        #expect(try test.reopen().items().count == count)
    }

    @Test("Only id, kind, revision, time and tombstone flag are stored in the clear")
    func plaintextOnDisk() throws {
        let test = try TestVault()
        let item = try test.vault.items()[0]
        try test.vault.purge(id: item.id)
        try test.database().writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        let columns = try test.database().read { db in try db.columns(in: "item").map(\.name) }
        #expect(columns == ["id", "kind", "revision", "updated_at", "deleted", "box"])
        var bytes = try Data(contentsOf: URL(fileURLWithPath: test.path))
        for suffix in ["-wal"] where PrivateFiles.exists(test.path + suffix) {
            bytes += try Data(contentsOf: URL(fileURLWithPath: test.path + suffix))
        }
        for canary in ["CANARY", "Costco", "GitHub", "OpenAI", "KYC record", "grocery", "costco", "canary-account"] {
            #expect(CanaryScan.encodings(of: canary, in: bytes).isEmpty, "found \(canary) in the vault file")
        }
        let tombstones = try test.vault.tombstones()
        #expect(tombstones.count == 1 && tombstones[0].id == item.id && tombstones[0].revision == 2)
    }

    @Test("A vault from a newer format version, or with unknown migrations, is refused")
    func newerVersions() throws {
        let test = try TestVault()
        try test.database().write { db in try db.execute(sql: "UPDATE vault SET format_version = 2") }
        #expect {
            _ = try test.reopen()
        } throws: { error in
            guard case VaultError.newerFormat(found: 2, supported: 1) = error else { return false }
            return true
        }
        try test.database().write { db in
            try db.execute(sql: "UPDATE vault SET format_version = 1")
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v9-from-the-future')")
        }
        #expect {
            _ = try test.reopen()
        } throws: { error in
            guard case VaultError.unknownMigrations = error else { return false }
            return true
        }
    }

    @Test("Updates check the revision they replace")
    func optimisticConcurrency() throws {
        let test = try TestVault()
        var item = try #require(try test.vault.items().first { $0.kind == .card })
        let original = item
        if case .card(var card) = item.content {
            card.name = "Costco Wholesale"
            item.content = .card(card)
        }
        let stored = try test.vault.update(item)
        #expect(stored.revision == 2)
        #expect(throws: VaultError.self) { try test.vault.update(original) }
        #expect(try test.vault.item(id: item.id).content.name == "Costco Wholesale")
    }

    @Test("Concurrent modifications from many threads lose nothing")
    func concurrentModify() async throws {
        let test = try TestVault()
        let hotp = try test.vault.add(
            .otp(
                try OTPItem(
                    issuer: "Duo", account: "a", parameters: try OTPParameters(secret: Array(repeating: 5, count: 20), kind: .hotp(counter: 0)))))
        let other = try test.reopen()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for vault in [test.vault, other] {
                for _ in 0..<10 {
                    group.addTask {
                        try vault.modify(id: hotp.id) { content in
                            guard case .otp(let otp) = content, let next = try otp.advancingCounter() else { return }
                            content = .otp(next)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        guard case .otp(let final) = try test.vault.item(id: hotp.id).content else { Issue.record("not a token"); return }
        #expect(final.parameters.kind == .hotp(counter: 20))
    }

    @Test("Another process's key rotation stops stale writers instead of corrupting items")
    func staleWriter() throws {
        let test = try TestVault()
        let stale = try test.reopen()
        _ = try test.vault.rotateMasterKey(deviceKey: test.deviceKey, passphrase: "correct horse")
        #expect {
            try stale.add(.note(try Note(name: "late", text: "x")))
        } throws: { error in
            guard case VaultError.keyRotatedElsewhere = error else { return false }
            return true
        }
        #expect(try test.reopen().items().count == 4)
    }
}

@Suite("Tamper evidence")
struct TamperTests {
    /// Flips every bit of `column` in `table` (one row), checking after each flip that `check` fails, then restores.
    func flipEveryBit(
        _ test: TestVault, table: String, column: String, rowid: String, key: DatabaseValue, check: () throws -> Void
    ) throws -> Int {
        let database = try test.database()
        let original = try database.read { db in
            try DatabaseValue.fetchOne(db, sql: "SELECT \(column) FROM \(table) WHERE \(rowid) = ?", arguments: [key])
        }
        let value = try #require(original)
        var flips = 0
        switch value.storage {
        case .blob(let data):
            for index in 0..<data.count {
                for bit in 0..<8 {
                    var changed = data
                    changed[index] ^= UInt8(1 << bit)
                    try database.write { db in
                        try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE \(rowid) = ?", arguments: [changed, key])
                    }
                    let newKey = column == rowid ? changed.databaseValue : key
                    #expect(throws: (any Error).self, "flip \(index).\(bit) of \(table).\(column) went unnoticed") { try check() }
                    try database.write { db in
                        try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE \(rowid) = ?", arguments: [data, newKey])
                    }
                    flips += 1
                }
            }
        case .int64(let number):
            for bit in 0..<63 {
                try database.write { db in
                    try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE \(rowid) = ?", arguments: [number ^ (1 << Int64(bit)), key])
                }
                #expect(throws: (any Error).self, "flip bit \(bit) of \(table).\(column) went unnoticed") { try check() }
                try database.write { db in
                    try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE \(rowid) = ?", arguments: [number, key])
                }
                flips += 1
            }
        case .string(let text):
            var bytes = Array(text.utf8)
            for index in 0..<bytes.count {
                for bit in 0..<7 {
                    bytes[index] ^= UInt8(1 << bit)
                    try database.write { db in
                        try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE \(rowid) = ?", arguments: [String(decoding: bytes, as: UTF8.self), key])
                    }
                    #expect(throws: (any Error).self, "flip \(index).\(bit) of \(table).\(column) went unnoticed") { try check() }
                    bytes[index] ^= UInt8(1 << bit)
                }
            }
            try database.write { db in
                try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE \(rowid) = ?", arguments: [text, key])
            }
            flips += bytes.count * 7
        default:
            Issue.record("unexpected storage")
        }
        // Restored: the check passes again, so every failure above was caused by the flip.
        try check()
        return flips
    }

    @Test("Every single-bit change to any item box, nonce, tag or associated field is detected (exhaustive)")
    func itemFlips() throws {
        let test = try TestVault(passphrase: nil, items: false)
        let item = try test.vault.add(.credential(try Credential(name: "K", value: "v")))
        let key = Data(item.id.bytes).databaseValue
        var flips = 0
        for column in ["box", "kind", "revision", "updated_at", "id"] {
            flips += try flipEveryBit(test, table: "item", column: column, rowid: "id", key: key) {
                let items = try test.vault.items()
                // A changed id is a different row that still must not open; an empty listing would hide damage.
                guard items.count == 1, items[0].id == item.id else { throw VaultError.tampered("listing") }
            }
        }
        flips += try flipEveryBit(test, table: "vault", column: "vault_id", rowid: "singleton", key: 1.databaseValue) {
            _ = try test.reopen().items()
        }
        // Box (nonce, ciphertext, tag), kind, revision, time, item id and vault id: several hundred flips in all.
        #expect(flips > 600)
    }

    @Test("Every single-bit change to any slot field is detected (exhaustive)")
    func slotFlips() throws {
        let test = try TestVault(passphrase: "pw", items: false)
        let slots = try test.database().read { db in try Row.fetchAll(db, sql: "SELECT id, type FROM slot") }
        var flips = 0
        for slot in slots {
            let id: Data = slot[0]
            let type: Int = slot[1]
            let unlock: UnlockMethod = type == 1 ? .deviceKey(test.deviceKey) : .passphrase("pw")
            for column in ["wrapped_key", "salt", "kdf", "type", "id"] {
                if column == "kdf" && type == 1 { continue }
                flips += try flipEveryBit(test, table: "slot", column: column, rowid: "id", key: id.databaseValue) {
                    _ = try Vault.open(in: test.directory, unlock: unlock, options: testOptions)
                }
            }
        }
        // A device and a passphrase slot, each: wrapped key 60 bytes (480 flips), salt 32 (256), type (63 bits of an
        // integer), id 16 (128), that is 927; the passphrase slot's PBKDF2 parameters add 5 bytes (40).
        #expect(slots.count == 2)
        #expect(flips == 2 * 927 + 40)
    }

    @Test("A box copied onto another item, or into another vault, does not open")
    func boxTransplant() throws {
        let first = try TestVault(passphrase: nil)
        let second = try TestVault(passphrase: nil)
        let items = try first.vault.items()
        let boxes = try first.database().read { db in try Data.fetchAll(db, sql: "SELECT box FROM item ORDER BY id") }
        try first.database().write { db in
            let ids = try Data.fetchAll(db, sql: "SELECT id FROM item ORDER BY id")
            try db.execute(sql: "UPDATE item SET box = ? WHERE id = ?", arguments: [boxes[0], ids[1]])
        }
        #expect(throws: VaultError.self) { _ = try first.vault.items() }
        let target = try second.vault.items()[0]
        try second.database().write { db in
            try db.execute(
                sql: "UPDATE item SET id = ?, box = ?, kind = ?, revision = 1 WHERE id = ?",
                arguments: [Data(items[0].id.bytes), boxes.first!, items[0].kind.rawValue, Data(target.id.bytes)])
        }
        #expect(throws: VaultError.self) { _ = try second.vault.items() }
    }
}

@Suite("Slots, rotation, backups")
struct SlotLifecycleTests {
    func itemRows(_ test: TestVault) throws -> [Row] {
        try test.database().read { db in try Row.fetchAll(db, sql: "SELECT * FROM item ORDER BY id") }
    }

    @Test("Changing the passphrase re-wraps one slot and writes no item")
    func passphraseChange() throws {
        let test = try TestVault()
        let before = try itemRows(test)
        try test.vault.setPassphrase("new passphrase", kdf: cheapKDF)
        #expect(try itemRows(test) == before)
        #expect(throws: VaultError.self) { _ = try Vault.open(in: test.directory, unlock: .passphrase("correct horse"), options: testOptions) }
        let reopened = try Vault.open(in: test.directory, unlock: .passphrase("new passphrase"), options: testOptions)
        #expect(try reopened.items().count == 4)
        #expect(try test.vault.slots().filter { $0.type == .passphrase }.count == 1)
    }

    @Test("The last slot cannot be removed")
    func lastSlot() throws {
        let test = try TestVault()
        try test.vault.removeSlots(ofType: .passphrase)
        #expect(throws: VaultError.self) { try test.vault.removeSlots(ofType: .device) }
        #expect(try test.vault.slots().map(\.type) == [.device])
    }

    @Test("Master-key rotation re-encrypts every item and re-wraps every slot; the old recovery code stops working")
    func rotation() throws {
        let test = try TestVault()
        let oldCode = try test.vault.newRecoveryCode()
        let before = try itemRows(test)
        let result = try test.vault.rotateMasterKey(deviceKey: test.deviceKey, passphrase: "correct horse")
        #expect(result.itemCount == 4)
        let newCode = try #require(result.recoveryCode)
        let after = try itemRows(test)
        for (old, new) in zip(before, after) {
            #expect((old["box"] as Data?) != (new["box"] as Data?))
        }
        #expect(try test.vault.items().map(\.content).sortedByName == sortedByName(try sampleContents()))
        for unlock in [UnlockMethod.deviceKey(test.deviceKey), .passphrase("correct horse"), .recoveryCode(newCode)] {
            #expect(try Vault.open(in: test.directory, unlock: unlock, options: testOptions).items().count == 4)
        }
        #expect(throws: VaultError.self) { _ = try Vault.open(in: test.directory, unlock: .recoveryCode(oldCode), options: testOptions) }
    }

    @Test("Rotation refuses a wrong passphrase and changes nothing")
    func rotationWrongPassphrase() throws {
        let test = try TestVault()
        #expect(throws: VaultError.self) { _ = try test.vault.rotateMasterKey(deviceKey: test.deviceKey, passphrase: "nope") }
        #expect(try test.reopen().items().count == 4)
        #expect(try itemRows(test).allSatisfy { ($0["revision"] as Int64) == 1 })
    }

    @Test("Backups never carry the device slot, restore with passphrase or recovery code, and import merges")
    func backups() throws {
        let test = try TestVault()
        let code = try test.vault.newRecoveryCode()
        let backup = try TestSupport.temporaryDirectory("backup") + "/vault.coffer-backup"
        try test.vault.writeBackup(to: backup)
        #expect(PrivateFiles.mode(of: backup) == 0o600)
        let types = try DatabaseQueue(path: backup).read { db in try Int.fetchAll(db, sql: "SELECT type FROM slot ORDER BY type") }
        #expect(types == [Int(SlotType.passphrase.rawValue), Int(SlotType.recovery.rawValue)])
        let raw = try Data(contentsOf: URL(fileURLWithPath: backup))
        let deviceWrapped = try test.database().read { db in try Data.fetchOne(db, sql: "SELECT wrapped_key FROM slot WHERE type = 1") }!
        #expect(raw.range(of: deviceWrapped) == nil)

        for unlock in [UnlockMethod.passphrase("correct horse"), .recoveryCode(code)] {
            let target = try TestSupport.temporaryDirectory("restore") + "/v"
            let newDevice = SecretBytes(randomCount: 32)
            let restored = try Vault.restoreBackup(from: backup, into: target, unlock: unlock, deviceKey: newDevice, options: testOptions)
            #expect(try restored.items().map(\.content).sortedByName == sortedByName(try sampleContents()))
            #expect(try Vault.open(in: target, unlock: .deviceKey(newDevice), options: testOptions).vaultID == test.vault.vaultID)
        }
        let wrongTarget = try TestSupport.temporaryDirectory("restore") + "/v"
        #expect(throws: VaultError.self) {
            _ = try Vault.restoreBackup(from: backup, into: wrongTarget, unlock: .passphrase("wrong"), deviceKey: nil, options: testOptions)
        }
        #expect(!Vault.exists(in: wrongTarget))

        let other = try TestVault(passphrase: nil, items: false)
        try other.vault.add(.note(try Note(name: "Mine", text: "keep")))
        let opened = try Vault.openBackup(at: backup, unlock: .passphrase("correct horse"), stagingParent: other.directory, options: testOptions)
        #expect(try other.vault.importItems(from: opened) == (4, 0))
        #expect(try other.vault.importItems(from: opened) == (0, 4))
        opened.discardImportCopy()
        #expect(try other.vault.items().count == 5)
    }

    @Test("A backup needs a passphrase or recovery slot")
    func backupNeedsPortableSlot() throws {
        let test = try TestVault(passphrase: nil)
        #expect(throws: VaultError.self) { try test.vault.writeBackup(to: test.directory + "/b") }
    }
}
