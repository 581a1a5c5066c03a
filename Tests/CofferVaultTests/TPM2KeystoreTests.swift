import CofferTestSupport
import Foundation
import Testing

@_spi(Testing) @testable import CofferCrypto
@testable import CofferKeystore

#if canImport(CTSS2)
import CTSS2
#endif

/// The TPM key store against swtpm, each test with a TPM of its own, and checked against tpm2-tools (the outside
/// oracle): what Coffer seals, the tools unseal, and the other way round.
@Suite("TPM key store")
struct TPM2KeystoreTests {
    /// A TPM and a store on it, or nil (recorded as a known issue) where swtpm or tpm2-tools are missing.
    static func make() throws -> (SoftwareTPM, TPM2Keystore)? {
        if let reason = SoftwareTPM.unavailableReason {
            FileHandle.standardError.write(Data("NOTICE: TPM key store tests skipped: \(reason)\n".utf8))
            withKnownIssue("no TPM simulator here: \(reason)") { throw KeystoreContractTests.SkipNotice() }
            return nil
        }
        let tpm = try SoftwareTPM()
        return (tpm, TPM2Keystore(directory: try TestSupport.temporaryDirectory("tpm2") + "/tpm2", tcti: tpm.tcti))
    }

    /// The reason of the `.unreachable` that `body` throws, or nil when it throws something else or nothing.
    static func unreachable(_ body: () throws -> Void) -> String? {
        do {
            try body()
        } catch KeystoreError.unreachable(.tpm2, let reason) {
            return reason
        } catch {
            return nil
        }
        return nil
    }

    @Test("an entry sealed by one TPM is refused by another (a copied folder), never read as absent")
    func copiedFolder() throws {
        guard let (tpm, store) = try Self.make() else { return }
        // The simulator stops when its object goes: keep it to the end of the test.
        defer { withExtendedLifetime(tpm) {} }
        let secret = SecretBytes(randomCount: 32)
        _ = try store.storeIfAbsent(secret, for: "vault-device")
        // The whole folder, as a copy of the home directory carries it, read on another machine's TPM.
        let other = try SoftwareTPM()
        defer { withExtendedLifetime(other) {} }
        let copy = try TestSupport.temporaryDirectory("tpm2-copy") + "/tpm2"
        try FileManager.default.copyItem(atPath: store.directory, toPath: copy)
        let elsewhere = TPM2Keystore(directory: copy, tcti: other.tcti)
        #expect(elsewhere.status() == .available)
        #expect(throws: KeystoreError.sealedElsewhere(.tpm2)) { _ = try elsewhere.secret(for: "vault-device") }
        // Nor does a second create replace it: the entry is there, only not openable here.
        #expect(throws: KeystoreError.sealedElsewhere(.tpm2)) {
            _ = try elsewhere.storeIfAbsent(SecretBytes(randomCount: 32), for: "vault-device")
        }
        #expect(try store.secret(for: "vault-device")?.isEqual(to: secret) == true)
    }

    @Test("a sealed entry opens again after the TPM restarts, and its file holds nothing of the secret")
    func restart() throws {
        guard let (tpm, store) = try Self.make() else { return }
        // The simulator stops when its object goes: keep it to the end of the test.
        defer { withExtendedLifetime(tpm) {} }
        let secret = SecretBytes(randomCount: 32)
        _ = try store.storeIfAbsent(secret, for: "vault-device")
        tpm.stop()
        #expect(Self.unreachable { _ = try store.secret(for: "vault-device") }?.hasPrefix("no TPM answers at \(tpm.tcti)") == true)
        try tpm.start()
        let reopened = TPM2Keystore(directory: store.directory, tcti: tpm.tcti)
        #expect(try reopened.secret(for: "vault-device")?.isEqual(to: secret) == true)
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: store.directory + "/vault-device.tpm2")))
        #expect(Array(file.prefix(4)) == Array("CTP1".utf8))
        let needle = secret.bytes
        #expect(!(0...(file.count - needle.count)).contains { Array(file[$0..<($0 + needle.count)]) == needle })
    }

    @Test("no TPM, a TPM that does not answer and a TPM with no room are unreachable, never 'absent'")
    func unreachable() throws {
        guard let (tpm, store) = try Self.make() else { return }
        // The simulator stops when its object goes: keep it to the end of the test.
        defer { withExtendedLifetime(tpm) {} }
        _ = try store.storeIfAbsent(SecretBytes(randomCount: 32), for: "vault-device")
        let missing = TPM2Keystore(directory: store.directory, tcti: "device:/nonexistent/tpmrm0")
        #expect(missing.status() == .unreachable("this machine has no TPM at /nonexistent/tpmrm0"))
        #expect(throws: KeystoreError.unreachable(.tpm2, "this machine has no TPM at /nonexistent/tpmrm0")) {
            _ = try missing.secret(for: "vault-device")
        }
        let (port, socket) = try TestSupport.refusingPort()
        defer { TestSupport.release(socket) }
        let silent = TPM2Keystore(directory: store.directory, tcti: "swtpm:host=127.0.0.1,port=\(port)")
        #expect(Self.unreachable { _ = try silent.secret(for: "vault-device") }?.hasPrefix("no TPM answers at \(silent.tcti)") == true)
        // Three primaries left loaded by another program fill swtpm's transient slots (no resource manager).
        let scratch = try TestSupport.temporaryDirectory("tpm2-full")
        for index in 0..<3 {
            try tpm.tool("tpm2_createprimary", ["-C", "o", "-g", "sha256", "-G", "ecc256", "-c", "\(scratch)/\(index).ctx"], flush: false)
        }
        do {
            _ = try store.secret(for: "vault-device")
            Issue.record("a full TPM answered")
        } catch .unreachable(.tpm2, let reason) {
            #expect(reason.contains("no room"))
        } catch {
            Issue.record("a full TPM gave \(error)")
        }
        try tpm.tool("tpm2_flushcontext", ["-t"])
        #expect(try store.secret(for: "vault-device") != nil)
    }

    @Test("a TPM in dictionary-attack lockout still opens the device key (noDA), and reports the lockout")
    func lockoutSparesTheDeviceKey() throws {
        guard let (tpm, store) = try Self.make() else { return }
        // The simulator stops when its object goes: keep it to the end of the test.
        defer { withExtendedLifetime(tpm) {} }
        let secret = SecretBytes(randomCount: 32)
        _ = try store.storeIfAbsent(secret, for: "vault-device")
        // One wrong PIN on a DA-protected object of the tools' locks the TPM when it allows one failure.
        let scratch = try TestSupport.temporaryDirectory("tpm2-da")
        try tpm.tool("tpm2_dictionarylockout", ["-s", "-n", "1", "-t", "1000", "-l", "1000"])
        try tpm.tool("tpm2_createprimary", ["-C", "o", "-g", "sha256", "-G", "ecc256", "-c", "\(scratch)/p.ctx"])
        try Data("x".utf8).write(to: URL(fileURLWithPath: "\(scratch)/d"))
        try tpm.tool(
            "tpm2_create", ["-C", "\(scratch)/p.ctx", "-i", "\(scratch)/d", "-p", "file:-", "-u", "\(scratch)/s.pub", "-r", "\(scratch)/s.priv"],
            input: "123456")
        try tpm.tool("tpm2_load", ["-C", "\(scratch)/p.ctx", "-u", "\(scratch)/s.pub", "-r", "\(scratch)/s.priv", "-c", "\(scratch)/s.ctx"])
        #expect(throws: (any Error).self) { try tpm.tool("tpm2_unseal", ["-c", "\(scratch)/s.ctx", "-p", "file:-"], input: "654321") }
        let state = try TPM2(tcti: tpm.tcti).dictionaryAttackState()
        #expect(state.inLockout && state.failures == 1 && state.maximumFailures == 1)
        #expect(try store.secret(for: "vault-device")?.isEqual(to: secret) == true)
        #expect(store.status() == .available)
    }

    @Test("an object sealed under a PIN with dictionary-attack protection: the chip refuses wrong PINs, counts them and locks")
    func pinCountedByTheChip() throws {
        guard let (tpm, _) = try Self.make() else { return }
        defer { withExtendedLifetime(tpm) {} }
        try tpm.tool("tpm2_dictionarylockout", ["-s", "-n", "3", "-t", "1000", "-l", "1000"])
        let chip = TPM2(tcti: tpm.tcti)
        let secret = SecretBytes(randomCount: 32)
        let parts = try chip.seal(secret, authorisation: SecretBytes(utf8: "482916"), dictionaryProtected: true)
        #expect(try chip.unseal(parts, authorisation: SecretBytes(utf8: "482916")).isEqual(to: secret))
        for tries in 1...3 {
            #expect(throws: TPM2.Failure.wrongAuthorisation(counted: true)) {
                _ = try chip.unseal(parts, authorisation: SecretBytes(utf8: "000000"))
            }
            #expect(try chip.dictionaryAttackState().failures == UInt32(tries))
        }
        // Locked: even the right PIN is refused until the lockout is reset (or the recovery time passes).
        #expect(try chip.dictionaryAttackState().inLockout)
        #expect(throws: TPM2.Failure.lockout) { _ = try chip.unseal(parts, authorisation: SecretBytes(utf8: "482916")) }
        try tpm.tool("tpm2_dictionarylockout", ["-c"])
        #expect(try chip.unseal(parts, authorisation: SecretBytes(utf8: "482916")).isEqual(to: secret))
    }

    @Test(
        "a PIN-held entry: the TPM refuses and counts wrong PINs, says how many are left, locks out, forgets one after its recovery time; another TPM cannot load it"
    )
    func pinHeldEntry() throws {
        guard let (tpm, store) = try Self.make() else { return }
        defer { withExtendedLifetime(tpm) {} }
        try tpm.tool("tpm2_dictionarylockout", ["-s", "-n", "3", "-t", "2", "-l", "1000"])
        let secret = SecretBytes(randomCount: 32)
        let pin = SecretBytes(utf8: "482916"), wrong = SecretBytes(utf8: "000000")
        let account = "vault-pin-entry"
        #expect(!store.containsEntry(for: account))
        try store.storePINHeld(secret, authorisation: pin, for: account)
        #expect(store.containsEntry(for: account))
        // Never replaced: a second seal under another PIN is refused and the first still opens.
        #expect(throws: (any Error).self) { try store.storePINHeld(SecretBytes(randomCount: 32), authorisation: wrong, for: account) }
        #expect(try store.pinHeldSecret(for: account, authorisation: pin).isEqual(to: secret))
        try store.checkPINHeld(for: account)
        // The object is DA-protected: tpm2-tools reads its attributes without noda.
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: store.directory + "/\(account).tpm2")))
        let publicSize = Int(file[4]) << 8 | Int(file[5])
        let scratch = try TestSupport.temporaryDirectory("tpm2-pin")
        try Data(file[4..<(6 + publicSize)]).write(to: URL(fileURLWithPath: "\(scratch)/pin.pub"))
        let attributes = try tpm.tool("tpm2_print", ["-t", "TPM2B_PUBLIC", "\(scratch)/pin.pub"])
        #expect(attributes.contains("fixedtpm|fixedparent|userwithauth") && !attributes.contains("noda"))

        #expect(throws: KeystoreError.pinRefused(triesLeft: 2, recoverySeconds: 2)) { _ = try store.pinHeldSecret(for: account, authorisation: wrong) }
        #expect(throws: KeystoreError.pinRefused(triesLeft: 1, recoverySeconds: 2)) { _ = try store.pinHeldSecret(for: account, authorisation: wrong) }
        #expect(throws: KeystoreError.pinRefused(triesLeft: 0, recoverySeconds: 2)) { _ = try store.pinHeldSecret(for: account, authorisation: wrong) }
        // In lockout the right PIN is not checked, and that is known before a PIN is asked.
        #expect(throws: KeystoreError.pinLockout(recoverySeconds: 2)) { _ = try store.pinHeldSecret(for: account, authorisation: pin) }
        #expect(throws: KeystoreError.pinLockout(recoverySeconds: 2)) { try store.checkPINHeld(for: account) }
        #expect(try store.lockoutState().inLockout)
        // The device key (noDA) is unaffected meanwhile.
        _ = try store.storeIfAbsent(SecretBytes(randomCount: 32), for: "vault-device")
        #expect(try store.secret(for: "vault-device") != nil)
        // One failure is forgotten after the recovery time: one more try, and the right PIN opens it.
        let deadline = Date().addingTimeInterval(10)
        while try store.lockoutState().inLockout, Date() < deadline { Thread.sleep(forTimeInterval: 0.25) }
        #expect(try store.pinHeldSecret(for: account, authorisation: pin).isEqual(to: secret))

        // Copied to another machine: its TPM cannot load the entry, said before any PIN, and no PIN is counted there.
        let other = try SoftwareTPM()
        defer { withExtendedLifetime(other) {} }
        let copy = try TestSupport.temporaryDirectory("tpm2-pin-copy") + "/tpm2"
        try FileManager.default.copyItem(atPath: store.directory, toPath: copy)
        let elsewhere = TPM2Keystore(directory: copy, tcti: other.tcti)
        #expect(elsewhere.containsEntry(for: account))
        #expect(throws: KeystoreError.sealedElsewhere(.tpm2)) { try elsewhere.checkPINHeld(for: account) }
        #expect(throws: KeystoreError.sealedElsewhere(.tpm2)) { _ = try elsewhere.pinHeldSecret(for: account, authorisation: pin) }
        #expect(try elsewhere.lockoutState().failures == 0)
    }

    @Test("what Coffer seals, tpm2_load and tpm2_unseal open; what tpm2_create seals, Coffer opens")
    func toolsAgree() throws {
        guard let (tpm, store) = try Self.make() else { return }
        // The simulator stops when its object goes: keep it to the end of the test.
        defer { withExtendedLifetime(tpm) {} }
        let secret = SecretBytes((0..<32).map { UInt8($0 * 7 + 1) })
        _ = try store.storeIfAbsent(secret, for: "ours")
        let scratch = try TestSupport.temporaryDirectory("tpm2-tools")
        // The file: "CTP1", then the marshalled TPM2B_PUBLIC and TPM2B_PRIVATE, each with its 2-byte size.
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: store.directory + "/ours.tpm2")))
        let publicSize = Int(file[4]) << 8 | Int(file[5])
        let publicPart = Array(file[4..<(6 + publicSize)])
        let privatePart = Array(file[(6 + publicSize)...])
        #expect(Int(privatePart[0]) << 8 | Int(privatePart[1]) == privatePart.count - 2)
        try Data(publicPart).write(to: URL(fileURLWithPath: "\(scratch)/ours.pub"))
        try Data(privatePart).write(to: URL(fileURLWithPath: "\(scratch)/ours.priv"))
        // Coffer's storage key: the tools' default ECC P-256 primary with noda added.
        try tpm.tool(
            "tpm2_createprimary",
            [
                "-C", "o", "-g", "sha256", "-G", "ecc256", "-c", "\(scratch)/p.ctx",
                "-a", "restricted|decrypt|fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda",
            ])
        try tpm.tool("tpm2_load", ["-C", "\(scratch)/p.ctx", "-u", "\(scratch)/ours.pub", "-r", "\(scratch)/ours.priv", "-c", "\(scratch)/ours.ctx"])
        try tpm.tool("tpm2_unseal", ["-c", "\(scratch)/ours.ctx", "-o", "\(scratch)/ours.out"])
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(scratch)/ours.out"))) == secret.bytes)
        // Attributes as tpm2-tools reads them: bound to this TPM and parent, no authorisation needed, exempt from DA.
        let attributes = try tpm.tool("tpm2_print", ["-t", "TPM2B_PUBLIC", "\(scratch)/ours.pub"])
        #expect(attributes.contains("fixedtpm") && attributes.contains("fixedparent") && attributes.contains("noda"))

        let theirs = (0..<32).map { UInt8(255 - $0) }
        try Data(theirs).write(to: URL(fileURLWithPath: "\(scratch)/theirs.in"))
        try tpm.tool(
            "tpm2_create",
            [
                "-C", "\(scratch)/p.ctx", "-i", "\(scratch)/theirs.in", "-a", "fixedtpm|fixedparent|userwithauth|noda",
                "-u", "\(scratch)/theirs.pub", "-r", "\(scratch)/theirs.priv",
            ])
        let sealed =
            try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(scratch)/theirs.pub")))
            + [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(scratch)/theirs.priv")))
        try Data(Array("CTP1".utf8) + sealed).write(to: URL(fileURLWithPath: store.directory + "/theirs.tpm2"))
        #expect(try store.secret(for: "theirs")?.bytes == theirs)
    }

    @Test("a damaged entry is refused as damaged or foreign, never opened or read as absent")
    func damagedEntry() throws {
        guard let (tpm, store) = try Self.make() else { return }
        // The simulator stops when its object goes: keep it to the end of the test.
        defer { withExtendedLifetime(tpm) {} }
        _ = try store.storeIfAbsent(SecretBytes(randomCount: 32), for: "vault-device")
        let path = store.directory + "/vault-device.tpm2"
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        for index in [0, 5, 40, file.count - 3] {
            var damaged = file
            damaged[index] ^= 0x01
            try Data(damaged).write(to: URL(fileURLWithPath: path))
            #expect(throws: KeystoreError.self, "byte \(index)") { _ = try store.secret(for: "vault-device") }
        }
        try Data(file.prefix(20)).write(to: URL(fileURLWithPath: path))
        #expect(throws: KeystoreError.corruptEntry(account: "vault-device")) { _ = try store.secret(for: "vault-device") }
        try Data(file).write(to: URL(fileURLWithPath: path))
        #expect(try store.secret(for: "vault-device") != nil)
    }

    #if canImport(CTSS2)
    @Test("every hand-typed ESAPI signature is the C header's (assigning the linked functions compiles)")
    func signaturesMatchTheHeaders() {
        let functions: [Any] = [
            Tss2_TctiLdr_Initialize as TSS2Library.TctiInitialize, Tss2_TctiLdr_Finalize as TSS2Library.TctiFinalize,
            Esys_Initialize as TSS2Library.Initialize, Esys_Finalize as TSS2Library.Finalize,
            Esys_CreatePrimary as TSS2Library.CreatePrimary, Esys_Create as TSS2Library.Create, Esys_Load as TSS2Library.Load,
            Esys_TR_SetAuth as TSS2Library.SetAuth, Esys_Unseal as TSS2Library.Unseal, Esys_FlushContext as TSS2Library.FlushContext,
            Esys_GetCapability as TSS2Library.GetCapability, Esys_Free as TSS2Library.Free,
            Tss2_MU_TPM2B_PUBLIC_Marshal as TSS2Library.MarshalPublic, Tss2_MU_TPM2B_PUBLIC_Unmarshal as TSS2Library.UnmarshalPublic,
            Tss2_MU_TPM2B_PRIVATE_Marshal as TSS2Library.MarshalPrivate, Tss2_MU_TPM2B_PRIVATE_Unmarshal as TSS2Library.UnmarshalPrivate,
        ]
        #expect(functions.count == 16)
    }
    #endif
}
