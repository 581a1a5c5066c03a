import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

/// A pin of the sync server's public key: the SHA-256 of its certificate's SubjectPublicKeyInfo (DER), the value of
/// HPKP's `pin-sha256` and of curl's `--pinnedpubkey sha256//…`. A pinned client still validates the certificate
/// chain and host name as usual, then refuses a server whose key is not the pinned one before it sends anything.
public struct ServerKeyPin: Sendable, Hashable, CustomStringConvertible {
    /// The 32-byte digest.
    public let sha256: [UInt8]

    /// The pin of a DER-encoded SubjectPublicKeyInfo.
    public init(subjectPublicKeyInfo der: some DataProtocol) {
        sha256 = Array(SHA256.hash(data: Array(der)))
    }

    /// Parses base64 of 32 bytes, with or without curl's `sha256//` prefix; nil for anything else.
    public init?(_ text: String) {
        var text = Substring(text.trimmingCharacters(in: .whitespaces))
        if text.hasPrefix("sha256//") { text = text.dropFirst(8) }
        guard let bytes = Data(base64Encoded: String(text)), bytes.count == 32 else { return nil }
        sha256 = Array(bytes)
    }

    /// `sha256//` and the digest in base64: how pins are shown, stored and compared by users.
    public var description: String { "sha256//" + Data(sha256).base64EncodedString() }
}

/// HTTP/1.1 over one TLS connection per request, for a pinned server. AsyncHTTPClient offers no hook between the TLS
/// handshake and the first request bytes, so pinned requests go through this instead: the handshake (with NIOSSL's
/// usual chain and host-name validation) completes, the leaf's key is compared with the pin, and only then is the
/// request written.
enum PinnedHTTP {
    struct Request: Sendable {
        var head: HTTPRequestHead
        var body: ByteBuffer?
    }

    struct Response: Sendable {
        var status: Int
        var body: ByteBuffer
        /// The `Retry-After` header, in seconds, when it holds a number.
        var retryAfter: Int? = nil
    }

    enum Failure: Error {
        case mismatch(expected: ServerKeyPin, presented: ServerKeyPin)
        case tls
        case timedOut
        case closed
        case tooLarge
    }

    /// Connects to `host:port`, completes the handshake and checks the presented key against `pin` (any key when
    /// nil); then sends `request`, if any, and returns the key and the answer.
    static func exchange(
        host: String, port: Int, context: NIOSSLContext, pin: ServerKeyPin?, request: Request?, timeout: TimeAmount,
        maxBody: Int
    ) async throws -> (key: ServerKeyPin, response: Response?) {
        // SNI takes a name, never an address; NIOSSL then checks the certificate against the address itself.
        let serverName = host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.next().makePromise(of: (key: ServerKeyPin, response: Response?).self)
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.seconds(3))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    try operations.addHandler(NIOSSLClientHandler(context: context, serverHostname: serverName))
                    try operations.addHTTPClientHandlers()
                    try operations.addHandler(
                        PinnedExchangeHandler(pin: pin, request: request, maxBody: maxBody, timeout: timeout, promise: promise))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: port).get()
        } catch {
            promise.fail(error)
            throw error
        }
        defer { channel.close(promise: nil) }
        return try await promise.futureResult.get()
    }
}

/// The TLS context of a client's pinned connections, made on first use (it loads the trust roots) and then shared.
final class PinnedTLSContext: Sendable {
    private let configuration: TLSConfiguration
    private let context = Mutex<NIOSSLContext?>(nil)

    init(_ configuration: TLSConfiguration) {
        self.configuration = configuration
    }

    func get() throws -> NIOSSLContext {
        try context.withLock { cached in
            if let cached { return cached }
            let made = try NIOSSLContext(configuration: configuration)
            cached = made
            return made
        }
    }
}

/// Waits for the handshake, checks the pin, writes the request, collects the answer. It runs on the channel's event
/// loop only, and completes its promise once.
private final class PinnedExchangeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let pin: ServerKeyPin?
    private let request: PinnedHTTP.Request?
    private let maxBody: Int
    private let timeout: TimeAmount
    private let promise: EventLoopPromise<(key: ServerKeyPin, response: PinnedHTTP.Response?)>
    private var key: ServerKeyPin?
    private var status: Int?
    private var retryAfter: Int?
    private var body = ByteBuffer()
    private var finished = false
    private var deadline: Scheduled<Void>?

    init(
        pin: ServerKeyPin?, request: PinnedHTTP.Request?, maxBody: Int, timeout: TimeAmount,
        promise: EventLoopPromise<(key: ServerKeyPin, response: PinnedHTTP.Response?)>
    ) {
        self.pin = pin
        self.request = request
        self.maxBody = maxBody
        self.timeout = timeout
        self.promise = promise
    }

    func handlerAdded(context: ChannelHandlerContext) {
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            self.fail(PinnedHTTP.Failure.timedOut, context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? TLSUserEvent, case .handshakeCompleted = event else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        let presented: ServerKeyPin
        do {
            let tls = try context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
            guard let certificate = tls.peerCertificate else { throw PinnedHTTP.Failure.tls }
            presented = ServerKeyPin(subjectPublicKeyInfo: try certificate.extractPublicKey().toSPKIBytes())
        } catch {
            fail(PinnedHTTP.Failure.tls, context: context)
            return
        }
        if let pin, pin != presented {
            fail(PinnedHTTP.Failure.mismatch(expected: pin, presented: presented), context: context)
            return
        }
        key = presented
        guard let request else {
            succeed(response: nil, context: context)
            return
        }
        context.write(wrapOutboundOut(.head(request.head)), promise: nil)
        if let payload = request.body { context.write(wrapOutboundOut(.body(.byteBuffer(payload))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
            retryAfter = head.headers.first(name: "Retry-After").flatMap { Int($0) }
        case .body(var part):
            guard body.readableBytes + part.readableBytes <= maxBody else {
                fail(PinnedHTTP.Failure.tooLarge, context: context)
                return
            }
            body.writeBuffer(&part)
        case .end:
            guard let status else {
                fail(PinnedHTTP.Failure.closed, context: context)
                return
            }
            succeed(response: PinnedHTTP.Response(status: status, body: body, retryAfter: retryAfter), context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error is NIOSSLError ? PinnedHTTP.Failure.tls : error, context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(PinnedHTTP.Failure.closed, context: context)
        context.fireChannelInactive()
    }

    private func succeed(response: PinnedHTTP.Response?, context: ChannelHandlerContext) {
        guard !finished, let key else { return }
        finished = true
        deadline?.cancel()
        promise.succeed((key: key, response: response))
        context.close(promise: nil)
    }

    private func fail(_ error: any Error, context: ChannelHandlerContext) {
        guard !finished else { return }
        finished = true
        deadline?.cancel()
        promise.fail(error)
        context.close(promise: nil)
    }
}
