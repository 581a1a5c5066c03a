import CofferAgentWire
import CofferCrypto
import CofferPlatform
import CofferVault
import Foundation

/// What `coffer agent status` shows (the agent's own report).
public typealias AgentStatus = CofferAgentWire.AgentStatus
/// Why the agent refused a request (`CofferError.agent`).
public typealias AgentFailure = CofferAgentWire.AgentFailure

/// The client side of the agent (docs/FORMAT.md §11): finds its socket, checks that the agent runs as this user
/// before anything is sent, and turns answers into the facade's types and errors.
public enum Agent {
    /// `$XDG_RUNTIME_DIR/coffer/agent.sock`; without a runtime directory, `agent/agent.sock` in the state directory
    /// (`$XDG_STATE_HOME/coffer`, in the user's home), as gpg-agent keeps its socket in `~/.gnupg`. Never a name in a
    /// shared directory such as /tmp: another user could take that name first and keep the agent from starting.
    public static func socketPath(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return "\(runtime)/coffer/agent.sock"
        }
        return DataLocations.stateDirectory(environment: environment) + "/agent/agent.sock"
    }

    /// The absolute, symlink-free path the agent knows a vault by.
    public static func vaultKey(_ location: CofferLocation) -> String {
        let absolute =
            location.vaultDirectory.hasPrefix("/")
            ? location.vaultDirectory : FileManager.default.currentDirectoryPath + "/" + location.vaultDirectory
        return URL(fileURLWithPath: absolute).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// The agent's status, or nil when none runs at `socket`.
    public static func status(socket: String) throws -> AgentStatus? {
        guard let response = try exchangeIfRunning(.status, socket: socket) else { return nil }
        guard case .status(let status) = response else { throw CofferError.agentUnusable("unexpected answer") }
        return status
    }

    /// Hands the agent the vault's passphrase; the agent opens the vault and holds it.
    public static func unlock(_ location: CofferLocation, passphrase: String, socket: String) throws {
        _ = try exchange(.unlock(vault: vaultKey(location), passphrase: Array(passphrase.utf8)), socket: socket)
    }

    /// Makes the agent forget one vault (or all, with nil); false when no agent runs.
    @discardableResult
    public static func lock(_ location: CofferLocation?, socket: String) throws -> Bool {
        try exchangeIfRunning(.lock(vault: location.map(vaultKey)), socket: socket) != nil
    }

    /// Stops the agent (it wipes its keys and removes its socket); false when none runs.
    @discardableResult
    public static func stop(socket: String) throws -> Bool {
        try exchangeIfRunning(.stop, socket: socket) != nil
    }

    /// The vault as the agent serves it, or nil when no agent runs or it does not hold this vault. The status
    /// request that checks this does not count as use.
    public static func open(_ location: CofferLocation, socket: String) throws -> AgentVault? {
        guard let status = try status(socket: socket) else { return nil }
        let key = vaultKey(location)
        guard let held = status.vaults.first(where: { $0.vault == key }), held.vaultID.count == 16 else { return nil }
        return AgentVault(socket: socket, vault: key, vaultID: UUID(bytes: held.vaultID), location: location)
    }

    /// The answer, or nil when no agent runs.
    static func exchangeIfRunning(_ request: AgentRequest, socket: String) throws -> AgentResponse? {
        do {
            return try exchange(request, socket: socket)
        } catch CofferError.agentNotRunning {
            return nil
        }
    }

    /// One request and its answer over a fresh connection; a failure answer becomes the facade's error.
    static func exchange(_ request: AgentRequest, socket: String) throws -> AgentResponse {
        let descriptor: Int32
        do {
            descriptor = try UnixSocket.connect(to: socket)
        } catch .notRunning {
            throw CofferError.agentNotRunning
        } catch {
            throw CofferError.agentUnusable(error.description)
        }
        defer { UnixSocket.close(descriptor) }
        // Unlocking runs the KDF in the agent; everything else answers at once.
        UnixSocket.setTimeout(descriptor, milliseconds: 120_000)
        let response: AgentResponse
        do {
            var frame = AgentFrame.framed(request.encoded())
            defer { frame.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
            try frame.withUnsafeBytes { try UnixSocket.send($0, on: descriptor) }
            var header = [UInt8](repeating: 0, count: 4)
            try header.withUnsafeMutableBytes { try UnixSocket.receive(into: $0, on: descriptor) }
            let length = try wire { () throws(AgentWireError) in try AgentFrame.length(header: header, limit: AgentWire.maximumResponse) }
            var body = [UInt8](repeating: 0, count: length)
            try body.withUnsafeMutableBytes { try UnixSocket.receive(into: $0, on: descriptor) }
            response = try wire { () throws(AgentWireError) in try AgentResponse(decoding: body) }
        } catch let error as SocketError {
            throw CofferError.agentUnusable(error.description)
        } catch let error as CofferError {
            throw error
        } catch {
            throw CofferError.agentUnusable(String(describing: type(of: error)))
        }
        if case .failure(let failure) = response { throw CofferError.agent(failure) }
        return response
    }

    private static func wire<Result>(_ body: () throws(AgentWireError) -> Result) throws -> Result {
        do {
            return try body()
        } catch {
            throw CofferError.agentUnusable(error.description)
        }
    }
}

/// A vault the agent holds: every operation is one request, and the master key stays in the agent.
public struct AgentVault: OpenVault {
    let socket: String
    let vault: String
    public let vaultID: UUID
    let location: CofferLocation

    public func items(kind: ItemKind?) throws -> [Item] {
        try Self.items(from: Agent.exchange(.items(vault: vault, kind: kind?.rawValue), socket: socket))
    }

    /// The agent sends the items whole; they are transformed here as they are read from its answer.
    public func items<T>(kind: ItemKind?, _ transform: (Item) throws -> T?) throws -> [T] {
        try items(kind: kind).compactMap(transform)
    }

    /// Nothing to close: the agent keeps the vault open.
    public func closeBeforeExit() {}

    public func find(_ query: String, kind: ItemKind?) throws -> Item {
        let response = try Self.exchange(.find(vault: vault, query: query, kind: kind?.rawValue), query: query, socket: socket)
        guard let item = try Self.items(from: response).first else { throw CofferError.noMatch(query) }
        return item
    }

    public func codes(matching query: String?, at now: Date) throws -> [OneTimeCode] {
        let response = try Self.exchange(
            .codes(vault: vault, query: query, atMilliseconds: UnixTime.milliseconds(now)), query: query ?? "", socket: socket)
        guard case .codes(let codes) = response else { throw CofferError.agentUnusable("unexpected answer") }
        return try codes.map { (code) throws in
            guard code.id.count == 16 else { throw CofferError.agentUnusable("malformed item id") }
            return OneTimeCode(id: UUID(bytes: code.id), name: code.name, code: code.code, secondsRemaining: code.secondsRemaining.map(Int.init))
        }
    }

    @discardableResult
    public func add(_ content: ItemContent) throws -> Item {
        let encoded = try ItemContentCoding.encode(content, createdAt: location.options.clock())
        guard let item = try Self.items(from: Agent.exchange(.add(vault: vault, kind: content.kind.rawValue, content: Array(encoded)), socket: socket)).first
        else { throw CofferError.agentUnusable("unexpected answer") }
        return item
    }

    public func items(named name: String, excluding: UUID?) throws -> [ItemLookup.Candidate] {
        let candidates = try items(kind: nil).map { ItemLookup.Candidate(id: $0.id, content: $0.content) }
        return ItemLookup.sameName(name, in: candidates, excluding: excluding)
    }

    /// PIN secrets are device keys of their own, kept in this device's store (or its TPM), not in the agent.
    public func pinHolder(for key: SigningKey) throws -> PINHolder {
        let store = try location.keystore(for: vaultID, creating: false).store
        switch try Coffer.pinSecretSource(for: key, location: location, keystore: store) {
        case .keystore?: return .thisDevice
        case .tpm?: return .thisMachinesTPM
        case nil: return .anotherDevice
        }
    }

    static func items(from response: AgentResponse) throws -> [Item] {
        guard case .items(let items) = response else { throw CofferError.agentUnusable("unexpected answer") }
        return try items.map { (item) throws in try Item(agentItem: item) }
    }

    /// A lookup's request; the agent's "no match" and "ambiguous" become the facade's, as a local lookup throws them.
    static func exchange(_ request: AgentRequest, query: String, socket: String) throws -> AgentResponse {
        do {
            return try Agent.exchange(request, socket: socket)
        } catch CofferError.agent(let failure) {
            throw mapped(failure, query: query)
        }
    }

    static func mapped(_ failure: AgentFailure, query: String) -> CofferError {
        switch failure.code {
        case .noMatch: return .noMatch(query)
        case .ambiguous:
            let candidates = failure.candidates.compactMap { candidate -> ItemLookup.Candidate? in
                guard candidate.id.count == 16, let kind = ItemKind(rawValue: candidate.kind) else { return nil }
                return ItemLookup.Candidate(id: UUID(bytes: candidate.id), kind: kind, name: candidate.name, names: [candidate.name], foldedNames: [])
            }
            return .ambiguous(query, candidates: candidates)
        default: return .agent(failure)
        }
    }
}

extension Item {
    /// An item as it crossed the socket; content that does not parse is refused.
    init(agentItem: AgentItem) throws {
        guard agentItem.id.count == 16, let kind = ItemKind(rawValue: agentItem.kind) else { throw CofferError.agentUnusable("malformed item") }
        let decoded = try ItemContentCoding.decode(Data(agentItem.content), kind: kind)
        self.init(
            id: UUID(bytes: agentItem.id), revision: agentItem.revision, createdAt: decoded.createdAt,
            updatedAt: UnixTime.date(milliseconds: agentItem.updatedAtMilliseconds), content: decoded.content)
    }

    /// The stand-in an OTP token's secret is replaced by in the agent's answers (docs/FORMAT.md §11).
    public static let agentSecretStandIn = [UInt8](repeating: 0, count: OTPParameters.secretByteCountRange.lowerBound)

    /// This item as the agent answers with it: an OTP token's secret replaced by `agentSecretStandIn` (its codes are
    /// computed in the agent, and no command prints a secret), everything else as stored.
    public var agentItem: AgentItem {
        get throws {
            var answered = self.content
            if case .otp(var otp) = answered {
                otp.parameters = try OTPParameters(
                    secret: Self.agentSecretStandIn, algorithm: otp.parameters.algorithm, digits: otp.parameters.digits,
                    kind: otp.parameters.kind)
                answered = .otp(otp)
            }
            let content = try ItemContentCoding.encode(answered, createdAt: createdAt)
            return AgentItem(
                id: id.bytes, kind: kind.rawValue, revision: revision, updatedAtMilliseconds: UnixTime.milliseconds(updatedAt), content: Array(content))
        }
    }
}
