import CofferAgentWire
import CofferTestSupport
import Foundation
import Testing

/// The socket protocol (docs/FORMAT.md §11): every request and answer shape locked byte for byte by a golden file,
/// and hostile bodies refused without a crash.
@Suite(.offCooperativePool) struct AgentWireTests {
    static let id = Array(0x10...0x1F).map(UInt8.init)

    static let requests: [(String, AgentRequest)] = [
        ("status", .status),
        ("unlock", .unlock(vault: "/v", passphrase: Array("pw\u{0}\u{FF}".utf8))),
        ("lock one", .lock(vault: "/v")),
        ("lock all", .lock(vault: nil)),
        ("items", .items(vault: "/v", kind: "otp")),
        ("items of every kind", .items(vault: "/v", kind: nil)),
        ("find", .find(vault: "/v", query: "Gît", kind: nil)),
        ("codes of one", .codes(vault: "/v", query: "x", atMilliseconds: 1_700_000_000_000)),
        ("codes of all", .codes(vault: "/v", query: nil, atMilliseconds: -1)),
        ("add", .add(vault: "/v", kind: "note", content: [1, 2, 3])),
        ("stop", .stop),
    ]

    static let responses: [(String, AgentResponse)] = [
        ("done", .done),
        (
            "status",
            .status(
                AgentStatus(
                    processID: 4242, idleTimeoutMilliseconds: 600_000, maximumMilliseconds: 43_200_000, protections: 7,
                    vaults: [AgentVaultStatus(vault: "/v", vaultID: id, idleRemainingMilliseconds: 1, absoluteRemainingMilliseconds: 2)]))
        ),
        ("items", .items([AgentItem(id: id, kind: "card", revision: 3, updatedAtMilliseconds: 5, content: [9])])),
        ("codes", .codes([AgentCode(id: id, name: "A", code: "123456", secondsRemaining: 7), AgentCode(id: id, name: "H", code: "1", secondsRemaining: nil)])),
        ("failure", .failure(AgentFailure(.ambiguous, "m", candidates: [AgentCandidate(id: id, kind: "otp", name: "n")]))),
    ]

    static let goldenPath = TestSupport.repositoryRoot.appendingPathComponent("Tests/Vectors/agent/agent-wire.hex").path

    /// `name: hex` lines, in the order above. `COFFER_WRITE_GOLDEN=1` writes the file (once, when the format is made).
    static func encodedLines() -> String {
        let lines =
            requests.map { "request \($0.0): \(TestSupport.hex($0.1.encoded()))" }
            + responses.map { "response \($0.0): \(TestSupport.hex($0.1.encoded()))" }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test("every request and answer encodes to the golden bytes, and the golden bytes decode to it")
    func golden() throws {
        if ProcessInfo.processInfo.environment["COFFER_WRITE_GOLDEN"] == "1" {
            try AgentWireTests.encodedLines().write(toFile: AgentWireTests.goldenPath, atomically: true, encoding: .utf8)
        }
        let golden = try String(contentsOfFile: AgentWireTests.goldenPath, encoding: .utf8)
        #expect(golden == AgentWireTests.encodedLines())
        var lines = golden.split(separator: "\n").map { String($0.split(separator: " ").last!) }
        for (name, request) in AgentWireTests.requests {
            #expect(try AgentRequest(decoding: TestSupport.hex(lines.removeFirst())) == request, "\(name)")
        }
        for (name, response) in AgentWireTests.responses {
            #expect(try AgentResponse(decoding: TestSupport.hex(lines.removeFirst())) == response, "\(name)")
        }
    }

    @Test("the unlock request's layout, spelled out: version, opcode, path, passphrase")
    func unlockLayout() {
        let body = AgentRequest.unlock(vault: "/v", passphrase: [0x41]).encoded()
        #expect(body == [1, 2, 0, 0, 0, 2, 0x2F, 0x76, 0, 0, 0, 1, 0x41])
        #expect(AgentFrame.framed(body).prefix(4) == [0, 0, 0, 13])
    }

    @Test("every truncation of every request is refused", arguments: requests.map(\.1))
    func truncations(request: AgentRequest) {
        let body = request.encoded()
        for length in 0..<body.count {
            #expect(throws: AgentWireError.self) { try AgentRequest(decoding: body.prefix(length)) }
        }
        #expect(throws: AgentWireError.trailingBytes) { try AgentRequest(decoding: body + [0]) }
    }

    @Test("hostile bodies: other versions, unknown opcodes, huge lengths and counts, bad UTF-8, oversize frames")
    func hostile() {
        #expect(throws: AgentWireError.unsupportedVersion(2)) { try AgentRequest(decoding: [2, 1]) }
        #expect(throws: AgentWireError.unknownOpcode(0)) { try AgentRequest(decoding: [1, 0]) }
        #expect(throws: AgentWireError.unknownOpcode(9)) { try AgentRequest(decoding: [1, 9]) }
        #expect(throws: AgentWireError.tooLarge(limit: AgentWire.maximumField)) {
            try AgentRequest(decoding: [1, 3, 1, 0xFF, 0xFF, 0xFF, 0xFF])
        }
        #expect(throws: AgentWireError.truncated) { try AgentRequest(decoding: [1, 3, 1, 0, 0, 0, 9, 0x41]) }
        #expect(throws: AgentWireError.invalidText) { try AgentRequest(decoding: [1, 3, 1, 0, 0, 0, 1, 0xFF]) }
        #expect(throws: AgentWireError.truncated) { try AgentRequest(decoding: [1, 3, 7]) }
        #expect(throws: AgentWireError.tooLarge(limit: AgentWire.maximumRequest)) {
            try AgentRequest(decoding: [UInt8](repeating: 1, count: AgentWire.maximumRequest + 1))
        }
        #expect(throws: AgentWireError.tooLarge(limit: AgentWire.maximumRequest)) {
            try AgentFrame.length(header: [0, 0x04, 0, 1], limit: AgentWire.maximumRequest)
        }
        // A count of 4 billion entries in a short answer is refused before any loop runs.
        #expect(throws: AgentWireError.truncated) { try AgentResponse(decoding: [1, 2, 0xFF, 0xFF, 0xFF, 0xFF]) }
        #expect(throws: AgentWireError.unknownStatus(9)) { try AgentResponse(decoding: [1, 9]) }
    }

    @Test("random bytes and random mutations of valid bodies never crash the parser")
    func mutations() {
        var random = SystemRandomNumberGenerator()
        let bodies = AgentWireTests.requests.map { $0.1.encoded() }
        for _ in 0..<20_000 {
            var body = bodies.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: 0..<body.count, using: &random)
                body[index] = UInt8.random(in: 0...255, using: &random)
            }
            _ = try? AgentRequest(decoding: body)
            _ = try? AgentResponse(decoding: body)
        }
    }
}
