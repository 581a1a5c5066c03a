import CofferCrypto
import Crypto
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

    /// The position is the page's own (near me), the screen wake lock (a barcode at the till) and the camera (a card
    /// scanned in); nothing else, and nothing for a frame of another origin.
    static var permissionsPolicy: String {
        "geolocation=(self), screen-wake-lock=(self), camera=(self), microphone=(), payment=(), usb=()"
    }

    let files: FileMiddleware<Context, LocalFileSystem>
    let directory: String
    /// `sw.js` with the shell's version written in, or nil when the directory has no service worker.
    let serviceWorker: ByteBuffer?

    init(directory: String, logger: Logger) {
        self.directory = directory
        files = FileMiddleware(directory, urlBasePath: Self.basePath, searchForIndexHtml: true, logger: logger)
        serviceWorker = Self.serviceWorker(in: directory)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard path == Self.basePath || path.hasPrefix(Self.basePath + "/") else { return try await next(request, context) }
        // A control character (a NUL above all) names no file of the app, and must not reach the file system's calls.
        guard let decoded = path.removingPercentEncoding,
            !decoded.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else {
            throw APIError.invalidRequest("The path names no file of the web vault")
        }
        // Relative URLs in a page resolve against its folder, so a folder's one address ends with a slash; the
        // redirect keeps the app's prefix (FileMiddleware's own redirect drops it).
        var isFolder: ObjCBool = false
        if !path.hasSuffix("/"), !decoded.contains(".."),
            FileManager.default.fileExists(atPath: directory + decoded.dropFirst(Self.basePath.count), isDirectory: &isFolder),
            isFolder.boolValue
        {
            return Response(status: .movedPermanently, headers: [.location: path + "/"])
        }
        var response: Response
        if path == Self.basePath + "/sw.js", let serviceWorker, request.method == .get || request.method == .head {
            response = Response(
                status: .ok, headers: [.contentType: "text/javascript; charset=utf-8"],
                body: .init(byteBuffer: request.method == .head ? ByteBuffer() : serviceWorker))
        } else {
            response = try await files.handle(request, context: context, next: next)
        }
        Self.secure(&response.headers, html: path.hasSuffix("/") || path.hasSuffix(".html"))
        return response
    }

    /// The service worker's text with `%COFFER_SHELL_VERSION%` replaced by the first 16 bytes (hex) of a SHA-256 over
    /// every other file of the app (relative path, then length and content), read once at start: any change to the app
    /// makes a new worker, which installs the new shell beside the old one (FORMAT.md §8.9).
    static func serviceWorker(in directory: String) -> ByteBuffer? {
        let root = URL(fileURLWithPath: directory).standardizedFileURL
        guard let script = try? String(contentsOf: root.appendingPathComponent("sw.js"), encoding: .utf8),
            let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
        else { return nil }
        var files: [(String, Data)] = []
        for case let url as URL in walker {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            let relative = String(url.standardizedFileURL.path.dropFirst(root.path.count + 1))
            guard relative != "sw.js", let content = try? Data(contentsOf: url) else { continue }
            files.append((relative, content))
        }
        var hasher = SHA256()
        for (relative, content) in files.sorted(by: { $0.0 < $1.0 }) {
            hasher.update(data: Data(relative.utf8) + [0] + withUnsafeBytes(of: UInt64(content.count).bigEndian) { Data($0) })
            hasher.update(data: content)
        }
        let version = Hex.encode(hasher.finalize().prefix(16))
        return ByteBuffer(string: script.replacingOccurrences(of: "%COFFER_SHELL_VERSION%", with: version))
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
        for file in ["index.html", "coffer-barcode.wasm", "coffer-scan.wasm"] where !FileManager.default.fileExists(atPath: "\(directory)/\(file)") {
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
