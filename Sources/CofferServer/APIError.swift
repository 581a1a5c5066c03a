import CofferCrypto
import CofferServerStore
import CofferSyncAPI
import Foundation
import HTTPTypes
import Hummingbird

/// Every error the API answers with: a status, a stable code a client can act on, and a message written for people.
/// Messages are fixed phrases; none quotes a request value, so no secret or payload can leak through an error.
struct APIError: Error, HTTPResponseError, Sendable {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    var details: ErrorBody.Details?
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String, details: ErrorBody.Details? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
    }

    static func invalidRequest(_ message: String, field: String? = nil) -> APIError {
        APIError(.badRequest, "invalid_request", message, details: field.map { ErrorBody.Details(field: $0) })
    }

    static let missingToken = APIError(.unauthorized, "unauthorized", "Missing or invalid Authorization header")
    static let invalidToken = APIError(.unauthorized, "unauthorized", "Invalid or expired access token")
    static let wrongTokenType = APIError(.unauthorized, "unauthorized", "Invalid token type (expected access token)")
    static let invalidCredentials = APIError(.unauthorized, "unauthorized", "Invalid email or passphrase")
    static let invalidRefreshToken = APIError(.unauthorized, "unauthorized", "Invalid or expired refresh token")
    /// A refresh token this server signed that its database does not know: the database was restored or rolled back.
    static let sessionLost = APIError(
        .unauthorized, "session_lost",
        "This server has no record of the session it issued: its database was restored from a backup or rolled back; log in again")
    static let cardNotFound = APIError(.notFound, "not_found", "Card not found")
    static let notFound = APIError(.notFound, "not_found", "No such endpoint")
    static let networkNotFound = APIError(.notFound, "not_found", "Network not found")
    static let adminRequired = APIError(.forbidden, "forbidden", "Admin access required")
    static var missingOperatorToken: APIError {
        var error = APIError(.unauthorized, "unauthorized", "Missing or invalid Authorization header")
        error.headers[.wwwAuthenticate] = "Bearer"
        return error
    }
    static let syncDisabled = APIError(
        .forbidden, "sync_disabled", "Sync is off for this account (preferences.sync_enabled is false); it cannot push")
    static let protectedItem = APIError(
        .forbidden, "protected_item", "An item written through /v1/cards cannot be replaced or deleted by a sync push")
    static let accountExists = APIError(.conflict, "account_exists", "An account with that email already exists")
    static let internalError = APIError(.internalServerError, "internal_error", "Internal server error")
    /// The store failed (a database failover, an unreachable database): the client tries again after `Retry-After`.
    static var unavailable: APIError {
        var error = APIError(.serviceUnavailable, "unavailable", "The service is unavailable; try again later")
        error.headers[.retryAfter] = String(unavailableRetrySeconds)
        return error
    }

    /// The first wait a client takes; its own backoff doubles from there through a failover (about 20 s in contrib/ha).
    static let unavailableRetrySeconds = 1

    /// `/health` when the database takes no writes.
    static func databaseUnavailable(_ health: DatabaseHealth) -> APIError {
        var error = APIError(
            .serviceUnavailable, "database_unavailable",
            health == .readOnly ? "The database is a read-only standby" : "The database does not answer")
        error.headers[.retryAfter] = String(unavailableRetrySeconds)
        return error
    }

    static func tooLarge(_ message: String, limit: Int) -> APIError {
        APIError(.contentTooLarge, "payload_too_large", message, details: ErrorBody.Details(limit: limit))
    }

    static func rateLimited(retryAfter seconds: Int) -> APIError {
        var error = APIError(.tooManyRequests, "rate_limited", "Too many requests. Try again in \(seconds) seconds.")
        error.headers[.retryAfter] = String(seconds)
        return error
    }

    static func conflict(_ items: [ItemRow]) -> APIError {
        APIError(
            .conflict, "conflict", "The server holds newer revisions of some items; pull, merge and push again",
            details: ErrorBody.Details(conflicts: items))
    }

    /// The answer to a push (or passphrase change) the store refused.
    static func refusedPush(_ outcome: PushOutcome) -> APIError {
        switch outcome {
        case .accepted:
            return APIError(.internalServerError, "internal", "Internal error")
        case .conflicts(let stored):
            return .conflict(stored.map(\.row))
        case .staleHead(let epoch):
            return APIError(
                .conflict, "stale_head", "Another device changed the vault first; pull, verify and push again",
                details: ErrorBody.Details(headEpoch: epoch))
        case .quotaExceeded(let limit):
            return APIError(
                .contentTooLarge, "quota_exceeded",
                "This account may store at most \(limit) bytes of items; delete some (or their photos) to make room",
                details: ErrorBody.Details(limit: Int(clamping: limit)))
        case .manifestRequired:
            return APIError(
                .conflict, "manifest_required",
                "This account keeps verified vault state: a change needs a manifest (update coffer)",
                details: ErrorBody.Details(field: "manifest"))
        case .incompleteRotation(let staged):
            return APIError(
                .conflict, "rotation_incomplete", "The rotation holds another number of rows than the commit names; stage them again",
                details: ErrorBody.Details(field: "items", staged: staged))
        }
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        response()
    }

    func response() -> Response {
        let body = ErrorBody(error: code, message: message, details: details)
        var response = JSONResponse.make(body, status: status)
        for field in headers { response.headers.append(field) }
        return response
    }

    /// The JSON error body alone, for answers written below the router (`MalformedRequestResponder`).
    func bodyData() -> Data {
        (try? WireJSON.encoder().encode(ErrorBody(error: code, message: message, details: details)))
            ?? Data(#"{"error":"internal_error","message":"Internal server error"}"#.utf8)
    }
}

/// JSON responses written with the wire encoder.
enum JSONResponse {
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let data: Data
        do {
            data = try WireJSON.encoder().encode(value)
        } catch {
            data = Data(#"{"error":"internal_error","message":"Internal server error"}"#.utf8)
            return Response(
                status: .internalServerError, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
        }
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A 200 answer whose JSON is already written.
    static func make(body: ByteBuffer) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: body))
    }

    static func noContent() -> Response {
        Response(status: .noContent)
    }
}
