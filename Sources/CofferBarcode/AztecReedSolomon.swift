/// Reed–Solomon encoding over a binary extension field GF(2^m), shared by Aztec (GF(16), GF(64), GF(256), GF(1024),
/// GF(4096)) and Data Matrix (GF(256)). Both symbologies use a generator polynomial whose roots are α¹…αⁿ, so only the
/// field (its size and primitive polynomial) differs between callers.
struct BinaryFieldReedSolomon: Sendable {
    /// Number of elements in the field (2^m).
    let size: Int
    private let exp: [Int]
    private let log: [Int]

    /// - Parameter primitive: the field's primitive polynomial including the x^m term, e.g. 0x12D for Data Matrix.
    init(size: Int, primitive: Int) {
        self.size = size
        var exp = [Int](repeating: 0, count: 2 * size)
        var log = [Int](repeating: 0, count: size)
        var value = 1
        for power in 0..<(size - 1) {
            exp[power] = value
            log[value] = power
            value <<= 1
            if value >= size { value ^= primitive }
        }
        // Doubling the table lets `multiply` skip a modulo on the summed logarithms.
        for power in (size - 1)..<(2 * size) { exp[power] = exp[power - (size - 1)] }
        self.exp = exp
        self.log = log
    }

    @inline(__always)
    private func multiply(_ a: Int, _ b: Int) -> Int {
        if a == 0 || b == 0 { return 0 }
        return exp[log[a] + log[b]]
    }

    /// Coefficients of ∏(x − αⁱ) for i = 1…count, highest degree first, leading 1 omitted.
    func generator(count: Int) -> [Int] {
        var poly = [1]
        for i in 1...count {
            let root = exp[i % (size - 1)]
            var next = [Int](repeating: 0, count: poly.count + 1)
            for (j, coefficient) in poly.enumerated() {
                next[j] ^= coefficient
                next[j + 1] ^= multiply(coefficient, root)
            }
            poly = next
        }
        return Array(poly.dropFirst())
    }

    /// The `count` check symbols for `data` (systematic encoding: remainder of data·xⁿ divided by the generator).
    func checkSymbols(for data: [Int], count: Int) -> [Int] {
        checkSymbols(for: data, generator: generator(count: count))
    }

    /// As `checkSymbols(for:count:)` with a precomputed generator, for callers encoding several blocks.
    func checkSymbols(for data: [Int], generator: [Int]) -> [Int] {
        let count = generator.count
        var remainder = [Int](repeating: 0, count: count)
        for symbol in data {
            let factor = symbol ^ remainder[0]
            for j in 0..<(count - 1) {
                remainder[j] = remainder[j + 1] ^ multiply(factor, generator[j])
            }
            remainder[count - 1] = multiply(factor, generator[count - 1])
        }
        return remainder
    }
}
