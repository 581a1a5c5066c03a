import CofferTestSupport
import Foundation

/// Bytes from a hex string written in a test; a malformed literal is a bug in the test itself.
func hexBytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    precondition(digits.count % 2 == 0, "hex literal must have an even length")
    return stride(from: 0, to: digits.count, by: 2).map { index in
        UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16)!
    }
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}

func asciiBytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// The RFC 6238 Appendix A seeds: 20, 32 and 64 ASCII digits of "1234567890" repeated.
enum RFCSeeds {
    static let sha1 = asciiBytes("12345678901234567890")
    static let sha256 = asciiBytes("12345678901234567890123456789012")
    static let sha512 = asciiBytes(String(repeating: "1234567890", count: 6) + "1234")
}
