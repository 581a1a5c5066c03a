import CofferBarcode
import CofferModel
import CofferOTP
import CofferTestSupport
import Foundation
import Testing

@testable import CofferInterop

/// The importers Aegis has that Coffer lacked (issue 32), each against files its make_*.py writes with independent
/// code (Python's cryptography, sqlite3, hand-written ZipCrypto and Java serialisation).
@Suite("Authenticator apps' files as Aegis reads them", .offCooperativePool)
struct AegisFormatsTests {
    /// A problem whose reason the fixture leaves to the importer.
    struct NamedProblem: Decodable {
        let entry: String
    }

    struct Expected: Decodable {
        let password: String?
        let items: [ExpectedOTP]
        let problems: [NamedProblem]?
    }

    static func entries(_ result: ImportResult) -> [String] { result.problems.map(\.entry).sorted() }

    @Test("Authy: the app's preferences, plain and encrypted, its own tokens, and the API's JSON")
    func authy() throws {
        struct AuthyExpected: Decodable {
            let password: String
            let items: [ExpectedOTP]
            let problems: [NamedProblem]
            let authy_items: [ExpectedOTP]
        }
        let expected = try OTPFixtures.expected("authy", as: AuthyExpected.self)
        let plain = try AuthyImporter.read(OTPFixtures.bytes("authy", "plain.xml"), password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(plain), against: expected.items)
        #expect(Self.entries(plain) == expected.problems.map(\.entry))
        for file in ["encrypted.xml", "api.json"] {
            let data = try OTPFixtures.bytes("authy", file)
            #expect(throws: InteropError.passwordRequired) { try AuthyImporter.read(data, password: nil) }
            #expect(throws: InteropError.wrongPassword) { try AuthyImporter.read(data, password: "not it") }
            let result = try AuthyImporter.read(data, password: expected.password)
            try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
            #expect(Self.entries(result) == expected.problems.map(\.entry), "\(file)")
        }
        // A file asking for more key derivation than any real one is refused before any is run.
        let costly =
            "{\"authenticator_tokens\": ["
            + Array(
                repeating: "{\"encrypted_seed\": \"AAAAAAAAAAAAAAAAAAAAAA==\", \"salt\": \"s\", \"key_derivation_iterations\": 10000000, \"name\": \"x\"}",
                count: 6
            ).joined(separator: ",") + "]}"
        #expect(throws: InteropError.kdfParametersOutOfBounds("the tokens ask for more than 50000000 PBKDF2 iterations in all")) {
            try AuthyImporter.read(Array(costly.utf8), password: "x")
        }
        // Authy's own tokens: hex seeds, 7 digits, 10-second codes.
        let own = try AuthyImporter.read(OTPFixtures.bytes("authy", "authy_tokens.xml"), password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(own), against: expected.authy_items)
        #expect(throws: InteropError.self) { try AuthyImporter.read(Array("<map><string name=\"x\">[]</string></map>".utf8), password: nil) }
        #expect(throws: InteropError.self) { try AuthyImporter.read(Array("{\"tokens\": []}".utf8), password: nil) }
    }

    @Test("Authenticator Plus: Accounts.txt in a ZIP under the traditional PKWARE scheme or WinZip AES, in a folder or not")
    func authenticatorPlus() throws {
        let expected = try OTPFixtures.expected("authenticator-plus", as: Expected.self)
        let password = try #require(expected.password)
        for file in ["backup.zip", "nested.zip", "backup_aes.zip"] {
            let data = try OTPFixtures.bytes("authenticator-plus", file)
            #expect(throws: InteropError.passwordRequired) { try AuthenticatorPlusImporter.read(data, password: nil) }
            #expect(throws: InteropError.wrongPassword, "\(file)") { try AuthenticatorPlusImporter.read(data, password: "wrong one") }
            let result = try AuthenticatorPlusImporter.read(data, password: password)
            try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
            #expect(result.problems.count == expected.problems?.count, "\(file)")
        }
        // Damage after the password check: the AES entry's authentication code, the traditional entry's CRC.
        var damaged = try OTPFixtures.bytes("authenticator-plus", "backup_aes.zip")
        let archive = try ZipArchive(damaged)
        let entry = try #require(archive.entry(named: "Accounts.txt"))
        damaged[entry.localHeaderOffset + 30 + "Accounts.txt".utf8.count + 11 + 16 + 40] ^= 0x01
        #expect(throws: InteropError.self) { try AuthenticatorPlusImporter.read(damaged, password: password) }
    }

    @Test("Battle.net: the masked secret and serial in its preferences; a file without the secret is refused")
    func battleNet() throws {
        let expected = try OTPFixtures.expected("battlenet", as: Expected.self)
        let result = try BattleNetImporter.read(OTPFixtures.bytes("battlenet", "authenticator_preferences.xml"), password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
        #expect(throws: InteropError.malformedFile("the file holds no authenticator secret (\(BattleNetImporter.secretKey))")) {
            try BattleNetImporter.read(OTPFixtures.bytes("battlenet", "no_secret.xml"), password: nil)
        }
        #expect(throws: InteropError.self) { try BattleNetImporter.read(Array("not xml".utf8), password: nil) }
    }

    @Test("FreeOTP: tokens.xml, and FreeOTP 2's Java-serialised backups under PBKDF2 with SHA-512 and SHA-1")
    func freeOTP() throws {
        struct FreeOTPExpected: Decodable {
            let password: String
            let items: [ExpectedOTP]
            let problems: [NamedProblem]
            let backup_problems: [NamedProblem]
        }
        let expected = try OTPFixtures.expected("freeotp", as: FreeOTPExpected.self)
        let tokens = try FreeOTPImporter.read(OTPFixtures.bytes("freeotp", "tokens.xml"), password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(tokens), against: expected.items)
        #expect(Self.entries(tokens) == expected.problems.map(\.entry))
        for file in ["externalBackup.xml", "externalBackup_sha1.xml"] {
            let data = try OTPFixtures.bytes("freeotp", file)
            #expect(throws: InteropError.passwordRequired) { try FreeOTPImporter.read(data, password: nil) }
            #expect(throws: InteropError.wrongPassword) { try FreeOTPImporter.read(data, password: "freeotp backup pw") }
            let result = try FreeOTPImporter.read(data, password: expected.password)
            try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
            #expect(Self.entries(result) == expected.backup_problems.map(\.entry).sorted(), "\(file)")
            #expect(result.problems.contains { $0.reason.contains("damaged") }, "\(file)")
        }
        // A truncated stream, another class, and a string that is not modified UTF-8 are refused, never guessed at.
        let backup = try OTPFixtures.bytes("freeotp", "externalBackup.xml")
        #expect(throws: InteropError.self) { try FreeOTPImporter.read(Array(backup.prefix(backup.count / 2)), password: expected.password) }
        var otherClass = backup
        otherClass[10] = UInt8(ascii: "X")
        #expect(throws: InteropError.self) { try FreeOTPImporter.read(otherClass, password: expected.password) }
        #expect(JavaSerializedMap.modifiedUTF8([0xED, 0xA0, 0xBD, 0xED, 0xB4, 0x91][...]) == "🔑")
        #expect(JavaSerializedMap.modifiedUTF8([0xC0, 0x80][...]) == "\u{0}")
        #expect(JavaSerializedMap.modifiedUTF8([0x00][...]) == nil)
        #expect(JavaSerializedMap.modifiedUTF8([0xED, 0xA0, 0xBD][...]) == nil)
        #expect(FreeOTPImporter.gcmNonce(fromDER: [0x04, 0x0C] + Array(1...12)) == Array(1...12))
        #expect(FreeOTPImporter.gcmNonce(fromDER: [0x30, 0x11, 0x04, 0x0C] + Array(1...12) + [0x02, 0x01, 0x10]) == Array(1...12))
        #expect(FreeOTPImporter.gcmNonce(fromDER: [0x04, 0x10] + Array(1...16)) == nil)
    }

    @Test("Google Authenticator's own database: TOTP and HOTP rows; unknown types and encrypted rows are named")
    func googleDatabase() throws {
        struct GoogleExpected: Decodable {
            let items: [ExpectedOTP]
            let problems: [NamedProblem]
            let encrypted_items: [ExpectedOTP]
            let encrypted_problems: [NamedProblem]
        }
        let expected = try OTPFixtures.expected("google-db", as: GoogleExpected.self)
        let result = try GoogleAuthenticatorImporter.read(OTPFixtures.bytes("google-db", "databases"), password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
        #expect(Self.entries(result) == expected.problems.map(\.entry))
        let encrypted = try GoogleAuthenticatorImporter.read(OTPFixtures.bytes("google-db", "databases_encrypted"), password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(encrypted), against: expected.encrypted_items)
        #expect(Self.entries(encrypted) == expected.encrypted_problems.map(\.entry))
        #expect(encrypted.problems.allSatisfy { $0.reason.contains("encrypted") })
        // A damaged database is a clear refusal; so is one without the table.
        var damaged = try OTPFixtures.bytes("google-db", "databases")
        for index in 100..<min(damaged.count, 4096) { damaged[index] = 0xFF }
        #expect(throws: InteropError.self) { try GoogleAuthenticatorImporter.read(damaged, password: nil) }
        #expect(throws: InteropError.self) { try GoogleAuthenticatorImporter.read(OTPFixtures.bytes("microsoft", "PhoneFactor").map { $0 }, password: nil) }
    }

    @Test("Microsoft Authenticator: ordinary tokens and Microsoft accounts; work accounts skipped")
    func microsoft() throws {
        let expected = try OTPFixtures.expected("microsoft", as: Expected.self)
        let result = try MicrosoftAuthenticatorImporter.read(OTPFixtures.bytes("microsoft", "PhoneFactor"), password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
        #expect(Self.entries(result) == (expected.problems ?? []).map(\.entry))
        #expect(throws: InteropError.self) { try MicrosoftAuthenticatorImporter.read(OTPFixtures.bytes("google-db", "databases"), password: nil) }
        #expect(throws: InteropError.self) { try MicrosoftAuthenticatorImporter.read(Array("SQLite format 3\0".utf8), password: nil) }
    }

    @Test("TOTP Authenticator: backups under a password or the app's default, and its preferences")
    func totpAuthenticator() throws {
        struct TOTPExpected: Decodable {
            let password: String
            let items: [ExpectedOTP]
            let problems: [NamedProblem]
        }
        let expected = try OTPFixtures.expected("totp-authenticator", as: TOTPExpected.self)
        let backup = try OTPFixtures.bytes("totp-authenticator", "backup.encrypt")
        #expect(throws: InteropError.passwordRequired) { try TOTPAuthenticatorImporter.read(backup, password: nil) }
        #expect(throws: InteropError.wrongPassword) { try TOTPAuthenticatorImporter.read(backup, password: "nope") }
        for result in [
            try TOTPAuthenticatorImporter.read(backup, password: expected.password),
            // The app's default password needs no question.
            try TOTPAuthenticatorImporter.read(OTPFixtures.bytes("totp-authenticator", "backup_default.encrypt"), password: nil),
            try TOTPAuthenticatorImporter.read(OTPFixtures.bytes("totp-authenticator", "preferences.xml"), password: nil),
        ] {
            try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
            #expect(Self.entries(result) == expected.problems.map(\.entry))
        }
    }

    @Test("the Steam app's own Steamguard file, with one account or several")
    func steamApp() throws {
        struct SteamExpected: Decodable {
            let items: [ExpectedOTP]
            let multi_items: [ExpectedOTP]
        }
        let expected = try OTPFixtures.expected("steam-app", as: SteamExpected.self)
        let single = try SteamMaFileImporter.read(OTPFixtures.bytes("steam-app", "Steamguard-76561190000000001"), password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(single), against: expected.items)
        let multi = try SteamMaFileImporter.read(OTPFixtures.bytes("steam-app", "Steamguard-multi"), password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(multi), against: expected.multi_items)
        #expect(Self.entries(multi) == ["Steam (gamer_three)"])
    }

    @Test(
        "every new importer refuses hostile bytes with an InteropError, never a crash",
        arguments: [
            "authy", "authenticator-plus", "battlenet", "freeotp", "totp-authenticator", "microsoft", "google",
        ])
    func hostileBytes(_ format: String) throws {
        let importer = try #require(ImportFormats.importer(named: format))
        var random = SplitMix64(seed: 32)
        let samples: [[UInt8]] = [
            [], Array("<map>".utf8), Array("<?xml version='1.0'?><!DOCTYPE map [<!ENTITY a 'b'>]><map/>".utf8),
            JavaSerializedMap.magic + [0x73, 0x72, 0xFF, 0xFF], SQLiteFile.header + random.bytes(200), random.bytes(4096),
            [0x50, 0x4B, 0x03, 0x04] + random.bytes(300),
        ]
        for sample in samples {
            do {
                _ = try importer.read(sample, password: "x")
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
    }

    @Test("Voucher Vault: every code type, colours, balances and expiry dates; an unknown code type is named")
    func voucherVault() throws {
        struct ExpectedCard: Decodable {
            let name: String
            let payload: String
            let symbology: String?
            let validTo: String?
            let balance: String?
            let currency: String?
            let colour: String
        }
        struct VoucherExpected: Decodable { let cards: [ExpectedCard] }
        let expected = try OTPFixtures.expected("vouchervault", as: VoucherExpected.self)
        let result = try VoucherVaultImporter.read(OTPFixtures.bytes("vouchervault", "vouchervault.json"), password: nil)
        #expect(result.problems.isEmpty)
        let cards: [Card] = result.items.compactMap { if case .card(let card) = $0 { card } else { nil } }
        #expect(cards.count == expected.cards.count)
        let iso = ISO8601DateFormatter()
        for (card, want) in zip(cards, expected.cards) {
            #expect(card.name == want.name)
            #expect(card.payload == Array(want.payload.utf8), "\(want.name)")
            #expect(card.symbology?.rawValue == want.symbology, "\(want.name)")
            #expect(card.validTo == want.validTo.flatMap(iso.date(from:)), "\(want.name)")
            #expect(card.metadata[CardMetadata.color] == want.colour, "\(want.name)")
            #expect(card.metadata["balance"].flatMap { Decimal(string: $0) } == want.balance.flatMap { Decimal(string: $0) }, "\(want.name)")
            #expect(card.metadata["balance_currency"] == want.currency, "\(want.name)")
        }
        let unknown = try VoucherVaultImporter.read(OTPFixtures.bytes("vouchervault", "unknown_type.json"), password: nil)
        #expect(unknown.problems.count == 1 && unknown.problems[0].reason == "code type AZTEC2 is not supported")
        #expect(throws: InteropError.self) { try VoucherVaultImporter.read(Array("{}".utf8), password: nil) }
    }
}
