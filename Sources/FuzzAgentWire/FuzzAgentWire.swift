import CofferAgentWire

#if !FUZZING
import FuzzSupport
#endif

/// Outcome counts for the replay summary.
struct Tally {
    var decoded = 0
    var rejected = 0
}

/// Feeds one input to the agent's request parser (docs/FORMAT.md §11), which reads bytes from any process of the
/// agent's user, and to the client's answer parser. Byte 0 picks which. A body must parse or throw an
/// `AgentWireError` (typed throws: nothing else escapes); a trap is a finding. What parses must encode back to the
/// same bytes: the format has one spelling per value.
func exercise(_ input: [UInt8], tally: inout Tally) {
    guard let selector = input.first else { return }
    let body = Array(input.dropFirst())
    do {
        if selector % 2 == 0 {
            let request = try AgentRequest(decoding: body)
            precondition(request.encoded() == body, "a request parsed from bytes it would not write")
        } else {
            let response = try AgentResponse(decoding: body)
            precondition(response.encoded() == body, "an answer parsed from bytes it would not write")
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
/// Without libFuzzer: replays corpus files and directories given as arguments, or, with none, mutations of valid
/// requests and answers.
@main
struct FuzzAgentWireReplay {
    static func main() throws {
        var tally = Tally()
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.isEmpty {
            var bytes = FuzzBytes(seed: 0xA6E_27)
            let seeds: [[UInt8]] = [
                [0] + AgentRequest.unlock(vault: "/v", passphrase: [1, 2]).encoded(),
                [0] + AgentRequest.codes(vault: "/v", query: "q", atMilliseconds: 1).encoded(),
                [1] + AgentResponse.failure(AgentFailure(.ambiguous, "m", candidates: [AgentCandidate(id: [1], kind: "k", name: "n")])).encoded(),
            ]
            for round in 0..<4000 {
                var input = seeds[round % seeds.count]
                for _ in 0..<Int(bytes.next() % 6) {
                    let position = 1 + Int(bytes.next()) % (input.count - 1)
                    switch bytes.next() % 3 {
                    case 0: input[position] = bytes.next()
                    case 1: input.insert(bytes.next(), at: position)
                    default: if input.count > 2 { input.remove(at: position) }
                    }
                }
                exercise(input, tally: &tally)
            }
        } else {
            try FuzzReplay.corpus(arguments) { exercise($0, tally: &tally) }
        }
        print("FuzzAgentWire replay: \(tally.decoded) decoded, \(tally.rejected) rejected with a clear error")
    }
}
#endif
