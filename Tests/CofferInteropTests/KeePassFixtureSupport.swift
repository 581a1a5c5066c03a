import CofferTestSupport
import Crypto
import Foundation
import Testing

/// KeePass databases written at test time by pykeepass and keepassxc-cli (Fixtures/keepass/make_keepass.py), with
/// what each must import as. Made once per test process, in a temporary directory: no database is committed.
enum KeePassFixtures {
    struct Expected: Decodable {
        let password: String
        let databases: [Database]
    }

    struct Database: Decodable, CustomTestStringConvertible {
        let file: String
        let writer: String
        let version: Int
        let credentials: [ExpectedCredential]
        let otp: [ExpectedOTP]
        let notes: [ExpectedNote]
        let problems: [ExpectedProblem]
        /// Cards made of attached pictures (photos in hex); absent where a writer attached none.
        let cards: [ExpectedCard]?

        var testDescription: String { "\(file) (\(writer), KDBX \(version))" }
    }

    struct ExpectedCredential: Decodable {
        let name: String
        let provider: String?
        let value: String
        let tags: [String]
        let username: String?
        let url: String?
        let notes: String?
    }

    struct ExpectedCard: Decodable {
        let name: String
        let number: String?
        let notes: String?
        let tags: [String]
        let front: String
        let back: String?
    }

    struct ExpectedNote: Decodable {
        let name: String
        let text: String
    }

    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// The directory holding the databases and expected.json, or why the writers could not make them. CI installs
    /// keepassxc and python3-pykeepass; a missing writer fails the tests, never skips them.
    static let made: Result<URL, Unavailable> = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-keepass-\(UUID().uuidString)")
        let script = TestSupport.repositoryRoot.appendingPathComponent("Tests/CofferInteropTests/Fixtures/keepass/make_keepass.py").path
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let result = try TestSupport.run("/usr/bin/python3", [script, directory.path])
            guard result.status == 0 else {
                return .failure(Unavailable(description: "make_keepass.py failed: \(result.stderr.suffix(600))"))
            }
            return .success(directory)
        } catch {
            return .failure(Unavailable(description: "/usr/bin/python3 with python3-pykeepass and keepassxc-cli: \(error)"))
        }
    }()

    static func expected() throws -> Expected {
        try JSONDecoder().decode(Expected.self, from: Data(contentsOf: made.get().appendingPathComponent("expected.json")))
    }

    static func bytes(_ file: String) throws -> [UInt8] {
        Array(try Data(contentsOf: made.get().appendingPathComponent(file)))
    }

    /// Every database the writers made, for parameterised tests (empty, with a recorded issue, if they could not).
    static var databases: [Database] {
        do {
            return try expected().databases
        } catch {
            Issue.record("KeePass fixtures: \(error)")
            return []
        }
    }

    // MARK: Editing a KDBX 4 header

    /// The end of a KDBX 4 outer header (just past its end-of-header field).
    static func headerEnd(_ data: [UInt8]) -> Int {
        var offset = 12
        while true {
            let id = data[offset]
            let length = Int(data[offset + 1]) | Int(data[offset + 2]) << 8 | Int(data[offset + 3]) << 16 | Int(data[offset + 4]) << 24
            offset += 5 + length
            if id == 0 { return offset }
        }
    }

    /// `data` with the KDF parameter `key` (of the given VariantDictionary type) set to `value` (little-endian, the
    /// parameter's own width), and the header's SHA-256 recomputed so that only the KDF's bounds can refuse it.
    static func settingKDFParameter(_ data: [UInt8], key: String, type: UInt8, value: UInt64) throws -> [UInt8] {
        let width = type == 0x04 ? 4 : 8
        let marker = [type] + [UInt8(key.utf8.count), 0, 0, 0] + Array(key.utf8) + [UInt8(width), 0, 0, 0]
        let end = headerEnd(data)
        let start = try #require((12..<(end - marker.count)).first { Array(data[$0..<($0 + marker.count)]) == marker })
        var edited = data
        for index in 0..<width {
            edited[start + marker.count + index] = UInt8(truncatingIfNeeded: value >> (8 * index))
        }
        edited.replaceSubrange(end..<(end + 32), with: Array(SHA256.hash(data: edited[..<end])))
        return edited
    }
}
