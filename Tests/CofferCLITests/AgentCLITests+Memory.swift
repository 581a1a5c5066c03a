import CofferPlatform
import CofferTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The running agent's memory, read as root through /proc/PID/mem: what it held is gone once it locks.
extension AgentCLITests {
    /// The agent's memory after `coffer lock` (read as root through /proc/PID/mem): every value it decrypted, encoded
    /// or received for the vault is gone, though the process runs on.
    @Test(
        "after `lock` or SIGHUP, the running agent's memory holds no passphrase, key, item value or OTP secret it handled (every item kind)",
        .enabled(if: geteuid() == 0, "reading another process's memory needs root; CI runs as root"),
        arguments: ["lock", "SIGHUP"])
    func memoryWipedOnLock(_ how: String) throws {
        let session = try Session()
        defer { session.stop() }
        try session.cli.ok(["add", "card", "Gym", "--symbology", "code128"], input: Self.cardPayload + "\n")
        try session.cli.ok(["add", "credential", "API"], input: Self.credentialValue + "\n")
        try session.cli.ok(["code", "Example"])
        try session.cli.ok(["show", "Locker"])
        try session.cli.ok(["show", "API", "--reveal"])
        try session.cli.ok(["show", "Gym"])
        try session.cli.ok(["list"])
        try session.cli.ok(["add", "note", "Added"], input: Self.addedText)
        let pid = try session.pid()
        let environ = try String(decoding: Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ")), as: UTF8.self)
        #expect(environ.contains("GLIBC_TUNABLES=glibc.malloc.tcache_count=0") && environ.contains("glibc.malloc.perturb=165"))
        let keys = try #require(
            try TestSupport.openSSLOracle([["op": "vault_keys", "path": session.cli.vaultFile, "passphrase": Self.passphrase]]).first
                as? [String: String])
        let canaries: [(String, [UInt8])] = [
            ("passphrase", Array(Self.passphrase.utf8)),
            ("master key", TestSupport.hex(try #require(keys["master"]))),
            ("items key", TestSupport.hex(try #require(keys["items_key"]))),
            ("OTP secret", Array("12345678901234567890".utf8)),
            ("OTP secret in base32", Array(Self.secret.utf8)),
            ("note text", Array(Self.noteText.utf8)),
            ("note added through the agent", Array(Self.addedText.utf8)),
            ("card payload", Array(Self.cardPayload.utf8)),
            ("credential value", Array(Self.credentialValue.utf8)),
        ]
        // While the vault is held, its values are there: the scan can see them.
        let held = try ProcessMemory.writableRegions(of: pid)
        let itemsKey = TestSupport.hex(try #require(keys["items_key"]))
        let seenWhileHeld =
            !ProcessMemory.holders(of: Array(Self.noteText.utf8), in: held).isEmpty
            || !ProcessMemory.holders(of: itemsKey, in: held).isEmpty
        #expect(seenWhileHeld, "the scan finds nothing even while the vault is held: it cannot fail")
        if how == "lock" {
            try session.cli.ok(["lock"])
        } else {
            kill(pid, SIGHUP)
            #expect(Self.waitUntil { (try? session.heldVaults()) == 0 })
        }
        #expect(try session.heldVaults() == 0)
        let regions = try ProcessMemory.writableRegions(of: pid)
        for (name, bytes) in canaries {
            let found = ProcessMemory.holders(of: bytes, in: regions)
            #expect(found.isEmpty, "\(name) is still in the agent's memory after lock: \(found)")
        }
    }

    /// From 256 items a listing opens them on pool threads (`Vault.parallelMap`), whose stacks outlive the work and
    /// the threads themselves; the agent's own thread is not the only one to scrub.
    @Test(
        "after `lock`, the agent's memory holds none of the items of a vault big enough to be opened on several threads",
        .enabled(if: geteuid() == 0, "reading another process's memory needs root; CI runs as root"))
    func memoryWipedAfterParallelOpening() throws {
        let session = try Session(bulkNotes: 600)
        defer { session.stop() }
        #expect(try session.cli.ok(["list", "--json"]).stdout.contains("Bulk 599"))
        #expect(try session.cli.ok(["list", "--json"]).stdout.contains("Bulk 0"))
        let pid = try session.pid()
        let canary = Array(Self.bulkNoteText.utf8)
        let keys = try #require(
            try TestSupport.openSSLOracle([["op": "vault_keys", "path": session.cli.vaultFile, "passphrase": Self.passphrase]]).first
                as? [String: String])
        let itemsKey = TestSupport.hex(try #require(keys["items_key"]))
        #expect(
            !ProcessMemory.holders(of: itemsKey, in: try ProcessMemory.writableRegions(of: pid)).isEmpty,
            "the scan does not find the items key even while the vault is held: it cannot fail")
        try session.cli.ok(["lock"])
        #expect(try session.heldVaults() == 0)
        let found = ProcessMemory.holders(of: canary, in: try ProcessMemory.writableRegions(of: pid))
        #expect(found.isEmpty, "note text opened on a pool thread is still in the agent's memory after lock: \(found)")
    }
}
