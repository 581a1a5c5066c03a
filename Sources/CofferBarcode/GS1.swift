/// GS1 element strings as payload bytes.
///
/// A GS1 payload is the element string exactly as a decoder transmits it: application identifiers and their data
/// concatenated, with the ASCII group separator `0x1D` after each variable-length field that is followed by
/// another. The leading FNC1 that marks a symbol as GS1 is implied and is not part of the payload.
enum GS1 {
    static let separator: UInt8 = 0x1D

    /// GS1 character set 82 (GS1 General Specifications, figure 7.11-1), plus the separator.
    private static let allowed: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for byte in Array("!\"%&'()*+,-./0123456789:;<=>?ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8) {
            table[Int(byte)] = true
        }
        table[Int(separator)] = true
        return table
    }()

    static func validate(_ payload: [UInt8], symbology: Symbology) throws(BarcodeError) {
        guard payload.count >= 2, payload[0] >= 0x30, payload[0] <= 0x39, payload[1] >= 0x30, payload[1] <= 0x39 else {
            throw BarcodeError(symbology, "a GS1 element string must start with a numeric application identifier")
        }
        guard payload.allSatisfy({ allowed[Int($0)] }) else {
            throw BarcodeError(symbology, "GS1 data may only use GS1 character set 82 and the 0x1D separator")
        }
        guard payload.last != separator else {
            throw BarcodeError(symbology, "a GS1 element string must not end with a separator")
        }
        for i in 1..<payload.count where payload[i] == separator && payload[i - 1] == separator {
            throw BarcodeError(symbology, "GS1 separators must not be repeated")
        }
    }
}
