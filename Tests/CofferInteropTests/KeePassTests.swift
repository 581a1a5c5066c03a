import CofferCrypto
import CofferModel
import CofferOTP
import CofferTestSupport
import Crypto
import Foundation
import Testing

@testable import CofferInterop

@Suite(.offCooperativePool) struct KeePassTests {
    static func read(_ file: String, password: String?) throws -> ImportResult {
        try KeePassImporter.read(KeePassFixtures.bytes(file), password: password)
    }

    /// The parameterised tests below have no cases if the writers fail: this one fails instead.
    @Test func writersMadeEveryDatabase() throws {
        let expected = try KeePassFixtures.expected()
        #expect(expected.databases.count == 5)
        #expect(Set(expected.databases.map(\.writer)) == ["pykeepass", "keepassxc-cli"])
        #expect(Set(expected.databases.map(\.version)) == [3, 4])
    }

    /// A database opened with a key file, as the writers made it.
    struct KeyFileDatabase: Decodable, CustomTestStringConvertible {
        let file: String
        let keyfile: String
        let password: String?
        let writer: String
        let credentials: [KeePassFixtures.ExpectedCredential]
        let problems: [ExpectedProblem]

        var testDescription: String { "\(file) with \(keyfile) (\(writer))" }
    }

    static var keyFileDatabases: [KeyFileDatabase] {
        struct Listing: Decodable { let keyfile_databases: [KeyFileDatabase] }
        do {
            let url = try KeePassFixtures.made.get().appendingPathComponent("expected.json")
            return try JSONDecoder().decode(Listing.self, from: Data(contentsOf: url)).keyfile_databases
        } catch {
            Issue.record("KeePass key file fixtures: \(error)")
            return []
        }
    }

    @Test func writersMadeEveryKeyFileDatabase() {
        #expect(Self.keyFileDatabases.count == 6)
        #expect(Set(Self.keyFileDatabases.map(\.writer)) == ["pykeepass", "keepassxc-cli"])
    }

    /// KeePassXC's XML 2.0 key files (with a password, and alone) and pykeepass's XML 1.0, hex, 32-byte and hashed
    /// ones open their databases; attached files are named as left out; a missing or wrong part is named as such.
    @Test(arguments: Self.keyFileDatabases)
    func keyFiles(_ database: KeyFileDatabase) throws {
        let data = try KeePassFixtures.bytes(database.file)
        let key = try KeePassFixtures.bytes(database.keyfile)
        let result = try KeePassImporter.read(data, password: database.password ?? "", keyFile: key)
        let credentials = result.items.compactMap { item -> Credential? in
            if case .credential(let credential) = item { return credential }
            return nil
        }
        #expect(credentials.map(\.name) == database.credentials.map(\.name))
        #expect(credentials.map(\.value) == database.credentials.map(\.value))
        #expect(result.problems.count == database.problems.count)
        for (problem, wanted) in zip(result.problems, database.problems) {
            #expect(problem.entry == wanted.entry && problem.reason.contains(wanted.reason), "\(problem)")
        }
        // The two pictures of pykeepass's entry: a card beside its credential, front and back as attached.
        if database.writer == "pykeepass" {
            let cards = result.items.enumerated().filter { if case .card = $0.element { return true } else { return false } }
            #expect(cards.count == 1)
            if let (index, _) = cards.first {
                #expect(result.photos[index]?[.front]?.starts(with: [0x89, 0x50, 0x4E, 0x47]) == true)
                #expect(result.photos[index]?[.back]?.starts(with: [0xFF, 0xD8, 0xFF]) == true)
            }
        }
        let other = Array("another key file".utf8)
        if let password = database.password {
            #expect(throws: KeePassCompositeKey(password: "", keyFile: nil).refused) { try KeePassImporter.read(data, password: password) }
            #expect(throws: KeePassCompositeKey(password: nil, keyFile: []).refused) { try KeePassImporter.read(data, password: "", keyFile: key) }
            #expect(throws: KeePassCompositeKey(password: "", keyFile: []).refused) { try KeePassImporter.read(data, password: password, keyFile: other) }
        } else {
            #expect(throws: KeePassCompositeKey(password: nil, keyFile: []).refused) { try KeePassImporter.read(data, password: "", keyFile: other) }
        }
    }

    @Test("key files are read as KeePass reads them: XML 1.0 and 2.0 (its check hash too), 32 bytes, 64 hex digits, else hashed")
    func keyFileKinds() throws {
        let key = Array(0..<32).map { UInt8($0) }
        let hex = key.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        let check = Array(SHA256.hash(data: key).prefix(4)).map { String(format: "%02X", $0) }.joined()
        #expect(try KeePassKeyFile.key(key) == key)
        #expect(try KeePassKeyFile.key(Array(hex.uppercased().utf8)) == key)
        #expect(
            try KeePassKeyFile.key(
                Array("<KeyFile><Meta><Version>1.00</Version></Meta><Key><Data>\(Data(key).base64EncodedString())</Data></Key></KeyFile>".utf8)) == key)
        let version2 = "<KeyFile><Meta><Version>2.0</Version></Meta><Key><Data Hash=\"\(check)\">\(hex.prefix(32)) \(hex.dropFirst(32))</Data></Key></KeyFile>"
        #expect(try KeePassKeyFile.key(Array(version2.utf8)) == key)
        #expect(throws: InteropError.malformedFile("the key file is damaged: its key does not match its check hash")) {
            try KeePassKeyFile.key(Array(version2.replacingOccurrences(of: check, with: "00000000").utf8))
        }
        let other = Array("<notes>a file that is not a key file</notes>".utf8)
        #expect(try KeePassKeyFile.key(other) == Array(SHA256.hash(data: other)))
        #expect(try KeePassKeyFile.key(Array(repeating: 0x41, count: 33)) == Array(SHA256.hash(data: Array(repeating: 0x41, count: 33))))
    }

    /// Each database, from either writer, imports as its script says: credentials with user name, URL, notes and
    /// other fields; tokens in every OTP form with codes from the RFC reference; notes; history, the recycle bin
    /// and nothing else left out; each bad entry a problem that names no secret.
    @Test(arguments: KeePassFixtures.databases)
    func importsDatabase(_ database: KeePassFixtures.Database) throws {
        let expected = try KeePassFixtures.expected()
        let result = try Self.read(database.file, password: expected.password)
        // KeePassXC hides KDBX 3.1's protected values with Salsa20, and every writer KDBX 4's with ChaCha20: both
        // streams are exercised by databases we did not write.
        let opened = try KeePassDatabase(KeePassFixtures.bytes(database.file), key: KeePassCompositeKey(password: expected.password, keyFile: nil))
        #expect(opened.innerStream.cipher == (database.version == 3 ? .salsa20 : .chaCha20))

        let credentials = result.items.compactMap { item -> Credential? in
            if case .credential(let credential) = item { return credential }
            return nil
        }
        #expect(credentials.count == database.credentials.count)
        for wanted in database.credentials {
            let credential = try #require(credentials.first { $0.name == wanted.name }, "\(wanted.name)")
            #expect(credential.value == wanted.value, "\(wanted.name): the password differs")
            #expect(credential.provider == wanted.provider, "\(wanted.name)")
            #expect(credential.tags == wanted.tags, "\(wanted.name)")
            #expect(credential.notes == wanted.notes, "\(wanted.name)")
            #expect(credential.username == wanted.username && credential.url == wanted.url, "\(wanted.name)")
        }
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: database.otp)
        let notes = result.items.compactMap { item -> Note? in
            if case .note(let note) = item { return note }
            return nil
        }
        #expect(notes.map(\.name) == database.notes.map(\.name))
        #expect(notes.map(\.text) == database.notes.map(\.text))
        // Attached pictures: a card without a barcode, its photos byte for byte as the writer attached them.
        let cards = result.items.enumerated().compactMap { index, item -> (Int, Card)? in
            if case .card(let card) = item { return (index, card) }
            return nil
        }
        let wantedCards = database.cards ?? []
        #expect(cards.map(\.1.name) == wantedCards.map(\.name))
        for ((index, card), wanted) in zip(cards, wantedCards) {
            #expect(card.symbology == nil && card.notes == wanted.notes && card.tags == wanted.tags, "\(card.name)")
            #expect(card.cardNumber == wanted.number && card.payloadText == wanted.number, "\(card.name)")
            #expect(result.photos[index]?[.front].map { Hex.encode($0) } == wanted.front, "\(card.name): front")
            #expect(result.photos[index]?[.back].map { Hex.encode($0) } == wanted.back, "\(card.name): back")
        }
        #expect(result.items.count == credentials.count + database.otp.count + notes.count + cards.count)
        OTPFixtures.check(result.problems, against: database.problems)
        for problem in result.problems {
            TokenFixtures.expectNoSecret(problem.description, password: expected.password)
            #expect(!problem.description.contains("4321"), "a protected field's value")
        }
    }

    @Test(arguments: KeePassFixtures.databases)
    func wrongOrMissingPassword(_ database: KeePassFixtures.Database) throws {
        let data = try KeePassFixtures.bytes(database.file)
        #expect(throws: InteropError.passwordRequired) { try KeePassImporter.read(data, password: nil) }
        #expect(throws: KeePassCompositeKey(password: "x", keyFile: nil).refused) { try KeePassImporter.read(data, password: "not the password") }
    }

    /// A file cut anywhere is refused with a clear error (never a crash or a partial import); cut inside the block
    /// stream, it says so.
    @Test(arguments: KeePassFixtures.databases)
    func truncatedDatabase(_ database: KeePassFixtures.Database) throws {
        let expected = try KeePassFixtures.expected()
        let data = try KeePassFixtures.bytes(database.file)
        do {
            _ = try KeePassImporter.read(Array(data.dropLast(3)), password: expected.password)
            Issue.record("a truncated database imported")
        } catch {
            #expect(error.description.contains("cut short (truncated file)"), "\(error)")
        }
        for length in stride(from: 0, to: data.count, by: max(1, data.count / 23)) {
            #expect(throws: InteropError.self) { try KeePassImporter.read(Array(data.prefix(length)), password: expected.password) }
        }
    }

    /// One changed byte in a KDBX 4 payload block fails that block's HMAC; in the header, the header's hash.
    @Test func blockHMACMismatchAndDamagedHeader() throws {
        let expected = try KeePassFixtures.expected()
        for database in expected.databases where database.version == 4 {
            let data = try KeePassFixtures.bytes(database.file)
            var altered = data
            // The last block is the empty end block (32-byte HMAC, zero length): the byte before it is block 0's.
            altered[data.count - 37] ^= 0x01
            #expect(throws: InteropError.malformedFile("payload block 0 fails its HMAC check (damaged or altered)")) {
                try KeePassImporter.read(altered, password: expected.password)
            }
            var header = data
            header[20] ^= 0x01
            #expect(throws: InteropError.malformedFile("the header fails its SHA-256 check (damaged)")) {
                try KeePassImporter.read(header, password: expected.password)
            }
        }
    }

    /// Absurd KDF costs in a header whose hash is right are refused before any work (no memory allocated, no round
    /// run: each answer comes back at once).
    @Test func absurdKDFParametersAreRefusedBeforeWork() throws {
        let expected = try KeePassFixtures.expected()
        let argon = try KeePassFixtures.bytes("pykeepass_aes_argon2d.kdbx")
        let aes = try KeePassFixtures.bytes("pykeepass_aes_aeskdf_plain.kdbx")
        let hostile: [(String, [UInt8])] = [
            ("1 TiB of memory", try KeePassFixtures.settingKDFParameter(argon, key: "M", type: 0x05, value: 1 << 40)),
            ("2^63 passes", try KeePassFixtures.settingKDFParameter(argon, key: "I", type: 0x05, value: 1 << 63)),
            ("33 passes", try KeePassFixtures.settingKDFParameter(argon, key: "I", type: 0x05, value: 33)),
            ("2^32-1 lanes", try KeePassFixtures.settingKDFParameter(argon, key: "P", type: 0x04, value: 0xFFFF_FFFF)),
            (
                "1 GiB × 32 passes",
                try KeePassFixtures.settingKDFParameter(
                    try KeePassFixtures.settingKDFParameter(argon, key: "M", type: 0x05, value: 1 << 30),
                    key: "I", type: 0x05, value: 32)
            ),
            ("2^64-1 AES rounds", try KeePassFixtures.settingKDFParameter(aes, key: "R", type: 0x05, value: .max)),
            ("200,000,001 AES rounds", try KeePassFixtures.settingKDFParameter(aes, key: "R", type: 0x05, value: 200_000_001)),
        ]
        for (label, data) in hostile {
            do {
                _ = try KeePassImporter.read(data, password: expected.password)
                Issue.record("\(label): imported")
            } catch {
                guard case .kdfParametersOutOfBounds = error else {
                    Issue.record("\(label): \(error)")
                    continue
                }
            }
        }
        // Argon2 version 0x10 (KeePass reads it; KeePassXC writes 0x13 only) is refused by name.
        let old = try KeePassFixtures.settingKDFParameter(argon, key: "V", type: 0x04, value: 0x10)
        #expect(throws: InteropError.unsupportedVersion("Argon2 version 0x10 (only 0x13 is read)")) {
            try KeePassImporter.read(old, password: expected.password)
        }
        // Within the caps, an edited cost is simply another key: the header HMAC says the password is wrong.
        let other = try KeePassFixtures.settingKDFParameter(argon, key: "I", type: 0x05, value: 3)
        #expect(throws: KeePassCompositeKey(password: "x", keyFile: nil).refused) { try KeePassImporter.read(other, password: expected.password) }
    }

    @Test func otherVersionsAndFilesAreRefused() throws {
        let data = try KeePassFixtures.bytes("pykeepass_aes_argon2d.kdbx")
        var kdb = data
        kdb[4] = 0x65  // KeePass 1.x .kdb
        #expect(throws: InteropError.unsupportedVersion("KeePass signature b54bfb65 (only KDBX 3.1 and 4 are read)")) {
            try KeePassImporter.read(kdb, password: "x")
        }
        var version2 = data
        version2[10] = 2
        #expect(throws: InteropError.unsupportedVersion("KDBX 2.0 (only KDBX 3.1 and 4 are read)")) {
            try KeePassImporter.read(version2, password: "x")
        }
        for text in ["", "{}", "otpauth://totp/a?secret=JBSWY3DPEHPK3PXP"] {
            #expect(throws: InteropError.malformedFile("not a KeePass database (signature)")) {
                try KeePassImporter.read(Array(text.utf8), password: "x")
            }
        }
        #expect(throws: InteropError.tooLarge(limit: importSizeLimit)) {
            try KeePassImporter.read(data + [UInt8](repeating: 0, count: importSizeLimit), password: "x")
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func garbageAfterTheSignatureIsRefused(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let data: [UInt8] = [0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5, 0x00, 0x00, 0x04, 0x00] + random.bytes(2048)
        TokenFixtures.expectRejectedOrEmpty { () throws(InteropError) in try KeePassImporter.read(data, password: "x") }
    }

    // MARK: Entry conversion

    @Test(arguments: [
        ("otpauth://totp/Acme:dora?secret=JBSWY3DPEHPK3PXP&issuer=Acme&digits=8", "Acme", "dora", 8),
        ("key=JBSWY3DPEHPK3PXP&step=30&size=7&otpHashMode=Sha256", "Title", "user", 7),
    ])
    func otpFieldForms(_ otp: String, issuer: String, account: String, digits: Int) throws {
        let entry = KeePassEntry(fields: [
            .init(key: "Title", value: "Title", protected: false), .init(key: "UserName", value: "user", protected: false),
            .init(key: "otp", value: otp, protected: true),
        ])
        let parsed = try #require(try KeePassImporter.otp(entry))
        #expect(parsed.parameters.digits == digits)
        #expect(parsed.parameters.secret == (try Base32.decode("JBSWY3DPEHPK3PXP")))
        #expect((parsed.issuer ?? "Title") == issuer && (parsed.account ?? "user") == account)
    }

    /// The payload's gzip stops at its cap (a 65 MiB payload in a 65 KiB member), and reads what Python's gzip wrote.
    @Test func gzipPayloadIsCapped() throws {
        let script = "import gzip, sys; sys.stdout.buffer.write(gzip.compress(b'a' * int(sys.argv[1])))"
        func gzipped(_ count: Int) throws -> [UInt8] {
            let result = try TestSupport.run("/usr/bin/python3", ["-c", script, String(count)])
            try #require(result.status == 0)
            return result.standardOutput
        }
        let bomb = try gzipped(KeePassDatabase.Limits.payloadByteCount + (1 << 20))
        #expect(bomb.count < importSizeLimit / 100)
        #expect(throws: InteropError.tooLarge(limit: KeePassDatabase.Limits.payloadByteCount)) { try KeePassDatabase.gunzip(bomb) }
        #expect(try KeePassDatabase.gunzip(try gzipped(200_000)) == [UInt8](repeating: UInt8(ascii: "a"), count: 200_000))
        #expect(throws: InteropError.malformedFile("the gzip payload is damaged or cut short")) {
            try KeePassDatabase.gunzip(Array(try gzipped(200_000).dropLast(12)))
        }
        // KDBX 3.1's attached files, each gzip under the cap, are capped together too: three members of 30 MiB each
        // (90 KiB of XML) are refused rather than inflated into memory.
        let member = Data(try gzipped(30 << 20)).base64EncodedString()
        let binaries = (0..<3).map { "<Binary ID=\"\($0)\" Compressed=\"True\">\(member)</Binary>" }.joined()
        let xml = Array("<KeePassFile><Meta><Binaries>\(binaries)</Binaries></Meta><Root><Group><Name>R</Name></Group></Root></KeePassFile>".utf8)
        #expect(xml.count < importSizeLimit / 10)
        #expect(throws: InteropError.tooLarge(limit: KeePassDatabase.Limits.payloadByteCount)) {
            try KeePassXMLReader.entries(xml, stream: KeePassInnerStream(cipher: .chaCha20, key: [1]))
        }
    }

    @Test func xmlWithADTDIsRefused() {
        let xml = Array("<?xml version=\"1.0\"?><!DOCTYPE x [<!ENTITY a \"aaaa\">]><KeePassFile/>".utf8)
        #expect(throws: InteropError.malformedFile("the database XML declares a DTD")) {
            try KeePassXMLReader.entries(xml, stream: KeePassInnerStream(cipher: .chaCha20, key: [1]))
        }
        // The byte scan sees only UTF-8; the reader refuses a DTD in any other encoding.
        let utf16 = utf16LittleEndian("<!DOCTYPE x [<!ENTITY a \"aaaa\">]><KeePassFile>&a;</KeePassFile>")
        #expect(throws: InteropError.malformedFile("the database XML declares a DTD")) {
            try KeePassXMLReader.entries(utf16, stream: KeePassInnerStream(cipher: .chaCha20, key: [1]))
        }
        #expect(throws: InteropError.malformedFile("the database XML is not a KeePassFile")) {
            try KeePassXMLReader.entries(Array("<Other/>".utf8), stream: KeePassInnerStream(cipher: .chaCha20, key: [1]))
        }
        #expect(throws: InteropError.malformedFile("the database XML is not well-formed")) {
            try KeePassXMLReader.entries(Array("<KeePassFile><Root>".utf8), stream: KeePassInnerStream(cipher: .chaCha20, key: [1]))
        }
    }
}

/// The primitives KeePass needs beyond swift-crypto's AEADs, against PyCryptodome (Tests/oracles/keepass_oracle.py).
@Suite(.offCooperativePool) struct KeePassCryptoTests {
    static func oracle(_ requests: [[String: Any]]) throws -> [[UInt8]] {
        let script = TestSupport.repositoryRoot.appendingPathComponent("Tests/oracles/keepass_oracle.py").path
        let result = try TestSupport.run("/usr/bin/python3", [script], input: Array(try JSONSerialization.data(withJSONObject: requests)))
        try #require(result.status == 0, "keepass_oracle.py: \(result.stderr.suffix(400))")
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput)) as? [String])
        return answers.map { hex in
            stride(from: 0, to: hex.count, by: 2).map {
                UInt8(hex.dropFirst($0).prefix(2), radix: 16) ?? 0
            }
        }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func streamsMatchPyCryptodome() throws {
        var random = SplitMix64(seed: 0x4B44)
        let innerKey = random.bytes(64)
        // Lengths that cross block and refill boundaries, consumed in pieces as protected values are.
        let pieces = [1, 7, 64, 100, 4096, 5000]
        let total = pieces.reduce(0, +)
        let data = random.bytes(total)
        for cipher in [KeePassInnerStream.Cipher.salsa20, .chaCha20] {
            var stream = KeePassInnerStream(cipher: cipher, key: innerKey)
            var ours: [UInt8] = []
            var offset = 0
            for piece in pieces {
                ours += try stream.apply(Array(data[offset..<(offset + piece)]))
                offset += piece
            }
            let request: [String: Any]
            switch cipher {
            case .salsa20:
                request = ["op": "salsa20", "key": Self.hex(Array(SHA256.hash(data: innerKey))), "nonce": "e830094b97205d2a", "data": Self.hex(data)]
            case .chaCha20:
                let digest = Array(SHA512.hash(data: innerKey))
                request = ["op": "chacha20", "key": Self.hex(Array(digest[0..<32])), "nonce": Self.hex(Array(digest[32..<44])), "data": Self.hex(data)]
            }
            #expect(try Self.oracle([request]) == [ours], "\(cipher)")
        }
        // The outer ChaCha20 from a non-zero counter, as a refill does.
        let key = random.bytes(32), nonce = random.bytes(12)
        let ours = try KeePassCrypto.chaCha20(data, key: key, nonce: nonce, counter: 5)
        #expect(try Self.oracle([["op": "chacha20", "key": Self.hex(key), "nonce": Self.hex(nonce), "data": Self.hex(data), "counter": 5]]) == [ours])
    }

    @Test(arguments: [UInt64(1), 2, 1000, 65_536, 65_537, 200_003])
    func aesKDFMatchesRoundByRound(rounds: UInt64) throws {
        var random = SplitMix64(seed: rounds)
        let key = random.bytes(32), seed = random.bytes(32)
        let ours = try KeePassCrypto.aesKDF(key, seed: seed, rounds: rounds)
        #expect(try Self.oracle([["op": "aes-kdf", "key": Self.hex(seed), "data": Self.hex(key), "rounds": rounds]]) == [ours])
    }

    @Test(arguments: [0, 1, 15, 16, 100])
    func aesCBCOpensPyCryptodomesCiphertext(length: Int) throws {
        var random = SplitMix64(seed: UInt64(length))
        let key = random.bytes(32), iv = random.bytes(16), plain = random.bytes(length)
        let sealed = try Self.oracle([["op": "aes-cbc-encrypt", "key": Self.hex(key), "nonce": Self.hex(iv), "data": Self.hex(plain)]])
        #expect(try KeePassCrypto.decryptAESCBC(sealed[0], key: key, iv: iv) == plain)
        #expect(throws: InteropError.self) { try KeePassCrypto.decryptAESCBC(sealed[0], key: random.bytes(32), iv: iv) }
    }
}
