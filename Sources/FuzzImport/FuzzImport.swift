import CofferInterop

#if !FUZZING
import FuzzSupport
#endif

/// Outcome counts for the replay summary.
struct Tally {
    var imported = 0
    var rejected = 0
}

/// The passwords of the encrypted fixtures (`PASSWORD` in Tests/CofferInteropTests/Fixtures/*/make_*.py), which
/// scripts/fuzz-seeds.py also writes its seeds under, at the key-derivation floor of fuzzing builds (`FuzzingFloor`):
/// with them an input gets past the password to the parsers behind it (KeePass XML, gzip, the inner streams, every
/// encrypted export's inner format).
/// An importer's own come first: some formats take a wrong password for entries that do not open rather than refuse
/// the file.
let fixturePasswords: [String: [String]] = [
    "aegis": ["coffer test passphrase"], "2fas": ["correct horse 2fas"], "andotp": ["andOTP backup pw"],
    "authenticator-plus": ["plus backup pw 42"], "authy": ["authy backup pw ✓"], "bitwarden-json": ["bitwarden export pw ✓"],
    "ente": ["ente export pw ✓"], "freeotp": ["freeotp backup pw ✓"], "keepass": ["keepass fixture pw ✓"],
    "proton": ["proton export pw ✓"], "steam": ["steam desktop pw ✓"], "stratum": ["stratum backup pw ✓"],
    "totp-authenticator": ["totp authenticator pw ✓", "TotpAuthenticator"],
]

/// Feeds one input to one importer.
///
/// Byte 0 picks the importer from ``ImportFormats/all``; the rest is the file. A file that asks for a password is
/// read again with each fixture password until one is right, so the decryption paths see hostile input, and the
/// plaintext behind them does too. Importers must return a result or throw an `InteropError` (the typed `throws`
/// guarantees nothing else escapes); a trap is a finding.
func exercise(_ input: [UInt8], tally: inout Tally) {
    let importers = ImportFormats.all
    guard let selector = input.first, !importers.isEmpty else { return }
    let importer = importers[Int(selector) % importers.count]
    let file = Array(input.dropFirst())
    let own = fixturePasswords[importer.formatName] ?? []
    let others = fixturePasswords.values.joined().filter { !own.contains($0) }.sorted()
    let passwords: [String?] = [nil] + own + others
    for (index, password) in passwords.enumerated() {
        let more = index + 1 < passwords.count
        do {
            let result = try importer.read(file, password: password)
            for problem in result.problems {
                precondition(!problem.entry.isEmpty && !problem.reason.isEmpty, "a problem must name entry and reason")
            }
            tally.imported += 1
            return
        } catch .passwordRequired where password == nil {
            continue
        } catch .wrongPassword where more {
            continue
        } catch {
            precondition(!error.description.isEmpty, "an error must name its rule")
            tally.rejected += 1
            return
        }
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var tally = Tally()
    exercise(Array(UnsafeBufferPointer(start: data, count: size)), tally: &tally)
    return 0
}
#else
/// Without libFuzzer: replays corpus files and directories given as arguments, or, with none, a fixed set of
/// generated inputs for every importer (random bytes, and JSON-shaped and URI-shaped text).
@main
struct FuzzImportReplay {
    static func main() throws {
        var tally = Tally()
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.isEmpty {
            var bytes = FuzzBytes(seed: 0x1AB0)
            func next() -> UInt8 { bytes.next() }
            let seeds: [[UInt8]] = [
                [], Array("{}".utf8), Array(#"{"tokens":[{"secret":[1,2,3]}]}"#.utf8),
                Array(#"{"version":1,"entries":[{"content":{"uri":"steam://AAAA"}}]}"#.utf8),
                Array(#"{"schemaVersion":4,"services":[{"secret":"JBSWY3DP"}]}"#.utf8),
                Array("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&codeDisplay=%7B%7D\n".utf8),
                // KeePass (a KDBX 4 signature and header start), Stratum, Steam, Duo, FidMe and Ente's encrypted export.
                [0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5, 0x00, 0x00, 0x04, 0x00, 0x02, 0x10, 0x00, 0x00, 0x00]
                    + [UInt8](repeating: 0x31, count: 16) + [0x00, 0x04, 0x00, 0x00, 0x00, 0x0D, 0x0A, 0x0D, 0x0A],
                Array("AUTHENTICATORPRO".utf8) + [UInt8](repeating: 7, count: 60),
                Array(#"{"shared_secret":"AAAAAAAAAAAAAAAAAAAAAAAAAAA=","account_name":"a","revocation_code":"R1"}"#.utf8),
                Array(#"[{"name":"a:b","otpGenerator":{"otpSecret":"JBSWY3DPEHPK3PXP","counter":1}}]"#.utf8),
                Array("Retailer;Program;Reference\r\nA;\"p;q\";123\r\n".utf8),
                Array(
                    #"{"version":1,"kdfParams":{"memLimit":8192,"opsLimit":1,"salt":"AAAAAAAAAAAAAAAAAAAAAA=="},"encryptedData":"AAAAAAAAAAAAAAAAAAAAAAAA","encryptionNonce":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}"#
                        .utf8),
            ]
            let count = ImportFormats.all.count
            for round in 0..<2000 {
                var input = [UInt8(round % max(count, 1))] + seeds[round % seeds.count]
                // Mutate the seed: flip, insert or truncate, so parsers see near-valid input.
                for _ in 0..<Int(next() % 8) {
                    switch next() % 3 {
                    case 0 where input.count > 1: input[1 + Int(next()) % (input.count - 1)] = next()
                    case 1: input.insert(next(), at: 1 + Int(next()) % input.count)
                    default: if input.count > 2 { input.removeLast() }
                    }
                }
                exercise(input, tally: &tally)
            }
        } else {
            try FuzzReplay.corpus(arguments) { exercise($0, tally: &tally) }
        }
        print("FuzzImport replay: \(tally.imported) imported, \(tally.rejected) rejected with a clear error")
    }
}
#endif
