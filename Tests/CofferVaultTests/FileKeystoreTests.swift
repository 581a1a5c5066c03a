import CofferTestSupport
import Foundation
import Testing

@_spi(Testing) @testable import CofferCrypto
@testable import CofferKeystore

/// The file store keeps its keys in the state directory, apart from the data directory a user copies; an entry an
/// older Coffer left beside the vault is moved, byte for byte, and a key is never made beside one (docs/FORMAT.md
/// revision 1.14).
@Suite("File key store: the state directory, and entries moved from beside the vault")
struct FileKeystoreTests {
    static let account = "vault-5f1c2b8e-0d55-4c44-9a1f-6f3f1b2a7c10-device"

    /// A store as `Keystores.open` makes it for a home directory, and that home's two directories.
    static func store() throws -> (store: FileKeystore, former: String, current: String) {
        let home = try TestSupport.temporaryDirectory("file-store")
        let directories = KeystoreDirectories.standard(environment: ["HOME": home])
        let store = try #require(Keystores.open(.file, directories: directories, tpmTCTI: "device:/nonexistent") as? FileKeystore)
        #expect(store.directory == home + "/.local/state/coffer/keystore")
        #expect(store.formerDirectory == home + "/.local/share/coffer/keystore")
        return (store, home + "/.local/share/coffer/keystore", home + "/.local/state/coffer/keystore")
    }

    @Test("XDG_STATE_HOME and XDG_DATA_HOME are followed when absolute, and a relative one is ignored")
    func directories() {
        let chosen = KeystoreDirectories.standard(environment: ["HOME": "/h", "XDG_STATE_HOME": "/s", "XDG_DATA_HOME": "/d"])
        #expect(chosen == KeystoreDirectories(data: "/d/coffer", state: "/s/coffer"))
        #expect(chosen.fileStore == "/s/coffer/keystore" && chosen.formerFileStore == "/d/coffer/keystore")
        let relative = KeystoreDirectories.standard(environment: ["HOME": "/h", "XDG_STATE_HOME": "s"])
        #expect(relative.state == "/h/.local/state/coffer")
    }

    @Test("an entry in the former place is read, moved to the state directory byte for byte, and gone from beside the vault")
    func movedOnRead() throws {
        let (store, former, current) = try Self.store()
        let key = SecretBytes(randomCount: 32)
        try FileKeystore(directory: former).replaceSecret(key, for: Self.account)
        let written = try Data(contentsOf: URL(fileURLWithPath: "\(former)/\(Self.account).key"))
        #expect(written.prefix(4) == Data("CKS1".utf8))

        let read = try #require(try store.secret(for: Self.account))
        #expect(read.isEqual(to: key))
        #expect(!FileManager.default.fileExists(atPath: "\(former)/\(Self.account).key"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(current)/\(Self.account).key")) == written)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: "\(current)/\(Self.account).key")[.posixPermissions] as? Int)
        #expect(mode == 0o600)
        // Read again, from the new place only.
        #expect(try store.secret(for: Self.account)?.isEqual(to: key) == true)
    }

    @Test("storeIfAbsent with an entry in the former place keeps that key and moves it: it never makes a second one")
    func neverMadeBesideAFormerEntry() throws {
        let (store, former, current) = try Self.store()
        let key = SecretBytes(randomCount: 32)
        try FileKeystore(directory: former).replaceSecret(key, for: Self.account)
        let kept = try store.storeIfAbsent(SecretBytes(randomCount: 32), for: Self.account)
        #expect(kept.isEqual(to: key))
        #expect(try FileKeystore(directory: current).secret(for: Self.account)?.isEqual(to: key) == true)
        #expect(!FileManager.default.fileExists(atPath: "\(former)/\(Self.account).key"))
    }

    @Test("an entry in both places: the state directory's wins and the former one is removed; delete removes both")
    func bothPlaces() throws {
        let (store, former, current) = try Self.store()
        let old = SecretBytes(randomCount: 32), new = SecretBytes(randomCount: 32)
        try FileKeystore(directory: current).replaceSecret(new, for: Self.account)
        try FileKeystore(directory: former).replaceSecret(old, for: Self.account)
        #expect(try store.secret(for: Self.account)?.isEqual(to: new) == true)
        try store.deleteSecret(for: Self.account)
        #expect(try store.secret(for: Self.account) == nil)
        #expect(!FileManager.default.fileExists(atPath: "\(former)/\(Self.account).key"))
    }

    @Test("a damaged entry in the former place is reported as damaged, never taken for an absent key")
    func damagedFormerEntry() throws {
        let (store, former, _) = try Self.store()
        try FileManager.default.createDirectory(atPath: former, withIntermediateDirectories: true)
        try Data("XXXX1234".utf8).write(to: URL(fileURLWithPath: "\(former)/\(Self.account).key"))
        #expect(throws: KeystoreError.corruptEntry(account: Self.account)) { try store.secret(for: Self.account) }
        #expect(throws: KeystoreError.corruptEntry(account: Self.account)) {
            try store.storeIfAbsent(SecretBytes(randomCount: 32), for: Self.account)
        }
    }
}
