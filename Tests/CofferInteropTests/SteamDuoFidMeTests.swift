import CofferInterop
import CofferModel
import CofferOTP
import CofferTestSupport
import Foundation
import Testing

@Suite struct SteamMaFileTests {
    struct Expected: Decodable {
        let password: String
        let items: [ExpectedOTP]
        let problems: [ExpectedProblem]
        let encryptedProblems: [ExpectedProblem]

        enum CodingKeys: String, CodingKey {
            case password, items, problems
            case encryptedProblems = "encrypted_problems"
        }
    }

    @Test func plainMaFile() throws {
        let expected = try OTPFixtures.expected("steam", as: Expected.self)
        let result = try SteamMaFileImporter.read(OTPFixtures.bytes("steam", "plain.maFile"), password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: Array(expected.items.prefix(1)))
        #expect(result.problems.isEmpty)
    }

    @Test(arguments: ["maFiles.zip", "maFiles_encrypted.zip"])
    func maFilesFolder(_ file: String) throws {
        let expected = try OTPFixtures.expected("steam", as: Expected.self)
        let data = try OTPFixtures.bytes("steam", file)
        let result = try SteamMaFileImporter.read(data, password: expected.password)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
        OTPFixtures.check(result.problems, against: file.contains("encrypted") ? expected.encryptedProblems : expected.problems)
    }

    /// SDA's encryption (PBKDF2-SHA1 and AES-256-CBC from Python's `cryptography`): the password opens it, a wrong
    /// one is told apart from damage, and without one the importer asks.
    @Test func encryptedFolderNeedsTheRightPassword() throws {
        let data = try OTPFixtures.bytes("steam", "maFiles_encrypted.zip")
        #expect(throws: InteropError.passwordRequired) { try SteamMaFileImporter.read(data, password: nil) }
        #expect(throws: InteropError.wrongPassword) { try SteamMaFileImporter.read(data, password: "steam desktop pw") }
    }

    @Test func encryptedMaFileAloneIsRefusedClearly() throws {
        let data = try OTPFixtures.bytes("steam", "encrypted.maFile")
        #expect(
            throws: InteropError.malformedFile(
                "this maFile is encrypted: import the zipped maFiles folder, whose manifest.json holds its salt and IV")
        ) { try SteamMaFileImporter.read(data, password: "x") }
    }

    @Test(arguments: [
        "{}", #"{"shared_secret": 5}"#, #"{"shared_secret": "!!"}"#, #"{"shared_secret": "", "account_name": "a"}"#,
    ])
    func badMaFilesBecomeProblems(_ text: String) throws {
        let result = try SteamMaFileImporter.read(Array(text.utf8), password: nil)
        #expect(result.items.isEmpty && result.problems.count == 1)
    }

    @Test(arguments: ["", "[", "null", "\u{0}"])
    func notMaFiles(_ text: String) {
        #expect(throws: InteropError.self) { try SteamMaFileImporter.read(Array(text.utf8), password: nil) }
    }
}

@Suite struct DuoTests {
    struct Expected: Decodable {
        let items: [ExpectedOTP]
        let problems: [ExpectedProblem]
    }

    @Test func accountsJSON() throws {
        let expected = try OTPFixtures.expected("duo", as: Expected.self)
        let data = try OTPFixtures.bytes("duo", "accounts.json")
        let result = try DuoImporter.read(data, password: nil)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
        OTPFixtures.check(result.problems, against: expected.problems)
        for problem in result.problems { TokenFixtures.expectNoSecret(problem.description, password: nil) }
    }

    @Test(arguments: ["", "{}", "null", #"{"accounts": []}"#])
    func notDuoFiles(_ text: String) {
        #expect(throws: InteropError.self) { try DuoImporter.read(Array(text.utf8), password: nil) }
    }
}

@Suite struct FidMeTests {
    struct Expected: Decodable {
        struct ExpectedCard: Decodable {
            let name: String
            let number: String
            let notes: String
        }

        let cards: [ExpectedCard]
        let problems: [ExpectedProblem]
    }

    /// Cards without a barcode (FidMe does not export its type), shown by their number, from the zip or the CSV.
    @Test(arguments: ["export.zip", "loyalty_programs.csv"])
    func export(_ file: String) throws {
        let expected = try OTPFixtures.expected("fidme", as: Expected.self)
        let result = try FidMeImporter.read(OTPFixtures.bytes("fidme", file), password: nil)
        let cards = result.items.compactMap { item -> Card? in
            if case .card(let card) = item { return card }
            return nil
        }
        #expect(cards.map(\.name) == expected.cards.map(\.name))
        #expect(cards.map { String(decoding: $0.payload, as: UTF8.self) } == expected.cards.map(\.number))
        #expect(cards.map(\.notes) == expected.cards.map(\.notes))
        #expect(cards.allSatisfy { $0.symbology == nil })
        OTPFixtures.check(result.problems, against: expected.problems)
    }

    @Test(arguments: ["", "Name;Number\r\nA;1\r\n", "Retailer;Reference\r\n\"open"])
    func notFidMeExports(_ text: String) {
        #expect(throws: InteropError.self) { try FidMeImporter.read(Array(text.utf8), password: nil) }
    }
}

@Suite struct PKPassesTests {
    /// A `.pkpasses` bundle: one card per pass, the damaged pass a problem named by its file.
    @Test func bundle() throws {
        let result = try PKPassImporter.read(OTPFixtures.bytes("pkpass", "bundle.pkpasses"), password: nil)
        let names = result.items.compactMap { item -> String? in
            if case .card(let card) = item { return card.name }
            return nil
        }
        #expect(names == ["Coffee Club", "Hardware Store", "Museum"])
        #expect(result.problems.map(\.entry) == ["bad_json.pkpass"])
        let single = try PKPassImporter.read(OTPFixtures.bytes("pkpass", "code128.pkpass"), password: nil)
        #expect(result.items.contains(single.items[0]))
    }
}

/// Every reader added for issue 15 refuses a file over the import cap before parsing it.
@Suite struct NewReadersSizeCapTests {
    static var importers: [any Importer.Type] {
        [
            KeePassImporter.self, SteamMaFileImporter.self, DuoImporter.self, FidMeImporter.self, StratumImporter.self,
            EnteAuthImporter.self, PKPassImporter.self,
        ]
    }

    @Test func oversizedFilesAreRefused() {
        let data = [UInt8](repeating: UInt8(ascii: " "), count: importSizeLimit + 1)
        for importer in Self.importers {
            do {
                _ = try importer.read(data, password: "x")
                Issue.record("\(importer.formatName) read an oversized file")
            } catch {
                #expect(error == .tooLarge(limit: importSizeLimit), "\(importer.formatName): \(error)")
            }
        }
    }

    @Test func everyNewReaderIsRegistered() {
        for importer in Self.importers {
            #expect(ImportFormats.importer(named: importer.formatName) != nil, "\(importer.formatName)")
        }
    }
}
