import CofferSyncAPI
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Answers requests the HTTP/1 parser refuses with the API's JSON error body and security headers, then closes the
/// connection (nothing after a parse error can be trusted to be a request). Hummingbird's own answer to a parser
/// error is a bare 400 without either, and an error inside a body reached the routes as a failed body read, which
/// they answered as too large (413).
///
/// It sits in each connection's pipeline after the HTTP codecs (`HTTP1Channel`'s additional handlers), so it sees
/// the parser's errors, the request parts and the response parts:
/// - an error while a request's body is being read goes on to the route as an `APIError`, so the route's body read
///   fails and the route answers with it (the middleware adds the headers); it is not passed on as the parser's
///   error, for which Hummingbird would write its bare 400 after the route's answer;
/// - any other error (a garbage request line, oversized headers, a head that does not convert) is answered here, once
///   the answers to the requests before it are complete, so that answers keep their order on the connection.
final class MalformedRequestResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Requests whose head was read and whose answer has not ended.
    private var unanswered = 0
    /// Between a request's head and its end.
    private var readingBody = false
    /// The refusal decided on, waiting for earlier answers while `unanswered > 0`; once set, nothing more is read.
    private var refusal: APIError?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard refusal == nil else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            // A body in another transfer coding (gzip, chunked) would reach the routes still coded: refused unread.
            if let refused = Self.refusal(transferEncoding: head.headerFields[values: .transferEncoding]) {
                refusal = refused
                if unanswered == 0 { answer(context, refused) }
                return
            }
            unanswered += 1
            readingBody = true
        case .body:
            break
        case .end:
            readingBody = false
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        guard case .end = unwrapOutboundIn(data) else { return }
        unanswered = max(unanswered - 1, 0)
        if unanswered == 0, let refusal { answer(context, refusal) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let refused = Self.refusal(for: error) else {
            context.fireErrorCaught(error)
            return
        }
        // The decoder stays in its failed state; a later error adds nothing.
        guard refusal == nil else { return }
        if readingBody {
            context.fireErrorCaught(refused)
            return
        }
        refusal = refused
        if unanswered == 0 { answer(context, refused) }
    }

    /// 501 for a `Transfer-Encoding` other than plain `chunked` (RFC 9112 §6.1: a server that does not understand a
    /// coding answers 501); nil when there is none or it is `chunked`. The parser itself refuses `chunked` given twice,
    /// as a malformed request.
    static func refusal(transferEncoding values: [String]) -> APIError? {
        guard !values.isEmpty else { return nil }
        let codings = values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard codings != ["chunked"] else { return nil }
        return APIError(.notImplemented, "not_implemented", "Transfer-Encoding other than chunked is not supported")
    }

    /// The answer to a parser or conversion error; nil for errors that are not about the request's bytes.
    static func refusal(for error: any Error) -> APIError? {
        switch error {
        case HTTPParserError.headerOverflow:
            return APIError(.requestHeaderFieldsTooLarge, "headers_too_large", "Request header fields too large")
        case is HTTPParserError, is HTTP1TypeConversionError:
            return APIError(.badRequest, "invalid_request", "Malformed HTTP request")
        default:
            return nil
        }
    }

    private func answer(_ context: ChannelHandlerContext, _ error: APIError) {
        let body = ByteBuffer(bytes: error.bodyData())
        var headers: HTTPFields = [
            .contentType: "application/json; charset=utf-8", .contentLength: String(body.readableBytes), .connection: "close",
        ]
        ResponseHardeningMiddleware<CofferRequestContext>.harden(&headers)
        context.write(wrapOutboundOut(.head(HTTPResponse(status: error.status, headerFields: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}

extension CofferServerApplication {
    /// HTTP/1 with each connection admitted and timed by `ConnectionGuard`, malformed requests answered by
    /// `MalformedRequestResponder`, and idle connections closed after `configuration.idleTimeout`.
    static func http1(_ configuration: ServerConfiguration) -> HTTPServerBuilder {
        let limits = ConnectionLimits(
            perAddress: configuration.maxConnectionsPerAddress, total: configuration.maxConnections,
            proxies: TrustedProxies(networks: configuration.trustedProxies))
        let requestTimeout = TimeAmount.milliseconds(Int64(configuration.requestTimeout * 1000))
        return .http1(
            configuration: HTTP1Channel.Configuration(
                additionalChannelHandlers: [ConnectionGuard(limits: limits, requestTimeout: requestTimeout), MalformedRequestResponder()],
                idleTimeout: .milliseconds(Int64(configuration.idleTimeout * 1000))))
    }
}
