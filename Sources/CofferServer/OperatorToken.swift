import CofferCrypto
import CofferPlatform
import Crypto
import Foundation

/// The operator's credential for the admin endpoints (`/v1/admin/*`): a random token, shown once by
/// `coffer-server operator-token`, of which the data directory keeps only the SHA-256 (`operator-token.sha256`,
/// 0600). It is not an account: no ordinary sign-in can ever become an operator.
public enum OperatorToken {
    static let fileName = "operator-token.sha256"
    static let prefix = "coffer-op-"

    /// Makes a new token, replacing the previous one, and returns it; only its hash is written.
    public static func create(dataDirectory: String) throws -> String {
        try PrivateFiles.createDirectory(dataDirectory)
        let token =
            prefix
            + Data(SystemRandom().bytes(32)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        try PrivateFiles.write(Array(hash(token).utf8), to: "\(dataDirectory)/\(fileName)")
        return token
    }

    /// The stored hash, or nil when no operator token was made (the admin endpoints then refuse everyone).
    static func load(dataDirectory: String) throws -> String? {
        let path = "\(dataDirectory)/\(fileName)"
        guard PrivateFiles.exists(path) else { return nil }
        do {
            let text = String(decoding: try PrivateFiles.read(path, limit: 128), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard text.utf8.count == 64, text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) else {
                throw ServerSetupError.dataDirectory("\(path) does not hold a SHA-256 in hex")
            }
            return text
        } catch let error as ServerSetupError {
            throw error
        } catch {
            throw ServerSetupError.dataDirectory("cannot read \(path)")
        }
    }

    static func hash(_ token: String) -> String {
        Hex.encode(SHA256.hash(data: Data(token.utf8)))
    }

    /// Whether `authorization` is `Bearer <the operator token>`, compared in constant time.
    static func matches(_ authorization: String?, storedHash: String?) -> Bool {
        guard let storedHash, let authorization, authorization.utf8.starts(with: "Bearer ".utf8) else { return false }
        let presented = Array(hash(String(Substring(authorization.utf8.dropFirst(7)))).utf8)
        return ConstantTime.equal(presented, Array(storedHash.utf8))
    }
}
