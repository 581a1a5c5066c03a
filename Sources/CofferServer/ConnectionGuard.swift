import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes
import Synchronization

/// How many connections the server holds at once, in all and per client address. About 20,000 connections opened
/// from one address and left half-sent once used up the file descriptors, and `/health` stopped answering until they
/// closed; with these limits, a connection over either is closed as soon as it is accepted, and everyone else is
/// served. One instance is shared by every connection of a server.
final class ConnectionLimits: Sendable {
    let perAddress: Int
    let total: Int
    private let counts = Mutex<(total: Int, byAddress: [String: Int])>((0, [:]))

    init(perAddress: Int, total: Int) {
        self.perAddress = perAddress
        self.total = total
    }

    /// Takes a place for a connection from `address`; false, taking none, when either limit is reached.
    func admit(_ address: String) -> Bool {
        counts.withLock { counts in
            let held = counts.byAddress[address, default: 0]
            guard counts.total < total, held < perAddress else { return false }
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

/// Each connection's guard: admits it against `ConnectionLimits` (or closes it at once), and closes it when a
/// request's body is still arriving `requestTimeout` after its head. A head that never completes, and a keep-alive
/// connection left idle, are closed by Hummingbird's idle timeout (`HTTP1Channel.Configuration.idleTimeout`), which
/// runs from the last request part read or the last answer written.
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

    init(limits: ConnectionLimits, requestTimeout: TimeAmount) {
        self.limits = limits
        self.requestTimeout = requestTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
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
        case .head:
            bodyDeadline?.cancel()
            let channel = context.channel
            bodyDeadline = context.eventLoop.scheduleTask(in: requestTimeout) { channel.close(promise: nil) }
        case .body:
            break
        case .end:
            bodyDeadline?.cancel()
            bodyDeadline = nil
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
