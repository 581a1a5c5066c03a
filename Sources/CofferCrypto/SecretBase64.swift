/// Standard base64 (RFC 4648 §4, padded) over byte arrays the caller can wipe, unlike `String`: for secrets that a
/// store keeps as text (the Secret Service item of a device key). Foundation's base64 works through `String` and
/// `Data`, which cannot be wiped.
package enum SecretBase64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    package static func encode(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var word: UInt32 = 0
            for offset in 0..<3 { word = word << 8 | UInt32(offset < count ? bytes[index + offset] : 0) }
            for position in 0..<4 {
                output.append(position <= count ? alphabet[Int(word >> UInt32(18 - 6 * position) & 0x3F)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return output
    }

    package static func decode<Bytes: Collection>(_ text: Bytes) -> [UInt8]? where Bytes.Element == UInt8 {
        guard text.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(text.count / 4 * 3)
        var word: UInt32 = 0
        var filled = 0
        var padding = 0
        for character in text {
            let value: UInt32
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(character - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(character - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(character - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="): value = 0
            default: return nil
            }
            if character == UInt8(ascii: "=") {
                padding += 1
            } else if padding > 0 {
                return nil
            }
            word = word << 6 | value
            filled += 1
            if filled == 4 {
                guard padding <= 2 else { return nil }
                let bytes = [UInt8(word >> 16 & 0xFF), UInt8(word >> 8 & 0xFF), UInt8(word & 0xFF)]
                output.append(contentsOf: bytes.prefix(3 - padding))
                word = 0
                filled = 0
            }
        }
        return output
    }
}
