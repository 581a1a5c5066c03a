@_spi(Sync) import CofferKit
import CofferCrypto
import CofferVault
import CofferTestSupport
import Foundation
import GRDB
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension KeystoreCLITests {
    @Test(
        "the file store's key lives outside the data folder: a copy of that folder alone opens nothing; a key an older coffer left beside the vault is moved and opens it"
    )
    func fileStoreOutsideTheData() async throws {
        try Self.fileStoreOutsideTheDataRun()
    }

    static func fileStoreOutsideTheDataRun() throws {
        let a = try CLI()
        let created = try a.ok(["init", "--passphrase", "--keystore", "file"], input: "\(Self.passphrase)\n\(Self.passphrase)\n")
        #expect(created.stderr.contains("anyone with a copy of \(a.keystoreDirectory) and of the vault can open it"))
        try a.ok(["add", "note", "Copied"], input: "moved house\n")
        let vaultID = try #require(try Self.status(a)["vault"] as? String)
        let keyFile = "vault-\(vaultID)-device.key"
        #expect(FileManager.default.fileExists(atPath: a.keystoreDirectory + "/" + keyFile))
        #expect(!FileManager.default.fileExists(atPath: a.home + "/data/coffer/keystore"))
        let warned = try a.ok(["keystore", "status"])
        #expect(warned.stderr.contains("anyone with a copy of \(a.keystoreDirectory)"))

        // The data folder alone, elsewhere: no key, so the passphrase is needed (none given: refused, nothing made).
        let b = try CLI()
        try FileManager.default.copyItem(atPath: a.home + "/data", toPath: b.home + "/data")
        let refused = try b.run(["list"])
        #expect(refused.status != 0 && !refused.stdout.contains("Copied"))
        #expect(!FileManager.default.fileExists(atPath: b.keystoreDirectory + "/" + keyFile))

        // An older coffer's layout: the key beside the vault. It opens, and the key moves out of the data folder.
        let c = try CLI()
        try FileManager.default.copyItem(atPath: a.home + "/data", toPath: c.home + "/data")
        try FileManager.default.createDirectory(atPath: c.home + "/data/coffer/keystore", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: a.keystoreDirectory + "/" + keyFile, toPath: c.home + "/data/coffer/keystore/" + keyFile)
        #expect(try c.ok(["list"]).stdout.contains("Copied"))
        #expect(!FileManager.default.fileExists(atPath: c.home + "/data/coffer/keystore/" + keyFile))
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: c.keystoreDirectory + "/" + keyFile))
                == Data(contentsOf: URL(fileURLWithPath: a.keystoreDirectory + "/" + keyFile)))
        #expect(try Self.deviceSlots(c).count == 1, "the moved key opened the vault's own slot: no new one")
    }

    @Test("a device key deleted from its store: `unlock` gives a new slot and names the dead one, `slots` marks it, and removing it leaves the vault opening")
    func deadSlots() async throws {
        do {
            let cli = try CLI()
            try cli.ok(["init", "--passphrase", "--keystore", "file"], input: "\(Self.passphrase)\n\(Self.passphrase)\n")
            let first = try #require(try Self.deviceSlots(cli).first?["id"] as? String)
            for round in 1...2 {
                for file in try FileManager.default.contentsOfDirectory(atPath: cli.keystoreDirectory) {
                    try FileManager.default.removeItem(atPath: cli.keystoreDirectory + "/" + file)
                }
                #expect(try cli.run(["list"]).status == 77)
                let unlocked = try cli.ok(["unlock"], input: "\(Self.passphrase)\n")
                #expect(unlocked.stderr.contains(round == 1 ? "Slot \(first.prefix(8)) was this device's" : "were this device's"))
            }
            let slots = try Self.deviceSlots(cli)
            #expect(slots.count == 3)
            let dead = slots.filter { $0["dead"] as? Bool == true }.compactMap { $0["id"] as? String }
            #expect(dead.count == 2 && dead.contains(first))
            #expect(slots.filter { $0["this_device"] as? Bool == true }.allSatisfy { $0["dead"] as? Bool == false })
            #expect(try cli.ok(["slots"]).stdout.contains("(dead: its key is gone)"))
            for id in dead { try cli.ok(["slots", "remove", String(id.prefix(8))]) }
            try cli.ok(["list"])
            #expect(try Self.deviceSlots(cli).count == 1)
            let quiet = try cli.ok(["slots"])
            #expect(!quiet.stdout.contains("dead") && !quiet.stderr.contains("this device's"))
        }
    }

    @Test("--keystore and COFFER_KEYSTORE are checked; an unknown name is a usage error")
    func choosing() async throws {
        try Self.choosingRun()
    }

    static func choosingRun() throws {
        let cli = try CLI()
        #expect(try cli.run(["init", "--keystore", "vault"]).status == 64)
        let env = try CLI(extraEnvironment: ["COFFER_KEYSTORE": "nope"])
        let result = try env.run(["init"])
        #expect(result.status == 64 && result.stderr.contains("COFFER_KEYSTORE"))
        #expect(!FileManager.default.fileExists(atPath: env.vaultFile))
        #if !canImport(Security)
        // A store that cannot answer (no keychain off Apple systems): refused before a record, a key or a vault is written.
        let keychain = try CLI()
        let refused = try keychain.run(["init", "--keystore", "keychain"])
        #expect(refused.status == 69 && refused.stderr.contains("keychain"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: keychain.home + "/data/coffer"))
        #endif
        // No bus here: `auto` falls back to the file store and records it.
        let auto = try CLI(extraEnvironment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"])
        try auto.ok(["init", "--keystore", "auto"])
        #expect(try Self.status(auto)["keystore"] as? String == "file")
        #expect(try Self.status(auto)["source"] as? String == "record")
    }

    /// Waits until `process` stopped itself (`--stop-after` raises SIGSTOP).
    static func waitUntilStopped(_ process: Process) throws {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && process.isRunning {
            if let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")"), stat[stat.index(close, offsetBy: 2)] == "T"
            {
                return
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw CLIFailure(arguments: ["keystore", "migrate"], status: process.isRunning ? -1 : process.terminationStatus, stderr: "did not stop")
    }
}
