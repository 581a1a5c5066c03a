import AsyncHTTPClient
import CofferPlaces
import CofferSyncAPI
import Foundation
import NIOCore
import NIOHTTP1

/// A server's public places, fetched without an account or a token: the directory of networks and the padded
/// tiles of coarse cells. Nothing here sends a position: the caller chooses the cell.
public struct PlacesClient: Sendable {
    public let server: String
    private let http: HTTPClient
    private let timeout: TimeAmount

    /// `server` follows `SyncClient`'s rules (https, or http on loopback).
    public init(server: String, http: HTTPClient = SyncClient.defaultHTTP, timeout: Duration = .seconds(30)) throws(SyncClientError) {
        self.server = try SyncClient(server: server, http: http, timeout: timeout).server
        self.http = http
        self.timeout = .seconds(timeout.components.seconds)
    }

    /// The server's directory of networks.
    public func networks() async throws(SyncClientError) -> [Network] {
        let (status, _, body) = try await get("/v1/networks", accept: "application/json", etag: nil, limit: 64 << 20)
        try Self.check(status, body)
        do {
            return try WireJSON.decoder().decode(NetworkList.self, from: body).networks.map { try $0.network() }
        } catch {
            throw .malformedResponse
        }
    }

    /// What the server answered for a tile.
    public enum TileAnswer: Sendable {
        /// The cached copy (whose ETag was sent) is current.
        case notModified
        case tile(PlaceTile, etag: String?)
    }

    /// The tile of a geohash-4 `cell` (`.cell`) or the pack of a geohash-2 one (`.pack`); `etag` makes it
    /// conditional. The tile is checked like any input: its cell and kind must be the ones asked for.
    public func tile(_ cell: String, kind: PlaceTile.Kind, etag: String?) async throws(SyncClientError) -> TileAnswer {
        let path = kind == .pack ? "/v1/places/packs/" : "/v1/places/tiles/"
        guard Geohash.isValid(cell) else { throw .malformedResponse }
        let (status, headers, body) = try await get(path + cell, accept: PlacesMedia.tile, etag: etag, limit: PlaceTile.maximumSize)
        if status == 304 { return .notModified }
        try Self.check(status, body)
        let tile: PlaceTile
        do {
            tile = try PlaceTile(bytes: Array(body))
        } catch {
            throw .malformedResponse
        }
        guard tile.cell == cell, tile.kind == kind else { throw .malformedResponse }
        return .tile(tile, etag: headers.first(name: "ETag").map(SyncClient.printable))
    }

    private func get(_ path: String, accept: String, etag: String?, limit: Int) async throws(SyncClientError) -> (Int, HTTPHeaders, Data) {
        var request = HTTPClientRequest(url: server + path)
        request.method = .GET
        request.headers.add(name: "Accept", value: accept)
        request.headers.add(name: "User-Agent", value: "coffer")
        if let etag { request.headers.add(name: "If-None-Match", value: etag) }
        do {
            let response = try await http.execute(request, timeout: timeout)
            let body = try await response.body.collect(upTo: limit)
            return (Int(response.status.code), response.headers, Data(body.readableBytesView))
        } catch {
            throw .transport("connection failed or answer too large")
        }
    }

    private static func check(_ status: Int, _ body: Data) throws(SyncClientError) {
        guard (200..<300).contains(status) else {
            if let error = try? WireJSON.decoder().decode(ErrorBody.self, from: body) {
                throw .server(status: status, code: SyncClient.printable(error.error), message: SyncClient.printable(error.message))
            }
            throw .server(status: status, code: "unknown", message: "HTTP \(status)")
        }
    }
}
