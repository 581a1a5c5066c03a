import CofferCrypto
import CofferModel
import CofferTestSupport
import Crypto
import Foundation
import Testing

@testable import CofferStellar

/// Envelopes built by Python's stellar-sdk (Tests/oracles/stellar_oracle.py), one of every operation Coffer shows,
/// with the summary each must give made there from the values handed to stellar-sdk.
enum StellarOracle {
    struct Case: @unchecked Sendable {
        let name: String
        let network: StellarNetwork
        let envelope: String
        let summary: [String: Any]
        let signerSeed: String
    }

    static func cases() throws -> [Case] {
        let answers = try TestSupport.pythonOracle("stellar_oracle.py", input: [["op": "envelopes"]])
        return try #require(answers.first as? [[String: Any]]).map { entry in
            Case(
                name: entry["name"] as? String ?? "", network: StellarNetwork(passphrase: entry["network_passphrase"] as? String ?? ""),
                envelope: entry["envelope"] as? String ?? "", summary: entry["summary"] as? [String: Any] ?? [:],
                signerSeed: entry["signer_seed"] as? String ?? "")
        }
    }

    static func verify(envelope: String, signed: String, publicKey: String, network: StellarNetwork) throws -> [String: Any] {
        let answers = try TestSupport.pythonOracle(
            "stellar_oracle.py",
            input: [
                [
                    "op": "verify", "envelope": envelope, "signed": signed, "public_key": publicKey,
                    "network_passphrase": network.passphrase,
                ]
            ])
        return try #require(answers.first as? [String: Any])
    }

    /// Canonical JSON text (sorted keys), so two trees compare as strings and a difference is readable.
    static func canonical(_ value: Any) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
        let reparsed = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        return String(decoding: try JSONSerialization.data(withJSONObject: reparsed, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self)
    }
}

/// Writing hostile XDR by hand.
struct XDRWriter {
    var bytes: [UInt8] = []
    mutating func u32(_ value: UInt32) { bytes += (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
    mutating func u64(_ value: UInt64) { bytes += (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }
    mutating func key(_ fill: UInt8 = 1) { bytes += [UInt8](repeating: fill, count: 32) }

    /// A v1 envelope's header: source, fee, sequence, no preconditions, no memo; `operations` is the count written.
    static func v1(operations: UInt32, body: (inout XDRWriter) -> Void, trailer: Bool = true) -> [UInt8] {
        var writer = XDRWriter()
        writer.u32(2)
        writer.u32(0)
        writer.key()
        writer.u32(100)
        writer.u64(1)
        writer.u32(0)
        writer.u32(0)
        writer.u32(operations)
        body(&writer)
        if trailer {
            writer.u32(0)  // extension
            writer.u32(0)  // no signatures
        }
        return writer.bytes
    }
}

@Suite("Stellar transactions")
struct StellarTransactionTests {
    @Test("every envelope stellar-sdk builds is shown field for field as it was given to stellar-sdk, hash included")
    func summariesMatchTheOracle() throws {
        let cases = try StellarOracle.cases()
        #expect(cases.count >= 6)
        for entry in cases {
            let envelope = try StellarEnvelope.read(base64: entry.envelope)
            // Through the text the command prints, read back by JSONSerialization: the writer is checked with the summary.
            let printed = StellarSummary.json(envelope, network: entry.network).text(pretty: true)
            let mine = try StellarOracle.canonical(try JSONSerialization.jsonObject(with: Data(printed.utf8)))
            let theirs = try StellarOracle.canonical(entry.summary)
            #expect(mine == theirs, "\(entry.name)")
        }
    }

    @Test("the text summary names every operation in words and escapes what is not printable")
    func textSummary() throws {
        let cases = try StellarOracle.cases()
        let every = try #require(cases.first { $0.name == "every operation" })
        let lines = StellarSummary.lines(try StellarEnvelope.read(base64: every.envelope), network: every.network)
        let text = lines.joined(separator: "\n")
        #expect(lines.first == "Network:    Test SDF Network ; September 2015")
        #expect(text.contains("Memo:       text \"invoice 1042\""))
        #expect(text.contains("Valid:      until 2026-12-01 12:00:00 UTC"))
        #expect(text.contains("Sequence:   4,294,967,297"))
        #expect(text.contains("2. Payment 25.5000000 XLM to GDWUSKGGFDI4FRXK5EBTRECZSVQSSWJHHJOGH6JWG3AUMFFMQ435DIAG"))
        #expect(text.contains("Change trust USDC:"))
        #expect(text.contains("limit 1,000.0000000"))
        #expect(text.contains("Change trust: remove the trust line to pool shares of XLM and USDC:"))
        #expect(text.contains("clear flags auth revocable, set flags auth required, master weight 1, low threshold 1"))
        #expect(text.contains("Set options (nothing changed)"))
        #expect(text.contains("predicate (not before 2027-01-15 08:00:00 UTC and (within 3,600 s of the balance's creation or at any time))"))
        let operations = lines.filter { $0.hasPrefix("  ") }
        #expect(operations.count == 34)
        // A memo with a terminal escape and a quote is shown escaped.
        #expect(StellarSummary.quoted(Array("a\u{1B}[2J\"b\u{7F}".utf8)) == "\"a\\x1b[2J\\\"b\\x7f\"")
    }

    @Test("a signature added for the oracle's network verifies with stellar-sdk, and nothing else changes")
    func signatureVerifies() throws {
        for entry in try StellarOracle.cases() {
            let envelope = try StellarEnvelope.read(base64: entry.envelope)
            let seed = try StellarStrKey.decodeSeed(entry.signerSeed)
            let key = try seed.withUnsafeBytes { try Curve25519.Signing.PrivateKey(rawRepresentation: Array($0)) }
            let publicKey = Array(key.publicKey.rawRepresentation)
            let signature = Array(try key.signature(for: envelope.hash(on: entry.network)))
            let signed = Data(try envelope.adding(signature: signature, by: publicKey)).base64EncodedString()
            let verdict = try StellarOracle.verify(
                envelope: entry.envelope, signed: signed,
                publicKey: StellarStrKey.encode(publicKey, version: .accountID), network: entry.network)
            #expect(verdict["valid"] as? Bool == true, "\(entry.name)")
            #expect(verdict["unchanged"] as? Bool == true, "\(entry.name)")
            #expect(verdict["signatures"] as? Int == envelope.signatureCount + 1, "\(entry.name)")
            #expect(try StellarEnvelope.read(base64: signed).isSigned(by: publicKey, on: entry.network))
            #expect(!(try StellarEnvelope.read(base64: signed).isSigned(by: publicKey, on: .public)) || entry.network == .public)
            #expect(envelope.namedSigners.contains(publicKey) == (entry.name != "another account's"), "\(entry.name)")
        }
    }

    @Test(
        "hostile envelopes are one clear error each",
        arguments: [
            ("truncated", Array(XDRWriter.v1(operations: 1, body: { $0.u32(0) }, trailer: false).dropLast(2)), "ends inside"),
            ("10,000 operations", XDRWriter.v1(operations: 10_000, body: { _ in }), "the operations: 10000 is more than 100"),
            ("an operation count past the bytes", XDRWriter.v1(operations: 90, body: { _ in }), "ends inside the operations"),
            (
                "an unknown operation",
                XDRWriter.v1(
                    operations: 1,
                    body: {
                        $0.u32(0); $0.u32(99)
                    }), "unknown operation type 99"
            ),
            (
                "a smart-contract call",
                XDRWriter.v1(
                    operations: 1,
                    body: {
                        $0.u32(0); $0.u32(24); $0.u32(0)
                    }),
                "Invoke host function (a smart-contract call), which Coffer cannot show in full"
            ),
            ("an unknown envelope type", [0, 0, 0, 9] + [UInt8](repeating: 0, count: 60), "unknown envelope type 9"),
            ("trailing bytes", XDRWriter.v1(operations: 0, body: { _ in }) + [0, 0, 0, 0], "4 bytes follow the envelope"),
            (
                "a data value longer than 64",
                XDRWriter.v1(
                    operations: 1,
                    body: {
                        $0.u32(0); $0.u32(10); $0.u32(1); $0.bytes += [65, 0, 0, 0]; $0.u32(1); $0.u32(65)
                    }),
                "operation 1's data value: 65 is more than 64"
            ),
            ("a boolean that is 2", XDRWriter.v1(operations: 1, body: { $0.u32(2) }), "operation 1's source is not canonical XDR"),
            (
                "nonzero padding",
                XDRWriter.v1(
                    operations: 1,
                    body: {
                        $0.u32(0); $0.u32(10); $0.u32(1); $0.bytes += [65, 1, 0, 0]; $0.u32(0)
                    }),
                "operation 1's data name is not canonical XDR"
            ),
            (
                "claim predicates nested too deep",
                XDRWriter.v1(
                    operations: 1,
                    body: { writer in
                        writer.u32(0); writer.u32(14); writer.u32(0); writer.u64(1); writer.u32(1)
                        writer.u32(0); writer.u32(0); writer.key(2)
                        for _ in 0..<6 { writer.u32(3); writer.u32(1) }
                        writer.u32(0)
                    }), "claim predicates are nested more than 4 deep"
            ),
        ] as [(String, [UInt8], String)])
    func hostile(_ name: String, _ bytes: [UInt8], _ expected: String) {
        #expect(throws: StellarError.self, "\(name)") { try StellarEnvelope.read(bytes) }
        do {
            _ = try StellarEnvelope.read(bytes)
        } catch {
            #expect(error.description.contains(expected), "\(name): \(error.description)")
        }
    }

    @Test("every prefix of every oracle envelope is refused, never a crash, and not base64 is one error")
    func prefixes() throws {
        for entry in try StellarOracle.cases() {
            let bytes = Array(try #require(Data(base64Encoded: entry.envelope)))
            for length in 0..<bytes.count {
                #expect(throws: StellarError.self) { try StellarEnvelope.read(Array(bytes[..<length])) }
            }
        }
        #expect(throws: StellarError.notBase64) { try StellarEnvelope.read(base64: "not an envelope!") }
        #expect(throws: StellarError.self) { try StellarEnvelope.read(base64: String(repeating: "A", count: 400_000)) }
    }

    @Test(
        "amounts, times and the network names",
        arguments: [
            (255_000_000 as Int64, "25.5000000"), (1, "0.0000001"), (0, "0.0000000"), (Int64.max, "922,337,203,685.4775807"),
            (-10_000_000, "-1.0000000"),
        ])
    func amounts(_ stroops: Int64, _ text: String) {
        #expect(StellarSummary.amount(stroops) == text)
    }

    @Test("times and networks")
    func timesAndNetworks() {
        #expect(StellarSummary.time(0) == "1970-01-01 00:00:00 UTC")
        #expect(StellarSummary.time(1_796_126_400) == "2026-12-01 12:00:00 UTC")
        #expect(StellarSummary.time(951_782_400) == "2000-02-29 00:00:00 UTC")
        #expect(StellarSummary.time(UInt64.max) == "Unix time 18446744073709551615")
        #expect(StellarNetwork(name: "testnet") == .testnet)
        #expect(StellarNetwork(name: "PUBLIC") == .public)
        #expect(StellarNetwork(name: "moonnet") == nil)
    }
}
