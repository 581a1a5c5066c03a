import CofferTestSupport
import Foundation
import Synchronization
import Testing

@_spi(Testing) @testable import CofferCrypto
@testable import CofferKeystore
@_spi(Sync) @testable import CofferKit

/// One simulator for the suite's TPM runs (they take turns on its one connection), stopped when the suite ends;
/// nil where swtpm is missing. A static one would outlive the test process.
struct ContractTPM: SuiteTrait, TestScoping {
    @TaskLocal static var current: Result<SoftwareTPM, any Error>?

    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard SoftwareTPM.unavailableReason == nil else { return try await function() }
        let tpm = Result { try SoftwareTPM() }
        defer { if case .success(let simulator) = tpm { simulator.stop() } }
        try await Self.$current.withValue(tpm) { try await function() }
    }
}

/// The rules every device key store keeps (the `DeviceKeystore` contract), run against each backend this machine
/// has: the file store, the in-memory store, the Secret Service (a real gnome-keyring-daemon on a private bus) and the
/// TPM (swtpm). The keychain backend runs the same suite on a Mac. Creating from 8 processes at once is in
/// `KeystoreCLITests.eightProcesses`, through the real `coffer` binary.
@Suite("Key store contract", ContractTPM())
struct KeystoreContractTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case file, memory, secretService = "secret-service", tpm2
        #if canImport(Security)
        case keychain
        #endif

        var testDescription: String { rawValue }

        /// A fresh store of this kind, or nil (with the reason recorded) where none can run here.
        func make() throws -> (any DeviceKeystore)? {
            switch self {
            case .file: return FileKeystore(directory: try TestSupport.temporaryDirectory("contract") + "/keystore")
            case .memory: return InMemoryKeystore()
            case .secretService:
                guard let started = KeystoreContractTests.sharedSession else { return nil }
                _ = try started.get()
                return SecretServiceKeystore(lockPath: try TestSupport.temporaryDirectory("contract") + "/ss.lock")
            case .tpm2:
                guard let tpm = ContractTPM.current else { return nil }
                return TPM2Keystore(directory: try TestSupport.temporaryDirectory("contract") + "/tpm2", tcti: try tpm.get().tcti)
            #if canImport(Security)
            case .keychain: return KeychainKeystore()
            #endif
            }
        }
    }

    /// libsecret keeps one connection per process, so every in-process Secret Service test shares one session, whose
    /// bus this process is pointed at before libsecret is first used. Nil where the tools are not installed; a session
    /// that failed to start is kept as the error each test then fails with.
    static let sharedSession: Result<SecretServiceSession, any Error>? = {
        guard SecretServiceSession.available else { return nil }
        return Result {
            let session = try SecretServiceSession()
            setenv("DBUS_SESSION_BUS_ADDRESS", session.address, 1)
            return session
        }
    }()

    /// Secrets that break stores which treat values as text: NUL, bytes ≥ 0x80, a lone 0xFF, all 32 bytes long.
    static let awkwardSecrets: [[UInt8]] = [
        [0x00] + Array(0x80...0x9E),
        Array(repeating: 0x00, count: 32),
        Array(0xE0...0xFF),
        (0..<32).map { UInt8($0 * 8 + 7) },
    ]

    static func account(_ tag: String) -> String { "contract-\(tag)-\(UUID().uuidString.prefix(8).lowercased())" }

    @Test("32-byte secrets with 0x00 and 0x80–0xFF come back byte for byte", arguments: Backend.allCases)
    func roundTrip(_ backend: Backend) throws {
        guard let store = try backend.make() else { return Self.notice(backend) }
        #expect(store.status() == .available)
        for (index, bytes) in Self.awkwardSecrets.enumerated() {
            let account = Self.account("bytes\(index)")
            #expect(try store.secret(for: account) == nil)
            #expect(try store.storeIfAbsent(SecretBytes(bytes), for: account).bytes == bytes)
            #expect(try store.secret(for: account)?.bytes == bytes)
            try store.deleteSecret(for: account)
        }
    }

    @Test("create-if-absent keeps the first value; replace replaces it", arguments: Backend.allCases)
    func createIfAbsent(_ backend: Backend) throws {
        guard let store = try backend.make() else { return Self.notice(backend) }
        let account = Self.account("create")
        let first = SecretBytes(randomCount: 32)
        #expect(try store.storeIfAbsent(first, for: account).isEqual(to: first))
        #expect(try store.storeIfAbsent(SecretBytes(randomCount: 32), for: account).isEqual(to: first))
        #expect(try store.secretCreatingIfAbsent(for: account).isEqual(to: first))
        let second = SecretBytes(randomCount: 32)
        try store.replaceSecret(second, for: account)
        #expect(try store.secret(for: account)?.isEqual(to: second) == true)
        try store.deleteSecret(for: account)
    }

    @Test("delete is idempotent and deletes only its own account", arguments: Backend.allCases)
    func idempotentDelete(_ backend: Backend) throws {
        guard let store = try backend.make() else { return Self.notice(backend) }
        let account = Self.account("delete")
        let neighbour = Self.account("neighbour")
        try store.deleteSecret(for: account)
        _ = try store.storeIfAbsent(SecretBytes(randomCount: 32), for: account)
        let kept = try store.storeIfAbsent(SecretBytes(randomCount: 32), for: neighbour)
        try store.deleteSecret(for: account)
        try store.deleteSecret(for: account)
        #expect(try store.secret(for: account) == nil)
        #expect(try store.secret(for: neighbour)?.isEqual(to: kept) == true)
        try store.deleteSecret(for: neighbour)
    }

    @Test("account names that could escape a directory or a query are refused", arguments: Backend.allCases)
    func accountNames(_ backend: Backend) throws {
        guard let store = try backend.make() else { return Self.notice(backend) }
        for bad in ["", "../x", ".hidden", "a/b", "a b", "é", String(repeating: "a", count: 129)] {
            #expect(throws: KeystoreError.invalidAccountName) { _ = try store.secret(for: bad) }
        }
    }

    @Test("concurrent create-if-absent from 8 threads yields one value", arguments: Backend.allCases)
    func concurrentThreads(_ backend: Backend) throws {
        guard let store = try backend.make() else { return Self.notice(backend) }
        let account = Self.account("threads")
        let results = ResultBox()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            results.add(try? store.storeIfAbsent(SecretBytes(randomCount: 32), for: account).bytes)
        }
        let stored = try #require(try store.secret(for: account)).bytes
        #expect(results.values.count == 8 && results.values.allSatisfy { $0 == stored })
        try store.deleteSecret(for: account)
    }

    @Test("a locked or unreachable store answers so, never 'absent'")
    func lockedIsNotAbsent() throws {
        let store = InMemoryKeystore()
        _ = try store.storeIfAbsent(SecretBytes(randomCount: 32), for: "device")
        store.setStatus(.locked)
        #expect(throws: KeystoreError.locked(.memory)) { _ = try store.secret(for: "device") }
        #expect(throws: KeystoreError.locked(.memory)) { _ = try store.secret(for: "other") }
        store.setStatus(.unreachable("no bus"))
        #expect(throws: KeystoreError.unreachable(.memory, "no bus")) { try store.deleteSecret(for: "device") }
    }

    @Test("auto takes the Secret Service only for an environment that names this process's bus")
    func autoNeedsTheBus() throws {
        guard let started = Self.sharedSession else { return Self.notice(.secretService) }
        let session = try started.get()
        let data = try TestSupport.temporaryDirectory("auto")
        // No TPM either (a machine with one would otherwise take it).
        let noTPM = "device:/nonexistent/tpmrm0"
        let without = CofferLocation.standard(environment: ["HOME": data, "XDG_DATA_HOME": data, "COFFER_TPM_TCTI": noTPM])
        #expect(try without.keystore(for: UUID(), creating: true).store.kind == .file)
        let with = CofferLocation.standard(
            environment: ["HOME": data, "XDG_DATA_HOME": data, "DBUS_SESSION_BUS_ADDRESS": session.address, "COFFER_TPM_TCTI": noTPM])
        let resolved = try with.keystore(for: UUID(), creating: true)
        #expect(resolved.store.kind == .secretService && resolved.source == "auto")
        // A vault this device already knows, with no record: the file store, where keys lived before records.
        #expect(try with.keystore(for: UUID(), creating: false).store.kind == .file)
    }

    @Test("auto takes the TPM when no keyring answers, the file store when no TPM answers either")
    func autoTakesTheTPM() throws {
        guard let tpm = ContractTPM.current else { return Self.notice(.tpm2) }
        let data = try TestSupport.temporaryDirectory("auto-tpm")
        let withTPM = CofferLocation.standard(environment: ["HOME": data, "XDG_DATA_HOME": data, "COFFER_TPM_TCTI": try tpm.get().tcti])
        let resolved = try withTPM.keystore(for: UUID(), creating: true)
        #expect(resolved.store.kind == .tpm2 && resolved.source == "auto")
        let withoutTPM = CofferLocation.standard(environment: ["HOME": data, "XDG_DATA_HOME": data, "COFFER_TPM_TCTI": "device:/nonexistent/tpmrm0"])
        #expect(try withoutTPM.keystore(for: UUID(), creating: true).store.kind == .file)
    }

    @Test("the Secret Service's value is ASCII: coffer:v1: and base64, for providers that mangle other bytes")
    func secretServiceEncoding() {
        let secret = SecretBytes([0x00, 0xFF, 0x80, 0x7F])
        let encoded = SecretServiceKeystore.encode(secret)
        #expect(String(decoding: encoded.dropLast(), as: UTF8.self) == "coffer:v1:AP+Afw==")
        #expect(encoded.last == 0 && encoded.dropLast().allSatisfy { $0 >= 0x20 && $0 < 0x7F })
        #expect(SecretServiceKeystore.decode(Array(encoded.dropLast()))?.bytes == secret.bytes)
        for bad in ["coffer:v1:AP+Afw=", "coffer:v2:AP+Afw==", "AP+Afw==", "coffer:v1:AP+A=w==", "coffer:v1:AP*Afw=="] {
            #expect(SecretServiceKeystore.decode(Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    static func notice(_ backend: Backend) {
        let reason =
            backend == .tpm2
            ? SoftwareTPM.unavailableReason ?? "swtpm did not start"
            : SecretServiceSession.unavailableReason ?? "the session did not start"
        FileHandle.standardError.write(Data("NOTICE: key store contract for \(backend.rawValue) skipped: \(reason)\n".utf8))
        withKnownIssue("\(backend.rawValue) cannot run here: \(reason)") { throw SkipNotice() }
    }

    struct SkipNotice: Error {}

    final class ResultBox: Sendable {
        private let stored = Mutex<[[UInt8]]>([])
        var values: [[UInt8]] { stored.withLock { $0 } }
        func add(_ value: [UInt8]?) {
            if let value { stored.withLock { $0.append(value) } }
        }
    }
}
