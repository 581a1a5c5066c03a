import CofferCrypto
import Crypto
import Foundation

/// The slow hash the server keeps of each account's auth key: `pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>`.
///
/// The auth key is already a 256-bit HKDF output of a stretched passphrase, so this hash is a second line: a leaked
/// database costs an attacker the client's KDF and this one for every guess.
public enum AuthHasher {
    /// Iterations for new hashes in production.
    public static let productionIterations = 210_000
    private static let prefix = "pbkdf2-sha256"

    /// Hashes `authKey` with a fresh 16-byte salt.
    static func hash(_ authKey: [UInt8], iterations: Int, random: some RandomSource = SystemRandom()) throws -> String {
        let salt = random.bytes(16)
        let digest = try PBKDF2.derive(SecretBytes(authKey), salt: salt, hash: .sha256, iterations: iterations, outputByteCount: 32)
        return [prefix, String(iterations), Data(salt).base64EncodedString(), Data(digest.bytes).base64EncodedString()]
            .joined(separator: "$")
    }

    /// Whether `authKey` matches `stored`, compared in constant time. A malformed stored hash never matches.
    static func verify(_ authKey: [UInt8], against stored: String) -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == prefix, let iterations = Int(parts[1]), (1...10_000_000).contains(iterations),
            let salt = Data(base64Encoded: String(parts[2])), let expected = Data(base64Encoded: String(parts[3])),
            let digest = try? PBKDF2.derive(SecretBytes(authKey), salt: Array(salt), hash: .sha256, iterations: iterations, outputByteCount: 32)
        else { return false }
        return digest.isEqual(to: SecretBytes(expected))
    }

    /// Work done for an unknown account so that its answer takes as long as a wrong passphrase.
    static func burn(iterations: Int) {
        _ = try? PBKDF2.derive(SecretBytes([0]), salt: Array(repeating: 0, count: 16), hash: .sha256, iterations: iterations, outputByteCount: 32)
    }
}
