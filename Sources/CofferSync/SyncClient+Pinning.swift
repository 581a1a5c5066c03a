import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

extension SyncClient {
    /// The key the server presents now, after the usual certificate validation, without sending a request: what
    /// trust on first use pins (`coffer sync login --pin-first-use`, `coffer sync pin --reset`). Checked against
    /// `pin` when there is one.
    public func presentedKey() async throws(SyncClientError) -> ServerKeyPin {
        guard let endpoint = endpoint else { throw .pinNeedsHTTPS }
        do {
            return try await PinnedHTTP.exchange(
                host: endpoint.host, port: endpoint.port, context: try tlsContext.get(), pin: pin, request: nil,
                timeout: requestTimeout, maxBody: 0
            ).key
        } catch {
            throw Self.pinnedError(error)
        }
    }

    /// One request over a connection whose server key matched `pin` before anything was written.
    func pinnedExchange(_ request: HTTPClientRequest, pin: ServerKeyPin) async throws(ExchangeFailure) -> PinnedHTTP.Response {
        guard let endpoint, let url = URL(string: request.url) else { throw ExchangeFailure(.invalidServerURL) }
        var head = HTTPRequestHead(version: .http1_1, method: request.method, uri: Self.target(of: url))
        head.headers = request.headers
        head.headers.replaceOrAdd(name: "Host", value: endpoint.hostHeader)
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        var body: ByteBuffer?
        if let requestBody = request.body {
            do {
                body = try await requestBody.collect(upTo: Self.maxAnswerBytes)
            } catch {
                throw ExchangeFailure(.malformedResponse)
            }
        }
        head.headers.replaceOrAdd(name: "Content-Length", value: "\(body?.readableBytes ?? 0)")
        do {
            let answer = try await PinnedHTTP.exchange(
                host: endpoint.host, port: endpoint.port, context: try tlsContext.get(), pin: pin,
                request: PinnedHTTP.Request(head: head, body: body), timeout: requestTimeout, maxBody: Self.maxAnswerBytes)
            guard let response = answer.response else { throw PinnedHTTP.Failure.closed }
            return response
        } catch {
            throw ExchangeFailure(Self.pinnedError(error), reach: Self.reach(error))
        }
    }

    /// Host, port and `Host` header of an https server; nil for http.
    private var endpoint: (host: String, port: Int, hostHeader: String)? {
        guard let url = URL(string: server), url.scheme?.lowercased() == "https", let host = url.host else { return nil }
        let name = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return (host, url.port ?? 443, url.port.map { "\(name):\($0)" } ?? name)
    }

    /// Path and query of `url`, as the request line wants them.
    private static func target(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        return (path.isEmpty ? "/" : path) + (url.query(percentEncoded: true).map { "?\($0)" } ?? "")
    }

    private static func pinnedError(_ error: any Error) -> SyncClientError {
        switch error {
        case let failure as PinnedHTTP.Failure:
            switch failure {
            case .mismatch(let expected, let presented): return .pinMismatch(expected: expected.description, presented: presented.description)
            case .tls: return .transport("TLS handshake failed")
            case .timedOut: return .transport("timed out")
            case .closed: return .transport("connection closed")
            case .tooLarge: return .malformedResponse
            }
        case is NIOSSLError: return .transport("TLS handshake failed")
        default: return .transport(transportDescription(error))
        }
    }
}
