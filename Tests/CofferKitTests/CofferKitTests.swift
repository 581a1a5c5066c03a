import CofferKeystore
import CofferTestSupport
import Foundation
import GRDB
import Testing

@_spi(Testing) @testable import CofferCrypto
@_spi(Sync) @testable import CofferKit
@testable import CofferVault

struct KitFixture {
    let location: CofferLocation
    let coffer: Coffer

    init(passphrase: String? = nil) throws {
        let root = try TestSupport.temporaryDirectory("kit")
        location = CofferLocation(vaultDirectory: root + "/vault", keystore: FileKeystore(directory: root + "/keystore"), options: testOptions)
        coffer = try Coffer.initialize(at: location, passphrase: passphrase, kdf: cheapKDF)
    }
}

/// Cheap settings, as the vault's own suites use them: the KDF cost is lowered in tests only.
private let testOptions = VaultOptions(limits: .testing)
private let cheapKDF = PassphraseKDF.pbkdf2SHA256(iterations: 1000)

@Suite("Coffer facade")
struct CofferKitTests {
    @Test("HOTP: the advanced counter is stored before the code is returned")
    func hotpPersistsFirst() throws {
        let fixture = try KitFixture()
        // RFC 4226 key: counter 0 → 755224, 1 → 287082.
        let token = try fixture.coffer.vault.add(
            .otp(
                try OTPItem(
                    issuer: "RFC", account: "4226", parameters: try OTPParameters(secret: Array("12345678901234567890".utf8), kind: .hotp(counter: 0)))))
        let first = try fixture.coffer.code(for: token, at: Date())
        #expect(first.code == "755224" && first.secondsRemaining == nil)
        guard case .otp(let stored) = try fixture.coffer.vault.item(id: token.id).content else { Issue.record("not a token"); return }
        #expect(stored.parameters.kind == .hotp(counter: 1))
        #expect(try fixture.coffer.code(for: token, at: Date()).code == "287082")
    }

    @Test("TOTP codes match RFC 6238 at a fixed time")
    func totp() throws {
        let fixture = try KitFixture()
        let token = try fixture.coffer.vault.add(
            .otp(
                try OTPItem(
                    issuer: "RFC", account: "6238", parameters: try OTPParameters(secret: Array("12345678901234567890".utf8), digits: 8))))
        let result = try fixture.coffer.code(for: token, at: Date(timeIntervalSince1970: 1_111_111_109))
        #expect(result.code == "07081804")
        #expect(result.secondsRemaining == 1)
    }

    @Test("Signing needs the PIN; wrong PINs are counted and lock the key after 10; a right PIN resets the count")
    func pinLock() throws {
        let fixture = try KitFixture()
        let seed = SecretBytes(TestSupport.hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
        let key = try fixture.coffer.addSigningKey(name: "Main", seed: seed, flavor: .ed25519, pin: "246810")
        let signature = try fixture.coffer.sign(Data(), with: key, pin: "246810")
        #expect(TestSupport.hex(signature).hasPrefix("e5564300c360ac72"))
        for attempt in 1...3 {
            #expect(throws: ModelError.self) { _ = try fixture.coffer.sign(Data(), with: key, pin: "000000") }
            guard case .signingKey(let stored) = try fixture.coffer.vault.item(id: key.id).content else {
                Issue.record("not a signing key")
                return
            }
            #expect(stored.failedAttempts == attempt)
        }
        _ = try fixture.coffer.sign(Data(), with: key, pin: "246810")
        guard case .signingKey(let reset) = try fixture.coffer.vault.item(id: key.id).content else {
            Issue.record("not a signing key")
            return
        }
        #expect(reset.failedAttempts == 0)
        for _ in 1...10 {
            #expect(throws: ModelError.self) { _ = try fixture.coffer.sign(Data(), with: key, pin: "111111") }
        }
        // Locked: even the right PIN is refused now.
        #expect {
            _ = try fixture.coffer.sign(Data(), with: key, pin: "246810")
        } throws: { error in
            guard case ModelError.keyLocked = error else { return false }
            return true
        }
    }

    @Test("A copied vault with its passphrase still cannot use a PIN-held key without this device's secret")
    func pinNeedsDevice() throws {
        let fixture = try KitFixture(passphrase: "shared passphrase")
        let key = try fixture.coffer.addSigningKey(name: "Main", seed: SecretBytes(randomCount: 32), flavor: .ed25519, pin: "135790")
        let elsewhere = try TestSupport.temporaryDirectory("elsewhere")
        let otherLocation = CofferLocation(
            vaultDirectory: elsewhere + "/vault", keystore: FileKeystore(directory: elsewhere + "/keystore"), options: testOptions)
        try FileManager.default.createDirectory(atPath: otherLocation.vaultDirectory, withIntermediateDirectories: true)
        try fixture.coffer.vault.database.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        try FileManager.default.copyItem(
            atPath: Vault.databasePath(in: fixture.location.vaultDirectory), toPath: Vault.databasePath(in: otherLocation.vaultDirectory))
        #expect {
            _ = try Coffer.open(at: otherLocation)
        } throws: { error in
            guard case CofferError.needsSecret = error else { return false }
            return true
        }
        let copy = try Coffer.open(at: otherLocation, unlock: .passphrase("shared passphrase"))
        #expect {
            _ = try copy.sign(Data(), with: key, pin: "135790")
        } throws: { error in
            guard case CofferError.keyBoundElsewhere = error else { return false }
            return true
        }
        // Not a wrong PIN: nothing was counted.
        guard case .signingKey(let stored) = try copy.vault.item(id: key.id).content else { Issue.record("not a key"); return }
        #expect(stored.failedAttempts == 0)
        // The passphrase open gave the new device its own slot: no prompt next time.
        #expect(try Coffer.open(at: otherLocation).vault.vaultID == fixture.coffer.vault.vaultID)
    }

    @Test("A signing key imported into another vault on the same device keeps working")
    func signingKeyAfterImport() throws {
        let fixture = try KitFixture(passphrase: "pass one")
        let seed = SecretBytes(TestSupport.hex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"))
        _ = try fixture.coffer.addSigningKey(name: "Main", seed: seed, flavor: .ed25519, pin: "112233")
        let backup = try TestSupport.temporaryDirectory("kit-backup") + "/b"
        try fixture.coffer.vault.writeBackup(to: backup)
        let second = CofferLocation(
            vaultDirectory: try TestSupport.temporaryDirectory("kit-second") + "/vault", keystore: fixture.location.keystore,
            options: testOptions)
        let other = try Coffer.initialize(at: second)
        #expect(try other.importBackup(backup, unlock: .passphrase("pass one")) == (1, 0))
        let imported = try other.find("Main")
        let signature = try other.sign(TestSupport.hex("72"), with: imported, pin: "112233")
        #expect(TestSupport.hex(signature).hasPrefix("92a009a9f0d4cab8"))
    }

    @Test("Rotation replaces the device key too, and a crash before the new key is promoted is finished on open")
    func deviceKeyRotation() throws {
        let fixture = try KitFixture(passphrase: "pw")
        let account = Coffer.deviceAccount(fixture.coffer.vault.vaultID)
        let oldKey = try #require(try fixture.location.keystore.secret(for: account))
        _ = try fixture.coffer.rotateMasterKey(passphrase: "pw")
        let newKey = try #require(try fixture.location.keystore.secret(for: account))
        #expect(!newKey.isEqual(to: oldKey))
        #expect(try fixture.location.keystore.secret(for: account + "-next") == nil)
        #expect(throws: VaultError.self) {
            _ = try Vault.open(in: fixture.location.vaultDirectory, unlock: .deviceKey(oldKey), options: testOptions)
        }
        // Crash between the vault's commit and the key store's promotion: only the staged key opens the vault.
        let staged = SecretBytes(randomCount: 32)
        try fixture.location.keystore.replaceSecret(staged, for: account + "-next")
        _ = try fixture.coffer.vault.rotateMasterKey(deviceKey: staged, passphrase: "pw")
        let reopened = try Coffer.open(at: fixture.location)
        #expect(reopened.vault.vaultID == fixture.coffer.vault.vaultID)
        #expect(try fixture.location.keystore.secret(for: account)?.isEqual(to: staged) == true)
        #expect(try fixture.location.keystore.secret(for: account + "-next") == nil)
    }

    @Test("Imports skip entries already present (same secret and account, or same card payload)")
    func importDuplicates() throws {
        let fixture = try KitFixture()
        let secret = Array("12345678901234567890".utf8)
        let token = ItemContent.otp(try OTPItem(issuer: "GitHub", account: "alice", parameters: try OTPParameters(secret: secret)))
        let renamed = ItemContent.otp(try OTPItem(issuer: "GitHub Inc.", account: "Alice", parameters: try OTPParameters(secret: secret)))
        let other = ItemContent.otp(try OTPItem(issuer: "GitHub", account: "bob", parameters: try OTPParameters(secret: secret)))
        let card = ItemContent.card(try Card(name: "Costco", symbology: .code128, payload: Array("123".utf8)))
        _ = try fixture.coffer.vault.add(token)
        let summary = try fixture.coffer.addImported([renamed, other, card, card])
        #expect(summary.added == 2)
        #expect(summary.duplicates.count == 2)
        #expect(try fixture.coffer.items().count == 3)
    }

    @Test("Lookup by name, id, and unique id prefix; ambiguity is reported")
    func lookup() throws {
        let fixture = try KitFixture()
        let card = try fixture.coffer.vault.add(.card(try Card(name: "Costco", symbology: .qr, payload: Array("1".utf8))))
        _ = try fixture.coffer.vault.add(.card(try Card(name: "Twin", symbology: .qr, payload: Array("2".utf8))))
        _ = try fixture.coffer.vault.add(.card(try Card(name: "twin", symbology: .qr, payload: Array("3".utf8))))
        #expect(try fixture.coffer.find("costco").id == card.id)
        #expect(try fixture.coffer.find(card.id.uuidString).id == card.id)
        #expect(try fixture.coffer.find(String(card.id.uuidString.prefix(8)).lowercased()).id == card.id)
        // An exact name wins; another case of it matches both, and both are listed.
        let twin = try fixture.coffer.find("Twin")
        #expect(twin.content.name == "Twin")
        #expect(throws: CofferError.self) { _ = try fixture.coffer.find("TWIN") }
        #expect(throws: CofferError.self) { _ = try fixture.coffer.find("nothing") }
        #expect(throws: CofferError.self) { _ = try fixture.coffer.find("Costco", kind: .otp) }
    }

    @Test("The device key is stored before the vault exists and is kept 0600 outside the vault directory")
    func keystoreLayout() throws {
        let fixture = try KitFixture()
        let keystore = try #require(fixture.location.keystore as? CofferKeystore.FileKeystore)
        let files = try FileManager.default.contentsOfDirectory(atPath: keystore.directory)
        #expect(files == ["vault-\(fixture.coffer.vault.vaultID.uuidString.lowercased())-device.key"])
        for file in files {
            let attributes = try FileManager.default.attributesOfItem(atPath: keystore.directory + "/" + file)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
        }
        #expect(!keystore.directory.hasPrefix(fixture.location.vaultDirectory))
    }

    @Test("The plaintext export has CardOnCue's shape and never a seed")
    func plaintextExport() throws {
        let fixture = try KitFixture()
        _ = try fixture.coffer.vault.add(.card(try Card(name: "Costco", symbology: .code128, payload: Array("123".utf8), networkIDs: ["costco"])))
        let seed = SecretBytes(randomCount: 32)
        _ = try fixture.coffer.addSigningKey(name: "K", seed: seed, flavor: .ed25519, pin: "123456")
        let export = PlaintextExport(items: try fixture.coffer.items(), vaultID: fixture.coffer.vault.vaultID, createdAt: Date())
        let data = try export.encoded()
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let user = try #require(json["user"] as? [String: Any])
        #expect(user["id"] as? String == fixture.coffer.vault.vaultID.uuidString.lowercased())
        let cards = try #require(json["cards"] as? [[String: Any]])
        #expect(cards.first?["barcode_type"] as? String == "code128")
        #expect(cards.first?["payload"] as? String == "123")
        #expect(cards.first?["network_ids"] as? [String] == ["costco"])
        #expect(CanaryScan.encodings(ofBytes: seed.bytes, in: data).isEmpty)
    }
}
