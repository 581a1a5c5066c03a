import CofferServerStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Turns every failure into the JSON error body, adds the security headers to every answer, and logs one line per
/// request with method, route pattern (never the concrete path, which may hold ids), status and duration.
struct ResponseHardeningMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as APIError {
            response = error.response()
        } catch let error as HTTPError {
            let allowed = error.status == .notFound ? routes.methods(for: request.uri.path) : []
            if allowed.isEmpty {
                response = Self.translate(error).response()
            } else {
                var notAllowed = APIError(.methodNotAllowed, "method_not_allowed", "Method not allowed")
                notAllowed.headers[.allow] = allowed.map(\.rawValue).sorted().joined(separator: ", ")
                response = notAllowed.response()
            }
        } catch let error as ServerStoreError {
            logger.error("store failure", metadata: ["error": "\(error)"])
            response = APIError.unavailable.response()
        } catch {
            logger.error("unhandled failure", metadata: ["type": "\(type(of: error))"])
            response = APIError.internalError.response()
        }
        Self.harden(&response.headers)
        let elapsed = ContinuousClock.now - started
        logger.info(
            "request",
            metadata: [
                "method": "\(request.method.rawValue)", "route": "\(context.endpointPath ?? "unmatched")",
                "status": "\(response.status.code)",
                "ms": "\(elapsed.components.attoseconds / 1_000_000_000_000_000 + elapsed.components.seconds * 1000)",
            ])
        return response
    }

    /// The security headers of every answer, also those written below the router (`MalformedRequestResponder`).
    static func harden(_ headers: inout HTTPFields) {
        headers[.strictTransportSecurity] = "max-age=31536000; includeSubDomains"
        headers[.xContentTypeOptions] = "nosniff"
        headers[.xFrameOptions] = "DENY"
        // Everything is private and fresh unless a route says otherwise (public places tiles).
        if headers[.cacheControl] == nil { headers[.cacheControl] = "no-store" }
        headers[.referrerPolicy] = "no-referrer"
    }

    /// Hummingbird's own errors (unknown route, body too large, undecodable JSON) in our error body. The framework's
    /// message may quote the request, so it is replaced by a fixed phrase.
    static func translate(_ error: HTTPError) -> APIError {
        switch error.status {
        case .notFound: return .notFound
        case .methodNotAllowed: return APIError(.methodNotAllowed, "method_not_allowed", "Method not allowed")
        case .contentTooLarge: return .tooLarge("Request body too large", limit: 0)
        case .unsupportedMediaType: return APIError(.unsupportedMediaType, "invalid_request", "Body must be JSON")
        case .badRequest: return .invalidRequest("Malformed request")
        case .unauthorized: return .missingToken
        default:
            return APIError(error.status, "invalid_request", error.status.reasonPhrase)
        }
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let xFrameOptions = HTTPField.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!
}
