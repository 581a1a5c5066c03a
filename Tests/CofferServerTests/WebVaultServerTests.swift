import CofferServer
import CofferServerTestSupport
import CofferTestSupport
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// `coffer-server --web-vault`: the app's files at `/app` only when asked, with headers that keep the page to its own
/// code, and never over plain HTTP beyond loopback.
@Suite("Web vault files")
struct WebVaultServerTests {
    static let csp =
        "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; img-src 'self' blob:; "
        + "style-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// A stand-in app: the middleware serves whatever the directory holds.
    static func appDirectory() throws -> String {
        let directory = try TestSupport.temporaryDirectory("web-vault")
        try Data("<!doctype html><title>Coffer</title>".utf8).write(to: URL(fileURLWithPath: directory + "/index.html"))
        try Data("export {};\n".utf8).write(to: URL(fileURLWithPath: directory + "/app.js"))
        for module in ["coffer-barcode.wasm", "coffer-scan.wasm"] {
            try Data([0x00, 0x61, 0x73, 0x6D, 0x01, 0x00, 0x00, 0x00]).write(to: URL(fileURLWithPath: directory + "/" + module))
        }
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

    @Test("served at /app with a strict CSP, no referrer, only geolocation, wake lock and the camera, and the page never stored")
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
                #expect(
                    page.headers[HTTPField.Name("Permissions-Policy")!]?.hasPrefix("geolocation=(self), screen-wake-lock=(self), camera=(self), microphone=()")
                        == true)
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

    @Test("a NUL or another control character in the path is a 400 with a JSON body; a folder redirects within /app")
    func hostilePaths() async throws {
        let directory = try Self.appDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/js", withIntermediateDirectories: true)
        try Data("export {};\n".utf8).write(to: URL(fileURLWithPath: directory + "/js/app.js"))
        try await withServer(.sqlite, configure: { $0.webVaultDirectory = directory }) { api, _ in
            for path in ["/app/%00", "/app/index.html%00", "/app/js%00/app.js", "/app/%0a", "/app/%7f.js", "/app/%zz"] {
                let answer = try await api.send(.get, path)
                #expect(answer.status == .badRequest, "\(path)")
                let body = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
                #expect(body?["error"] as? String == "invalid_request", "\(path)")
            }
            let folder = try await api.send(.get, "/app/js")
            #expect(folder.status == .movedPermanently && folder.headers[.location] == "/app/js/")
            #expect(try await api.send(.get, "/app/js/app.js").status == .ok)
            #expect(try await api.send(.get, "/app/js/").status == .notFound)
        }
    }

    @Test("sw.js carries a version made of every other file of the app, so any change to the app makes a new worker")
    func serviceWorkerVersion() async throws {
        let directory = try Self.appDirectory()
        try Data("const VERSION = 'coffer-shell-%COFFER_SHELL_VERSION%';\n".utf8)
            .write(to: URL(fileURLWithPath: directory + "/sw.js"))
        func version() async throws -> String {
            let served = Mutex("")
            try await withServer(.sqlite, configure: { $0.webVaultDirectory = directory }) { api, _ in
                let script = try await api.send(.get, "/app/sw.js")
                #expect(script.status == .ok && script.headers[.contentType]?.hasPrefix("text/javascript") == true)
                #expect(script.headers[.contentSecurityPolicy] == Self.csp && script.headers[.cacheControl] == "no-cache")
                let text = String(decoding: script.body, as: UTF8.self)
                let match = try #require(text.firstMatch(of: /coffer-shell-([0-9a-f]{32})'/))
                served.withLock { $0 = String(match.1) }
            }
            return served.withLock { $0 }
        }
        let first = try await version()
        #expect(try await version() == first, "the same files give the same version")
        try Data("export { changed };\n".utf8).write(to: URL(fileURLWithPath: directory + "/app.js"))
        #expect(try await version() != first, "a changed file gives another version")
    }

    @Test("plain HTTP beyond loopback, or a directory without the app, is refused at start")
    func refusals() async throws {
        let directory = try Self.appDirectory()
        for host in ["0.0.0.0", "192.0.2.10", "::"] {
            await #expect(throws: ServerSetupError.self) {
                try await withServer(
                    .sqlite,
                    configure: {
                        $0.webVaultDirectory = directory; $0.host = host
                    }
                ) { _, _ in }
            }
        }
        let empty = try TestSupport.temporaryDirectory("web-vault-empty")
        await #expect(throws: ServerSetupError.self) {
            try await withServer(.sqlite, configure: { $0.webVaultDirectory = empty }) { _, _ in }
        }
        try await withServer(
            .sqlite,
            configure: {
                $0.webVaultDirectory = directory; $0.host = "::1"
            }
        ) { api, _ in
            let page = try await api.send(.get, "/app/")
            #expect(page.status == .ok)
        }
    }
}

/// Where `coffer-server --web-vault` finds the app without `--web-vault-dir`: installed beside the executable
/// (`PREFIX/bin` → `PREFIX/share/coffer/web-vault`, as scripts/install.sh lays it out), else the source tree's `Web/app`.
@Suite("Web vault files: where they are found", .serialized)
struct WebVaultLocationTests {
    static let app = TestSupport.repositoryRoot.appendingPathComponent("Web/app").path

    /// The body of `/app/` from `binary --web-vault` on loopback.
    func page(_ binary: String) async throws -> String {
        let directory = try TestSupport.temporaryDirectory("web-vault-location")
        let port = TestSupport.unusedPort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--data", "\(directory)/data", "--port", "\(port)", "--web-vault"]
        process.environment = ["PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        for _ in 0..<100 {
            let probe = try TestSupport.run("/usr/bin/curl", ["-sf", "http://127.0.0.1:\(port)/app/"])
            if probe.status == 0 { return probe.stdout }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("coffer-server --web-vault did not serve /app/")
        return ""
    }

    @Test("a built coffer-server serves the source tree's app; an installed one the app installed beside it")
    func locations() async throws {
        try #require(FileManager.default.fileExists(atPath: Self.app + "/coffer-barcode.wasm"), "run scripts/build-wasm.sh first")
        #expect(try await page(serverBinary).contains("<title>Coffer</title>"))

        let prefix = try TestSupport.temporaryDirectory("web-vault-prefix")
        try FileManager.default.createDirectory(atPath: prefix + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: prefix + "/share/coffer", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: serverBinary, toPath: prefix + "/bin/coffer-server")
        try FileManager.default.copyItem(atPath: Self.app, toPath: prefix + "/share/coffer/web-vault")
        let marker = "<!-- installed \(UUID().uuidString) -->"
        let index = prefix + "/share/coffer/web-vault/index.html"
        try (String(contentsOfFile: index, encoding: .utf8) + marker).write(toFile: index, atomically: true, encoding: .utf8)
        #expect(try await page(prefix + "/bin/coffer-server").contains(marker))
    }
}
