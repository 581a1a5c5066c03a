import CofferServer
import CofferTestSupport
import Foundation
import HTTPTypes
import Testing

/// `coffer-server --web-vault`: the app's files at `/app` only when asked, with headers that keep the page to its own
/// code, and never over plain HTTP beyond loopback.
@Suite("Web vault files")
struct WebVaultServerTests {
    static let csp = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; img-src 'self' blob:; "
        + "style-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// A stand-in app: the middleware serves whatever the directory holds.
    static func appDirectory() throws -> String {
        let directory = try TestSupport.temporaryDirectory("web-vault")
        try Data("<!doctype html><title>Coffer</title>".utf8).write(to: URL(fileURLWithPath: directory + "/index.html"))
        try Data("export {};\n".utf8).write(to: URL(fileURLWithPath: directory + "/app.js"))
        try Data([0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00]).write(to: URL(fileURLWithPath: directory + "/coffer-barcode.wasm"))
        return directory
    }

    @Test("off unless configured: /app is not found")
    func optIn() async throws {
        try await withServer(.sqlite) { api, _ in
            for path in ["/app", "/app/", "/app/index.html"] {
                let answer = try await api.send(.get, path)
                #expect(answer.status == .notFound, "\(path)")
            }
        }
    }

    @Test("served at /app with a strict CSP, no referrer, only geolocation and wake lock, and the page never stored")
    func headers() async throws {
        let directory = try Self.appDirectory()
        try await withServer(.sqlite, configure: { $0.webVaultDirectory = directory }) { api, _ in
            let bare = try await api.send(.get, "/app")
            #expect(bare.status == .movedPermanently && bare.headers[.location] == "/app/")

            for path in ["/app/", "/app/index.html"] {
                let page = try await api.send(.get, path)
                #expect(page.status == .ok && String(decoding: page.body, as: UTF8.self).contains("<title>Coffer</title>"))
                #expect(page.headers[.contentType]?.hasPrefix("text/html") == true)
                #expect(page.headers[.contentSecurityPolicy] == Self.csp)
                #expect(page.headers[.cacheControl] == "no-store", "\(path)")
                #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
                #expect(page.headers[HTTPField.Name("Permissions-Policy")!]?.hasPrefix("geolocation=(self), screen-wake-lock=(self), camera=()") == true)
                #expect(page.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            }
            let script = try await api.send(.get, "/app/app.js")
            #expect(script.status == .ok && script.headers[.cacheControl] == "no-cache" && script.headers[.eTag] != nil)
            #expect(script.headers[.contentSecurityPolicy] == Self.csp)
            let wasm = try await api.send(.get, "/app/coffer-barcode.wasm")
            #expect(wasm.status == .ok && wasm.headers[.contentType] == "application/wasm")

            // Nothing outside the directory, and the API beside it as before.
            #expect(try await api.send(.get, "/app/../server-secret").status != .ok)
            #expect(try await api.send(.get, "/app/missing.js").status == .notFound)
            #expect(try await api.send(.get, "/health").status == .ok)
            #expect(try await api.send(.get, "/application").status == .notFound)
        }
    }

    @Test("plain HTTP beyond loopback, or a directory without the app, is refused at start")
    func refusals() async throws {
        let directory = try Self.appDirectory()
        for host in ["0.0.0.0", "192.0.2.10", "::"] {
            await #expect(throws: ServerSetupError.self) {
                try await withServer(.sqlite, configure: { $0.webVaultDirectory = directory; $0.host = host }) { _, _ in }
            }
        }
        let empty = try TestSupport.temporaryDirectory("web-vault-empty")
        await #expect(throws: ServerSetupError.self) {
            try await withServer(.sqlite, configure: { $0.webVaultDirectory = empty }) { _, _ in }
        }
        try await withServer(.sqlite, configure: { $0.webVaultDirectory = directory; $0.host = "::1" }) { api, _ in
            let page = try await api.send(.get, "/app/")
            #expect(page.status == .ok)
        }
    }
}
