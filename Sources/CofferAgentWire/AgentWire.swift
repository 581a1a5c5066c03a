/// The agent's request/response protocol (docs/FORMAT.md §11): one request and one response per connection, each a
/// frame of a 4-byte big-endian length and that many bytes. A body starts with the protocol version and an opcode
/// (request) or a status (response); fields follow in a fixed order: integers big-endian, strings and byte strings
/// as a 4-byte length and their bytes. Every read is bounds-checked; a body with bytes left over is refused.
public enum AgentWire {
    /// The version this build speaks; a request of another version gets `.unsupportedVersion`.
    public static let version: UInt8 = 1
    /// The largest request body: a passphrase, a path and one item's content fit many times over.
    public static let maximumRequest = 256 * 1024
    /// The largest response body (the items of a large vault).
    public static let maximumResponse = 64 * 1024 * 1024
    /// The largest string or byte string inside a request.
    public static let maximumField = 128 * 1024
}

/// A malformed frame or body. Descriptions name the rule broken, never the bytes.
public enum AgentWireError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated
    case trailingBytes
    case tooLarge(limit: Int)
    case unsupportedVersion(UInt8)
    case unknownOpcode(UInt8)
    case unknownStatus(UInt8)
    case invalidText
    case outOfRange

    public var description: String {
        switch self {
        case .truncated: return "the agent's message ends early"
        case .trailingBytes: return "the agent's message has bytes after its last field"
        case .tooLarge(let limit): return "the agent's message has a field over the \(limit)-byte limit"
        case .unsupportedVersion(let version): return "agent protocol version \(version) is not supported (this build speaks \(AgentWire.version))"
        case .unknownOpcode(let code): return "unknown agent request \(code)"
        case .unknownStatus(let code): return "unknown agent answer \(code)"
        case .invalidText: return "the agent's message has text that is not UTF-8"
        case .outOfRange: return "the agent's message has a number out of its range"
        }
    }
}

/// A request to the agent. Vaults are named by their directory's absolute path.
public enum AgentRequest: Equatable, Sendable {
    /// Which vaults are held and when each locks. Does not count as use: it never delays a lock.
    case status
    /// Opens the vault with its passphrase and holds it.
    case unlock(vault: String, passphrase: [UInt8])
    /// Forgets one vault's keys, or every vault's when `vault` is nil.
    case lock(vault: String?)
    /// The live items, optionally of one kind (`ItemKind` raw value).
    case items(vault: String, kind: String?)
    /// One item found by name or id, as `coffer show` looks it up.
    case find(vault: String, query: String, kind: String?)
    /// One-time codes at `atMilliseconds` (Unix time): the named token's, or every time-based token's. The token's
    /// secret stays in the agent.
    case codes(vault: String, query: String?, atMilliseconds: Int64)
    /// Adds an item with `content` (item content, FORMAT.md §5, whose kind is `kind`).
    case add(vault: String, kind: String, content: [UInt8])
    /// Locks everything, wipes and exits.
    case stop

    enum Opcode: UInt8 {
        case status = 1, unlock, lock, items, find, codes, add, stop
    }
}

/// A held vault as `status` reports it.
public struct AgentVaultStatus: Equatable, Sendable {
    public var vault: String
    public var vaultID: [UInt8]
    /// Milliseconds until the idle lock, and until the absolute one; the vault locks at the earlier.
    public var idleRemainingMilliseconds: UInt64
    public var absoluteRemainingMilliseconds: UInt64

    public init(vault: String, vaultID: [UInt8], idleRemainingMilliseconds: UInt64, absoluteRemainingMilliseconds: UInt64) {
        self.vault = vault
        self.vaultID = vaultID
        self.idleRemainingMilliseconds = idleRemainingMilliseconds
        self.absoluteRemainingMilliseconds = absoluteRemainingMilliseconds
    }
}

/// The agent process as `status` reports it.
public struct AgentStatus: Equatable, Sendable {
    public var processID: Int32
    public var idleTimeoutMilliseconds: UInt64
    public var maximumMilliseconds: UInt64
    /// The protections that took effect: bit 0 memory locked, bit 1 not dumpable, bit 2 core files disabled.
    public var protections: UInt8
    public var vaults: [AgentVaultStatus]

    public init(processID: Int32, idleTimeoutMilliseconds: UInt64, maximumMilliseconds: UInt64, protections: UInt8, vaults: [AgentVaultStatus]) {
        self.processID = processID
        self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        self.maximumMilliseconds = maximumMilliseconds
        self.protections = protections
        self.vaults = vaults
    }
}

/// An item as it crosses the socket: bookkeeping, then its content (FORMAT.md §5, creation time included).
public struct AgentItem: Equatable, Sendable {
    public var id: [UInt8]
    public var kind: String
    public var revision: UInt64
    public var updatedAtMilliseconds: Int64
    public var content: [UInt8]

    public init(id: [UInt8], kind: String, revision: UInt64, updatedAtMilliseconds: Int64, content: [UInt8]) {
        self.id = id
        self.kind = kind
        self.revision = revision
        self.updatedAtMilliseconds = updatedAtMilliseconds
        self.content = content
    }
}

/// A one-time code the agent computed.
public struct AgentCode: Equatable, Sendable {
    public var id: [UInt8]
    public var name: String
    public var code: String
    /// Seconds left in the period; nil for HOTP.
    public var secondsRemaining: Int32?

    public init(id: [UInt8], name: String, code: String, secondsRemaining: Int32?) {
        self.id = id
        self.name = name
        self.code = code
        self.secondsRemaining = secondsRemaining
    }
}

/// An item named in an ambiguity error.
public struct AgentCandidate: Equatable, Sendable {
    public var id: [UInt8]
    public var kind: String
    public var name: String

    public init(id: [UInt8], kind: String, name: String) {
        self.id = id
        self.kind = kind
        self.name = name
    }
}

/// The agent's answer.
public enum AgentResponse: Equatable, Sendable {
    case done
    case status(AgentStatus)
    case items([AgentItem])
    case codes([AgentCode])
    case failure(AgentFailure)

    enum Status: UInt8 {
        case done = 0, status, items, codes, failure
    }
}

/// Why the agent refused a request. The message names the rule, never a secret.
public struct AgentFailure: Error, Equatable, Sendable {
    public enum Code: UInt8, Sendable {
        /// The agent does not hold that vault (never unlocked, or locked since).
        case notHeld = 1
        case badRequest
        case noMatch
        case ambiguous
        case wrongPassphrase
        case wrongKind
        case failed
        /// The vault has no passphrase slot, or is not where the path says.
        case cannotOpen
    }

    public var code: Code
    public var message: String
    public var candidates: [AgentCandidate]

    public init(_ code: Code, _ message: String, candidates: [AgentCandidate] = []) {
        self.code = code
        self.message = message
        self.candidates = candidates
    }
}
