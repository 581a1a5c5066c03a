import CofferCrypto
import CofferStellar

#if !FUZZING
import FuzzSupport
#endif

/// Outcome counts for the replay summary.
struct Tally {
    var decoded = 0
    var rejected = 0
}

/// Feeds one input to the Stellar envelope reader, which reads whatever a user is asked to sign (a hostile dApp's
/// transaction). It must decode or throw a `StellarError` (typed throws); what decodes must summarise, hash, and take
/// a signature that reads back as the same transaction with one more signature. A trap is a finding.
func exercise(_ input: [UInt8], tally: inout Tally) {
    do {
        let envelope = try StellarEnvelope.read(input)
        let network = StellarNetwork.testnet
        precondition(!StellarSummary.lines(envelope, network: network).isEmpty)
        _ = StellarSummary.json(envelope, network: network).text()
        let hash = envelope.hash(on: network)
        precondition(hash.count == 32)
        if envelope.signatureCount < 20 {
            let signed = try StellarEnvelope.read(try envelope.adding(signature: [UInt8](repeating: 7, count: 64), by: hash))
            precondition(signed.signatureCount == envelope.signatureCount + 1, "a signature added is not read back")
            precondition(
                signed.transaction == envelope.transaction && signed.hash(on: network) == hash,
                "adding a signature changed what is signed")
        }
        tally.decoded += 1
    } catch {
        precondition(!error.description.isEmpty, "an error must name its rule")
        tally.rejected += 1
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
/// Without libFuzzer: replays corpus files and directories given as arguments.
@main
struct FuzzStellarXDRReplay {
    static func main() throws {
        var tally = Tally()
        try FuzzReplay.corpus(CommandLine.arguments.dropFirst()) { exercise($0, tally: &tally) }
        print("FuzzStellarXDR replay: \(tally.decoded) decoded, \(tally.rejected) rejected with a clear error")
    }
}
#endif
