import CofferPlatform

/// Where key material and nonces come from. Production code uses `SystemRandom`; tests may inject a
/// deterministic source to produce golden files.
public protocol RandomSource: Sendable {
    /// Fills `buffer` with random bytes.
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
}

extension RandomSource {
    /// `count` random bytes.
    public func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { fill($0) }
        return result
    }
}

/// The operating system's CSPRNG (getrandom on Linux, getentropy on Apple platforms).
public struct SystemRandom: RandomSource {
    public init() {}

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) { SystemEntropy.fill(buffer) }
}
