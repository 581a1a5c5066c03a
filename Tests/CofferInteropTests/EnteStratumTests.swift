import CofferModel
import CofferOTP
import CofferTestSupport
import Foundation
import Testing

@testable import CofferInterop

@Suite(.offCooperativePool) struct EnteEncryptedTests {
    struct Expected: Decodable {
        let password: String
        let items: [ExpectedOTP]
        let problemLines: [Int]
    }

    /// Sealed by libsodium itself (make_ente_encrypted.py): the same tokens and codes as the plain export.
    @Test func importsEncryptedExport() throws {
        let expected = try OTPFixtures.expected("ente", as: Expected.self)
        let data = try OTPFixtures.bytes("ente", "encrypted.json")
        let result = try EnteAuthImporter.read(data, password: expected.password)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
        #expect(result.problems.map(\.entry) == expected.problemLines.map { "line \($0)" })
        #expect(throws: InteropError.passwordRequired) { try EnteAuthImporter.read(data, password: nil) }
        #expect(throws: InteropError.wrongPassword) { try EnteAuthImporter.read(data, password: "ente export pw") }
    }

    @Test func refusesDamagedOrCostlyExports() throws {
        let expected = try OTPFixtures.expected("ente", as: Expected.self)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(OTPFixtures.bytes("ente", "encrypted.json"))) as? [String: Any])
        func read(_ change: (inout [String: Any]) -> Void) throws -> ImportResult {
            var changed = document
            change(&changed)
            return try EnteAuthImporter.read(Array(try JSONSerialization.data(withJSONObject: changed)), password: expected.password)
        }
        func kdf(_ key: String, _ value: Any) -> (inout [String: Any]) -> Void {
            { document in
                var parameters = document["kdfParams"] as? [String: Any] ?? [:]
                parameters[key] = value
                document["kdfParams"] = parameters
            }
        }
        // A cost out of bounds is refused by name, before any work.
        for change in [kdf("memLimit", 1 << 42), kdf("opsLimit", 1000), kdf("memLimit", 1025)] {
            #expect {
                try read(change)
            } throws: { error in
                guard case .kdfParametersOutOfBounds = error as? InteropError else { return false }
                return true
            }
        }
        #expect(throws: InteropError.unsupportedVersion("Ente export 2")) { try read { $0["version"] = 2 } }
        let sealedText = try #require(document["encryptedData"] as? String)
        var sealed = try #require(Data(base64Encoded: sealedText))
        sealed[5] ^= 0x01
        #expect(throws: InteropError.wrongPassword) { try read { $0["encryptedData"] = sealed.base64EncodedString() } }
        #expect(throws: InteropError.self) { try read { $0["encryptionNonce"] = "AAAA" } }
    }
}

/// HChaCha20, Poly1305 and the secretstream's first message against the draft and RFC vectors and libsodium.
@Suite(.offCooperativePool) struct SodiumSecretStreamTests {
    static func oracle(_ requests: [[String: Any]]) throws -> [[UInt8]] {
        let script = TestSupport.repositoryRoot.appendingPathComponent("Tests/oracles/sodium_oracle.py").path
        let result = try TestSupport.run("/usr/bin/python3", [script], input: Array(try JSONSerialization.data(withJSONObject: requests)))
        try #require(result.status == 0, "sodium_oracle.py: \(result.stderr.suffix(400))")
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput)) as? [String])
        return answers.map { hex in stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16) ?? 0 } }
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16) ?? 0 }
    }

    @Test func publishedVectors() {
        // draft-irtf-cfrg-xchacha-03 §2.2.1.
        #expect(
            SodiumSecretStream.hChaCha20(
                key: Array(0..<32), nonce: Self.bytes("000000090000004a0000000031415927"))
                == Self.bytes("82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc"))
        // RFC 8439 §2.5.2.
        #expect(
            SodiumSecretStream.poly1305(
                Array("Cryptographic Forum Research Group".utf8),
                key: Self.bytes("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b"))
                == Self.bytes("a8061dc1305136c6c22b8baf0c0127a9"))
    }

    @Test func poly1305AndHChaChaMatchLibsodium() throws {
        var random = SplitMix64(seed: 0x501)
        var requests: [[String: Any]] = []
        var ours: [[UInt8]] = []
        for length in [0, 1, 15, 16, 17, 63, 64, 1000] {
            let key = random.bytes(32), message = random.bytes(length)
            requests.append(["op": "poly1305", "key": Self.hex(key), "data": Self.hex(message)])
            ours.append(SodiumSecretStream.poly1305(message, key: key))
        }
        // Keys near the modulus: all-ones r and s exercise the final reduction and carry.
        let edge = [UInt8](repeating: 0xFF, count: 32), block = [UInt8](repeating: 0xFF, count: 48)
        requests.append(["op": "poly1305", "key": Self.hex(edge), "data": Self.hex(block)])
        ours.append(SodiumSecretStream.poly1305(block, key: edge))
        for _ in 0..<3 {
            let key = random.bytes(32), nonce = random.bytes(16)
            requests.append(["op": "hchacha20", "key": Self.hex(key), "data": Self.hex(nonce)])
            ours.append(SodiumSecretStream.hChaCha20(key: key, nonce: nonce))
        }
        #expect(try Self.oracle(requests) == ours)
    }

    @Test(arguments: [0, 1, 100, 5000])
    func opensWhatLibsodiumSeals(length: Int) throws {
        var random = SplitMix64(seed: UInt64(length) + 7)
        let key = random.bytes(32), message = random.bytes(length)
        let sealed = try Self.oracle([["op": "secretstream", "key": Self.hex(key), "data": Self.hex(message), "tag": 3]])[0]
        let header = Array(sealed[..<24]), body = Array(sealed[24...])
        let opened = try #require(try SodiumSecretStream.openFirstMessage(body, key: key, header: header))
        #expect(opened.tag == SodiumSecretStream.finalTag && opened.message == message)
        // Any changed byte, or another key, fails the tag.
        for index in [0, body.count / 2, body.count - 1] {
            var altered = body
            altered[index] ^= 0x80
            #expect(try SodiumSecretStream.openFirstMessage(altered, key: key, header: header) == nil)
        }
        #expect(try SodiumSecretStream.openFirstMessage(body, key: random.bytes(32), header: header) == nil)
    }
}

@Suite(.offCooperativePool) struct StratumTests {
    struct Expected: Decodable {
        let password: String
        let items: [ExpectedOTP]
        let problems: [ExpectedProblem]
    }

    /// Plain, Argon2id/AES-GCM and legacy PBKDF2/AES-CBC backups, written by Python's `cryptography`.
    @Test(arguments: ["backup.json", "backup.authpro", "backup_legacy.authpro"])
    func importsBackup(_ file: String) throws {
        let expected = try OTPFixtures.expected("stratum", as: Expected.self)
        let data = try OTPFixtures.bytes("stratum", file)
        let result = try StratumImporter.read(data, password: expected.password)
        try OTPFixtures.check(OTPFixtures.otpItems(result), against: expected.items)
        OTPFixtures.check(result.problems, against: expected.problems)
        if file != "backup.json" {
            #expect(throws: InteropError.passwordRequired) { try StratumImporter.read(data, password: nil) }
            #expect(throws: InteropError.wrongPassword) { try StratumImporter.read(data, password: "stratum backup pw") }
            #expect(throws: InteropError.self) { try StratumImporter.read(Array(data.prefix(40)), password: expected.password) }
        }
    }

    @Test(arguments: ["", "{}", "[]", "AUTHENTICATORPRO", #"{"Authenticators": 3}"#])
    func notStratumBackups(_ text: String) {
        #expect(throws: InteropError.self) { try StratumImporter.read(Array(text.utf8), password: "x") }
    }
}

/// A backup cut short or altered fails its check under the right password too: its start, deciphered, tells damage
/// from a wrong password (issue 32), and a wrong password is still called one.
@Suite(.offCooperativePool) struct DamagedBackupTests {
    @Test("andOTP: a cut or altered backup is damaged under its password, and a wrong password stays wrong")
    func andOTP() throws {
        for file in ["encrypted.json.aes", "old-format.json.aes"] {
            let data = try OTPFixtures.bytes("andotp", file)
            for damaged in [
                Array(data.dropLast(10)), Array(data.dropLast(1)), data.enumerated().map { $0.offset == data.count - 3 ? $0.element ^ 1 : $0.element },
            ] {
                #expect(throws: OTPImport.damagedBackup, "\(file)") { try AndOTPImporter.read(damaged, password: "andOTP backup pw") }
                #expect(throws: InteropError.wrongPassword, "\(file)") { try AndOTPImporter.read(damaged, password: "andOTP backup pw!") }
            }
        }
    }

    @Test("Stratum: a cut backup, GCM or CBC, is damaged under its password; a wrong password stays wrong")
    func stratum() throws {
        let password = "stratum backup pw ✓"
        let strong = try OTPFixtures.bytes("stratum", "backup.authpro")
        #expect(throws: OTPImport.damagedBackup) { try StratumImporter.read(Array(strong.dropLast(20)), password: password) }
        #expect(throws: InteropError.wrongPassword) { try StratumImporter.read(Array(strong.dropLast(20)), password: "other") }
        let legacy = try OTPFixtures.bytes("stratum", "backup_legacy.authpro")
        // Cut at a block boundary (a cut elsewhere is refused as cut short before any key is derived).
        #expect(throws: OTPImport.damagedBackup) { try StratumImporter.read(Array(legacy.dropLast(16)), password: password) }
        #expect(throws: InteropError.wrongPassword) { try StratumImporter.read(Array(legacy.dropLast(16)), password: "other") }
    }

    @Test("the first block of a box under the right key reads as JSON; under a wrong one it does not")
    func firstBlock() {
        #expect(OTPImport.startsLikeJSON(Array("[{\"secret\":\"ABCD".utf8)))
        #expect(OTPImport.startsLikeJSON(Array("  {\"Authenticat\n".utf8)))
        #expect(!OTPImport.startsLikeJSON(Array("{\"secret\":\"AB\u{1}D".utf8)))
        #expect(!OTPImport.startsLikeJSON(Array("hello, world 1234".utf8.prefix(16))))
        #expect(!OTPImport.startsLikeJSON(nil))
    }
}
