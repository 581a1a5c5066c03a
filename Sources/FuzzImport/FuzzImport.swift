import CofferInterop

#if !FUZZING
import FuzzSupport
#endif

/// Outcome counts for the replay summary.
struct Tally {
    var imported = 0
    var rejected = 0
}

/// Feeds one input to one importer.
///
/// Byte 0 picks the importer from ``ImportFormats/all``; the rest is the file. A file that asks for a password is
/// read again with the password "x", so the decryption paths see hostile input too. Importers must return a result
/// or throw an `InteropError` (the typed `throws` guarantees nothing else escapes); a trap is a finding.
func exercise(_ input: [UInt8], tally: inout Tally) {
    let importers = ImportFormats.all
    guard let selector = input.first, !importers.isEmpty else { return }
    let importer = importers[Int(selector) % importers.count]
    let file = Array(input.dropFirst())
    for password in [nil, "x"] as [String?] {
        do {
            let result = try importer.read(file, password: password)
            for problem in result.problems {
                precondition(!problem.entry.isEmpty && !problem.reason.isEmpty, "a problem must name entry and reason")
            }
            tally.imported += 1
            return
        } catch .passwordRequired where password == nil {
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
