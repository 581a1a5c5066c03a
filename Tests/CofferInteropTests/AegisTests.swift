import CofferCrypto
import CofferInterop
import CofferModel
import CofferOTP
import CofferTestSupport
import Foundation
import Testing

@Suite(.offCooperativePool) struct AegisTests {
    struct Expected: Decodable {
        struct Vault: Decodable {
            let items: [ExpectedOTP]
            let problems: [ExpectedProblem]
        }

        let password: String
        let encrypted_v3: Vault
        let encrypted_v1: Vault
        let plain_v2: Vault

        func vault(_ name: String) -> Vault {
            switch name {
            case "encrypted_v3": encrypted_v3
            case "encrypted_v1": encrypted_v1
            default: plain_v2
            }
        }
    }

    @Test(arguments: ["encrypted_v3", "encrypted_v1", "plain_v2"])
    func importsFixtureWithCodesFromPython(_ name: String) throws {
        let expected = try OTPFixtures.expected("aegis", as: Expected.self)
        let password = name.hasPrefix("encrypted") ? expected.password : nil
        let result = try AegisImporter.read(OTPFixtures.bytes("aegis", "\(name).json"), password: password)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.vault(name).items)
        OTPFixtures.check(result.problems, against: expected.vault(name).problems)
    }

    @Test func refusesTheWrongPassword() throws {
        let data = try OTPFixtures.bytes("aegis", "encrypted_v3.json")
        #expect(throws: InteropError.wrongPassword) { try AegisImporter.read(data, password: "coffer test passphrase ") }
        #expect(throws: InteropError.wrongPassword) { try AegisImporter.read(data, password: "") }
        #expect(throws: InteropError.passwordRequired) { try AegisImporter.read(data, password: nil) }
    }

    static func sampleItems() throws -> [OTPItem] {
        [
            try OTPFixtures.item("GitHub", "alice@example.com", secretSeed: 21, tags: ["Work"], notes: "note ✓"),
            try OTPFixtures.item(
                "Example", "bob", secretSeed: 22, length: 32, algorithm: .sha256, digits: 8,
                kind: .totp(period: 20), tags: ["Work", "Personal"]),
            try OTPFixtures.item(
                "Big Corp", "carol:admin", secretSeed: 23, length: 64, algorithm: .sha512, digits: 7,
                kind: .totp(period: 50)),
            try OTPFixtures.item("Counter", "dave", secretSeed: 24, algorithm: .sha256, kind: .hotp(counter: UInt64.max)),
            try OTPFixtures.item("Steam", "erin", secretSeed: 25, kind: .steam, tags: ["Personal"]),
        ]
    }

    @Test func roundTripsThroughExport() throws {
        let items = try Self.sampleItems()
        let vault = try AegisExporter.export(items, password: "round trip ✓", random: SystemRandom())
        let result = try AegisImporter.read(Array(vault), password: "round trip ✓")
        #expect(result.problems.isEmpty)
        #expect(OTPFixtures.otpItems(result) == items)
        #expect(throws: InteropError.wrongPassword) { try AegisImporter.read(Array(vault), password: "round trip") }
    }

    /// Python `cryptography` decrypts what Coffer wrote: the format, KDF parameters and nonces are Aegis'.
    @Test func pythonDecryptsTheExport() throws {
        let items = try Self.sampleItems()
        let vault = try AegisExporter.export(items, password: "oracle pass", random: SystemRandom())
        let script = OTPFixtures.root.appendingPathComponent("aegis/decrypt_aegis.py").path
        let python = ProcessInfo.processInfo.environment["COFFER_PYTHON"] ?? "python3"
        let run = try TestSupport.run("/usr/bin/env", [python, script, "oracle pass"], input: Array(vault))
        try #require(
            run.status == 0,
            "python3 with the cryptography package is needed (pip install cryptography): \(run.stderr.suffix(300))")
        let output = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput)) as? [String: Any])
        let content = try #require(output["content"] as? [String: Any])
        #expect(content["version"] as? Int == 3)
        let entries = try #require(content["entries"] as? [[String: Any]])
        #expect(entries.map { $0["type"] as? String } == ["totp", "totp", "totp", "hotp", "steam"])
        let secrets = entries.compactMap { ($0["info"] as? [String: Any])?["secret"] as? String }
        #expect(secrets == items.map { Base32.encode($0.parameters.secret) })
        let groups = try #require(content["groups"] as? [[String: Any]])
        #expect(groups.compactMap { $0["name"] as? String } == ["Work", "Personal"])
        let slots = try #require(output["slots"] as? [[String: Any]])
        #expect(slots.count == 1)
        let slot = try #require(slots.first)
        #expect(slot["type"] as? Int == 1)
        #expect(slot["n"] as? Int == 32768 && slot["r"] as? Int == 8 && slot["p"] as? Int == 1)
        #expect((slot["salt"] as? String)?.count == 64)
        let slotNonce = try #require((slot["key_params"] as? [String: Any])?["nonce"] as? String)
        let dbNonce = try #require((output["params"] as? [String: Any])?["nonce"] as? String)
        #expect(slotNonce.count == 24 && dbNonce.count == 24 && slotNonce != dbNonce)
    }

    @Test func exportsUseFreshRandomness() throws {
        let items = try Self.sampleItems()
        let first = try AegisExporter.export(items, password: "p", random: SystemRandom())
        let second = try AegisExporter.export(items, password: "p", random: SystemRandom())
        func header(_ data: Data) throws -> [String] {
            let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            let header = try #require(root["header"] as? [String: Any])
            let slot = try #require((header["slots"] as? [[String: Any]])?.first)
            let keyParams = try #require(slot["key_params"] as? [String: Any])
            let params = try #require(header["params"] as? [String: Any])
            return [slot["salt"], keyParams["nonce"], params["nonce"], slot["key"]].compactMap { $0 as? String }
        }
        let a = try header(first)
        let b = try header(second)
        #expect(a.count == 4 && b.count == 4)
        for (x, y) in zip(a, b) { #expect(x != y) }
    }

    // MARK: Hostile and damaged files

    /// The encrypted fixture as a mutable JSON tree.
    static func fixtureTree() throws -> [String: Any] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(OTPFixtures.bytes("aegis", "encrypted_v3.json"))) as? [String: Any])
    }

    static func data(_ tree: [String: Any]) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: tree))
    }

    /// The fixture with the password slot's field `name` set to `value`.
    static func withPasswordSlot(_ name: String, _ value: Any) throws -> [UInt8] {
        var tree = try fixtureTree()
        var header = try #require(tree["header"] as? [String: Any])
        var slots = try #require(header["slots"] as? [[String: Any]])
        slots[1][name] = value
        header["slots"] = slots
        tree["header"] = header
        return try data(tree)
    }

    @Test(arguments: [1 << 30, 1 << 21, 3, 0, -32768])
    func refusesHugeOrInvalidScryptN(_ n: Int) throws {
        let data = try Self.withPasswordSlot("n", n)
        #expect {
            try AegisImporter.read(data, password: "coffer test passphrase")
        } throws: { error in
            guard case .kdfParametersOutOfBounds = error as? InteropError else { return false }
            return true
        }
    }

    /// Every password slot is tried, so a file of many slots ran scrypt once per slot with no bound in all.
    @Test("the scrypt work of all password slots together is bounded, and checked before any runs")
    func boundsTheWorkOfAllSlots() throws {
        var tree = try Self.fixtureTree()
        var header = try #require(tree["header"] as? [String: Any])
        let slots = try #require(header["slots"] as? [[String: Any]])
        let password = try #require(slots.first { ($0["type"] as? Int) == 1 })
        // 65 slots like Aegis's own (N·r·p = 2^18 each) are more than the 2^24 allowed; the first is broken, so a
        // slot run before the sum was checked would show as a different error.
        var broken = password
        broken["n"] = 3
        header["slots"] = [broken] + Array(repeating: password, count: 64)
        tree["header"] = header
        #expect(throws: InteropError.kdfParametersOutOfBounds("scrypt N must be a power of two from 2 to 1048576")) {
            try AegisImporter.read(try Self.data(tree), password: "coffer test passphrase")
        }
        header["slots"] = Array(repeating: password, count: 65)
        tree["header"] = header
        #expect(throws: InteropError.kdfParametersOutOfBounds("the 65 password slots ask for more scrypt work than 64 of Aegis's own slots")) {
            try AegisImporter.read(try Self.data(tree), password: "coffer test passphrase")
        }
        // Two slots, the right one second: both within the bound, and the file opens.
        var wrong = password
        wrong["salt"] = String(repeating: "ab", count: 32)
        header["slots"] = [wrong, password]
        tree["header"] = header
        #expect(!(try AegisImporter.read(try Self.data(tree), password: "coffer test passphrase")).items.isEmpty)
    }

    @Test(arguments: [("r", 0), ("r", 1000), ("p", 0), ("p", 17), ("p", 100_000)])
    func refusesOutOfBoundsScryptRAndP(_ name: String, _ value: Int) throws {
        let data = try Self.withPasswordSlot(name, value)
        #expect {
            try AegisImporter.read(data, password: "coffer test passphrase")
        } throws: { error in
            guard case .kdfParametersOutOfBounds = error as? InteropError else { return false }
            return true
        }
    }

    @Test(arguments: ["key", "salt"])
    func refusesNonHexSlotFields(_ name: String) throws {
        let data = try Self.withPasswordSlot(name, "zz")
        #expect {
            try AegisImporter.read(data, password: "coffer test passphrase")
        } throws: { error in
            guard case .malformedFile = error as? InteropError else { return false }
            return true
        }
    }

    @Test func aFlippedBitInTheContentIsDamage() throws {
        var tree = try Self.fixtureTree()
        let dbText = try #require(tree["db"] as? String)
        var db = Array(try #require(Data(base64Encoded: dbText)))
        db[db.count / 2] ^= 0x01
        tree["db"] = Data(db).base64EncodedString()
        #expect {
            try AegisImporter.read(Self.data(tree), password: "coffer test passphrase")
        } throws: { error in
            guard case .malformedFile = error as? InteropError else { return false }
            return true
        }
    }

    @Test func aFlippedBitInTheWrappedKeyIsAWrongPassword() throws {
        let tree = try Self.fixtureTree()
        let header = try #require(tree["header"] as? [String: Any])
        let slots = try #require(header["slots"] as? [[String: Any]])
        var key = try #require(slots[1]["key"] as? String)
        key = (key.first == "0" ? "1" : "0") + key.dropFirst()
        let data = try Self.withPasswordSlot("key", key)
        #expect(throws: InteropError.wrongPassword) { try AegisImporter.read(data, password: "coffer test passphrase") }
    }

    static let wrongTypes: [String] = [
        "[]", "null", "\"vault\"", "{}",
        #"{"version": "1", "header": {"slots": null}, "db": {"version": 3, "entries": []}}"#,
        #"{"version": true, "header": {"slots": null}, "db": {"version": 3, "entries": []}}"#,
        #"{"version": 1, "header": [], "db": {}}"#,
        #"{"version": 1, "header": {"slots": "none"}, "db": {}}"#,
        #"{"version": 1, "header": {"slots": null}, "db": "text"}"#,
        #"{"version": 1, "header": {"slots": null}, "db": {"version": 3, "entries": {}}}"#,
        #"{"version": 1, "header": {"slots": null}, "db": {"version": 4, "entries": []}}"#,
        #"{"version": 2, "header": {"slots": null}, "db": {"version": 3, "entries": []}}"#,
        #"{"version": 1, "header": {"slots": [], "params": {"nonce": "00", "tag": "00"}}, "db": "AAAA"}"#,
        #"{"version": 1, "header": {"slots": [{"type": 1}], "params": null}, "db": "AAAA"}"#,
        #"{"version": 1, "header": {"slots": [{"type": 1, "n": 32768}], "params": {"nonce": "000000000000000000000000", "tag": "00000000000000000000000000000000"}}, "db": "AAAA"}"#,
    ]

    @Test(arguments: wrongTypes)
    func wrongJSONTypesAreErrors(_ text: String) throws {
        #expect(throws: InteropError.self) { try AegisImporter.read(Array(text.utf8), password: "x") }
    }

    @Test func badEntriesArePerEntryProblems() throws {
        let text = #"""
            {"version": 1, "header": {"slots": null, "params": null}, "db": {"version": 3, "groups": "bad", "entries": [
              7,
              {"type": "totp", "name": "a", "issuer": "Bool Digits", "info": {"secret": "JBSWY3DPEHPK3PXPJBSWY3DP", "digits": true}},
              {"type": "hotp", "name": "b", "issuer": "No Counter", "info": {"secret": "JBSWY3DPEHPK3PXPJBSWY3DP"}},
              {"type": "hotp", "name": "c", "issuer": "Negative", "info": {"secret": "JBSWY3DPEHPK3PXPJBSWY3DP", "counter": -1}},
              {"type": "totp", "name": "d", "issuer": "Zero Period", "info": {"secret": "JBSWY3DPEHPK3PXPJBSWY3DP", "period": 0}},
              {"type": "totp", "name": "e", "issuer": "MD5", "info": {"secret": "JBSWY3DPEHPK3PXPJBSWY3DP", "algo": "MD5"}},
              {"type": "steam", "name": "f", "issuer": "Steam 60", "info": {"secret": "JBSWY3DPEHPK3PXPJBSWY3DP", "period": 60}},
              {"type": "totp", "name": "g", "issuer": "Short", "info": {"secret": "JBSWY3DP"}},
              {"type": "totp", "name": "h", "issuer": "", "info": []},
              {"type": "totp", "name": "ok", "issuer": "Fine", "info": {"secret": "JBSWY3DPEHPK3PXPJBSWY3DP", "digits": 6.0}}
            ]}}
            """#
        let result = try AegisImporter.read(Array(text.utf8), password: nil)
        #expect(OTPFixtures.otpItems(result).map(\.issuer) == ["Fine"])
        #expect(
            result.problems.map(\.entry) == [
                "entry 1", "Bool Digits (a)", "No Counter (b)", "Negative (c)", "Zero Period (d)", "MD5 (e)",
                "Steam 60 (f)", "Short (g)", "h",
            ])
        #expect(!OTPFixtures.problems(result.problems, leak: ["JBSWY3DPEHPK3PXPJBSWY3DP", "JBSWY3DP"]))
    }

    @Test func truncatedFilesAreErrors() throws {
        let data = try OTPFixtures.bytes("aegis", "encrypted_v3.json")
        for length in stride(from: 0, to: data.count, by: 97) {
            #expect(throws: InteropError.self) {
                try AegisImporter.read(Array(data[..<length]), password: "coffer test passphrase")
            }
        }
    }

    @Test func refusesOversizedFiles() {
        let data = [UInt8](repeating: 0x20, count: importSizeLimit + 1)
        #expect(throws: InteropError.tooLarge(limit: importSizeLimit)) { try AegisImporter.read(data, password: nil) }
    }
}
