/// Writes fields in the protocol's order.
struct WireWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func integer<Value: FixedWidthInteger>(_ value: Value) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func data(_ value: some Collection<UInt8>) {
        integer(UInt32(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func string(_ value: String) { data(value.utf8) }

    /// An optional string: a presence byte, then the string when present.
    mutating func optional(_ value: String?) {
        byte(value == nil ? 0 : 1)
        if let value { string(value) }
    }
}

/// Reads fields with every length checked against what is left and against `fieldLimit`.
struct WireReader {
    private let bytes: [UInt8]
    private var offset = 0
    let fieldLimit: Int

    init(_ bytes: [UInt8], fieldLimit: Int) {
        self.bytes = bytes
        self.fieldLimit = fieldLimit
    }

    mutating func byte() throws(AgentWireError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func integer<Value: FixedWidthInteger>(_: Value.Type = Value.self) throws(AgentWireError) -> Value {
        let size = MemoryLayout<Value>.size
        guard bytes.count - offset >= size else { throw .truncated }
        var value: Value = 0
        for byte in bytes[offset..<offset + size] { value = value << 8 | Value(byte) }
        offset += size
        return value
    }

    mutating func data() throws(AgentWireError) -> [UInt8] {
        let count = Int(try integer(UInt32.self))
        guard count <= fieldLimit else { throw .tooLarge(limit: fieldLimit) }
        guard bytes.count - offset >= count else { throw .truncated }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func string() throws(AgentWireError) -> String {
        let raw = try data()
        guard let text = String(validating: raw, as: UTF8.self) else { throw .invalidText }
        return text
    }

    mutating func optional() throws(AgentWireError) -> String? {
        switch try byte() {
        case 0: return nil
        case 1: return try string()
        default: throw .truncated
        }
    }

    /// A count of following entries, refused when even one byte each would not fit in what is left.
    mutating func count() throws(AgentWireError) -> Int {
        let value = Int(try integer(UInt32.self))
        guard value <= bytes.count - offset else { throw .truncated }
        return value
    }

    func finish() throws(AgentWireError) {
        guard offset == bytes.count else { throw .trailingBytes }
    }
}

extension AgentRequest {
    /// The request's body (without the frame's length).
    public func encoded() -> [UInt8] {
        var writer = WireWriter()
        writer.byte(AgentWire.version)
        switch self {
        case .status:
            writer.byte(Opcode.status.rawValue)
        case .unlock(let vault, let passphrase):
            writer.byte(Opcode.unlock.rawValue)
            writer.string(vault)
            writer.data(passphrase)
        case .lock(let vault):
            writer.byte(Opcode.lock.rawValue)
            writer.optional(vault)
        case .items(let vault, let kind):
            writer.byte(Opcode.items.rawValue)
            writer.string(vault)
            writer.optional(kind)
        case .find(let vault, let query, let kind):
            writer.byte(Opcode.find.rawValue)
            writer.string(vault)
            writer.string(query)
            writer.optional(kind)
        case .codes(let vault, let query, let at):
            writer.byte(Opcode.codes.rawValue)
            writer.string(vault)
            writer.optional(query)
            writer.integer(at)
        case .add(let vault, let kind, let content):
            writer.byte(Opcode.add.rawValue)
            writer.string(vault)
            writer.string(kind)
            writer.data(content)
        case .stop:
            writer.byte(Opcode.stop.rawValue)
        }
        return writer.bytes
    }

    /// Parses a request body from an untrusted peer.
    public init(decoding body: some Collection<UInt8>) throws(AgentWireError) {
        guard body.count <= AgentWire.maximumRequest else { throw .tooLarge(limit: AgentWire.maximumRequest) }
        var reader = WireReader(Array(body), fieldLimit: AgentWire.maximumField)
        let version = try reader.byte()
        guard version == AgentWire.version else { throw .unsupportedVersion(version) }
        let code = try reader.byte()
        guard let opcode = Opcode(rawValue: code) else { throw .unknownOpcode(code) }
        switch opcode {
        case .status: self = .status
        case .unlock: self = .unlock(vault: try reader.string(), passphrase: try reader.data())
        case .lock: self = .lock(vault: try reader.optional())
        case .items: self = .items(vault: try reader.string(), kind: try reader.optional())
        case .find: self = .find(vault: try reader.string(), query: try reader.string(), kind: try reader.optional())
        case .codes: self = .codes(vault: try reader.string(), query: try reader.optional(), atMilliseconds: try reader.integer())
        case .add: self = .add(vault: try reader.string(), kind: try reader.string(), content: try reader.data())
        case .stop: self = .stop
        }
        try reader.finish()
    }
}

extension AgentResponse {
    /// The response's body (without the frame's length).
    public func encoded() -> [UInt8] {
        var writer = WireWriter()
        writer.byte(AgentWire.version)
        switch self {
        case .done:
            writer.byte(Status.done.rawValue)
        case .status(let status):
            writer.byte(Status.status.rawValue)
            writer.integer(status.processID)
            writer.integer(status.idleTimeoutMilliseconds)
            writer.integer(status.maximumMilliseconds)
            writer.byte(status.protections)
            writer.integer(UInt32(status.vaults.count))
            for vault in status.vaults {
                writer.string(vault.vault)
                writer.data(vault.vaultID)
                writer.integer(vault.idleRemainingMilliseconds)
                writer.integer(vault.absoluteRemainingMilliseconds)
            }
        case .items(let items):
            writer.byte(Status.items.rawValue)
            writer.integer(UInt32(items.count))
            for item in items {
                writer.data(item.id)
                writer.string(item.kind)
                writer.integer(item.revision)
                writer.integer(item.updatedAtMilliseconds)
                writer.data(item.content)
            }
        case .codes(let codes):
            writer.byte(Status.codes.rawValue)
            writer.integer(UInt32(codes.count))
            for code in codes {
                writer.data(code.id)
                writer.string(code.name)
                writer.string(code.code)
                writer.integer(code.secondsRemaining ?? -1)
            }
        case .failure(let failure):
            writer.byte(Status.failure.rawValue)
            writer.byte(failure.code.rawValue)
            writer.string(failure.message)
            writer.integer(UInt32(failure.candidates.count))
            for candidate in failure.candidates {
                writer.data(candidate.id)
                writer.string(candidate.kind)
                writer.string(candidate.name)
            }
        }
        return writer.bytes
    }

    /// Parses a response body (the agent is checked to be this user's, but its answer is still parsed with care).
    public init(decoding body: some Collection<UInt8>) throws(AgentWireError) {
        guard body.count <= AgentWire.maximumResponse else { throw .tooLarge(limit: AgentWire.maximumResponse) }
        var reader = WireReader(Array(body), fieldLimit: AgentWire.maximumResponse)
        let version = try reader.byte()
        guard version == AgentWire.version else { throw .unsupportedVersion(version) }
        let code = try reader.byte()
        guard let status = Status(rawValue: code) else { throw .unknownStatus(code) }
        switch status {
        case .done:
            self = .done
        case .status:
            let processID: Int32 = try reader.integer()
            let idle: UInt64 = try reader.integer()
            let maximum: UInt64 = try reader.integer()
            let protections = try reader.byte()
            var vaults: [AgentVaultStatus] = []
            for _ in 0..<(try reader.count()) {
                vaults.append(
                    AgentVaultStatus(
                        vault: try reader.string(), vaultID: try reader.data(), idleRemainingMilliseconds: try reader.integer(),
                        absoluteRemainingMilliseconds: try reader.integer()))
            }
            self = .status(
                AgentStatus(processID: processID, idleTimeoutMilliseconds: idle, maximumMilliseconds: maximum, protections: protections, vaults: vaults))
        case .items:
            var items: [AgentItem] = []
            for _ in 0..<(try reader.count()) {
                items.append(
                    AgentItem(
                        id: try reader.data(), kind: try reader.string(), revision: try reader.integer(), updatedAtMilliseconds: try reader.integer(),
                        content: try reader.data()))
            }
            self = .items(items)
        case .codes:
            var codes: [AgentCode] = []
            for _ in 0..<(try reader.count()) {
                let id = try reader.data()
                let name = try reader.string()
                let code = try reader.string()
                let remaining: Int32 = try reader.integer()
                guard remaining >= -1 else { throw .outOfRange }
                codes.append(AgentCode(id: id, name: name, code: code, secondsRemaining: remaining < 0 ? nil : remaining))
            }
            self = .codes(codes)
        case .failure:
            let raw = try reader.byte()
            let message = try reader.string()
            var candidates: [AgentCandidate] = []
            for _ in 0..<(try reader.count()) {
                candidates.append(AgentCandidate(id: try reader.data(), kind: try reader.string(), name: try reader.string()))
            }
            guard let code = AgentFailure.Code(rawValue: raw) else { throw .outOfRange }
            self = .failure(AgentFailure(code, message, candidates: candidates))
        }
        try reader.finish()
    }
}

/// Frames: a 4-byte big-endian length, then the body.
public enum AgentFrame {
    /// `body` with its length in front.
    public static func framed(_ body: [UInt8]) -> [UInt8] {
        var writer = WireWriter()
        writer.data(body)
        return writer.bytes
    }

    /// The body length a frame header announces, refused above `limit` before anything is read or allocated.
    public static func length(header: some Collection<UInt8>, limit: Int) throws(AgentWireError) -> Int {
        guard header.count == 4 else { throw .truncated }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard length <= limit else { throw .tooLarge(limit: limit) }
        return length
    }
}
