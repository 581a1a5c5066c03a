/// Failures of the crypto core. No case carries key material, plaintext or a passphrase.
public enum CofferCryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A box's tag did not verify: wrong key, or the box, nonce, tag or associated data was changed.
    case authenticationFailed
    /// A box is shorter than nonce + tag, or otherwise not in the box layout.
    case malformedBox
    /// KDF parameters read from a file or the network are outside the accepted range.
    case kdfParametersOutOfBounds(String)
    /// A KDF identifier this version does not know.
    case unknownKDF(UInt8)
    /// A slot type this version does not know.
    case unknownSlotType(UInt8)
    /// A recovery code that is not in the recovery-code alphabet or has the wrong length.
    case malformedRecoveryCode
    /// The passphrase is empty or contains characters Coffer refuses (NUL).
    case unacceptablePassphrase(String)
    /// The underlying crypto library failed for a reason that is not an authentication failure.
    case primitiveFailure(String)

    public var description: String {
        switch self {
        case .authenticationFailed: return "authentication failed (wrong key, or the data was modified)"
        case .malformedBox: return "encrypted data is truncated or malformed"
        case .kdfParametersOutOfBounds(let detail): return "key-derivation parameters out of bounds: \(detail)"
        case .unknownKDF(let identifier): return "unknown key-derivation function \(identifier)"
        case .unknownSlotType(let identifier): return "unknown slot type \(identifier)"
        case .malformedRecoveryCode: return "malformed recovery code"
        case .unacceptablePassphrase(let rule): return "unacceptable passphrase: \(rule)"
        case .primitiveFailure(let detail): return "cryptographic primitive failed: \(detail)"
        }
    }
}
