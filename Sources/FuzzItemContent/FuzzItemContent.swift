import CofferModel
import Foundation

#if !FUZZING
import FuzzSupport
#endif

/// Outcome counts for the replay summary.
struct Tally {
    var decoded = 0
    var rejected = 0
}

/// Feeds one input to the item-content decoder (docs/FORMAT.md §5), the reader of every opened box.
///
/// Byte 0 picks the kind (the one a box's associated data binds); the rest is the plaintext. The decoder must return
/// content or throw a `ModelError` (its typed `throws` guarantees nothing else escapes); a trap is a finding. Content
/// that decodes must encode again: a listing re-seals what it read when an item is edited. Byte 0 = 0xFF feeds the
/// rest to the photo part decoder (§5b) instead, whose parts must encode back to the same bytes.
func exercise(_ input: [UInt8], tally: inout Tally) {
    guard let selector = input.first else { return }
    if selector == 0xFF {
        do {
            let part = try PhotoPart(decoding: input.dropFirst())
            precondition(part.encoded == Array(input.dropFirst()), "a photo part encodes back to its bytes")
            tally.decoded += 1
        } catch {
            precondition(!error.description.isEmpty, "an error must name its rule")
            tally.rejected += 1
        }
        return
    }
    let kind = ItemKind.allCases[Int(selector) % ItemKind.allCases.count]
    do {
        let decoded = try ItemContentCoding.decode(Data(input.dropFirst()), kind: kind)
        _ = try ItemContentCoding.encode(decoded.content, createdAt: decoded.createdAt)
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
/// Without libFuzzer: replays corpus files and directories given as arguments, or, with none, mutations of a small
/// valid content of each kind.
@main
struct FuzzItemContentReplay {
    static func main() throws {
        var tally = Tally()
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.isEmpty {
            var bytes = FuzzBytes(seed: 0xC0_47E7)
            // Version 1, creation time, a name field, a text field and a nested group: each kind reads tags 16 up.
            let seed: [UInt8] = [
                1, 1, 8, 0, 0, 1, 0xA1, 0xEE, 0x56, 0x5E, 0, 16, 3, 0x42, 0x6F, 0x62, 17, 2, 0x71, 0x72,
                18, 6, 1, 1, 0x6B, 2, 1, 0x76,
            ]
            // A photo part: version, card id, side, index 0 of 1, three image bytes.
            let part: [UInt8] = [0xFF, 1] + Array(repeating: 0xC0, count: 16) + [1, 0, 0, 0, 1, 0x89, 0x50, 0x4E]
            for round in 0..<4000 {
                var input = round % 8 == 7 ? part : [UInt8(round % ItemKind.allCases.count)] + seed
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
        print("FuzzItemContent replay: \(tally.decoded) decoded, \(tally.rejected) rejected with a clear error")
    }
}
#endif
