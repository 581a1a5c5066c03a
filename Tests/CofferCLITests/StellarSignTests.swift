import CofferTestSupport
import Foundation
import Testing

/// `coffer sign KEY --stellar-tx`: envelopes stellar-sdk built (Tests/oracles/stellar_oracle.py) are shown, signed
/// with the PIN-held key, and verified by stellar-sdk; what must not be signed is refused before any PIN is taken.
@Suite("coffer sign --stellar-tx")
struct StellarSignTests {
    struct Envelope {
        let name: String
        let network: String
        let base64: String
        let signer: String
    }

    static func envelopes(seed: inout String) throws -> [Envelope] {
        let answers = try TestSupport.pythonOracle("stellar_oracle.py", input: [["op": "envelopes"]])
        let entries = try #require(answers.first as? [[String: Any]])
        seed = entries.first?["signer_seed"] as? String ?? ""
        return entries.map {
            Envelope(
                name: $0["name"] as? String ?? "", network: $0["network_passphrase"] as? String ?? "",
                base64: $0["envelope"] as? String ?? "", signer: $0["signer"] as? String ?? "")
        }
    }

    static func verify(_ envelope: Envelope, signed: String) throws -> [String: Any] {
        let answers = try TestSupport.pythonOracle(
            "stellar_oracle.py",
            input: [
                [
                    "op": "verify", "envelope": envelope.base64, "signed": signed, "public_key": envelope.signer,
                    "network_passphrase": envelope.network,
                ]
            ])
        return try #require(answers.first as? [String: Any])
    }

    @Test("each envelope is summarised on standard error, signed after the PIN, and verified by stellar-sdk")
    func signsWhatItShows() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        var seed = ""
        let envelopes = try Self.envelopes(seed: &seed)
        try cli.ok(["add", "key", "Wallet", "--stellar-seed"], input: "\(seed)\n246810\n")
        for envelope in envelopes {
            let file = cli.home + "/tx-\(envelope.name.filter(\.isLetter)).xdr"
            try Data(envelope.base64.utf8).write(to: URL(fileURLWithPath: file))
            let network = envelope.network.hasPrefix("Public") ? ["--network", "public"] : ["--network-passphrase", envelope.network]
            let arguments = ["sign", "Wallet", "--stellar-tx", file, "--yes"] + network
            if envelope.name == "another account's" {
                let refused = try cli.run(arguments, input: "246810\n")
                #expect(refused.status == 65 && refused.stderr.contains("is not the transaction's source or any operation's: not signed"))
                #expect(refused.stderr.contains("--cosign") && refused.stdout.isEmpty)
                let cosigned = try cli.ok(arguments + ["--cosign"], input: "246810\n")
                #expect(cosigned.stderr.contains("Co-signing"))
                let verdict = try Self.verify(envelope, signed: cosigned.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
                #expect(verdict["valid"] as? Bool == true && verdict["unchanged"] as? Bool == true)
                continue
            }
            let signed = try cli.ok(arguments, input: "246810\n")
            #expect(signed.stderr.contains("Network:    \(envelope.network)"), "\(envelope.name)")
            #expect(signed.stderr.contains("Operations:"), "\(envelope.name)")
            let verdict = try Self.verify(envelope, signed: signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(verdict["valid"] as? Bool == true, "\(envelope.name)")
            #expect(verdict["unchanged"] as? Bool == true, "\(envelope.name)")
            if envelope.name == "every operation" {
                #expect(signed.stderr.contains("Payment 25.5000000 XLM to "))
                #expect(signed.stderr.contains("Memo:       text \"invoice 1042\""))
                // Signed once already by this key: refused, and no PIN is spent.
                let again = cli.home + "/again.xdr"
                try Data(signed.stdout.utf8).write(to: URL(fileURLWithPath: again))
                let twice = try cli.run(["sign", "Wallet", "--stellar-tx", again, "--yes", "--network", "testnet"], input: "000000\n")
                #expect(twice.status == 65 && twice.stderr.contains("already carries a signature by"))
                // The summary for scripts.
                let json = try cli.ok(arguments + ["--json"], input: "246810\n")
                let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
                let summary = try #require(object["summary"] as? [String: Any])
                #expect((summary["operations"] as? [Any])?.count == 34)
                #expect(object["public_key"] as? String == envelope.signer && object["signed_envelope"] is String)
            }
        }
        // No wrong PIN was counted on the way: the next wrong one leaves nine tries.
        let file = cli.home + "/tx-everyoperation.xdr"
        let wrong = try cli.run(["sign", "Wallet", "--stellar-tx", file, "--yes", "--network", "testnet"], input: "111111\n")
        #expect(wrong.status == 77 && wrong.stderr.contains("9 attempts left"))
    }

    @Test("bad input is one error and no PIN is taken: a bad envelope, no network, no --yes without a terminal, a raw key")
    func refusals() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        var seed = ""
        let envelopes = try Self.envelopes(seed: &seed)
        try cli.ok(["add", "key", "Wallet", "--stellar-seed"], input: "\(seed)\n246810\n")
        let file = cli.home + "/tx.xdr"
        try Data(envelopes[0].base64.utf8).write(to: URL(fileURLWithPath: file))
        let truncated = cli.home + "/truncated.xdr"
        try Data(String(envelopes[0].base64.prefix(200)).utf8).write(to: URL(fileURLWithPath: truncated))
        let cases: [([String], String, Int32, String)] = [
            (["--stellar-tx", truncated, "--yes", "--network", "testnet"], "111111\n", 65, "coffer: error: Stellar transaction: the envelope ends inside"),
            (["--stellar-tx", "-", "--yes", "--network", "testnet"], "111111\nnot base64!\n", 65, "the envelope is not base64 XDR"),
            (["--stellar-tx", file, "--yes"], "111111\n", 64, "--network"),
            (["--stellar-tx", file, "--yes", "--network", "moonnet"], "111111\n", 64, "public, testnet or futurenet"),
            (["--stellar-tx", file, "--network", "testnet"], "111111\n", 64, "pass --yes to sign it"),
            (["--stellar-tx", cli.home + "/missing.xdr", "--yes", "--network", "testnet"], "111111\n", 66, "missing.xdr"),
        ]
        for (arguments, input, status, message) in cases {
            let result = try cli.run(["sign", "Wallet"] + arguments, input: input)
            #expect(result.status == status && result.stderr.contains(message), "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        // Standard input: the PIN's line, then the envelope.
        let piped = try cli.ok(["sign", "Wallet", "--stellar-tx", "-", "--yes", "--network", "testnet"], input: "246810\n\(envelopes[0].base64)\n")
        #expect(try Self.verify(envelopes[0], signed: piped.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["valid"] as? Bool == true)
        // A raw Ed25519 key cannot sign a Stellar transaction.
        try cli.ok(["add", "key", "Raw"], input: String(repeating: "11", count: 32) + "\n246810\n")
        let raw = try cli.run(["sign", "Raw", "--stellar-tx", file, "--yes", "--network", "testnet"], input: "246810\n")
        #expect(raw.status == 64 && raw.stderr.contains("signs with a Stellar key"))
    }
}
