import CofferTestSupport
import Foundation
import GRDB
import Testing

@Suite("Hostile files and exact input", .offCooperativePool)
struct RobustnessTests {
    @Test("Piped secrets lose a CRLF line ending; signed messages are the exact bytes after the PIN line")
    func exactInput() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "credential", "Windows"], input: "tok-123\r\n")
        #expect(try cli.ok(["show", "Windows", "--json", "--reveal"]).stdout.contains("\"value\" : \"tok-123\"\n"))
        try cli.ok(["add", "key", "K"], input: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60\n123456\n")
        let bare = try cli.ok(["sign", "K"], input: "123456\nabc").stdout
        let newline = try cli.ok(["sign", "K"], input: "123456\nabc\n").stdout
        let empty = try cli.ok(["sign", "K"], input: "123456\n").stdout
        #expect(bare != newline)
        // RFC 8032 TEST 1: the empty message under this seed.
        #expect(empty.hasPrefix("e5564300c360ac729086e2cc806e828a"))
    }

    @Test(
        "Damaged header and slot values give a clear error, never a crash",
        arguments: [
            "UPDATE vault SET format_version = 'abc'",
            "UPDATE vault SET created_at = 'zz'",
            "UPDATE vault SET key_epoch = x'00'",
            "UPDATE slot SET type = 'q'",
            "UPDATE slot SET salt = 'text'",
        ])
    func damagedValues(_ sql: String) throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try DatabaseQueue(path: cli.vaultFile).write { db in try db.execute(sql: sql) }
        let result = try cli.run(["list"])
        #expect(result.status == 65 || result.status == 77, "exit \(result.status)")
        #expect(result.stderr.hasPrefix("coffer: error: "))
    }

    @Test("Someone else's SQLite file is refused and left untouched")
    func foreignDatabase() throws {
        let cli = try CLI()
        try FileManager.default.createDirectory(atPath: cli.vaultDirectory, withIntermediateDirectories: true)
        try DatabaseQueue(path: cli.vaultFile).write { db in try db.execute(sql: "CREATE TABLE notes (body TEXT)") }
        let before = try Data(contentsOf: URL(fileURLWithPath: cli.vaultFile))
        let result = try cli.run(["list"])
        #expect(result.status == 65 && result.stderr.contains("not a Coffer vault"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.vaultFile)) == before)
    }

    @Test("A damaged item is reported with its id and can be purged by that id")
    func damagedItem() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        let id = try cli.ok(["add", "credential", "A"], input: "a\n").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try cli.ok(["add", "credential", "B"], input: "b\n")
        try DatabaseQueue(path: cli.vaultFile).write { db in
            try db.execute(sql: "UPDATE item SET box = zeroblob(40) WHERE hex(id) = ?", arguments: [id.replacingOccurrences(of: "-", with: "").uppercased()])
        }
        let broken = try cli.run(["list"])
        #expect(broken.status == 65 && broken.stderr.contains(id) && broken.stderr.contains("coffer rm --purge"))
        try cli.ok(["rm", "--purge", "--yes", id])
        #expect(try cli.ok(["list"]).stdout.contains("B"))
    }

    @Test("A damaged passphrase slot does not lock out the device slot")
    func damagedOtherSlot() throws {
        let cli = try CLI()
        try cli.ok(["init", "--passphrase"], input: "a quiet copper lantern\n")
        try DatabaseQueue(path: cli.vaultFile).write { db in
            try db.execute(sql: "UPDATE slot SET kdf = x'0100000001' WHERE type = 2")
        }
        try cli.ok(["add", "credential", "Still works"], input: "v\n")
        #expect(try cli.run(["unlock"], input: "a quiet copper lantern\n").status == 65)
    }

    @Test("A failed backup import leaves nothing behind")
    func failedImportCleansUp() throws {
        let source = try CLI()
        try source.ok(["init", "--passphrase"], input: "backup velvet meadow harbor\n")
        let backup = source.home + "/b.coffer"
        try source.ok(["export", "--format", "backup", backup])
        #expect(try source.run(["export", "--format", "backup", backup]).status == 64)
        try source.ok(["export", "--format", "backup", "--force", backup])
        let target = try CLI()
        try target.ok(["init"])
        #expect(try target.run(["import", "--format", "backup", backup], input: "wrong\n").status == 77)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: target.vaultDirectory).filter { $0.hasPrefix(".coffer-tmp") }
        #expect(leftovers.isEmpty)
    }

    @Test("edit refuses options that do not apply and edits that change nothing")
    func editOptions() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        try cli.ok(["add", "card", "Costco"], input: "1\n")
        #expect(try cli.run(["edit", "Costco", "--issuer", "X"]).status == 64)
        #expect(try cli.run(["edit", "Costco"]).status == 64)
        try cli.ok(["add", "card", "Latin", "--charset", "iso-8859-1"], input: "M\u{FC}\n")
        try cli.ok(["edit", "Latin", "--payload"], input: "K\u{E4}se\n")
        #expect(try cli.ok(["show", "Latin", "--json"]).stdout.contains("\"payload\" : \"K\u{E4}se\""))
    }

    @Test("A signing key restored on another device is reported as bound there, and no PIN attempt is counted")
    func boundElsewhere() throws {
        let first = try CLI()
        try first.ok(["init", "--passphrase"], input: "shared orbit thistle pencil\n")
        try first.ok(["add", "key", "K"], input: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60\n123456\n")
        let backup = first.home + "/b.coffer"
        try first.ok(["export", "--format", "backup", backup])
        let second = try CLI()
        try second.ok(["import", "--format", "backup", backup], input: "shared orbit thistle pencil\n")
        let result = try second.run(["sign", "K"], input: "123456\nmessage")
        #expect(result.status == 77 && result.stderr.contains("bound to the device"))
        #expect(try second.ok(["show", "K"]).stdout.contains("Bound to another device"))
        #expect(try second.ok(["show", "K", "--json"]).stdout.contains("\"locked\" : false"))
    }
}
