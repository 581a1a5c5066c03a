import CofferPlatform
import CofferTestSupport
import Foundation
import Testing

/// Directories Coffer makes are private; directories it merely uses inside are not Coffer's to change. (The shared
/// directory here is a sticky copy in the test's own temporary directory: a regression must never touch the real /tmp.)
@Suite("Private directories")
struct PrivateFilesTests {
    @Test("a new directory and its missing parents are made 0700")
    func newDirectory() throws {
        let base = try TestSupport.temporaryDirectory("private-files")
        defer { try? FileManager.default.removeItem(atPath: base) }
        try PrivateFiles.createDirectory(base + "/a/b")
        #expect(PrivateFiles.mode(of: base + "/a") == 0o700)
        #expect(PrivateFiles.mode(of: base + "/a/b") == 0o700)
    }

    @Test("an existing directory of this user's is tightened to 0700")
    func ownDirectory() throws {
        let base = try TestSupport.temporaryDirectory("private-files")
        defer { try? FileManager.default.removeItem(atPath: base) }
        #expect(chmod(base, 0o755) == 0)
        try PrivateFiles.createDirectory(base)
        #expect(PrivateFiles.mode(of: base) == 0o700)
    }

    @Test("a shared (sticky) directory, as /tmp is, keeps its mode, also when a directory inside it is made")
    func sharedDirectory() throws {
        let base = try TestSupport.temporaryDirectory("private-files")
        defer { try? FileManager.default.removeItem(atPath: base) }
        #expect(chmod(base, 0o1777) == 0)
        try PrivateFiles.createDirectory(base)
        #expect(PrivateFiles.mode(of: base) == 0o1777)
        try PrivateFiles.createDirectory(base + "/inside")
        #expect(PrivateFiles.mode(of: base) == 0o1777)
        #expect(PrivateFiles.mode(of: base + "/inside") == 0o700)
    }

    @Test("a file lock next to a shared directory's entries leaves that directory as it was")
    func lockInShared() throws {
        let base = try TestSupport.temporaryDirectory("private-files")
        defer { try? FileManager.default.removeItem(atPath: base) }
        #expect(chmod(base, 0o1777) == 0)
        try FileLock.withLock(base + "/some.lock") { () throws(PrivateFileError) in }
        #expect(PrivateFiles.mode(of: base) == 0o1777)
    }
}
