import CofferServer
import CofferServerTestSupport
import CofferSyncAPI
import CofferTestSupport
import Foundation
import HTTPTypes
import NIOCore
import Testing

/// Request decoding under hostile input, through the whole router: bearer headers (valid, truncated, altered,
/// garbage) and query parameters (numbers out of range, empty, repeated, percent-encoded bytes, long text) on every
/// endpoint that reads them. Every answer must be a client error or success with a JSON body, never a server error
/// or a crash; a finding fails the test with the request that caused it. The inputs come from a seeded generator:
/// `COFFER_FUZZ_SEED` replays a run, `COFFER_FUZZ_SECONDS` sets its length (default 10).
@Suite("Request decoding under hostile input")
struct RequestFuzzTests {
    static let endpoints: [(path: String, parameters: [String])] = [
        ("/v1/sync/changes", ["since", "limit"]),
        ("/v1/sync/manifests", ["after", "limit"]),
        ("/v1/account", []),
        ("/v1/cards", ["include_archived", "network_id", "tags"]),
        ("/v1/networks", ["search", "category", "limit", "offset"]),
        ("/v1/networks/costco/locations", ["limit", "offset"]),
        ("/v1/locations/nearby", ["lat", "lon", "radius", "network_id"]),
        ("/v1/places/tiles/9q8y", []),
        ("/v1/places/packs/9q", []),
        ("/v1/user/export", []),
    ]

    static let values = [
        "", "0", "1", "-1", "500", "1000", "1001", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "1e3", "0x10", "1.5", "NaN", "inf", "-0", "+1", " 1", "1 ", "true", "false", "TRUE", "yes", "37.7749",
        "-122.4194", "91", "-181", "%00", "%FF%FE", "%E2%80%AE", "%C3%A9", "a,b,,c", "costco", "%2F..%2F", "%0D%0A",
        String(repeating: "9", count: 400), String(repeating: "a", count: 5000),
    ]

    static func header(_ random: inout SplitMix64, token: String) -> String? {
        switch random.next() % 9 {
        case 0: return nil
        case 1: return "Bearer \(token)"
        case 2: return "bearer \(token)"
        case 3: return "Bearer  \(token)"
        case 4: return "Bearer \(token.dropLast(Int(random.next() % 20)))"
        case 5:
            var bytes = Array(token.utf8)
            bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(ascii: ["A", "-", "_", ".", "="][Int(random.next() % 5)])
            return "Bearer " + String(decoding: bytes, as: UTF8.self)
        case 6: return "Bearer " + String(decoding: random.bytes(Int(random.next() % 300), from: Array("abcXYZ019-_.=".utf8)), as: UTF8.self)
        case 7: return "Bearer"
        default: return "Basic " + Data(random.bytes(12)).base64EncodedString()
        }
    }

    static func query(_ random: inout SplitMix64, _ parameters: [String]) -> String {
        guard !parameters.isEmpty else { return random.next() % 4 == 0 ? "?x=\(values[Int(random.next() % UInt64(values.count))])" : "" }
        var pairs: [String] = []
        for _ in 0..<Int(random.next() % 5) {
            let name = random.next() % 8 == 0 ? "unknown" : parameters[Int(random.next() % UInt64(parameters.count))]
            pairs.append("\(name)=\(values[Int(random.next() % UInt64(values.count))])")
        }
        return pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&")
    }

    @Test("every answer is a success or a client error with a JSON body")
    func hostileRequests() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["COFFER_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        let seconds = environment["COFFER_FUZZ_SECONDS"].flatMap(Double.init) ?? 10
        // A crash ends the process before any issue is recorded: the seed in the log replays the run that found it.
        print("request fuzz: seed \(seed) (COFFER_FUZZ_SEED=\(seed) replays this run)")
        try await PlacesAPITests.withPlaces(.sqlite) { api, _, _ in
            let account = try await TestAccount.register(api)
            var random = SplitMix64(seed: seed)
            let deadline = Date().addingTimeInterval(seconds)
            var requests = 0
            // At least `minimum` requests however long they take: the suite's other tests share the two-core pool
            // and can hold this loop back, and what is checked is each answer, not how many fit in the time.
            let minimum = 50
            while Date() < deadline || requests < minimum {
                let endpoint = Self.endpoints[Int(random.next() % UInt64(Self.endpoints.count))]
                let path = endpoint.path + Self.query(&random, endpoint.parameters)
                var headers = HTTPFields()
                if let header = Self.header(&random, token: account.access) { headers[.authorization] = header }
                let answer = try await api.sendRaw(.get, path, headers: headers, body: nil)
                requests += 1
                let finding = "seed \(seed), request \(requests): GET \(path) Authorization: \(headers[.authorization] ?? "none")"
                #expect(answer.status.code < 500, "\(answer.status.code) for \(finding)")
                if answer.status.code >= 400 {
                    #expect(answer.error != nil, "no JSON error body for \(finding)")
                }
                if answer.status.code >= 500 || (answer.status.code >= 400 && answer.error == nil) { return }
            }
            print("request fuzz: seed \(seed), \(requests) requests")
        }
    }
}
