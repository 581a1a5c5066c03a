import CofferAgentWire
import CofferCrypto
import CofferKeystore
import CofferKit
import CofferPlatform
import CofferVault
import Foundation

/// Milliseconds on a clock that keeps counting while the machine sleeps, so a laptop closed for an hour comes back
/// with its vaults locked. Injectable: tests move time by hand.
public struct AgentClock: Sendable {
    public let milliseconds: @Sendable () -> UInt64

    public init(milliseconds: @escaping @Sendable () -> UInt64) {
        self.milliseconds = milliseconds
    }

    /// `BootClock`: milliseconds since boot, suspend included.
    public static var boot: AgentClock {
        AgentClock { BootClock.milliseconds() }
    }
}

/// How long the agent holds a vault: `idle` after its last use, and `maximum` after it was unlocked, whichever
/// comes first.
public struct AgentTimeouts: Sendable, Equatable {
    public var idleMilliseconds: UInt64
    public var maximumMilliseconds: UInt64

    /// 10 minutes idle and 12 hours at most (as 1Password's CLI; gpg-agent's idle default is also 10 minutes).
    public static let standard = AgentTimeouts(idleMilliseconds: 10 * 60_000, maximumMilliseconds: 12 * 3_600_000)

    public init(idleMilliseconds: UInt64, maximumMilliseconds: UInt64) {
        self.idleMilliseconds = idleMilliseconds
        self.maximumMilliseconds = maximumMilliseconds
    }
}

/// The agent's state and its answers, without sockets: the vaults it holds, when each locks, and what each request
/// does. One thread drives it (`AgentServer`), so it needs no lock.
public final class AgentCore {
    struct Held {
        let coffer: Coffer
        let unlockedAt: UInt64
        var lastUse: UInt64
    }

    private var held: [String: Held] = [:] {
        // A vault released here closes its database, which starts a pool thread, and a new thread begins with a copy
        // of this thread's registers: they must hold nothing of a request by then.
        willSet { ProcessHardening.clearVectorRegisters() }
    }
    public let timeouts: AgentTimeouts
    let clock: AgentClock
    let locate: (String) -> CofferLocation
    /// Reported in `status`: the process protections that took effect (`AgentStatus.protections`).
    public var protections: UInt8 = 0

    /// - Parameters:
    ///   - locate: the location of the vault at a path (the environment's key stores; tests give their options).
    public init(timeouts: AgentTimeouts = .standard, clock: AgentClock = .boot, locate: @escaping (String) -> CofferLocation) {
        self.timeouts = timeouts
        self.clock = clock
        self.locate = locate
    }

    /// The paths of the vaults held now.
    public var heldVaults: [String] { held.keys.sorted() }

    /// Answers one request. Locks what is due first, so a request never reaches a vault whose time has passed; a
    /// status request is not a use and moves no timer.
    public func handle(_ request: AgentRequest) -> AgentResponse {
        let now = clock.milliseconds()
        expire(at: now)
        switch request {
        case .status:
            return .status(status(at: now))
        case .unlock(let vault, let passphrase):
            return unlock(vault, passphrase: passphrase, at: now)
        case .lock(let vault):
            if let vault { held[vault] = nil } else { lockAll() }
            return .done
        case .items(let vault, let kind):
            return serve(vault, at: now) { coffer throws in
                .items(try coffer.items(kind: try Self.kind(kind)).map { (item) throws in try item.agentItem })
            }
        case .find(let vault, let query, let kind):
            return serve(vault, at: now) { coffer throws in
                .items([try coffer.find(query, kind: try Self.kind(kind)).agentItem])
            }
        case .codes(let vault, let query, let at):
            return serve(vault, at: now) { coffer throws in
                .codes(
                    try coffer.codes(matching: query, at: UnixTime.date(milliseconds: at)).map {
                        AgentCode(id: $0.id.bytes, name: $0.name, code: $0.code, secondsRemaining: $0.secondsRemaining.map { Int32(clamping: $0) })
                    })
            }
        case .add(let vault, let kind, let content):
            return serve(vault, at: now) { coffer throws in
                guard let itemKind = ItemKind(rawValue: kind) else { throw CofferError.agent(AgentFailure(.badRequest, "unknown item kind")) }
                let decoded = try ItemContentCoding.decode(Data(content), kind: itemKind).content
                return .items([try coffer.add(decoded).agentItem])
            }
        case .stop:
            lockAll()
            return .done
        }
    }

    /// Locks the vaults whose idle or absolute time has passed.
    public func expire(at now: UInt64? = nil) {
        let now = now ?? clock.milliseconds()
        held = held.filter { _, vault in now < deadline(of: vault) }
    }

    /// Forgets every vault; their keys are wiped as the vaults are released.
    public func lockAll() {
        held.removeAll()
    }

    /// Milliseconds until the next vault is due to lock, or nil when none is held.
    public func millisecondsUntilNextLock() -> UInt64? {
        let now = clock.milliseconds()
        return held.values.map { deadline(of: $0) }.min().map { $0 > now ? $0 - now : 0 }
    }

    private func deadline(of vault: Held) -> UInt64 {
        min(vault.lastUse &+ timeouts.idleMilliseconds, vault.unlockedAt &+ timeouts.maximumMilliseconds)
    }

    private func status(at now: UInt64) -> AgentStatus {
        let vaults = held.sorted { $0.key < $1.key }.map { path, vault in
            AgentVaultStatus(
                vault: path, vaultID: vault.coffer.vaultID.bytes,
                idleRemainingMilliseconds: (vault.lastUse &+ timeouts.idleMilliseconds) - now,
                absoluteRemainingMilliseconds: (vault.unlockedAt &+ timeouts.maximumMilliseconds) - now)
        }
        return AgentStatus(
            processID: ProcessInfo.processInfo.processIdentifier, idleTimeoutMilliseconds: timeouts.idleMilliseconds,
            maximumMilliseconds: timeouts.maximumMilliseconds, protections: protections, vaults: vaults)
    }

    private func unlock(_ vault: String, passphrase: [UInt8], at now: UInt64) -> AgentResponse {
        guard vault.hasPrefix("/") else { return .failure(AgentFailure(.badRequest, "a vault is named by its absolute path")) }
        guard let text = String(validating: passphrase, as: UTF8.self) else {
            return .failure(AgentFailure(.badRequest, "a passphrase is UTF-8 text"))
        }
        do {
            let coffer = try Coffer.open(at: locate(vault), unlock: .passphrase(text), addDeviceSlot: false)
            held[vault] = Held(coffer: coffer, unlockedAt: now, lastUse: now)
            return .done
        } catch {
            return .failure(Self.failure(error))
        }
    }

    private func serve(_ vault: String, at now: UInt64, _ body: (Coffer) throws -> AgentResponse) -> AgentResponse {
        guard var entry = held[vault] else {
            return .failure(AgentFailure(.notHeld, "the agent does not hold this vault"))
        }
        entry.lastUse = now
        held[vault] = entry
        do {
            return try body(entry.coffer)
        } catch {
            return .failure(Self.failure(error))
        }
    }

    private static func kind(_ raw: String?) throws -> ItemKind? {
        guard let raw else { return nil }
        guard let kind = ItemKind(rawValue: raw) else { throw CofferError.agent(AgentFailure(.badRequest, "unknown item kind")) }
        return kind
    }

    /// An error of the library as the wire carries it. Messages are Coffer's errors' descriptions, which name rules,
    /// never values; an error of any other kind is named by its type alone.
    static func failure(_ error: any Error) -> AgentFailure {
        let message = Self.message(error)
        switch error {
        case CofferError.agent(let failure): return failure
        case CofferError.noMatch: return AgentFailure(.noMatch, message)
        case CofferError.ambiguous(_, let candidates):
            return AgentFailure(
                .ambiguous, message,
                candidates: candidates.map { AgentCandidate(id: $0.id.bytes, kind: $0.kind.rawValue, name: $0.name) })
        case CofferError.wrongKind: return AgentFailure(.wrongKind, message)
        case VaultError.wrongPassphrase: return AgentFailure(.wrongPassphrase, message)
        case VaultError.notFound, VaultError.noSlot: return AgentFailure(.cannotOpen, message)
        default: return AgentFailure(.failed, message)
        }
    }

    private static func message(_ error: any Error) -> String {
        switch error {
        case let error as CofferError: return error.description
        case let error as VaultError: return error.description
        case let error as ModelError: return error.description
        case let error as OTPError: return error.description
        case let error as KeystoreError: return error.description
        case let error as CofferCryptoError: return error.description
        default: return "unexpected failure (\(type(of: error)))"
        }
    }
}
