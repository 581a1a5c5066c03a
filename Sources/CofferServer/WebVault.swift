import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The web vault (`coffer-server --web-vault`): the static app under `/app`, served by Hummingbird's `FileMiddleware`
/// with the headers that keep it to its own code. It decrypts in the browser; the server only hands out files. Because
/// the server serves the code that receives the passphrase, it is for servers the user runs or trusts (README).
struct WebVaultMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Where the app is mounted.
    static var basePath: String { "/app" }

    /// Only the app's own files, scripts and WebAssembly; nothing inline, nothing from elsewhere, no framing.
    static var contentSecurityPolicy: String {
        "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; img-src 'self' blob:; "
            + "style-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// The position is the page's own (near me), and so is the screen wake lock (a barcode at the till); nothing else.
    static var permissionsPolicy: String {
        "geolocation=(self), screen-wake-lock=(self), camera=(), microphone=(), payment=(), usb=()"
    }

    let files: FileMiddleware<Context, LocalFileSystem>

    init(directory: String, logger: Logger) {
        files = FileMiddleware(directory, urlBasePath: Self.basePath, searchForIndexHtml: true, logger: logger)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard path == Self.basePath || path.hasPrefix(Self.basePath + "/") else { return try await next(request, context) }
        if path == Self.basePath {
            // Relative URLs in the page resolve against the folder, so the folder is the app's one address.
            return Response(status: .movedPermanently, headers: [.location: Self.basePath + "/"])
        }
        var response = try await files.handle(request, context: context, next: next)
        Self.secure(&response.headers, html: path.hasSuffix("/") || path.hasSuffix(".html"))
        return response
    }

    /// The page is never stored (it is what receives the passphrase); its scripts and WebAssembly are revalidated
    /// on every load (their ETag), so a changed app is never mixed with an old one.
    static func secure(_ headers: inout HTTPFields, html: Bool) {
        headers[.contentSecurityPolicy] = contentSecurityPolicy
        headers[.permissionsPolicy] = permissionsPolicy
        headers[.crossOriginOpenerPolicy] = "same-origin"
        headers[.crossOriginResourcePolicy] = "same-origin"
        headers[.cacheControl] = html ? "no-store" : "no-cache"
    }

    /// Refuses a configuration that would serve the app over plain HTTP beyond this machine: WebCrypto needs a secure
    /// context, and a passphrase page over plain HTTP could be changed by anyone on the path.
    static func check(_ configuration: ServerConfiguration) throws(ServerSetupError) {
        guard let directory = configuration.webVaultDirectory else { return }
        if configuration.tlsCertificatePath == nil, !isLoopback(configuration.host) {
            throw .configuration(
                "the web vault needs TLS (--tls-cert and --tls-key) unless the server listens on loopback (127.0.0.1 or ::1)")
        }
        for file in ["index.html", "coffer-barcode.wasm"] where !FileManager.default.fileExists(atPath: "\(directory)/\(file)") {
            throw .configuration(
                "the web vault directory \(directory) has no \(file)"
                    + (file.hasSuffix(".wasm") ? " (build it with scripts/build-wasm.sh)" : ""))
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}

extension HTTPField.Name {
    static let permissionsPolicy = HTTPField.Name("Permissions-Policy")!
    static let crossOriginOpenerPolicy = HTTPField.Name("Cross-Origin-Opener-Policy")!
    static let crossOriginResourcePolicy = HTTPField.Name("Cross-Origin-Resource-Policy")!
}
