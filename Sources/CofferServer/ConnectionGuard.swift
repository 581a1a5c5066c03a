import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import CofferSyncAPI
import Synchronization

/// How many connections the server holds at once, in all and per client address. About 20,000 connections opened
/// from one address and left half-sent once used up the file descriptors, and `/health` stopped answering until they
/// closed; with these limits, a connection over either is closed as soon as it is accepted, and everyone else is
/// served. One instance is shared by every connection of a server.
final class ConnectionLimits: Sendable {
    let perAddress: Int
    let total: Int
    /// Load balancers: every client's connection arrives from them, so only `total` limits theirs.
    let proxies: TrustedProxies
    private let counts = Mutex<(total: Int, byAddress: [String: Int])>((0, [:]))

    init(perAddress: Int, total: Int, proxies: TrustedProxies = TrustedProxies(networks: [])) {
        self.perAddress = perAddress
        self.total = total
        self.proxies = proxies
    }

    /// Takes a place for a connection from `address`; false, taking none, when either limit is reached.
    func admit(_ address: String) -> Bool {
        let proxy = proxies.isTrusted(address)
        return counts.withLock { counts in
            let held = counts.byAddress[address, default: 0]
            guard counts.total < total, proxy || held < perAddress else { return false }
            counts.total += 1
            counts.byAddress[address] = held + 1
            return true
        }
    }

    /// Gives back the place `admit` took.
    func release(_ address: String) {
        counts.withLock { counts in
            counts.total -= 1
            let held = counts.byAddress[address, default: 1] - 1
            counts.byAddress[address] = held > 0 ? held : nil
        }
    }
}

/// The bytes a connection has read towards its current request, and how many it may: shared by the connection's
/// `ConnectionGuard` (which knows where requests begin and end) and its `RawByteBudget` handler (which sees the bytes
/// before the HTTP parser). Both run on the connection's event loop.
final class RequestByteBudget {
    /// Before a request's head: the head alone, which the parser caps at 80 KiB.
    static let headLimit = 1 << 20
    var read = 0
    var limit = RequestByteBudget.headLimit

    /// The most raw bytes a request to `path` may take: twice the largest body its route reads (chunk framing, and
    /// the chunk extensions the parser reads and drops, count here and nowhere else) and the head.
    static func limit(path: String) -> Int {
        let body = path.hasPrefix("/v1/admin/") ? PlacesRoutes.maxImportBytes : SyncLimits.maxBodyBytes
        return 2 * body + headLimit
    }
}

/// Counts every byte read before the HTTP parser sees it, and closes the connection when a request takes more than
/// its budget: a body sent in one-byte chunks, or chunk extensions the parser reads and drops without counting them
/// as body, would otherwise be read for as long as the request timeout lets them.
final class RawByteBudget: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let budget: RequestByteBudget

    init(_ budget: RequestByteBudget) {
        self.budget = budget
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        budget.read += unwrapInboundIn(data).readableBytes
        guard budget.read <= budget.limit else {
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
    }
}

/// Each connection's guard: admits it against `ConnectionLimits` (or closes it at once), closes it when a request's
/// body is still arriving `requestTimeout` after its head, and (through a `RawByteBudget` it puts first in the
/// pipeline) when a request takes more raw bytes than its route could need. A head that never completes, and a
/// keep-alive connection left idle, are closed by Hummingbird's idle timeout
/// (`HTTP1Channel.Configuration.idleTimeout`), which runs from the last request part read or the last answer written.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let limits: ConnectionLimits
    private let requestTimeout: TimeAmount
    /// The address whose place this connection holds; nil before it is admitted, or when it was refused.
    private var admitted: String?
    private var bodyDeadline: Scheduled<Void>?
    private let budget = RequestByteBudget()

    init(limits: ConnectionLimits, requestTimeout: TimeAmount) {
        self.limits = limits
        self.requestTimeout = requestTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if (try? context.pipeline.syncOperations.addHandler(RawByteBudget(budget), position: .first)) == nil {
            context.close(promise: nil)
            return
        }
        if context.channel.isActive { admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        leave()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        leave()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            budget.limit = RequestByteBudget.limit(path: head.path ?? "/")
            bodyDeadline?.cancel()
            let channel = context.channel
            bodyDeadline = context.eventLoop.scheduleTask(in: requestTimeout) { channel.close(promise: nil) }
        case .body:
            break
        case .end:
            bodyDeadline?.cancel()
            bodyDeadline = nil
            budget.read = 0
            budget.limit = RequestByteBudget.headLimit
        }
        context.fireChannelRead(data)
    }

    private func admit(_ context: ChannelHandlerContext) {
        guard admitted == nil else { return }
        // A connection without an IP address (a Unix socket) counts under one name.
        let address = context.channel.remoteAddress?.ipAddress ?? "local"
        if limits.admit(address) {
            admitted = address
        } else {
            context.close(promise: nil)
        }
    }

    private func leave() {
        bodyDeadline?.cancel()
        bodyDeadline = nil
        if let address = admitted { limits.release(address) }
        admitted = nil
    }
}
