import CofferTestSupport
import Foundation
import GRDB
import Testing

@_spi(Testing) @testable import CofferCrypto
@_spi(Sync) @testable import CofferKit
@testable import CofferModel
@testable import CofferVault

/// The format-v1 golden vault: written once by `COFFER_WRITE_GOLDEN=1 swift test --filter Golden`, committed, and
/// opened by every later version. Its secrets are test values, not anyone's.
enum Golden {
    static let passphrase = "golden passphrase v1"
    static let vaultID = UUID(uuidString: "6F1B6E7A-3C1D-4E55-9A40-0C0FFEE00001")!
    static let created = Date(timeIntervalSince1970: 1_795_000_000)
    static let pinDeviceSecret = SecretBytes(Array(repeating: 0x5A, count: 32))
    static let pin = "424242"
    static let signingSeed = TestSupport.hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")

    static var directory: URL {
        TestSupport.repositoryRoot.appendingPathComponent("Tests/Vectors/vault/v1")
    }

    static func itemID(_ index: Int) -> UUID {
        UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", index))!
    }

    static func contents() throws -> [ItemContent] {
        [
            .card(
                try Card(
                    name: "Costco", symbology: .code128, payload: Array("111222333444".utf8), cardNumber: "1112 2233 3444",
                    tags: ["grocery"], networkIDs: ["costco"], validTo: Date(timeIntervalSince1970: 1_830_000_000),
                    metadata: ["preferredForNetwork_costco": "true"])),
            .card(
                try Card(
                    name: "Amazon return", symbology: .qr, payload: [0x00, 0xC3, 0xA9, 0xFF], payloadCharset: .binary,
                    oneTime: true, usedAt: Date(timeIntervalSince1970: 1_795_000_100))),
            .otp(
                try OTPItem(
                    issuer: "GitHub", account: "alice@example.com",
                    parameters: try OTPParameters(secret: Array("12345678901234567890".utf8), algorithm: .sha256, digits: 8, kind: .totp(period: 30)),
                    tags: ["work"])),
            .otp(
                try OTPItem(
                    issuer: "Duo", account: "alice",
                    parameters: try OTPParameters(secret: Array("12345678901234567890".utf8), kind: .hotp(counter: 5)))),
            .otp(try OTPItem(issuer: "Steam", account: "gabe", parameters: try OTPParameters(secret: Array(repeating: 0x42, count: 20), kind: .steam))),
            .credential(try Credential(name: "OpenAI", provider: "openai", value: "sk-proj-golden-value-0123456789")),
            .note(
                try Note(
                    name: "Bob", template: .contact, fields: [.init(label: "Stellar address", value: "GBOB"), .init(label: "Email", value: "bob@example.com")],
                    text: "Met at the café")),
        ]
    }

    /// Contents that format v1 gained after the golden vault was written (FORMAT.md, revisions): fresh vaults and
    /// exports hold them beside the golden contents, so the independent reader proves them too.
    static func laterContents() throws -> [ItemContent] {
        [
            .card(try Card(name: "Library", symbology: nil, payload: Array("L-998877".utf8), tags: ["books"])),
            .credential(
                try Credential(
                    name: "Mail", provider: "mail.example.org", value: "mail password", username: "frank",
                    url: "https://mail.example.org/")),
        ]
    }

    static var options: VaultOptions {
        VaultOptions(clock: { Golden.created })
    }
}

@Suite("Golden vault, format v1")
struct GoldenTests {
    func stagedCopy() throws -> String {
        let directory = try TestSupport.temporaryDirectory("golden") + "/v"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Golden.directory.appendingPathComponent("vault.sqlite").path, toPath: Vault.databasePath(in: directory))
        return directory
    }

    func recoveryCode() throws -> String {
        try String(contentsOf: Golden.directory.appendingPathComponent("recovery-code.txt"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("The committed v1 vault opens with its passphrase and its recovery code, with every item intact")
    func opens() throws {
        for unlock in [UnlockMethod.passphrase(Golden.passphrase), .recoveryCode(try recoveryCode())] {
            let vault = try Vault.open(in: try stagedCopy(), unlock: unlock)
            #expect(vault.vaultID == Golden.vaultID)
            let items = try vault.items()
            #expect(items.count == 8)
            let expected = try Golden.contents()
            for (index, content) in expected.enumerated() {
                let item = try vault.item(id: Golden.itemID(index))
                #expect(item.content == content)
                #expect(item.createdAt == Golden.created)
                #expect(item.revision == 1)
            }
            let key = try vault.item(id: Golden.itemID(expected.count))
            guard case .signingKey(let signing) = key.content else {
                Issue.record("golden signing key missing")
                continue
            }
            let seed = try PINProtection.open(
                Data(signing.pinBox), salt: signing.pinSalt, pin: try PINProtection.pinBytes(Golden.pin),
                deviceSecret: Golden.pinDeviceSecret, vaultID: signing.boundVaultID, itemID: key.id.bytes)
            #expect(signing.deviceSecretID == PINProtection.secretIdentifier(Golden.pinDeviceSecret))
            #expect(seed.bytes == Golden.signingSeed)
            #expect(TestSupport.hex(signing.publicKey) == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        }
    }

    /// The golden signing key as the reader must decode it. Its PIN salt and box were drawn when the vault was
    /// written, so they are taken from the committed file; the seed the reader opens from them is the fixed one.
    func goldenSigningKey(_ vault: Vault) throws -> [String: Any] {
        let item = try vault.item(id: Golden.itemID(Golden.contents().count))
        guard case .signingKey(let stored) = item.content else {
            Issue.record("the golden signing key is missing")
            return [:]
        }
        var fields = ReaderFields.of(.signingKey(stored), created: Golden.created)
        #expect(fields["name"] as? String == "Golden key" && fields["flavor"] as? String == "ed25519")
        #expect(fields["public_key"] as? String == "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
        #expect(fields["bound_vault_id"] as? String == TestSupport.hex(Golden.vaultID.bytes))
        #expect(fields["device_secret_id"] as? String == TestSupport.hex(PINProtection.secretIdentifier(Golden.pinDeviceSecret)))
        #expect(fields["failed_attempts"] as? Int == 0)
        fields["seed"] = TestSupport.hex(Golden.signingSeed)
        return fields
    }

    @Test("An independent Python reader written from docs/FORMAT.md reads the golden vault and fresh PBKDF2 and scrypt vaults, field by field")
    func pythonReader() throws {
        let goldenVault = try Vault.open(in: try stagedCopy(), unlock: .passphrase(Golden.passphrase))
        var golden: [String: (kind: String, fields: [String: Any])] = [:]
        for (index, content) in try Golden.contents().enumerated() {
            golden[TestSupport.hex(Golden.itemID(index).bytes)] = (content.kind.rawValue, ReaderFields.of(content, created: Golden.created))
        }
        golden[TestSupport.hex(Golden.itemID(try Golden.contents().count).bytes)] = ("signing_key", try goldenSigningKey(goldenVault))
        #expect(golden.count == 8)

        // Fresh vaults, one per passphrase KDF, holding the golden contents under new ids and times.
        var fresh: [(path: String, passphrase: String, kdfID: Int, expected: [String: (kind: String, fields: [String: Any])])] = []
        for (passphrase, kdf, kdfID) in [("fresh one", PassphraseKDF.pbkdf2SHA256(iterations: 210_000), 1), ("fresh two", .scrypt(logN: 14, r: 8, p: 1), 2)] {
            let vault = try TestVault(passphrase: nil, items: false)
            try vault.vault.setPassphrase(passphrase, kdf: kdf)
            var expected: [String: (kind: String, fields: [String: Any])] = [:]
            for content in try Golden.contents() + Golden.laterContents() {
                let item = try vault.vault.add(content)
                expected[TestSupport.hex(item.id.bytes)] = (content.kind.rawValue, ReaderFields.of(content, created: item.createdAt))
            }
            fresh.append((vault.path, passphrase, kdfID, expected))
        }

        let goldenPath = Vault.databasePath(in: try stagedCopy())
        let pin: [String: Any] = ["pin": Golden.pin, "pin_device_secret": TestSupport.hex(Golden.pinDeviceSecret.bytes)]
        let requests: [[String: Any]] =
            [
                ["op": "read_vault", "path": goldenPath, "secret_kind": "passphrase", "secret": Golden.passphrase].merging(pin) { $1 },
                ["op": "read_vault", "path": goldenPath, "secret_kind": "recovery", "secret": try recoveryCode()].merging(pin) { $1 },
            ] + fresh.map { ["op": "read_vault", "path": $0.path, "secret_kind": "passphrase", "secret": $0.passphrase] }
        let answers = try TestSupport.openSSLOracle(requests)
        try #require(answers.count == 4)
        let expectations = [golden, golden] + fresh.map(\.expected)
        for (index, (answer, expected)) in zip(answers, expectations).enumerated() {
            let vault = try #require(answer as? [String: Any])
            if index < 2 {
                #expect(vault["vault_id"] as? String == TestSupport.hex(Golden.vaultID.bytes))
            } else {
                #expect(vault["passphrase_kdfs"] as? [Int] == [fresh[index - 2].kdfID], "the reader opened the slot with the vault's KDF")
            }
            let items = try #require(vault["items"] as? [[String: Any]])
            try ReaderFields.expectSame(items, expected, "vault \(index)")
            if index < 2 {
                #expect(items.allSatisfy { $0["revision"] as? Int == 1 && $0["updated_at"] as? Int == 1_795_000_000_000 })
            }
        }
    }

    @Test("The independent Python reader parses the plaintext JSON export of the golden vault, field by field")
    func pythonExportReader() throws {
        let vault = try Vault.open(in: try stagedCopy(), unlock: .passphrase(Golden.passphrase))
        var laterIDs: [UUID] = []
        for (offset, content) in try Golden.laterContents().enumerated() {
            laterIDs.append(Golden.itemID(100 + offset))
            try vault.add(content, id: laterIDs[offset], createdAt: Golden.created)
        }
        let export = PlaintextExport(items: try vault.items(), vaultID: Golden.vaultID, createdAt: Golden.created)
        let path = try TestSupport.temporaryDirectory("golden-export") + "/export.json"
        try export.encoded().write(to: URL(fileURLWithPath: path))
        var expected: [String: (kind: String, fields: [String: Any])] = [:]
        for (index, content) in try Golden.contents().enumerated() {
            expected[Golden.itemID(index).uuidString.lowercased()] = (content.kind.rawValue, ReaderFields.of(content, created: Golden.created, inExport: true))
        }
        for (id, content) in zip(laterIDs, try Golden.laterContents()) {
            expected[id.uuidString.lowercased()] = (content.kind.rawValue, ReaderFields.of(content, created: Golden.created, inExport: true))
        }
        expected[Golden.itemID(try Golden.contents().count).uuidString.lowercased()] = (
            "signing_key",
            [
                "name": "Golden key", "flavor": "ed25519", "public_key": "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
            ]
        )
        let answer = try #require(try TestSupport.openSSLOracle([["op": "read_export", "path": path]]).first as? [String: Any])
        #expect(answer["vault_id"] as? String == Golden.vaultID.uuidString.lowercased())
        try ReaderFields.expectSame(try #require(answer["items"] as? [[String: Any]]), expected, "export")
    }

    @Test(
        "Write the golden vault (only with COFFER_WRITE_GOLDEN=1)",
        .enabled(if: ProcessInfo.processInfo.environment["COFFER_WRITE_GOLDEN"] == "1"))
    func write() throws {
        let directory = try TestSupport.temporaryDirectory("golden-write") + "/v"
        let vault = try Vault.create(
            in: directory, vaultID: Golden.vaultID, deviceKey: SecretBytes(randomCount: 32), passphrase: Golden.passphrase,
            options: Golden.options)
        let code = try vault.newRecoveryCode()
        let contents = try Golden.contents()
        for (index, content) in contents.enumerated() {
            try vault.add(content, id: Golden.itemID(index), createdAt: Golden.created)
        }
        let keyID = Golden.itemID(contents.count)
        let sealed = try PINProtection.seal(
            SecretBytes(Golden.signingSeed), pin: try PINProtection.pinBytes(Golden.pin), deviceSecret: Golden.pinDeviceSecret,
            vaultID: Golden.vaultID.bytes, itemID: keyID.bytes)
        let key = try SigningKey(
            name: "Golden key", flavor: .ed25519, publicKey: try Ed25519.publicKey(seed: SecretBytes(Golden.signingSeed)),
            pinSalt: sealed.salt, pinBox: Array(sealed.box), boundVaultID: Golden.vaultID.bytes,
            deviceSecretID: PINProtection.secretIdentifier(Golden.pinDeviceSecret))
        try vault.add(.signingKey(key), id: keyID, createdAt: Golden.created)
        let backup = directory + "/backup.sqlite"
        try vault.writeBackup(to: backup)
        try FileManager.default.createDirectory(at: Golden.directory, withIntermediateDirectories: true)
        let target = Golden.directory.appendingPathComponent("vault.sqlite")
        try? FileManager.default.removeItem(at: target)
        try FileManager.default.copyItem(atPath: backup, toPath: target.path)
        try (code + "\n").write(to: Golden.directory.appendingPathComponent("recovery-code.txt"), atomically: true, encoding: .utf8)
    }
}
