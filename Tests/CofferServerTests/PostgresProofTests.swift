import CofferServerStore
import Crypto
import Foundation
import Testing

/// The proof a server transaction acts by on PostgreSQL (docs/FORMAT.md §8.5, "Proven identity"). The database checks
/// it with its own HMAC (SHA-256 over padded keys, migration 11); the expected values here come from Python's `hmac`:
/// `hmac.new(bytes(range(32)), ("coffer/v1/postgres-act\n" + binding + "\n" + claim).encode(), hashlib.sha256)`.
@Suite("PostgreSQL proven identity")
struct PostgresProofTests {
    static let key = SymmetricKey(data: Array(0..<32) as [UInt8])
    static let binding = "4242:1764300000123456"

    @Test(arguments: [
        (
            PostgresServerStore.Acting.user(UUID(uuidString: "6F1C2A4E-8D3B-4C5A-9E7F-0A1B2C3D4E5F")!),
            "5be04656deef8f87e613988ebf74419f431f7fc03983696132f1d1ce9f65e491"
        ),
        (.server, "95c4bc0ef688310b7ed62150ddfdcc2b124a1f801eff383eb9b919d034d6e9e2"),
    ])
    func proof(acting: PostgresServerStore.Acting, expected: String) {
        let proof = PostgresServerStore.proof(key: Self.key, binding: Self.binding, acting: acting)
        #expect(proof.map { String(format: "%02x", $0) }.joined() == expected)
    }
}
