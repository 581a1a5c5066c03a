/// RFC 4648 base32 (the standard alphabet `A–Z`, `2–7`), as used for OTP secrets.
///
/// Encoding is strict and canonical. Decoding is deliberately lenient in the ways real authenticator secrets
/// need, and strict everywhere else:
/// - letters are case-insensitive (Google has issued lower-case secrets);
/// - spaces, tabs, line breaks and `-` are ignored anywhere (secrets are shown in groups such as `ABCD EFGH` or `ABCD-EFGH`);
/// - `=` padding may be present in any amount or absent, but once padding starts only padding (or ignored separators)
///   may follow it;
/// - any other character, including `0`, `1`, `8` and `9`, is rejected with ``DecodingError/invalidCharacter``;
/// - leftover bits that do not fill a whole byte are dropped. For well-formed input these are the zero bits of the
///   final quantum. For lengths that no whole number of bytes can produce (1, 3 or 6 characters past a multiple of 8)
///   they are the dangling bits of a truncated quantum, and dropping them is what Google Authenticator and Aegis do:
///   `6G2NUZHN6QCF7KDAV` decodes to the same 10 bytes as `6G2NUZHN6QCF7KDA`.
public enum Base32 {
    /// Why a string is not base32. Cases name the rule only; they never carry the input.
    public enum DecodingError: Error, Hashable, Sendable, CustomStringConvertible {
        /// A character outside the base32 alphabet that is not an ignored separator.
        case invalidCharacter
        /// A base32 character after `=` padding had started.
        case dataAfterPadding

        public var description: String {
            switch self {
            case .invalidCharacter:
                "base32 text contains a character outside A-Z and 2-7 (spaces, '-' and '=' padding are allowed)"
            case .dataAfterPadding:
                "base32 text continues after '=' padding"
            }
        }
    }

    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// Maps an ASCII byte to its 5-bit value; 0xFF marks "not in the alphabet".
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in alphabet.enumerated() {
            table[Int(symbol)] = UInt8(value)
            // Lower-case letters share the value of their upper-case form; digits have no case.
            if symbol >= UInt8(ascii: "A"), symbol <= UInt8(ascii: "Z") {
                table[Int(symbol + 32)] = UInt8(value)
            }
        }
        return table
    }()

    /// Encodes bytes as upper-case base32.
    ///
    /// - Parameters:
    ///   - bytes: The bytes to encode.
    ///   - padding: Whether to pad the output with `=` to a multiple of 8 characters. `otpauth://` URIs omit padding.
    public static func encode(_ bytes: some Sequence<UInt8>, padding: Bool = false) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.underestimatedCount * 8 / 5 + 8)
        var buffer: UInt32 = 0
        var bitCount = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bitCount += 8
            while bitCount >= 5 {
                bitCount -= 5
                output.append(alphabet[Int((buffer >> UInt32(bitCount)) & 0x1F)])
            }
            buffer &= (1 << UInt32(bitCount)) - 1
        }
        if bitCount > 0 {
            output.append(alphabet[Int((buffer << UInt32(5 - bitCount)) & 0x1F)])
        }
        if padding {
            while output.count % 8 != 0 {
                output.append(UInt8(ascii: "="))
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes base32 text leniently, as described in the type's documentation.
    ///
    /// - Throws: ``DecodingError`` when the text contains a character that is neither base32, padding nor an ignored
    ///   separator, or base32 data after padding.
    public static func decode(_ text: some StringProtocol) throws(DecodingError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count * 5 / 8)
        var buffer: UInt32 = 0
        var bitCount = 0
        var paddingStarted = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "-"):
                continue
            case UInt8(ascii: "="):
                paddingStarted = true
                continue
            default:
                break
            }
            let value = decodeTable[Int(byte)]
            guard value != 0xFF else { throw .invalidCharacter }
            guard !paddingStarted else { throw .dataAfterPadding }
            buffer = (buffer << 5) | UInt32(value)
            bitCount += 5
            if bitCount >= 8 {
                bitCount -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bitCount)))
                buffer &= (1 << UInt32(bitCount)) - 1
            }
        }
        return output
    }
}
