@_spi(Sync) import CofferKit
@_spi(Testing) import CofferCrypto
import CofferKeystore
import CofferModel
import CofferServer
import CofferServerStore
import CofferTestSupport
import CofferVault
import Foundation
import Hummingbird
import HummingbirdTesting
import Testing

/// Devices syncing through a live server on 127.0.0.1: the fixtures the sync suites share.
package enum SyncTesting {
    package static let passphrase = "sync passphrase for tests"
    package static let kdf = PassphraseKDF.pbkdf2SHA256(iterations: 1_000)

    package static func location() throws -> CofferLocation {
        CofferLocation(
            vaultDirectory: try TestSupport.temporaryDirectory("device") + "/vault", keystore: InMemoryKeystore(),
            options: VaultOptions(limits: .testing))
    }

    /// Runs `body` with a live server (real sockets) and its base URL.
    package static func withLiveServer(
        _ backend: Backend, logs: LogCollector = LogCollector(), sqliteFile: String? = nil,
        _ body: @escaping @Sendable (String, any ServerStore, ServerConfiguration) async throws -> Void
    ) async throws {
        let configuration = try testConfiguration(clock: TestClock(Date()))
        // PostgreSQL's driver logs into the same collector, at the same (trace) level as the server.
        try await DedicatedExecutor.run {
            try await backend.withStore(sqliteFile: sqliteFile, logger: logs.logger("postgres")) { store in
                let router = try await CofferServerApplication.router(configuration: configuration, store: store, logger: logs.logger())
                let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
                try await app.test(.live) { client in
                    let port = try #require(client.port)
                    try await body("http://127.0.0.1:\(port)", store, configuration)
                }
            }
        }
    }

    package static func names(_ coffer: Coffer) throws -> [String] {
        try coffer.vault.items().map(\.content.name).sorted()
    }

    package static func contents(_ coffer: Coffer) throws -> [UUID: ItemContent] {
        Dictionary(uniqueKeysWithValues: try coffer.vault.items().map { ($0.id, $0.content) })
    }

    package static func note(_ name: String, _ text: String) throws -> ItemContent {
        .note(try Note(name: name, text: text))
    }
}
