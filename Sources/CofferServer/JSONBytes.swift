import CofferCrypto
import Foundation
import NIOCore

/// The pieces of JSON that the hand-written answers (`ChangesJSON`, `RegionRefreshJSON`) write, each exactly as
/// `WireJSON.encoder()` writes it, so that those answers stay byte for byte what `JSONEncoder` would have written.
enum JSONBytes {
    /// A JSON string with JSONEncoder's escapes: `"` and `\`, the short forms of five control characters and `\u00xx`
    /// for the others; everything else, UTF-8 and `/` included, as is (`withoutEscapingSlashes`).
    static func writeString(_ text: String, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "\""))
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            // Most names and addresses need no escape: one copy instead of a write per byte.
            buffer.writeString(text)
            buffer.writeInteger(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.writeStaticString(#"\""#)
            case UInt8(ascii: "\\"): buffer.writeStaticString(#"\\"#)
            case 0x08: buffer.writeStaticString(#"\b"#)
            case 0x09: buffer.writeStaticString(#"\t"#)
            case 0x0A: buffer.writeStaticString(#"\n"#)
            case 0x0C: buffer.writeStaticString(#"\f"#)
            case 0x0D: buffer.writeStaticString(#"\r"#)
            case 0..<0x20:
                buffer.writeStaticString(#"\u00"#)
                buffer.writeInteger(Hex.digits.utf8Start[Int(byte >> 4)])
                buffer.writeInteger(Hex.digits.utf8Start[Int(byte & 0x0F)])
            default:
                buffer.writeInteger(byte)
            }
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    /// A finite number as JSONEncoder writes it: Swift's shortest round-tripping form, without a trailing ".0".
    static func writeNumber(_ value: Double, into buffer: inout ByteBuffer) {
        let text = value.description
        if text.hasSuffix(".0") {
            buffer.writeString(String(text.dropLast(2)))
        } else {
            buffer.writeString(text)
        }
    }
}
