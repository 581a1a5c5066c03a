import CofferTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

@testable import CofferVault

/// `synchronous = FULL` (an acknowledged write survives power loss) and `secure_delete = ON` (freed pages are zeroed)
/// must be Coffer's own settings. Debian's SQLite defaults to FULL already, so a test of the setting alone could not
/// fail when the line setting it went; each connection here first runs `synchronous = OFF` and `secure_delete = OFF`,
/// as an SQLite built with other defaults would have them, and the vault's connection must still read FULL and ON.
@Suite("Durability settings are the vault's, not the SQLite build's")
struct DurabilitySettingsTests {
    static let otherBuild = ["PRAGMA synchronous = OFF", "PRAGMA secure_delete = OFF"]

    @Test("under a build defaulting to synchronous OFF and secure_delete OFF, a vault's connections read FULL and ON")
    func vaultSettings() throws {
        Vault.connectionPreamble.withLock { $0 = Self.otherBuild }
        defer { Vault.connectionPreamble.withLock { $0 = [] } }
        let test = try TestVault(items: false)
        for vault in [test.vault, try test.reopen()] {
            let (synchronous, secureDelete) = try vault.read { db, _ in
                (try Int.fetchOne(db, sql: "PRAGMA synchronous"), try Int.fetchOne(db, sql: "PRAGMA secure_delete"))
            }
            #expect(synchronous == 2, "synchronous \(String(describing: synchronous)), not FULL")
            #expect(secureDelete == 1, "secure_delete \(String(describing: secureDelete)), not ON")
        }
        // The control: the stand-in build's defaults do take effect on a connection that sets nothing itself.
        var configuration = Configuration()
        configuration.prepareDatabase { db in for statement in Self.otherBuild { try db.execute(sql: statement) } }
        let plain = try DatabaseQueue(path: test.path, configuration: configuration)
        #expect(try plain.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == 0)
    }
}
