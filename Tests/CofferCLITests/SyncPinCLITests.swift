import CofferTestSupport
import Foundation
import Testing

/// `coffer sync pin` and the pin flags of `coffer sync register|login`, without TLS (the TLS side is proved against a
/// real server in CofferServerTests' PinningTests).
@Suite("coffer sync pin", .serialized, .offCooperativePool)
struct SyncPinCLITests {
    static let digest = Data((0..<32).map { UInt8($0) }).base64EncodedString()
    static let other = Data((0..<32).map { UInt8(255 - $0) }).base64EncodedString()

    @Test("shows, sets, and removes only with --yes; bad values are usage errors")
    func pinCommand() throws {
        let cli = try CLI()
        try cli.ok(["init"])
        #expect(try cli.ok(["sync", "pin"]).stdout == "none\n")
        let bad = try cli.run(["sync", "pin", "--sha256", "c2hvcnQ="])
        #expect(bad.status == 64)
        #expect(bad.stderr.hasPrefix("coffer: error: --sha256 must be the base64 of a 32-byte SHA-256 (optionally after sha256//)\n"))
        #expect(try cli.ok(["sync", "pin", "--sha256", Self.digest]).stdout == "sha256//\(Self.digest)\n")
        #expect(try cli.ok(["sync", "pin", "--sha256", "sha256//\(Self.other)"]).stdout == "sha256//\(Self.other)\n")
        #expect(try cli.ok(["sync", "pin"]).stdout == "sha256//\(Self.other)\n")

        let unconfirmed = try cli.run(["sync", "pin", "--remove"])
        #expect(unconfirmed.status == 64)
        #expect(unconfirmed.stderr.hasPrefix("coffer: error: --remove stops checking the server's key; pass --yes to confirm\n"))
        let reset = try cli.run(["sync", "pin", "--reset"])
        #expect(reset.status == 64)
        #expect(reset.stderr.hasPrefix("coffer: error: --reset trusts whatever key the server presents now; pass --yes to confirm\n"))
        #expect(try cli.ok(["sync", "pin"]).stdout == "sha256//\(Self.other)\n")
        let both = try cli.run(["sync", "pin", "--remove", "--sha256", Self.digest, "--yes"])
        #expect(both.status == 64 && both.stderr.hasPrefix("coffer: error: give one of --sha256, --reset and --remove\n"))
        try cli.ok(["sync", "pin", "--remove", "--yes"])
        #expect(try cli.ok(["sync", "pin"]).stdout == "none\n")
    }

    @Test("a pin is refused for an http server, and a pinned vault's sync client refuses to speak plain HTTP")
    func pinNeedsHTTPS() throws {
        try #require(FileManager.default.isExecutableFile(atPath: SyncCLITests.serverBinary), "build coffer-server first (swift build)")
        let server = try SyncCLITests.Server()
        try server.start()
        let email = "pin-\(UUID().uuidString.prefix(8).lowercased())@example.org"
        let cli = try CLI()
        try cli.ok(["init"])
        let refused = try cli.run(["sync", "register", "--server", server.url, "--email", email, "--pin-sha256", Self.digest])
        #expect(refused.status == 64)
        #expect(refused.stderr == "coffer: error: a public-key pin needs an https:// server\n")
        let both = try cli.run(["sync", "login", "--server", server.url, "--email", email, "--pin-sha256", Self.digest, "--pin-first-use"])
        #expect(both.status == 64 && both.stderr.hasPrefix("coffer: error: give --pin-sha256 or --pin-first-use, not both\n"))

        try cli.ok(["sync", "register", "--server", server.url, "--email", email], input: "sync passphrase for pins\n")
        try cli.ok(["sync", "pin", "--sha256", Self.digest])
        let pinned = try cli.run(["sync"])
        #expect(pinned.status == 64)
        #expect(pinned.stderr == "coffer: error: a public-key pin needs an https:// server\n")
        // Logging in again without a pin flag keeps the pin: it is still checked.
        let again = try cli.run(["sync", "login", "--server", server.url, "--email", email], input: "sync passphrase for pins\n")
        #expect(again.status == 64 && again.stderr == "coffer: error: a public-key pin needs an https:// server\n")
        try cli.ok(["sync", "pin", "--remove", "--yes"])
        try cli.ok(["sync"])
    }
}
