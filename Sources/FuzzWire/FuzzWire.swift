import CofferCrypto
import CofferSyncAPI
import Foundation

#if !FUZZING
import FuzzSupport
#endif

/// Outcome counts for the replay summary.
struct Tally {
    var decoded = 0
    var rejected = 0
}

/// The wire's JSON bodies: what coffer-server decodes from requests, then what the sync client decodes from answers.
let bodies: [(name: String, decode: @Sendable (Data) throws -> Void)] = [
    ("PreloginRequest", { _ = try WireJSON.decoder().decode(PreloginRequest.self, from: $0) }),
    ("RegisterRequest", { checkSlot(try WireJSON.decoder().decode(RegisterRequest.self, from: $0).slot) }),
    ("LoginRequest", { _ = try WireJSON.decoder().decode(LoginRequest.self, from: $0) }),
    ("RefreshRequest", { _ = try WireJSON.decoder().decode(RefreshRequest.self, from: $0) }),
    ("PassphraseChangeRequest", { checkSlot(try WireJSON.decoder().decode(PassphraseChangeRequest.self, from: $0).slot) }),
    ("AppleAuthRequest", { _ = try WireJSON.decoder().decode(AppleAuthRequest.self, from: $0) }),
    (
        "PushRequest",
        { body in
            let request = try WireJSON.decoder().decode(PushRequest.self, from: body)
            request.items.forEach { checkItem($0.item) }
            (request.chain ?? []).forEach(checkManifest)
            request.manifest.map(checkManifest)
        }
    ),
    ("PreloginResponse", { checkKDF(try WireJSON.decoder().decode(PreloginResponse.self, from: $0).kdf) }),
    ("AuthResponse", { _ = try WireJSON.decoder().decode(AuthResponse.self, from: $0) }),
    ("AccountResponse", { _ = try WireJSON.decoder().decode(AccountResponse.self, from: $0) }),
    ("PushResponse", { _ = try WireJSON.decoder().decode(PushResponse.self, from: $0) }),
    (
        "ChangesResponse",
        { body in
            // The client's direct reading accepts only what JSONDecoder reads, and reads it the same way.
            if let read = ChangesResponse(canonicalJSON: body) {
                let decoded = try? WireJSON.decoder().decode(ChangesResponse.self, from: body)
                precondition(
                    decoded.map { $0.items == read.items && $0.cursor == read.cursor && $0.hasMore == read.hasMore && $0.head == read.head } == true,
                    "the direct reading of a changes page disagrees with JSONDecoder")
            }
            let page = try WireJSON.decoder().decode(ChangesResponse.self, from: body)
            page.items.forEach(checkItem)
            page.head.map(checkManifest)
        }
    ),
    ("ErrorBody", { try WireJSON.decoder().decode(ErrorBody.self, from: $0).details?.conflicts?.forEach(checkItem) }),
    ("ManifestsResponse", { try WireJSON.decoder().decode(ManifestsResponse.self, from: $0).manifests.forEach(checkManifest) }),
    (
        "Manifest",
        { body in
            let manifest = try Manifest(bytes: Array(body))
            // What a device computes from a parsed manifest before it trusts it.
            _ = (manifest.body, manifest.hash, manifest.fingerprint)
        }
    ),
]

/// A manifest from the other side is parsed (bounded) before anything reads it.
func checkManifest(_ text: String) {
    guard let manifest = try? Manifest(base64: text) else { return }
    _ = (manifest.hash, manifest.fingerprint)
}

/// KDF parameters from the other side go through the same bounds check both sides use before any work.
func checkKDF(_ parameters: KDFParameters) {
    _ = try? parameters.kdf(limits: .production)
}

func checkSlot(_ slot: WrappedSlot) {
    checkKDF(slot.kdf)
    _ = Data(base64Encoded: slot.salt)
    _ = Data(base64Encoded: slot.wrappedKey)
}

/// A decoded row is checked by the rules both sides apply before using it.
func checkItem(_ item: ItemRow) {
    _ = item.isWellFormed
    _ = item.leaf
}

/// Feeds one input to one body decoder: byte 0 picks the body type, the rest is the JSON. A decoder must return a
/// value or throw; a trap is a finding.
func exercise(_ input: [UInt8], tally: inout Tally) {
    guard let selector = input.first else { return }
    let body = bodies[Int(selector) % bodies.count]
    do {
        try body.decode(Data(input.dropFirst()))
        tally.decoded += 1
    } catch {
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
/// Without libFuzzer: replays corpus files and directories given as arguments, or, with none, mutations of a few
/// JSON shapes for every body type.
@main
struct FuzzWireReplay {
    static func main() throws {
        var tally = Tally()
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.isEmpty {
            var bytes = FuzzBytes(seed: 0x3A1E)
            let seeds: [[UInt8]] = [
                Array(#"{"email":"a@example.org"}"#.utf8),
                Array(#"{"kdf":{"algorithm":"scrypt","log_n":99,"r":0,"p":1},"salt":"AAAA"}"#.utf8),
                Array(
                    #"{"items":[{"id":"00000000-0000-4000-8000-000000000001","kind":"note","revision":1,"updated_at":0,"deleted":false,"box":"AAAA"}],"cursor":1,"has_more":false}"#
                        .utf8),
                Array(#"{"error":"conflict","message":"x","details":{"conflicts":[],"limit":1}}"#.utf8),
            ]
            for round in 0..<3000 {
                var input = [UInt8(round % bodies.count)] + seeds[round % seeds.count]
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
        print("FuzzWire replay: \(tally.decoded) decoded, \(tally.rejected) rejected")
    }
}
#endif
