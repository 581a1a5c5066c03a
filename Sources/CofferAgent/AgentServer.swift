import CofferAgentWire
import CofferKit
import CofferPlatform

/// Why the agent could not start.
public enum AgentServerError: Error, CustomStringConvertible {
    case alreadyRunning(String)
    case socket(SocketError)
    case noLockedMemory

    public var description: String {
        switch self {
        case .alreadyRunning(let path): return "an agent already listens at \(path)"
        case .socket(let error): return error.description
        case .noLockedMemory: return "cannot map memory for requests"
        }
    }
}

/// The agent process: hardens itself, listens on its socket and serves one request at a time until SIGTERM, a stop
/// request or an interrupt. SIGHUP locks every vault and keeps running.
public struct AgentServer {
    let socketPath: String
    let core: AgentCore

    public init(socketPath: String, core: AgentCore) {
        self.socketPath = socketPath
        self.core = core
    }

    /// Runs until told to stop; returns after locking everything and removing the socket.
    public func run(ready: () -> Void = {}) throws(AgentServerError) {
        // Before any secret exists in this process.
        let report = ProcessHardening.apply()
        core.protections = (report.memoryLocked ? 1 : 0) | (report.notDumpable ? 2 : 0) | (report.coreDumpsDisabled ? 4 : 0)
        let directory = PrivateFiles.parentDirectory(of: socketPath)
        do {
            try UnixSocket.preparePrivateDirectory(directory)
        } catch {
            throw .socket(error)
        }
        if let running = try? UnixSocket.connect(to: socketPath) {
            UnixSocket.close(running)
            throw .alreadyRunning(socketPath)
        }
        guard let buffer = LockedBuffer(capacity: 4 + AgentWire.maximumRequest) else { throw .noLockedMemory }
        let signals = SignalPipe.install()
        let listener: Int32
        do {
            listener = try UnixSocket.listen(at: socketPath)
        } catch {
            throw .socket(error)
        }
        defer {
            core.lockAll()
            UnixSocket.close(listener)
            try? PrivateFiles.remove(socketPath)
        }
        ready()
        while true {
            let wait = core.millisecondsUntilNextLock().map { Int32(clamping: $0 + 1) } ?? -1
            let readable = SignalPipe.waitReadable([listener, signals], timeoutMilliseconds: wait)
            for signal in SignalPipe.drain(signals) {
                switch signal {
                case .hangUp: core.lockAll()
                case .terminate, .interrupt: return
                }
            }
            core.expire()
            let outcome = readable.contains(listener) ? serveOne(listener, buffer: buffer) : .carryOn
            // The heap wipes what is freed (`ProcessHardening.wipingAllocatorTunables`); this thread's stack keeps the
            // frames of the request's calls until it is overwritten.
            ProcessHardening.scrubStack()
            if outcome == .stop { return }
        }
    }

    enum Outcome { case carryOn, stop }

    /// Reads one request into the locked buffer, answers it and wipes the buffer. A peer of another uid, a frame over
    /// the limit or a body that does not parse is answered (or dropped) without touching any vault.
    private func serveOne(_ listener: Int32, buffer: LockedBuffer) -> Outcome {
        guard let connection = try? UnixSocket.accept(listener) else { return .carryOn }
        defer { UnixSocket.close(connection) }
        UnixSocket.setTimeout(connection, milliseconds: 5_000)
        defer { buffer.wipe() }
        let request: Result<AgentRequest, AgentWireError>? = buffer.withBytes { memory in
            do {
                let header = UnsafeMutableRawBufferPointer(rebasing: memory[0..<4])
                try UnixSocket.receive(into: header, on: connection)
                let length: Int
                do throws(AgentWireError) {
                    length = try AgentFrame.length(header: header, limit: AgentWire.maximumRequest)
                } catch {
                    return .failure(error)
                }
                let body = UnsafeMutableRawBufferPointer(rebasing: memory[4..<4 + length])
                try UnixSocket.receive(into: body, on: connection)
                do throws(AgentWireError) {
                    return .success(try AgentRequest(decoding: body))
                } catch {
                    return .failure(error)
                }
            } catch {
                return nil
            }
        }
        let response: AgentResponse
        switch request {
        case nil: return .carryOn
        case .failure(let error)?: response = .failure(AgentFailure(.badRequest, error.description))
        case .success(let decoded)?: response = core.handle(decoded)
        }
        let frame = AgentFrame.framed(response.encoded())
        try? frame.withUnsafeBytes { try UnixSocket.send($0, on: connection) }
        if case .success(.stop)? = request { return .stop }
        return .carryOn
    }
}
