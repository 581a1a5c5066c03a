import CofferPlaces
import CofferSyncAPI
import Foundation
import HTTPTypes
import Hummingbird
import MultipartKit
import NIOCore

/// The places endpoints (see `ServerCore+Places`). Tiles and the network directory are public: no token, no cookie.
struct PlacesRoutes {
    let core: ServerCore

    /// The largest import an operator may send over HTTP; bigger files go through `coffer-server places import`.
    static let maxImportBytes = 64 << 20
    static let tileCacheControl = "public, max-age=21600, no-transform"

    func register(on v1: RecordingGroup) {
        let routes = Routes(core: core)

        v1.get("networks") { request, _ in
            let query = request.uri.queryParameters
            return JSONResponse.make(
                try await core.networks(
                    search: query.get("search"), category: query.get("category").flatMap { $0.isEmpty ? nil : $0 }))
        }
        v1.get("networks/:id/locations") { request, context in
            let id = context.parameters.get("id") ?? ""
            let limit = try routes.integer(request, "limit", default: 100)
            let offset = try routes.integer(request, "offset", default: 0)
            return JSONResponse.make(
                try await core.networkLocations(
                    id: id, limit: Int(clamping: limit), offset: Int(clamping: offset)))
        }
        v1.get("locations/nearby") { request, context in
            _ = try await routes.authenticate(request, context)
            let query = request.uri.queryParameters
            let networks = query.get("network_ids").map { $0.split(separator: ",").map(String.init) } ?? []
            return JSONResponse.make(
                try await core.nearby(
                    latitude: try Self.number(query.get("lat"), "lat"), longitude: try Self.number(query.get("lon"), "lon"),
                    radiusKM: try Self.number(query.get("radius_km"), "radius_km") ?? 10, networks: networks,
                    limit: Int(clamping: try routes.integer(request, "limit", default: 20))))
        }
        v1.post("region-refresh") { request, context in
            _ = try await routes.authenticate(request, context)
            let body = try await routes.decode(RegionRefreshRequest.self, request, context)
            return JSONResponse.make(body: RegionRefreshJSON.body(try await core.regionRefresh(body)))
        }
        v1.get("places/tiles/:cell") { request, context in
            try await tile(request, context, kind: .cell)
        }
        v1.head("places/tiles/:cell") { request, context in
            try await tile(request, context, kind: .cell).createHeadResponse()
        }
        v1.get("places/packs/:cell") { request, context in
            try await tile(request, context, kind: .pack)
        }
        v1.head("places/packs/:cell") { request, context in
            try await tile(request, context, kind: .pack).createHeadResponse()
        }
        v1.post("admin/networks") { request, context in
            try await core.requireOperator(request.headers[.authorization], address: context.remoteAddress)
            let body = try await routes.decode(NetworkCreateRequest.self, request, context)
            let answer = try await core.createOrUpdateNetwork(body, address: context.remoteAddress)
            return JSONResponse.make(answer.network, status: answer.created ? .created : .ok)
        }
        v1.post("admin/import") { request, context in
            try await core.requireOperator(request.headers[.authorization], address: context.remoteAddress)
            let upload = try await Self.upload(request, maxBytes: Self.maxImportBytes)
            return JSONResponse.make(
                try await core.importPlaces(
                    upload.file, network: upload.network, replacing: upload.overwrite, address: context.remoteAddress))
        }
    }

    private func tile(_ request: Request, _ context: CofferRequestContext, kind: PlaceTile.Kind) async throws -> Response {
        let entry = try await core.tile(cell: context.parameters.get("cell") ?? "", kind: kind)
        var headers: HTTPFields = [
            .eTag: entry.etag, .cacheControl: Self.tileCacheControl, .accessControlAllowOrigin: "*",
        ]
        // If-None-Match compares weakly (RFC 9110 §13.1.2): `W/"x"` matches `"x"`.
        if let match = request.headers[.ifNoneMatch],
            match.split(separator: ",").contains(where: { tag in
                let trimmed = tag.trimmingCharacters(in: .whitespaces)
                return trimmed == "*" || (trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed) == entry.etag
            })
        {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = PlacesMedia.tile
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: entry.tile.bytes)))
    }

    static func number(_ text: String?, _ name: String) throws -> Double? {
        guard let text, !text.isEmpty else { return nil }
        // Decimal only: Swift's Double(_:) would also take hexadecimal floats and "nan".
        guard text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || [0x2B, 0x2D, 0x2E, 0x45, 0x65].contains($0) }),
            let value = Double(text), value.isFinite
        else { throw APIError.invalidRequest("\(name) must be a number", field: name) }
        return value
    }

    /// What `POST /v1/admin/import` carries: CardOnCue's `multipart/form-data` (`file`, `network_id`, `overwrite`),
    /// or the file itself as the body with `network_id` and `overwrite` in the query.
    struct Upload {
        var file: [UInt8]
        var network: String?
        var overwrite: Bool
    }

    static func upload(_ request: Request, maxBytes: Int) async throws -> Upload {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxBytes)
        } catch let error as APIError {
            // A body the HTTP parser refused (`MalformedRequestResponder`).
            throw error
        } catch {
            throw APIError.tooLarge("Import too large for HTTP; use coffer-server places import", limit: maxBytes)
        }
        // The query is checked whatever the body; a form's own fields win over it.
        let query = request.uri.queryParameters
        let queryNetwork = query.get("network_id").flatMap { $0.isEmpty ? nil : $0 }
        let queryOverwrite = try flag(query.get("overwrite"))
        let contentType = request.headers[.contentType] ?? ""
        guard contentType.lowercased().hasPrefix("multipart/form-data") else {
            return Upload(file: Array(buffer.readableBytesView), network: queryNetwork, overwrite: queryOverwrite)
        }
        guard
            let boundary = contentType.split(separator: ";").lazy.map({ $0.trimmingCharacters(in: .whitespaces) })
                .first(where: { $0.lowercased().hasPrefix("boundary=") })?.dropFirst(9).trimmingCharacters(in: CharacterSet(charactersIn: "\"")),
            !boundary.isEmpty
        else { throw APIError.invalidRequest("multipart/form-data needs a boundary", field: "Content-Type") }
        var parts: [String: [UInt8]] = [:]
        var name: String?
        var body: [UInt8] = []
        let parser = MultipartParser(boundary: boundary)
        parser.onHeader = { field, value in
            guard field.lowercased() == "content-disposition" else { return }
            name = value.split(separator: ";").lazy.map { $0.trimmingCharacters(in: .whitespaces) }
                .first { $0.hasPrefix("name=") }?.dropFirst(5).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        parser.onBody = { chunk in body += chunk.readableBytesView }
        parser.onPartComplete = {
            if let name { parts[name] = body }
            name = nil
            body = []
        }
        do {
            try parser.execute(buffer)
        } catch {
            throw APIError.invalidRequest("Malformed multipart body", field: "file")
        }
        guard let file = parts["file"] else { throw APIError.invalidRequest("Missing required field", field: "file") }
        return Upload(
            file: file,
            network: parts["network_id"].map { String(decoding: $0, as: UTF8.self) }.flatMap { $0.isEmpty ? nil : $0 } ?? queryNetwork,
            overwrite: try parts["overwrite"].map { try flag(String(decoding: $0, as: UTF8.self)) } ?? queryOverwrite)
    }

    static func flag(_ text: String?) throws -> Bool {
        switch text?.lowercased() {
        case nil, "", "false", "0": return false
        case "true", "1": return true
        default: throw APIError.invalidRequest("overwrite must be true or false", field: "overwrite")
        }
    }
}

extension HTTPField.Name {
    static let eTag = HTTPField.Name("ETag")!
    static let ifNoneMatch = HTTPField.Name("If-None-Match")!
    static let accessControlAllowOrigin = HTTPField.Name("Access-Control-Allow-Origin")!
}
