import CofferCrypto
import CofferPlatform
import Crypto
import Foundation
import JWTKit

/// The server's ES256 signing keys, one PEM file per key in `<data>/signing-keys/<kid>.pem` (0600). Key ids sort by
/// creation time; the newest signs, every key still on disk verifies. Rotation adds a key and deletes those retired
/// longer ago than a refresh token lives, so no live token loses its key.
public enum SigningKeyStore {
    struct Key: Sendable {
        let id: String
        let privateKey: ECDSA.PrivateKey<P256>
        let createdAt: Date
    }

    struct Loaded: Sendable {
        let keys: [Key]
        var current: Key { keys[keys.count - 1] }
    }

    static func directory(_ dataDirectory: String) -> String { "\(dataDirectory)/signing-keys" }

    /// Loads the keys, creating the first one if there is none.
    static func load(dataDirectory: String, now: Date) throws(ServerSetupError) -> Loaded {
        let keys = try read(dataDirectory)
        if !keys.isEmpty { return Loaded(keys: keys) }
        _ = try rotate(dataDirectory: dataDirectory, now: now, retireAfter: .infinity)
        return Loaded(keys: try read(dataDirectory))
    }

    /// Adds a new current key; deletes keys superseded more than `retireAfter` seconds ago. Returns the new key id.
    @discardableResult
    public static func rotate(dataDirectory: String, now: Date, retireAfter: TimeInterval) throws(ServerSetupError) -> String {
        let directory = directory(dataDirectory)
        do {
            try PrivateFiles.createDirectory(dataDirectory)
            try PrivateFiles.createDirectory(directory)
        } catch {
            throw .signingKeys("cannot create \(directory)")
        }
        let existing = try read(dataDirectory)
        let id = keyID(now)
        let key = ECDSA.PrivateKey<P256>()
        do {
            try PrivateFiles.write(Array(key.pemRepresentation.utf8), to: "\(directory)/\(id).pem", exclusive: true)
        } catch {
            throw .signingKeys("cannot write a new key in \(directory)")
        }
        // A key stops signing when its successor appears; it is deleted once no token it signed can still be live.
        for (index, old) in existing.enumerated() {
            let successor = index + 1 < existing.count ? existing[index + 1].createdAt : now
            if now.timeIntervalSince(successor) > retireAfter {
                try? PrivateFiles.remove("\(directory)/\(old.id).pem")
            }
        }
        return id
    }

    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss"
        return formatter
    }

    private static func keyID(_ date: Date) -> String {
        let suffix = Hex.encode(SystemRandom().bytes(4))
        return "k\(formatter().string(from: date))-\(suffix)"
    }

    /// The creation time a key id carries (`k<yyyyMMddTHHmmss>-<random>`).
    private static func creationDate(ofKeyID id: String) -> Date? {
        guard id.hasPrefix("k"), let dash = id.firstIndex(of: "-") else { return nil }
        return formatter().date(from: String(id[id.index(after: id.startIndex)..<dash]))
    }

    private static func read(_ dataDirectory: String) throws(ServerSetupError) -> [Key] {
        let directory = directory(dataDirectory)
        guard PrivateFiles.exists(directory) else { return [] }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw .signingKeys("cannot list \(directory)")
        }
        var keys: [Key] = []
        for name in names.sorted() where name.hasSuffix(".pem") && name.hasPrefix("k") {
            let path = "\(directory)/\(name)"
            do {
                let pem = try PrivateFiles.read(path, limit: 16 * 1024)
                let key = try ECDSA.PrivateKey<P256>(pem: String(decoding: pem, as: UTF8.self))
                let id = String(name.dropLast(4))
                keys.append(Key(id: id, privateKey: key, createdAt: creationDate(ofKeyID: id) ?? .distantPast))
            } catch {
                throw .signingKeys("cannot read \(path)")
            }
        }
        return keys
    }
}
