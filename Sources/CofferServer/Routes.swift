import CofferServerStore
import CofferSyncAPI
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOFoundationEssentialsCompat
import Synchronization

/// The request context: Hummingbird's core storage plus the client's address (for per-address limits and the audit
/// log) and the body cap.
public struct CofferRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's address: the connection's peer, or behind a trusted proxy the address it forwarded
    /// (`ClientAddressMiddleware`).
    public internal(set) var remoteAddress: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress
    }

    public var maxUploadSize: Int { SyncLimits.maxBodyBytes }
}

/// Binds every endpoint to `ServerCore`.
struct Routes {
    let core: ServerCore

    func register(on router: Router<CofferRequestContext>, table: RouteTable) {
        let v1 = RecordingGroup(group: router.group("v1"), prefix: "/v1", table: table)

        v1.post("auth/prelogin") { request, context in
            let body = try await decode(PreloginRequest.self, request, context)
            return JSONResponse.make(try await core.prelogin(body, address: context.remoteAddress))
        }
        v1.post("auth/register") { request, context in
            let body = try await decode(RegisterRequest.self, request, context)
            return JSONResponse.make(try await core.register(body, address: context.remoteAddress), status: .created)
        }
        v1.post("auth/login") { request, context in
            let body = try await decode(LoginRequest.self, request, context)
            return JSONResponse.make(try await core.login(body, address: context.remoteAddress))
        }
        v1.post("auth/refresh") { request, context in
            let body = try await decode(RefreshRequest.self, request, context)
            return JSONResponse.make(try await core.refresh(body, address: context.remoteAddress))
        }
        v1.post("auth/apple") { request, context in
            let body = try await decode(AppleAuthRequest.self, request, context)
            return JSONResponse.make(try await core.apple(body, address: context.remoteAddress))
        }
        v1.post("auth/logout") { request, context in
            let session = try await authenticate(request, context)
            try await core.logout(session, address: context.remoteAddress)
            return JSONResponse.noContent()
        }

        v1.get("account") { request, context in
            let session = try await authenticate(request, context)
            return JSONResponse.make(try await core.account(session))
        }
        v1.post("account/passphrase") { request, context in
            let session = try await authenticate(request, context)
            let body = try await decode(PassphraseChangeRequest.self, request, context)
            return JSONResponse.make(try await core.changePassphrase(body, session: session, address: context.remoteAddress))
        }

        v1.post("sync/push") { request, context in
            let session = try await authenticate(request, context)
            let body = try await decode(PushRequest.self, request, context)
            return JSONResponse.make(try await core.push(body, session: session))
        }
        v1.get("sync/changes") { request, context in
            let session = try await authenticate(request, context)
            let since = try integer(request, "since", default: 0)
            let limit = try integer(request, "limit", default: Int64(SyncLimits.defaultPageItems))
            let answer = try await core.changes(since: since, limit: Int(clamping: limit), session: session)
            return JSONResponse.make(body: ChangesJSON.body(answer.page, head: answer.head))
        }
        v1.get("sync/manifests") { request, context in
            let session = try await authenticate(request, context)
            let after = try integer(request, "after", default: 0)
            let limit = try integer(request, "limit", default: Int64(SyncLimits.maxPageManifests))
            return JSONResponse.make(try await core.manifests(after: after, limit: Int(clamping: limit), session: session))
        }
        v1.post("sync/rotations/:rotation/items") { request, context in
            let session = try await authenticate(request, context)
            let rotation = try rotationID(context)
            let body = try await decode(RotationItemsRequest.self, request, context)
            return JSONResponse.make(try await core.stageRotation(body, rotation: rotation, session: session))
        }
        v1.post("sync/rotations/:rotation/commit") { request, context in
            let session = try await authenticate(request, context)
            let rotation = try rotationID(context)
            let body = try await decode(RotationCommitRequest.self, request, context)
            return JSONResponse.make(
                try await core.commitRotation(body, rotation: rotation, session: session, address: context.remoteAddress))
        }
        v1.delete("sync/rotations/:rotation") { request, context in
            let session = try await authenticate(request, context)
            try await core.discardRotation(try rotationID(context), session: session)
            return JSONResponse.noContent()
        }
        v1.delete("sync/items") { request, context in
            let session = try await authenticate(request, context)
            return JSONResponse.make(["deleted": try await core.revokeSync(session: session, address: context.remoteAddress)])
        }

        v1.get("cards") { request, context in
            let session = try await authenticate(request, context)
            let query = request.uri.queryParameters
            let includeArchived = try boolean(query.get("include_archived"), field: "include_archived")
            let networkID = query.get("network_id").flatMap { $0.isEmpty ? nil : $0 }
            let tags = query.get("tags").map { $0.split(separator: ",").map(String.init) } ?? []
            return JSONResponse.make(
                try await core.listCards(session: session, includeArchived: includeArchived, networkID: networkID, tags: tags))
        }
        v1.post("cards") { request, context in
            let session = try await authenticate(request, context)
            let body = try await decode(CardCreateRequest.self, request, context)
            return JSONResponse.make(try await core.createCard(body, session: session), status: .created)
        }
        v1.get("cards/:id") { request, context in
            let session = try await authenticate(request, context)
            return JSONResponse.make(try await core.card(id: try cardID(context), session: session))
        }
        v1.patch("cards/:id") { request, context in
            let session = try await authenticate(request, context)
            let id = try cardID(context)
            let body = try await decode(CardPatchRequest.self, request, context)
            return JSONResponse.make(try await core.patchCard(id: id, body, session: session))
        }
        v1.delete("cards/:id") { request, context in
            let session = try await authenticate(request, context)
            try await core.archiveCard(id: try cardID(context), session: session)
            return JSONResponse.noContent()
        }

        v1.get("user/export") { request, context in
            let session = try await authenticate(request, context)
            var response = JSONResponse.make(try await core.export(session: session))
            response.headers[.contentDisposition] = "attachment; filename=\"coffer-export.json\""
            return response
        }
        v1.delete("user") { request, context in
            let session = try await authenticate(request, context)
            try await core.deleteUser(session, address: context.remoteAddress)
            return JSONResponse.noContent()
        }

        PlacesRoutes(core: core).register(on: v1)

        let health = RecordingGroup(group: router.group(""), prefix: "", table: table)
        health.get("health") { _, _ in
            let database = await core.health.health()
            guard database == .writable else { throw APIError.databaseUnavailable(database) }
            return JSONResponse.make(["status": "ok", "database": database.rawValue])
        }
    }

    func authenticate(_ request: Request, _ context: CofferRequestContext) async throws -> AuthenticatedSession {
        try await core.authenticate(authorization: request.headers[.authorization], address: context.remoteAddress)
    }

    /// Reads the whole body (capped) and decodes it strictly; a decoding failure names the field, never its value.
    func decode<T: Decodable>(_ type: T.Type, _ request: Request, _ context: CofferRequestContext) async throws -> T {
        if let contentType = request.headers[.contentType], !contentType.lowercased().hasPrefix("application/json") {
            throw APIError(.unsupportedMediaType, "invalid_request", "Body must be JSON (Content-Type: application/json)")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: context.maxUploadSize)
        } catch let error as APIError {
            // A body the HTTP parser refused (`MalformedRequestResponder`).
            throw error
        } catch {
            throw APIError.tooLarge("Request body too large", limit: context.maxUploadSize)
        }
        do {
            return try WireJSON.decoder().decode(T.self, from: Data(buffer: buffer))
        } catch let error as APIError {
            throw error
        } catch WireLimitError.boxTooLarge {
            throw APIError.tooLarge("An item box holds at most \(SyncLimits.maxBoxBytes) bytes", limit: SyncLimits.maxBoxBytes)
        } catch let DecodingError.keyNotFound(key, _) {
            throw APIError.invalidRequest("Missing required field", field: key.stringValue)
        } catch let DecodingError.typeMismatch(_, context) {
            throw APIError.invalidRequest("Field has the wrong type", field: Self.path(context.codingPath))
        } catch let DecodingError.valueNotFound(_, context) {
            throw APIError.invalidRequest("Field must not be null", field: Self.path(context.codingPath))
        } catch let DecodingError.dataCorrupted(context) {
            throw APIError.invalidRequest("Malformed JSON or field value", field: context.codingPath.isEmpty ? nil : Self.path(context.codingPath))
        } catch {
            throw APIError.invalidRequest("Malformed JSON")
        }
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    func integer(_ request: Request, _ name: String, default value: Int64) throws -> Int64 {
        guard let text = request.uri.queryParameters.get(name) else { return value }
        guard let number = Int64(text) else { throw APIError.invalidRequest("\(name) must be an integer", field: name) }
        return number
    }

    private func boolean(_ text: String?, field: String) throws -> Bool {
        switch text {
        case nil, "false", "0": return false
        case "true", "1": return true
        default: throw APIError.invalidRequest("\(field) must be true or false", field: field)
        }
    }

    private func rotationID(_ context: CofferRequestContext) throws -> UUID {
        guard let text = context.parameters.get("rotation"), let id = UUID(uuidString: text) else {
            throw APIError.invalidRequest("The rotation id must be a UUID", field: "rotation")
        }
        return id
    }

    private func cardID(_ context: CofferRequestContext) throws -> UUID {
        guard let text = context.parameters.get("id"), let id = UUID(uuidString: text) else { throw APIError.cardNotFound }
        return id
    }
}

/// Which methods each route pattern takes, so that a known path asked with another method answers 405 with
/// `Allow` rather than 404. Filled while routes are registered, read by the middleware afterwards.
final class RouteTable: Sendable {
    private let patterns = Mutex<[(segments: [Substring], methods: [HTTPRequest.Method])]>([])

    func add(_ path: String, _ method: HTTPRequest.Method) {
        let segments = path.split(separator: "/")
        patterns.withLock { patterns in
            if let index = patterns.firstIndex(where: { $0.segments == segments }) {
                patterns[index].methods.append(method)
            } else {
                patterns.append((segments, [method]))
            }
        }
    }

    /// The methods a request path takes (empty for an unknown path); `:name` segments match any one segment.
    func methods(for path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "?", maxSplits: 1).first.map { $0.split(separator: "/") } ?? []
        return patterns.withLock { patterns in
            patterns.first { pattern in
                pattern.segments.count == segments.count
                    && zip(pattern.segments, segments).allSatisfy { $0.hasPrefix(":") || $0 == $1 }
            }?.methods ?? []
        }
    }
}

/// A router group that records its routes in a `RouteTable`.
struct RecordingGroup {
    let group: RouterGroup<CofferRequestContext>
    let prefix: String
    let table: RouteTable

    private func add(
        _ method: HTTPRequest.Method, _ path: String,
        _ handler: @escaping @Sendable (Request, CofferRequestContext) async throws -> Response
    ) {
        table.add(prefix + "/" + path, method)
        group.on(RouterPath(path), method: method, use: handler)
    }

    func get(_ path: String, use handler: @escaping @Sendable (Request, CofferRequestContext) async throws -> Response) {
        add(.get, path, handler)
    }

    /// HEAD: the GET's status and headers (its `Content-Length` too) without the body.
    func head(_ path: String, use handler: @escaping @Sendable (Request, CofferRequestContext) async throws -> Response) {
        add(.head, path, handler)
    }

    func post(_ path: String, use handler: @escaping @Sendable (Request, CofferRequestContext) async throws -> Response) {
        add(.post, path, handler)
    }

    func patch(_ path: String, use handler: @escaping @Sendable (Request, CofferRequestContext) async throws -> Response) {
        add(.patch, path, handler)
    }

    func delete(_ path: String, use handler: @escaping @Sendable (Request, CofferRequestContext) async throws -> Response) {
        add(.delete, path, handler)
    }
}

extension HTTPField.Name {
    static let contentDisposition = HTTPField.Name("Content-Disposition")!
}
