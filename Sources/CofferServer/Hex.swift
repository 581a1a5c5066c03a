/// Lower-case hex, for digests used as keys and tags. (`String(format:)` costs microseconds per byte, and the session
/// counter key is made on every authenticated request.)
enum Hex {
    static let digits: StaticString = "0123456789abcdef"

    static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits.utf8Start[Int(byte >> 4)])
            text.append(digits.utf8Start[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
