/// A recovery code: 160 random bits shown once as 32 Crockford base32 characters in groups of four
/// (`7KQ2-M9XD-…`). Reading accepts lower case, spaces, dashes, and Crockford's look-alikes (O→0, I/L→1).
public enum RecoveryCode {
    /// Number of random bytes in a code.
    public static let byteCount = 20
    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// A new random code: its bytes (the slot secret) and its printed form.
    public static func generate(random: some RandomSource = SystemRandom()) -> (secret: SecretBytes, text: String) {
        var raw = random.bytes(byteCount)
        defer { raw.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        return (SecretBytes(raw), format(raw))
    }

    /// The printed form of `bytes` (a multiple of 5 bytes).
    static func format(_ bytes: [UInt8]) -> String {
        var characters: [UInt8] = []
        var buffer: UInt64 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt64(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                characters.append(alphabet[Int((buffer >> UInt64(bits)) & 31)])
            }
        }
        var grouped: [UInt8] = []
        for (index, character) in characters.enumerated() {
            if index > 0 && index % 4 == 0 { grouped.append(UInt8(ascii: "-")) }
            grouped.append(character)
        }
        return String(decoding: grouped, as: UTF8.self)
    }

    /// Parses a typed code back into its secret bytes.
    public static func parse(_ text: String) throws(CofferCryptoError) -> SecretBytes {
        var values: [UInt8] = []
        for scalar in text.uppercased().unicodeScalars {
            switch scalar {
            case "-", " ", "\t", "\n", "\r": continue
            case "O": values.append(0)
            case "I", "L": values.append(1)
            default:
                guard scalar.isASCII, let index = alphabet.firstIndex(of: UInt8(scalar.value)) else {
                    throw .malformedRecoveryCode
                }
                values.append(UInt8(index))
            }
        }
        guard values.count == byteCount * 8 / 5 else { throw .malformedRecoveryCode }
        var bytes: [UInt8] = []
        var buffer: UInt64 = 0
        var bits = 0
        for value in values {
            buffer = (buffer << 5) | UInt64(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: buffer >> UInt64(bits)))
            }
        }
        defer { bytes.withUnsafeMutableBytes { SecretBytes.wipe($0) } }
        return SecretBytes(bytes)
    }
}
