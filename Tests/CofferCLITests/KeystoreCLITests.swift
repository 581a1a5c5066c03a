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

/// Key stores and device slots through the real `coffer` binary: a locked or unreachable store is never taken for an
/// empty one, each device keeps its own slot in a shared vault folder, the Secret Service backend against a real
/// gnome-keyring-daemon (read back by secret-tool), and `coffer keystore migrate` killed at each step.
@Suite("Key stores and device slots (CLI)", .serialized, .offCooperativePool)
struct KeystoreCLITests {
    static let passphrase = "keystore thistle marble orbit"
    static let secretServiceTrait = Testing.ConditionTrait.enabled(
        if: SecretServiceSession.available,
        Comment(rawValue: "NOTICE: no Secret Service here: \(SecretServiceSession.unavailableReason ?? "")"))

    /// Every slot row as stored (id and wrapped key), to show a command changed none.
    static func slotRows(_ cli: CLI) throws -> [String] {
        let database = try DatabaseQueue(path: cli.vaultFile)
        defer { try? database.close() }
        return try database.read { db in
            try Row.fetchAll(db, sql: "SELECT hex(id) || ':' || hex(wrapped_key) FROM slot ORDER BY id").map { $0[0] as String }
        }
    }

    static func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    static func deviceSlots(_ cli: CLI) throws -> [[String: Any]] {
        let slots = try #require(try json(try cli.ok(["slots", "--json"]).stdout) as? [[String: Any]])
        return slots.filter { $0["type"] as? String == "device" }
    }

    static func status(_ cli: CLI) throws -> [String: Any] {
        try #require(try json(try cli.ok(["keystore", "status", "--json"]).stdout) as? [String: Any])
    }

    @Test(
        "a home folder copied to another machine: its TPM refuses the key (exit 69, never a new vault), `coffer unlock` seals one of its own",
        .enabled(if: SoftwareTPM.unavailableReason == nil, Comment(rawValue: "NOTICE: no TPM simulator: \(SoftwareTPM.unavailableReason ?? "")")))
    func copiedToAnotherTPM() async throws {
        try Self.copiedToAnotherTPMRun()
    }

    static func copiedToAnotherTPMRun() throws {
        let first = try SoftwareTPM()
        let second = try SoftwareTPM()
        defer { withExtendedLifetime((first, second)) {} }
        let a = try CLI(extraEnvironment: ["COFFER_TPM_TCTI": first.tcti])
        let created = try a.ok(["init", "--passphrase"], input: "\(Self.passphrase)\n\(Self.passphrase)\n")
        #expect(created.stderr.contains("its device key is sealed by this machine's TPM"))
        try a.ok(["add", "note", "Copied"], input: "moved house\n")
        #expect(try Self.status(a)["keystore"] as? String == "tpm2")
        let b = try CLI(extraEnvironment: ["COFFER_TPM_TCTI": second.tcti])
        try FileManager.default.copyItem(atPath: a.home + "/data", toPath: b.home + "/data")
        let refused = try b.run(["list"])
        #expect(refused.status == 69 && !refused.stdout.contains("Copied"))
        #expect(refused.stderr.contains("sealed by another machine's TPM") && refused.stderr.contains("coffer unlock"))
        #expect(try Self.status(b)["device_key"] as? String == "sealed by another machine's TPM")
        try b.ok(["unlock"], input: "\(Self.passphrase)\n")
        #expect(try b.ok(["list"]).stdout.contains("Copied"))
        // The first machine's key is its own still.
        #expect(try a.ok(["list"]).stdout.contains("Copied"))
        // Without the TPM at all: unreachable, said so, and still not taken for a vault without a key.
        let gone = try CLI(extraEnvironment: ["COFFER_TPM_TCTI": "device:/nonexistent/tpmrm0"])
        try FileManager.default.copyItem(atPath: a.home + "/data", toPath: gone.home + "/data")
        let missing = try gone.run(["list"])
        #expect(missing.status == 69 && missing.stderr.contains("this machine has no TPM at /nonexistent/tpmrm0"))
    }

    @Test(
        "a PIN-held key with a TPM: the chip checks and counts the PIN (oracles: tpm2-tools, OpenSSL), says what is left, locks out and recovers; a copied folder's key is bound elsewhere",
        .enabled(if: SoftwareTPM.unavailableReason == nil, Comment(rawValue: "NOTICE: no TPM simulator: \(SoftwareTPM.unavailableReason ?? "")")))
    func pinCheckedByTheTPM() async throws {
        try Self.pinCheckedByTheTPMRun()
    }

    static func pinCheckedByTheTPMRun() throws {
        let tpm = try SoftwareTPM()
        defer { withExtendedLifetime(tpm) {} }
        try tpm.tool("tpm2_dictionarylockout", ["-s", "-n", "3", "-t", "2", "-l", "1000"])
        let a = try CLI(extraEnvironment: ["COFFER_TPM_TCTI": tpm.tcti])
        try a.ok(["init", "--passphrase"], input: "\(Self.passphrase)\n\(Self.passphrase)\n")
        // RFC 8032's first test key.
        let seed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
        let pin = "482916"
        let added = try a.ok(["add", "key", "Release"], input: "\(seed)\n\(pin)\n\(pin)\n")
        #expect(added.stdout.hasSuffix("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a\n"))
        #expect(added.stderr.contains("Keep the seed's own backup somewhere else"))
        #expect(added.stderr.contains("its PIN is checked by this machine's TPM: 3 wrong PINs lock the TPM out, and it forgets one every 2 seconds"))
        #expect(try a.ok(["show", "Release"]).stdout.contains("Checked and counted by this machine's TPM"))

        // The signature, checked by OpenSSL.
        let signed = try a.ok(["sign", "Release"], input: "\(pin)\nhello")
        let signature = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let verified = try TestSupport.openSSLOracle([
            [
                "op": "ed25519_verify", "public": "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
                "signature": signature, "message": Hex.encode(Array("hello".utf8)),
            ]
        ])
        #expect(verified.first as? Bool == true)

        // The format, from outside: the PIN salt (read by the Python reader), the TPM authorisation derived from it by
        // OpenSSL's HKDF, tpm2_unseal opening the key's entry with it, and that device secret opening the PIN box.
        let vault = try #require(
            try TestSupport.openSSLOracle([
                [
                    "op": "read_vault", "path": a.vaultFile, "secret_kind": "passphrase", "secret": Self.passphrase,
                ]
            ]).first as? [String: Any])
        let content = try #require((vault["items"] as? [[String: Any]])?.first { $0["kind"] as? String == "signing_key" }?["content"] as? [String: Any])
        let salt = try #require(content["pin_salt"] as? String)
        let secretID = try #require(content["device_secret_id"] as? String)
        let authorisation = try #require(
            try TestSupport.openSSLOracle([
                [
                    "op": "hkdf_sha256", "ikm": Hex.encode(Array(pin.utf8)), "salt": salt,
                    "info": Hex.encode(Array("coffer/v1/pin-tpm-auth".utf8)), "length": 32,
                ]
            ]).first as? String)
        let vaultID = try #require(try Self.status(a)["vault"] as? String)
        let entry = a.home + "/data/coffer/tpm2/vault-\(vaultID)-pin-\(secretID).tpm2"
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: entry)))
        let publicSize = Int(file[4]) << 8 | Int(file[5])
        let scratch = try TestSupport.temporaryDirectory("pin-tools")
        try Data(file[4..<(6 + publicSize)]).write(to: URL(fileURLWithPath: "\(scratch)/k.pub"))
        try Data(file[(6 + publicSize)...]).write(to: URL(fileURLWithPath: "\(scratch)/k.priv"))
        try tpm.tool(
            "tpm2_createprimary",
            [
                "-C", "o", "-g", "sha256", "-G", "ecc256", "-c", "\(scratch)/p.ctx",
                "-a", "restricted|decrypt|fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda",
            ])
        try tpm.tool("tpm2_load", ["-C", "\(scratch)/p.ctx", "-u", "\(scratch)/k.pub", "-r", "\(scratch)/k.priv", "-c", "\(scratch)/k.ctx"])
        try tpm.tool("tpm2_unseal", ["-c", "\(scratch)/k.ctx", "-p", "file:-", "-o", "\(scratch)/secret"], input: "hex:" + authorisation)
        let deviceSecret = Hex.encode([UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(scratch)/secret"))))
        let opened = try #require(
            try TestSupport.openSSLOracle([
                [
                    "op": "read_vault", "path": a.vaultFile, "secret_kind": "passphrase", "secret": Self.passphrase, "pin": pin,
                    "pin_device_secret": deviceSecret,
                ]
            ]).first as? [String: Any])
        let seedRead = (opened["items"] as? [[String: Any]])?.compactMap { ($0["content"] as? [String: Any])?["seed"] as? String }
        #expect(seedRead == [seed])

        // Wrong PINs: refused and counted by the chip, with what is left; then lockout, said before any PIN is read.
        let first = try a.run(["sign", "Release"], input: "000000\nhello")
        #expect(first.status == 77 && first.stderr.contains("wrong PIN; the TPM counted it: 2 more wrong PINs and it locks out"))
        #expect(try a.run(["sign", "Release"], input: "000000\nhello").stderr.contains("1 more wrong PIN and it locks out"))
        let third = try a.run(["sign", "Release"], input: "000000\nhello")
        #expect(third.status == 77 && third.stderr.contains("now locked out") && third.stderr.contains("forgets one wrong PIN every 2 seconds"))
        let locked = try a.run(["sign", "Release"], input: "")
        #expect(locked.status == 75 && locked.stderr.contains("the TPM is locked out after too many wrong PINs"))
        #expect(locked.stderr.contains("tpm2_dictionarylockout -c"))
        // The vault itself still opens (its device key is exempt), and the vault's own count was never touched.
        let listed = try #require(try Self.json(try a.ok(["list", "--json"]).stdout) as? [[String: Any]])
        #expect(listed.first { $0["name"] as? String == "Release" }?["locked"] as? Bool == false)
        // After the recovery time, the right PIN signs again.
        var recovered: TestSupport.ProcessResult?
        for _ in 0..<12 where recovered?.status != 0 {
            Thread.sleep(forTimeInterval: 0.5)
            recovered = try a.run(["sign", "Release"], input: "\(pin)\nhello")
        }
        #expect(recovered?.status == 0 && recovered?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == signature)

        // The home folder on another machine: a key of its own after `unlock`, but the PIN-held key is bound to the
        // first machine's TPM, said before a PIN is read (none is given), and nothing is counted.
        let other = try SoftwareTPM()
        defer { withExtendedLifetime(other) {} }
        let b = try CLI(extraEnvironment: ["COFFER_TPM_TCTI": other.tcti])
        try FileManager.default.copyItem(atPath: a.home + "/data", toPath: b.home + "/data")
        try b.ok(["unlock"], input: "\(Self.passphrase)\n")
        let elsewhere = try b.run(["sign", "Release"], input: "")
        #expect(elsewhere.status == 77 && elsewhere.stderr.contains("bound to the device it was added on"))
        #expect(try other.tool("tpm2_getcap", ["properties-variable"]).contains("TPM2_PT_LOCKOUT_COUNTER: 0x0"))
    }

    @Test(
        "a restore says the truth: a backup with only a recovery code asks for it, PIN-held keys bound to the old device are named before any PIN, and bad files are named as such"
    )
    func restoreTellsTheTruth() async throws {
        try Self.restoreTellsTheTruthRun()
    }

    static func restoreTellsTheTruthRun() throws {
        let a = try CLI()
        try a.ok(["init", "--keystore", "file"])
        let code = try a.ok(["recovery-code", "new"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let seed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
        let added = try a.ok(["add", "key", "Release"], input: "\(seed)\n482916\n482916\n")
        #expect(added.stderr.contains("Keep the seed's own backup somewhere else: this key opens only on this device; 10 wrong PINs in a row lock it."))
        try a.ok(["add", "note", "Plans"], input: "kept\n")
        let backup = a.home + "/only-a-code.coffer-backup"
        try a.ok(["export", "--format", "backup", backup])

        let b = try CLI()
        // No passphrase in this backup: its recovery code is asked for without --recovery-code.
        let restored = try b.ok(["import", "--format", "backup", backup], input: code + "\n")
        #expect(restored.stderr.contains("has no passphrase: it opens with its recovery code"))
        #expect(restored.stderr.contains("Restored 2 items"))
        #expect(restored.stderr.contains("1 signing key stays bound to the device it was added on, and no PIN opens it here: \"Release\""))
        #expect(restored.stderr.contains("`coffer rm --purge NAME`, then `coffer add key NAME`"))
        #expect(try b.ok(["show", "Release"]).stdout.contains("Bound to another device"))
        // Signing says so before a PIN is read (none is given) and counts nothing.
        let refused = try b.run(["sign", "Release"], input: "")
        #expect(refused.status == 77 && refused.stderr.contains("bound to the device it was added on"))
        // Merging the same backup again adds nothing and repeats no warning about keys already here.
        let again = try b.ok(["import", "--format", "backup", backup], input: code + "\n")
        #expect(again.stderr.contains("skipped 2 already present") && !again.stderr.contains("stays bound"))
        // The key added again from its seed works here.
        try b.ok(["rm", "--purge", "Release", "--yes"])
        try b.ok(["add", "key", "Release"], input: "\(seed)\n135790\n135790\n")
        try b.ok(["sign", "Release"], input: "135790\nhello")

        // --recovery-code on a backup that has none, a missing file, a file that is no backup.
        let withPassphrase = try CLI()
        try withPassphrase.ok(["init", "--passphrase", "--keystore", "file"], input: "\(Self.passphrase)\n\(Self.passphrase)\n")
        try withPassphrase.ok(["export", "--format", "backup", withPassphrase.home + "/p.coffer-backup"])
        let noCode = try b.run(["import", "--format", "backup", "--recovery-code", withPassphrase.home + "/p.coffer-backup"], input: "x\n")
        #expect(noCode.status == 64 && noCode.stderr.contains("has no recovery code: it opens with its passphrase"))
        let missing = try b.run(["import", "--format", "backup", b.home + "/nowhere"], input: "x\n")
        #expect(missing.status == 66 && missing.stderr.contains("does not exist"))
        try Data("not a backup\n".utf8).write(to: URL(fileURLWithPath: b.home + "/text"))
        let text = try b.run(["import", "--format", "backup", b.home + "/text"], input: "x\n")
        #expect(text.status == 65 && text.stderr.contains("is not a Coffer backup, or it is damaged"))
    }

    @Test("two devices share one vault folder: each unlock adds its own named slot, concurrent unlocks both survive, `slots remove ID` drops one")
    func twoDevices() async throws {
        try Self.twoDevicesRun()
    }

    static func twoDevicesRun() throws {
        let a = try CLI()
        try a.ok(["init", "--passphrase", "--device-name", "laptop", "--keystore", "file"], input: "\(Self.passphrase)\n\(Self.passphrase)\n")
        try a.ok(["add", "note", "Shared", "--template", "contact"], input: "Email: a@example.com\n")
        let shared = ["COFFER_VAULT": a.vaultDirectory]
        let b = try CLI(extraEnvironment: shared)
        try b.ok(["unlock", "--device-name", "desktop"], input: "\(Self.passphrase)\n")
        // Neither device asks for anything now (no terminal, no stdin: a prompt would fail).
        try a.ok(["list"])
        try b.ok(["list"])
        let named = try Self.deviceSlots(a)
        #expect(named.compactMap { $0["name"] as? String }.sorted() == ["desktop", "laptop"])
        #expect(named.allSatisfy { $0["keystore"] as? String == "file" && $0["created"] is String })
        #expect(named.filter { $0["this_device"] as? Bool == true }.map { $0["name"] as? String } == ["laptop"])

        // Two more devices unlock at the same moment; every device still opens afterwards.
        let c = try CLI(extraEnvironment: shared), d = try CLI(extraEnvironment: shared)
        let started = try [(c, "phone"), (d, "tablet")].map { cli, name in
            try cli.start(["unlock", "--device-name", name], input: "\(Self.passphrase)\n").0
        }
        started.forEach { $0.waitUntilExit() }
        #expect(started.allSatisfy { $0.terminationStatus == 0 })
        for cli in [a, b, c, d] { try cli.ok(["list"]) }
        #expect(try Self.deviceSlots(a).count == 4)

        // Unlocking again on a device that has a slot adds nothing.
        try b.ok(["unlock"], input: "\(Self.passphrase)\n")
        #expect(try Self.deviceSlots(a).count == 4)

        let desktop = try #require(try Self.deviceSlots(a).first { $0["name"] as? String == "desktop" }?["id"] as? String)
        try a.ok(["slots", "remove", String(desktop.prefix(8))])
        let locked = try b.run(["list"])
        #expect(locked.status == 77 && locked.stderr.contains("coffer: hint:"))
        for cli in [a, c, d] { try cli.ok(["list"]) }
        #expect(try a.run(["slots", "remove", "device"]).stderr.contains("3 device slots"))
        #expect(try a.run(["slots", "remove", "zz"]).status == 64)
    }

    @Test("Secret Service: Coffer's value is what secret-tool reads; a locked keyring is reported, and changes no slot", secretServiceTrait)
    func lockedSecretService() async throws {
        do {
            let session = try SecretServiceSession()
            defer { session.stop() }
            let cli = try CLI(extraEnvironment: ["DBUS_SESSION_BUS_ADDRESS": session.address])
            try cli.ok(["init", "--passphrase", "--keystore", "secret-service"], input: "\(Self.passphrase)\n\(Self.passphrase)\n")
            try cli.ok(["add", "note", "Kept", "--template", "contact"], input: "Email: k@example.com\n")
            // The record names the store: no flag needed, and nothing went to the file store.
            try cli.ok(["list"])
            let status = try Self.status(cli)
            #expect(status["keystore"] as? String == "secret-service" && status["source"] as? String == "record")
            #expect(status["status"] as? String == "available" && status["device_key"] as? String == "present")
            #expect(!FileManager.default.fileExists(atPath: cli.keystoreDirectory))

            // An independent client reads the entry, and what it reads opens the vault.
            let vaultID = try #require(status["vault"] as? String)
            let looked = try session.secretTool(["lookup", "xdg:schema", "app.coffer.Keystore", "account", "vault-\(vaultID)-device"])
            #expect(looked.stdout.hasPrefix("coffer:v1:"))
            let key = try #require(Data(base64Encoded: String(looked.stdout.dropFirst("coffer:v1:".count))))
            #expect(key.count == 32)
            _ = try Vault.open(in: cli.vaultDirectory, unlock: .deviceKey(SecretBytes(key)))

            let before = try Self.slotRows(cli)
            try session.lockLogin()
            let list = try cli.run(["list"])
            #expect(list.status == 75 && list.stderr.contains("locked"), "\(list.stderr)")
            let unlock = try cli.run(["unlock"], input: "\(Self.passphrase)\n")
            #expect(unlock.status == 75 && unlock.stderr.contains("locked"), "\(unlock.stderr)")
            // At a terminal the passphrase opens the vault instead, adding nothing.
            let terminal = try SyncCLITests.atTerminal(cli, ["list"], answers: [("Passphrase:", Self.passphrase)])
            #expect(terminal.status == 0 && terminal.transcript.contains("Kept"), "\(terminal.transcript)")
            #expect(terminal.transcript.contains("locked; the passphrase opens the vault this time"))
            let lockedStatus = try Self.status(cli)
            #expect(lockedStatus["status"] as? String == "locked" && lockedStatus["device_key"] as? String == "unknown")

            // No bus at all: unreachable, and again nothing changes.
            var noBus = cli.environment
            noBus["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(cli.home)/no-bus"
            let unreachable = try TestSupport.run(CLI.binary, ["unlock"], input: Array("\(Self.passphrase)\n".utf8), environment: noBus)
            #expect(unreachable.status == 69, "\(unreachable.stderr)")
            #expect(try Self.slotRows(cli) == before)
            #expect(!FileManager.default.fileExists(atPath: cli.keystoreDirectory))
        }
    }

    @Test("a keyring daemon that hangs costs a command at most about 5 seconds, with a plain message, never D-Bus's 25 s a call", secretServiceTrait)
    func hungKeyring() async throws {
        do {
            let session = try SecretServiceSession()
            defer { session.stop() }
            let cli = try CLI(extraEnvironment: ["DBUS_SESSION_BUS_ADDRESS": session.address])
            try cli.ok(["init", "--passphrase", "--keystore", "secret-service"], input: "\(Self.passphrase)\n\(Self.passphrase)\n")
            try cli.ok(["add", "note", "Kept"], input: "here\n")
            try session.suspendDaemon(true)
            defer { try? session.suspendDaemon(false) }
            let started = Date()
            let stuck = try cli.run(["list"])
            let took = Date().timeIntervalSince(started)
            #expect(stuck.status == 69 && stuck.stderr.contains("the Secret Service did not answer within 5 seconds"))
            #expect(took < 8, "a hung keyring held `coffer list` for \(took) s")
            try session.suspendDaemon(false)
            #expect(try cli.ok(["list"]).stdout.contains("Kept"))
        }
    }

    @Test("8 processes unlocking at once leave one key in the store and one device slot", arguments: ["file", "secret-service"])
    func eightProcesses(_ kind: String) async throws {
        guard kind == "file" || SecretServiceSession.available else {
            return withKnownIssue("NOTICE: no Secret Service here: \(SecretServiceSession.unavailableReason ?? "")") {
                throw CLIFailure(arguments: [], status: 0, stderr: "skipped")
            }
        }
        do {
            let session = kind == "file" ? nil : try SecretServiceSession()
            defer { session?.stop() }
            let cli = try CLI(extraEnvironment: session.map { ["DBUS_SESSION_BUS_ADDRESS": $0.address] } ?? [:])
            try cli.ok(["init", "--passphrase", "--keystore", kind], input: "\(Self.passphrase)\n\(Self.passphrase)\n")
            let vaultID = try #require(try Self.status(cli)["vault"] as? String)
            let account = "vault-\(vaultID)-device"
            // A recovery code costs no KDF, so the 8 processes reach the store at the same moment.
            let code = try cli.ok(["recovery-code", "new"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            // Back to a vault with no device slot and no device key, so that every process races to create both.
            try cli.ok(["slots", "remove", "device", "--yes"], input: "\(Self.passphrase)\n")
            if let session {
                _ = try session.secretTool(["clear", "account", account])
            } else {
                try FileManager.default.removeItem(atPath: cli.keystoreDirectory + "/\(account).key")
            }
            let processes = try (0..<8).map { _ in try cli.start(["unlock", "--recovery-code"], input: "\(code)\n").0 }
            processes.forEach { $0.waitUntilExit() }
            #expect(processes.allSatisfy { $0.terminationStatus == 0 })
            #expect(try Self.deviceSlots(cli).count == 1)
            if let session {
                let found = try session.secretTool(["search", "--all", "account", account])
                #expect(found.stdout.components(separatedBy: "\n").filter { $0.hasPrefix("[/") }.count == 1, "\(found.stdout)")
            } else {
                let files = try FileManager.default.contentsOfDirectory(atPath: cli.keystoreDirectory)
                #expect(files.filter { $0.hasPrefix(account) }.count == 1)
            }
            try cli.ok(["list"])
        }
    }

    @Test("keystore migrate file → secret-service, killed after each step, leaves a vault that opens; a rerun finishes", secretServiceTrait)
    func migrateKilled() async throws {
        do {
            let session = try SecretServiceSession()
            defer { session.stop() }
            for step in ["copied", "verified", "recorded", "removed"] {
                let cli = try CLI(extraEnvironment: ["DBUS_SESSION_BUS_ADDRESS": session.address])
                try cli.ok(["init", "--keystore", "file"])
                try cli.ok(["add", "note", "Moved", "--template", "contact"], input: "Email: m@example.com\n")
                let (process, _) = try cli.start(["keystore", "migrate", "--to", "secret-service", "--stop-after", step])
                try Self.waitUntilStopped(process)
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                #expect(process.terminationReason == .uncaughtSignal)
                // Opens at once, with whichever store the record names now.
                #expect(try cli.ok(["list"]).stdout.contains("Moved"), "after \(step)")
                let recorded = try Self.status(cli)["keystore"] as? String
                #expect(recorded == (["copied", "verified"].contains(step) ? "file" : "secret-service"), "after \(step)")
                if step == "recorded" {
                    #expect(try Self.status(cli)["unfinished_move_from"] as? String == "file")
                }
                // Running it again finishes the move: the keys are in the Secret Service and nowhere else.
                let rerun = try cli.run(["keystore", "migrate", "--to", "secret-service"])
                #expect(rerun.status == 0 || (step == "removed" && rerun.stderr.contains("already in")), "after \(step): \(rerun.stderr)")
                #expect(try Self.status(cli)["keystore"] as? String == "secret-service")
                #expect(try Self.status(cli)["unfinished_move_from"] == nil)
                #expect(try cli.ok(["list"]).stdout.contains("Moved"))
                let vaultID = try #require(try Self.status(cli)["vault"] as? String)
                let files = (try? FileManager.default.contentsOfDirectory(atPath: cli.keystoreDirectory)) ?? []
                #expect(!files.contains { $0.contains(vaultID) }, "after \(step): \(files)")
                #expect(try session.secretTool(["lookup", "account", "vault-\(vaultID)-device"]).stdout.hasPrefix("coffer:v1:"))
                #expect(try cli.run(["keystore", "migrate", "--to", "secret-service"]).stderr.contains("already in"))
            }
            // And back: the file store holds the keys, the Secret Service no longer does.
            let cli = try CLI(extraEnvironment: ["DBUS_SESSION_BUS_ADDRESS": session.address])
            try cli.ok(["init", "--keystore", "secret-service"])
            let vaultID = try #require(try Self.status(cli)["vault"] as? String)
            try cli.ok(["keystore", "migrate", "--to", "file"])
            #expect(try Self.status(cli)["keystore"] as? String == "file")
            #expect(try Self.deviceSlots(cli).map { $0["keystore"] as? String } == ["file"], "the slot's label follows the keys")
            try cli.ok(["list"])
            #expect(try session.secretTool(["lookup", "account", "vault-\(vaultID)-device"]).stdout.isEmpty)
            #expect(FileManager.default.fileExists(atPath: cli.keystoreDirectory + "/vault-\(vaultID)-device.key"))
            #expect(try cli.run(["keystore", "migrate", "--to", "file"]).stderr.contains("already in the file key store"))
        }
    }
}
