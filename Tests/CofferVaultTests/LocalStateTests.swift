import CofferTestSupport
import Foundation
import GRDB
import Testing

@testable import CofferVault

@Suite("Local state: sealed, named by HMAC, re-sealed on rotation")
struct LocalStateTests {
    @Test("values round-trip; neither names nor values appear in the file; absent is nil; nil deletes")
    func roundTrip() throws {
        let test = try TestVault(items: false)
        let canary = Data("CANARY-POSITION-37.7749,-122.4194".utf8)
        try test.vault.setLocalValues(["places/cue": canary, "places/tile/9q8y": Data(repeating: 7, count: 5_000)])
        #expect(try test.vault.localValue("places/cue") == canary)
        #expect(try test.reopen().localValue("places/tile/9q8y") == Data(repeating: 7, count: 5_000))
        #expect(try test.vault.localValue("places/none") == nil)
        let bytes =
            try Data(contentsOf: URL(fileURLWithPath: test.path))
            + ((try? Data(contentsOf: URL(fileURLWithPath: test.path + "-wal"))) ?? Data())
        for marker in ["CANARY-POSITION", "37.7749", "places/cue", "9q8y", "places/tile"] {
            #expect(CanaryScan.encodings(of: marker, in: bytes).isEmpty, "\(marker) in the vault file")
        }
        try test.vault.setLocalValue("places/cue", nil)
        #expect(try test.vault.localValue("places/cue") == nil)
        #expect(try test.database().read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM local_state") } == 1)
    }

    @Test("every bit flip of a box or its name is detected; a box moved to another row does not open")
    func tampering() throws {
        let test = try TestVault(items: false)
        try test.vault.setLocalValues(["a": Data("alpha".utf8), "b": Data("beta".utf8)])
        let rows = try test.database().read { db in try Row.fetchAll(db, sql: "SELECT name, box FROM local_state") }
        try #require(rows.count == 2)
        let name: Data = rows[0]["name"]
        let box: Data = rows[0]["box"]
        var flips = 0
        for index in 0..<(box.count * 8) {
            var damaged = box
            damaged[index / 8] ^= 1 << UInt8(index % 8)
            try test.database().write { db in
                try db.execute(sql: "UPDATE local_state SET box = ? WHERE name = ?", arguments: [damaged, name])
            }
            let opened = try test.reopen()
            #expect(throws: VaultError.self) {
                _ = try opened.localValue("a"); _ = try opened.localValue("b")
            }
            flips += 1
        }
        #expect(flips == box.count * 8)
        // The other row's box under this row's name.
        let other: Data = rows[1]["box"]
        try test.database().write { db in try db.execute(sql: "UPDATE local_state SET box = ? WHERE name = ?", arguments: [other, name]) }
        let opened = try test.reopen()
        #expect(throws: VaultError.self) {
            _ = try opened.localValue("a"); _ = try opened.localValue("b")
        }
    }

    @Test("rotation re-seals every local value under the new key, in its transaction")
    func rotation() throws {
        let test = try TestVault(passphrase: "correct horse")
        try test.vault.setLocalValues(["places/local": Data("places".utf8), "places/cue": Data("cue".utf8)])
        let before = try test.database().read { db in try Data.fetchAll(db, sql: "SELECT name FROM local_state ORDER BY name") }
        _ = try test.vault.rotateMasterKey(deviceKey: test.deviceKey, passphrase: "correct horse")
        let after = try test.database().read { db in try Data.fetchAll(db, sql: "SELECT name FROM local_state ORDER BY name") }
        #expect(Set(before).isDisjoint(with: after), "rows are renamed under the new naming key")
        let reopened = try test.reopen()
        #expect(try reopened.localValue("places/local") == Data("places".utf8))
        #expect(try reopened.localValue("places/cue") == Data("cue".utf8))
    }
}
