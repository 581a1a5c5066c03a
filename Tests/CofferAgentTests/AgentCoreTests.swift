import CofferAgentWire
import CofferKeystore
import CofferPlatform
import CofferTestSupport
import CofferVault
import Foundation
import Synchronization
import Testing

@testable import CofferAgent
@_spi(Testing) import CofferCrypto
import CofferKit

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let milliseconds = Mutex<UInt64>(1_000_000)

    var clock: AgentClock { AgentClock { [self] in milliseconds.withLock { $0 } } }

    func advance(seconds: UInt64) { milliseconds.withLock { $0 += seconds * 1000 } }
}

/// A passphrase vault with a TOTP token (RFC 6238's SHA-1 key) and a note, and an agent core over it.
struct AgentFixture {
    static let passphrase = "correct horse agent"
    let vault: String
    let clock = ManualClock()
    let core: AgentCore

    init(timeouts: AgentTimeouts = AgentTimeouts(idleMilliseconds: 600_000, maximumMilliseconds: 3_600_000)) throws {
        let root = try TestSupport.temporaryDirectory("agent")
        vault = root + "/vault"
        let keystore = FileKeystore(directory: root + "/keystore")
        let location = CofferLocation(vaultDirectory: vault, keystore: keystore, options: VaultOptions(limits: .testing))
        let coffer = try Coffer.initialize(at: location, passphrase: Self.passphrase, kdf: .pbkdf2SHA256(iterations: 1000))
        try coffer.add(
            .otp(
                try OTPItem(
                    issuer: "RFC", account: "6238",
                    parameters: try OTPParameters(secret: Array("12345678901234567890".utf8), digits: 8, kind: .totp(period: 30)))))
        try coffer.add(.note(try Note(name: "Locker", text: "combination 12-34-56")))
        core = AgentCore(timeouts: timeouts, clock: clock.clock) { path in
            CofferLocation(vaultDirectory: path, keystore: keystore, options: VaultOptions(limits: .testing))
        }
    }

    func unlock(_ passphrase: String = Self.passphrase) -> AgentResponse {
        core.handle(.unlock(vault: vault, passphrase: Array(passphrase.utf8)))
    }

    var held: [String] {
        guard case .status(let status) = core.handle(.status) else { return ["not a status"] }
        return status.vaults.map(\.vault)
    }
}

@Suite("Agent core: timers, requests, failures", .offCooperativePool)
struct AgentCoreTests {
    @Test("RFC 6238's vector comes out of the agent, computed there (the secret never crosses the socket)")
    func codes() throws {
        let fixture = try AgentFixture()
        #expect(fixture.unlock() == .done)
        // RFC 6238 Appendix B, SHA-1, T = 59 s.
        let response = fixture.core.handle(.codes(vault: fixture.vault, query: "RFC", atMilliseconds: 59_000))
        guard case .codes(let codes) = response else { Issue.record("\(response)"); return }
        #expect(codes.map(\.code) == ["94287082"])
        #expect(codes.first?.secondsRemaining == 1)
    }

    @Test(
        "no answer carries an OTP secret: items, find and add give the token with the stand-in, its other fields as stored",
        arguments: ["items", "find", "add"])
    func noSecretInAnswers(_ request: String) throws {
        let fixture = try AgentFixture()
        #expect(fixture.unlock() == .done)
        let response: AgentResponse
        switch request {
        case "items": response = fixture.core.handle(.items(vault: fixture.vault, kind: "otp"))
        case "find": response = fixture.core.handle(.find(vault: fixture.vault, query: "RFC", kind: nil))
        default:
            let token = try OTPItem(
                issuer: "Added", account: "x", parameters: try OTPParameters(secret: Array("ABCDEFGHIJKLMNOPQRST".utf8), digits: 6))
            response = fixture.core.handle(
                .add(vault: fixture.vault, kind: "otp", content: Array(try ItemContentCoding.encode(.otp(token), createdAt: Date()))))
        }
        guard case .items(let items) = response, let answered = items.first else { Issue.record("\(response)"); return }
        let secret = Array((request == "add" ? "ABCDEFGHIJKLMNOPQRST" : "12345678901234567890").utf8)
        #expect(Data(answered.content).range(of: Data(secret)) == nil)
        guard case .otp(let otp) = try ItemContentCoding.decode(Data(answered.content), kind: .otp).content else {
            Issue.record("not a token")
            return
        }
        #expect(otp.parameters.secret == Item.agentSecretStandIn)
        #expect(otp.parameters.digits == (request == "add" ? 6 : 8) && otp.parameters.kind == OTPParameters.Kind.totp(period: 30))
        // The agent itself still holds the real secret: its codes are RFC 6238's.
        if request != "add" {
            guard case .codes(let codes) = fixture.core.handle(.codes(vault: fixture.vault, query: "RFC", atMilliseconds: 59_000)) else { return }
            #expect(codes.map(\.code) == ["94287082"])
        }
    }

    @Test("a wrong passphrase holds nothing; a vault not held is refused, never opened")
    func refusals() throws {
        let fixture = try AgentFixture()
        guard case .failure(let wrong) = fixture.unlock("wrong") else { Issue.record("accepted a wrong passphrase"); return }
        #expect(wrong.code == .wrongPassphrase)
        #expect(fixture.held.isEmpty)
        guard case .failure(let notHeld) = fixture.core.handle(.items(vault: fixture.vault, kind: nil)) else { Issue.record("served"); return }
        #expect(notHeld.code == .notHeld)
        guard case .failure(let relative) = fixture.core.handle(.unlock(vault: "vault", passphrase: [])) else { Issue.record("relative"); return }
        #expect(relative.code == .badRequest)
    }

    @Test("idle timeout: each use restarts it, a status query does not")
    func idle() throws {
        let fixture = try AgentFixture()
        _ = fixture.unlock()
        fixture.clock.advance(seconds: 500)
        #expect(fixture.held == [fixture.vault], "status at 500 s")
        fixture.clock.advance(seconds: 99)
        #expect(fixture.held == [fixture.vault], "status at 599 s")
        // Two status queries above did not count as use: the vault locks 600 s after the unlock.
        fixture.clock.advance(seconds: 1)
        #expect(fixture.held.isEmpty)

        _ = fixture.unlock()
        fixture.clock.advance(seconds: 590)
        guard case .items(let items) = fixture.core.handle(.items(vault: fixture.vault, kind: nil)) else { Issue.record("not served"); return }
        #expect(items.count == 2)
        fixture.clock.advance(seconds: 590)
        #expect(fixture.held == [fixture.vault], "a use at 590 s moved the idle lock to 1190 s")
        #expect(fixture.core.millisecondsUntilNextLock() == 10_000)
        fixture.clock.advance(seconds: 10)
        fixture.core.expire()
        #expect(fixture.core.heldVaults.isEmpty, "the timer locks without a request")
    }

    @Test("absolute timeout: a vault in constant use still locks at the maximum")
    func absolute() throws {
        let fixture = try AgentFixture()
        _ = fixture.unlock()
        for _ in 0..<11 {
            fixture.clock.advance(seconds: 300)
            guard case .items = fixture.core.handle(.find(vault: fixture.vault, query: "Locker", kind: nil)) else {
                Issue.record("locked before the maximum")
                return
            }
        }
        fixture.clock.advance(seconds: 300)
        guard case .failure(let failure) = fixture.core.handle(.find(vault: fixture.vault, query: "Locker", kind: nil)) else {
            Issue.record("served after 3600 s")
            return
        }
        #expect(failure.code == .notHeld)
    }

    @Test("lock and stop forget the vault; lookups fail as the CLI expects")
    func lockAndLookups() throws {
        let fixture = try AgentFixture()
        _ = fixture.unlock()
        guard case .failure(let none) = fixture.core.handle(.find(vault: fixture.vault, query: "nothing", kind: nil)) else { return }
        #expect(none.code == .noMatch)
        guard case .failure(let kind) = fixture.core.handle(.find(vault: fixture.vault, query: "Locker", kind: "otp")) else { return }
        #expect(kind.code == .noMatch)
        guard case .failure(let badKind) = fixture.core.handle(.items(vault: fixture.vault, kind: "nonsense")) else { return }
        #expect(badKind.code == .badRequest)
        #expect(fixture.core.handle(.lock(vault: fixture.vault)) == .done)
        #expect(fixture.held.isEmpty)
        _ = fixture.unlock()
        #expect(fixture.core.handle(.stop) == .done)
        #expect(fixture.held.isEmpty)
    }

    @Test("an item added through the agent is in the vault, readable with the passphrase")
    func add() throws {
        let fixture = try AgentFixture()
        _ = fixture.unlock()
        let content = try ItemContentCoding.encode(.note(try Note(name: "Added", text: "through the agent")), createdAt: Date())
        guard case .items(let added) = fixture.core.handle(.add(vault: fixture.vault, kind: "note", content: Array(content))) else {
            Issue.record("not added")
            return
        }
        #expect(added.count == 1 && added[0].revision == 1)
        let reopened = try Coffer.open(
            at: CofferLocation(vaultDirectory: fixture.vault, keystore: InMemoryKeystore(), options: VaultOptions(limits: .testing)),
            unlock: .passphrase(AgentFixture.passphrase), addDeviceSlot: false)
        #expect(try reopened.find("Added").content.name == "Added")
        // Content that does not parse as its kind is refused.
        guard case .failure(let bad) = fixture.core.handle(.add(vault: fixture.vault, kind: "card", content: Array(content))) else {
            Issue.record("accepted a note as a card")
            return
        }
        #expect(bad.code != .notHeld)
    }
}
