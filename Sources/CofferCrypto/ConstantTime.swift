/// Comparison of bytes an attacker must not learn anything about from timing (MAC tags, digests of keys, secrets):
/// the time depends on the lengths only, never on where the bytes first differ.
public enum ConstantTime {
    /// Whether `first` and `second` hold the same bytes.
    public static func equal(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> Bool {
        guard first.count == second.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<first.count { difference |= first[index] ^ second[index] }
        return difference == 0
    }

    /// Whether `first` and `second` hold the same bytes.
    public static func equal(_ first: [UInt8], _ second: [UInt8]) -> Bool {
        first.withUnsafeBytes { first in second.withUnsafeBytes { second in equal(first, second) } }
    }
}
