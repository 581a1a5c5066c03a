import Crypto
import CryptoExtras
import Foundation

/// The slow function that turns a passphrase into key material, with its cost parameters.
///
/// Parameters are part of every slot's associated data, and are bounded both ways whenever they are read from disk
/// or the network: too low would let a tampered file or a hostile server downgrade the work factor, too high would
/// let it hang or exhaust the machine.
public enum PassphraseKDF: Sendable, Hashable, CustomStringConvertible {
    /// PBKDF2-HMAC-SHA256 (RFC 8018).
    case pbkdf2SHA256(iterations: UInt32)
    /// scrypt (RFC 7914) with N = 2^logN, block size r, parallelism p.
    case scrypt(logN: UInt8, r: UInt32, p: UInt32)

    /// The default for new passphrase slots: PBKDF2-HMAC-SHA256, 600,000 iterations.
    public static let defaultPBKDF2 = PassphraseKDF.pbkdf2SHA256(iterations: 600_000)
    /// The scrypt option: N = 2^15, r = 8, p = 1.
    public static let defaultScrypt = PassphraseKDF.scrypt(logN: 15, r: 8, p: 1)

    /// Length of every derived key, in bytes.
    public static let outputLength = 32

    /// Wire identifier (docs/FORMAT.md §KDF).
    public var identifier: UInt8 {
        switch self {
        case .pbkdf2SHA256: return 1
        case .scrypt: return 2
        }
    }

    /// Canonical encoding: identifier byte, then big-endian parameters. This exact encoding is stored and bound
    /// into slot associated data.
    public var encoded: [UInt8] {
        switch self {
        case .pbkdf2SHA256(let iterations):
            return [identifier] + BigEndian.bytes(iterations)
        case .scrypt(let logN, let r, let p):
            return [identifier, logN] + BigEndian.bytes(r) + BigEndian.bytes(p)
        }
    }

    /// Parses the canonical encoding and checks it against `limits`.
    public init(encoded bytes: [UInt8], limits: KDFLimits) throws(CofferCryptoError) {
        guard let identifier = bytes.first else { throw .kdfParametersOutOfBounds("empty") }
        switch identifier {
        case 1:
            guard bytes.count == 5 else { throw .kdfParametersOutOfBounds("PBKDF2 parameter length") }
            self = .pbkdf2SHA256(iterations: BigEndian.uint32(bytes, at: 1))
        case 2:
            guard bytes.count == 10 else { throw .kdfParametersOutOfBounds("scrypt parameter length") }
            self = .scrypt(logN: bytes[1], r: BigEndian.uint32(bytes, at: 2), p: BigEndian.uint32(bytes, at: 6))
        default:
            throw .unknownKDF(identifier)
        }
        try validate(limits)
    }

    /// Throws unless every parameter is inside `limits`.
    /// Whether the stretch costs at least Coffer's defaults: PBKDF2 600,000 iterations, or scrypt N = 2^15 with
    /// r = 8. A server's prelogin answer below this is a downgrade a client refuses unless told otherwise.
    public var meetsDefaults: Bool {
        switch self {
        case .pbkdf2SHA256(let iterations): return iterations >= 600_000
        case .scrypt(let logN, let r, let p): return logN >= 15 && r >= 8 && p >= 1
        }
    }

    public func validate(_ limits: KDFLimits) throws(CofferCryptoError) {
        switch self {
        case .pbkdf2SHA256(let iterations):
            guard limits.pbkdf2Iterations.contains(iterations) else {
                throw .kdfParametersOutOfBounds(
                    "PBKDF2 iterations must be \(limits.pbkdf2Iterations.lowerBound)...\(limits.pbkdf2Iterations.upperBound)")
            }
        case .scrypt(let logN, let r, let p):
            guard limits.scryptLogN.contains(logN) else {
                throw .kdfParametersOutOfBounds(
                    "scrypt log2(N) must be \(limits.scryptLogN.lowerBound)...\(limits.scryptLogN.upperBound)")
            }
            guard limits.scryptR.contains(r), limits.scryptP.contains(p) else {
                throw .kdfParametersOutOfBounds(
                    "scrypt r must be \(limits.scryptR.lowerBound)...\(limits.scryptR.upperBound), p \(limits.scryptP.lowerBound)...\(limits.scryptP.upperBound)"
                )
            }
            let memory = 128 * Int(r) << Int(logN)
            guard memory <= limits.scryptMaxMemory else {
                throw .kdfParametersOutOfBounds("scrypt needs more than \(limits.scryptMaxMemory >> 20) MiB")
            }
        }
    }

    /// Stretches `passphrase` with `salt`. Checks `limits` first, so no caller can run an unbounded KDF.
    public func derive(
        _ passphrase: SecretBytes, salt: [UInt8], limits: KDFLimits, outputByteCount: Int = outputLength
    ) throws(CofferCryptoError) -> SecretBytes {
        try validate(limits)
        switch self {
        case .pbkdf2SHA256(let iterations):
            return try PBKDF2.derive(passphrase, salt: salt, hash: .sha256, iterations: Int(iterations), outputByteCount: outputByteCount)
        case .scrypt(let logN, let r, let p):
            do {
                let key = try passphrase.withUnsafeBytes { password in
                    try KDF.Scrypt.deriveKey(
                        from: password, salt: salt, outputByteCount: outputByteCount, rounds: 1 << Int(logN),
                        blockSize: Int(r), parallelism: Int(p), maxMemory: limits.scryptMaxMemory + (1 << 20))
                }
                return key.withUnsafeBytes { SecretBytes($0) }
            } catch {
                throw .primitiveFailure("scrypt")
            }
        }
    }

    public var description: String {
        switch self {
        case .pbkdf2SHA256(let iterations): return "PBKDF2-HMAC-SHA256, \(iterations) iterations"
        case .scrypt(let logN, let r, let p): return "scrypt N=2^\(logN) r=\(r) p=\(p)"
        }
    }
}

/// Accepted ranges for KDF parameters read from files or the network.
public struct KDFLimits: Sendable, Hashable {
    public var pbkdf2Iterations: ClosedRange<UInt32>
    public var scryptLogN: ClosedRange<UInt8>
    public var scryptR: ClosedRange<UInt32>
    public var scryptP: ClosedRange<UInt32>
    /// Upper bound of scrypt's memory, 128·r·N bytes.
    public var scryptMaxMemory: Int

    /// What every production path uses. The floor of 210,000 PBKDF2 iterations is OWASP's lowest current
    /// recommendation (and swift-crypto's own floor); the ceilings keep a hostile file from costing more than a few
    /// seconds or 1 GiB.
    public static let production = KDFLimits(
        pbkdf2Iterations: 210_000...10_000_000,
        scryptLogN: 14...20,
        scryptR: 1...32,
        scryptP: 1...16,
        scryptMaxMemory: 1 << 30)

    /// Cheap parameters for tests. Only reachable through `@_spi(Testing) import CofferCrypto`.
    @_spi(Testing) public static let testing = KDFLimits(
        pbkdf2Iterations: 1...10_000_000,
        scryptLogN: 1...20,
        scryptR: 1...32,
        scryptP: 1...16,
        scryptMaxMemory: 1 << 30)

    @_spi(Testing) public init(
        pbkdf2Iterations: ClosedRange<UInt32>, scryptLogN: ClosedRange<UInt8>, scryptR: ClosedRange<UInt32>,
        scryptP: ClosedRange<UInt32>, scryptMaxMemory: Int
    ) {
        self.pbkdf2Iterations = pbkdf2Iterations
        self.scryptLogN = scryptLogN
        self.scryptR = scryptR
        self.scryptP = scryptP
        self.scryptMaxMemory = scryptMaxMemory
    }
}

/// A passphrase as Coffer feeds it to a KDF: the UTF-8 bytes of its Unicode NFC form, nothing trimmed, no NUL.
///
/// NFC makes "é" typed as one code point or as "e" + combining accent the same passphrase on every keyboard;
/// refusing NUL avoids the trailing-NUL collisions HMAC key padding creates (Aegis #71).
public enum Passphrase {
    /// Normalises and checks `text`, returning the KDF input.
    public static func bytes(_ text: String) throws(CofferCryptoError) -> SecretBytes {
        let normalized = text.precomposedStringWithCanonicalMapping
        guard !normalized.isEmpty else { throw .unacceptablePassphrase("it is empty") }
        guard !normalized.utf8.contains(0) else { throw .unacceptablePassphrase("it contains a NUL character") }
        return SecretBytes(normalized.utf8)
    }
}

/// PBKDF2-HMAC (RFC 8018) over swift-crypto's BoringSSL implementation, without its round floor: callers bound
/// the iteration count themselves (`KDFLimits` for slots; importers of other apps' files cap what those files say).
public enum PBKDF2 {
    public enum Hash: Sendable {
        case sha1, sha256, sha512
    }

    /// Derives `outputByteCount` bytes; the caller has already checked `iterations`.
    public static func derive(
        _ password: SecretBytes, salt: [UInt8], hash: Hash, iterations: Int, outputByteCount: Int
    ) throws(CofferCryptoError) -> SecretBytes {
        guard iterations >= 1, (1...1024).contains(outputByteCount) else {
            throw .kdfParametersOutOfBounds("PBKDF2 iterations or length")
        }
        let function: KDF.Insecure.PBKDF2.HashFunction
        switch hash {
        case .sha1: function = .insecureSHA1
        case .sha256: function = .sha256
        case .sha512: function = .sha512
        }
        do {
            let key = try password.withUnsafeBytes { raw in
                try KDF.Insecure.PBKDF2.deriveKey(
                    from: raw, salt: salt, using: function, outputByteCount: outputByteCount, unsafeUncheckedRounds: iterations)
            }
            return key.withUnsafeBytes { SecretBytes($0) }
        } catch {
            throw .primitiveFailure("PBKDF2")
        }
    }
}

enum BigEndian {
    static func bytes(_ value: UInt32) -> [UInt8] {
        [
            UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
            UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value),
        ]
    }

    static func bytes(_ value: UInt64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (UInt32(bytes[offset]) << 24) | (UInt32(bytes[offset + 1]) << 16) | (UInt32(bytes[offset + 2]) << 8)
            | UInt32(bytes[offset + 3])
    }
}
