@_spi(Testing) import CofferCrypto
import CofferKeystore
@_spi(Sync) import CofferKit
@testable import CofferSync
import CofferSyncAPI
import CofferTestSupport
import CofferVault
import Crypto
import Foundation
import Testing

/// Vault-state manifests against `Tests/Vectors/manifests/manifest_v1.json`, which `Tests/oracles/make_manifest_golden.py` computed from
/// docs/FORMAT.md §8.6 with Python's hashlib, hmac and `cryptography` alone.
@Suite("Vault-state manifests, format v1")
struct ManifestTests {
    struct Golden: Decodable {
        struct Row: Decodable {
            var id: UUID
            var kind: String
            var revision: Int64
            var updated_at: Int64
            var deleted: Bool
            var box: String?

            var itemRow: ItemRow {
                ItemRow(
                    id: id, kind: kind, revision: revision, updatedAt: updated_at, deleted: deleted,
                    box: box.map { Data(TestSupport.hex($0)) })
            }
        }

        struct Entry: Decodable {
            var epoch: Int64
            var rows: [Row]
            var made_at: Int64
            var leaves: [String: String]
            var root: String
            var count: UInt32
            var tag: String
            var manifest: String
            var base64: String
            var hash: String
            var fingerprint: String
        }

        var master_key: String
        var vault_id: UUID
        var device: UUID
        var key_epoch: UInt32
        var salt: String
        var account: String
        var manifest_key: String
        var manifests: [Entry]
    }

    static let golden: Golden = {
        let url = TestSupport.repositoryRoot.appendingPathComponent("Tests/Vectors/manifests/manifest_v1.json")
        // The file is committed: failing to read it is a broken checkout, worth a crash with its path.
        return try! JSONDecoder().decode(Golden.self, from: Data(contentsOf: url))
    }()

    static func tag(_ body: [UInt8]) -> [UInt8] {
        let key = KeySchedule.hkdf(
            SecretBytes(TestSupport.hex(golden.master_key)), salt: golden.vault_id.bytes, label: KeySchedule.manifestKeyLabel)
        return Array(HMAC<SHA256>.authenticationCode(for: body, using: key))
    }

    @Test("leaves, roots, bytes, tags, hashes and fingerprints are the oracle's")
    func matchesOracle() throws {
        let golden = Self.golden
        #expect(AccountCommitment.of(kdf: .defaultPBKDF2, salt: TestSupport.hex(golden.salt)) == TestSupport.hex(golden.account))
        var previous = Manifest.noPrevious
        for entry in golden.manifests {
            let rows = entry.rows.map(\.itemRow)
            for row in rows {
                #expect(TestSupport.hex(row.leaf) == entry.leaves[row.id.uuidString.lowercased()], "leaf of \(row.id)")
            }
            let root = StateRoot.root(Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0.leaf) }))
            #expect(TestSupport.hex(root) == entry.root)
            var manifest = Manifest(
                vaultID: golden.vault_id, epoch: entry.epoch, previous: previous, root: root, count: entry.count,
                device: golden.device, madeAt: entry.made_at, keyEpoch: golden.key_epoch, account: TestSupport.hex(golden.account))
            manifest.tag = Self.tag(manifest.body)
            #expect(TestSupport.hex(manifest.tag) == entry.tag)
            #expect(TestSupport.hex(manifest.bytes) == entry.manifest)
            #expect(manifest.base64 == entry.base64)
            #expect(TestSupport.hex(manifest.hash) == entry.hash)
            #expect(manifest.fingerprint == entry.fingerprint)
            #expect(try Manifest(bytes: TestSupport.hex(entry.manifest)) == manifest)
            #expect(try Manifest(base64: entry.base64) == manifest)
            previous = manifest.hash
        }
    }

    @Test("a vault with the golden master key tags as the oracle does")
    func vaultTag() throws {
        let golden = Self.golden
        let location = CofferLocation(
            vaultDirectory: try TestSupport.temporaryDirectory("manifest") + "/vault", keystore: InMemoryKeystore(),
            options: VaultOptions(limits: .testing))
        let coffer = try Coffer.join(
            at: location, vaultID: golden.vault_id, masterKey: SecretBytes(TestSupport.hex(golden.master_key)), passphrase: nil)
        for entry in golden.manifests {
            let manifest = try Manifest(bytes: TestSupport.hex(entry.manifest))
            #expect(coffer.vault.manifestTag(manifest.body) == manifest.tag)
        }
    }

    @Test("the verifier accepts the golden chain and refuses every single-bit change of it")
    func verifierOnGolden() throws {
        let golden = Self.golden
        let first = try Manifest(bytes: TestSupport.hex(golden.manifests[0].manifest))
        let second = try Manifest(bytes: TestSupport.hex(golden.manifests[1].manifest))
        let verifier = StateVerifier(vaultID: golden.vault_id, keyEpoch: Int64(golden.key_epoch), tag: Self.tag)
        try verifier.checkHistory(verified: first, head: second, chain: [second])
        var known = SyncedRows()
        for row in golden.manifests[0].rows.map(\.itemRow) {
            known.leaves[row.id] = row.leaf
            known.revisions[row.id] = row.revision
        }
        let changed = golden.manifests[1].rows.map(\.itemRow).filter { known.leaves[$0.id] != $0.leaf }
        try verifier.checkState(known: known, staged: changed, head: second, fullRead: false)

        let bytes = second.bytes
        for bit in 0..<(bytes.count * 8) {
            var flipped = bytes
            flipped[bit / 8] ^= UInt8(1 << (bit % 8))
            guard let tampered = try? Manifest(bytes: flipped) else { continue }
            #expect(throws: VerificationFailure.self, "bit \(bit)") {
                try verifier.checkHistory(verified: first, head: tampered, chain: [tampered])
            }
        }
    }

    @Test("malformed manifests are refused before use")
    func malformed() throws {
        let good = TestSupport.hex(Self.golden.manifests[0].manifest)
        #expect(throws: ManifestError.self) { try Manifest(bytes: Array(good.dropLast())) }
        #expect(throws: ManifestError.self) { try Manifest(bytes: good + [0]) }
        var magic = good
        magic[3] = UInt8(ascii: "2")
        #expect(throws: ManifestError.self) { try Manifest(bytes: magic) }
        var epochZero = good
        epochZero.replaceSubrange(20..<28, with: [UInt8](repeating: 0, count: 8))
        #expect(throws: ManifestError.self) { try Manifest(bytes: epochZero) }
        var linkedFirst = good
        linkedFirst[28] = 1
        #expect(throws: ManifestError.self) { try Manifest(bytes: linkedFirst) }
        #expect(throws: ManifestError.self) { try Manifest(base64: String(repeating: "A", count: 400)) }
        #expect(throws: ManifestError.self) { try Manifest(base64: "not base64!") }
    }

    @Test("fingerprints compare as people type them")
    func fingerprints() throws {
        let manifest = try Manifest(bytes: TestSupport.hex(Self.golden.manifests[1].manifest))
        let words = String(manifest.fingerprint.split(separator: ":")[1])
        #expect(SyncSession.matches(manifest.fingerprint, manifest))
        #expect(SyncSession.matches(words.lowercased().replacingOccurrences(of: "-", with: " "), manifest))
        #expect(!SyncSession.matches("1:" + words, manifest))
        #expect(!SyncSession.matches(String(words.dropLast()) + (words.last == "0" ? "1" : "0"), manifest))
    }
}
