/// A Galois field GF(2^m) with its exponent and logarithm tables, as the 2D symbologies use it: QR and Data Matrix
/// over GF(256), Aztec over GF(16) to GF(4096).
struct GaloisField: Sendable {
    let size: Int
    /// The power of α that the generator polynomial's first root has: 0 for QR, 1 for Data Matrix and Aztec.
    let generatorBase: Int
    private let exp: [Int]
    private let log: [Int]

    init(primitive: Int, size: Int, generatorBase: Int) {
        self.size = size
        self.generatorBase = generatorBase
        var exp = [Int](repeating: 0, count: size * 2)
        var log = [Int](repeating: 0, count: size)
        var value = 1
        for power in 0..<size - 1 {
            exp[power] = value
            log[value] = power
            value <<= 1
            if value >= size { value ^= primitive }
        }
        for power in size - 1..<size * 2 { exp[power] = exp[power - (size - 1)] }
        self.exp = exp
        self.log = log
    }

    static let qr = GaloisField(primitive: 0x11D, size: 256, generatorBase: 0)
    static let dataMatrix = GaloisField(primitive: 0x12D, size: 256, generatorBase: 1)

    @inline(__always) func multiply(_ a: Int, _ b: Int) -> Int {
        a == 0 || b == 0 ? 0 : exp[log[a] + log[b]]
    }

    @inline(__always) func divide(_ a: Int, _ b: Int) -> Int {
        a == 0 ? 0 : exp[log[a] + (size - 1) - log[b]]
    }

    /// α raised to `power` (any integer).
    @inline(__always) func power(_ power: Int) -> Int {
        let order = size - 1
        return exp[((power % order) + order) % order]
    }

    /// The value of `poly` (coefficients from x⁰ up) at `x`.
    func evaluate(_ poly: [Int], at x: Int) -> Int {
        var result = 0
        for coefficient in poly.reversed() { result = multiply(result, x) ^ coefficient }
        return result
    }
}

/// Reed–Solomon error correction over a ``GaloisField``: Berlekamp–Massey for the error locator, Chien search for
/// the positions, Forney for the values. A block is corrected only when the locator's degree is within the code's
/// capacity, every one of its roots falls inside the block, and the corrected block's syndromes are all zero;
/// otherwise nil, never a guess.
enum ReedSolomonDecoder {
    /// `codewords` (data then `checkCount` check words, first word the highest power) corrected in place; the number
    /// of words corrected, or nil when the block cannot be corrected.
    static func correct(_ codewords: inout [Int], checkCount: Int, field: GaloisField) -> Int? {
        let count = codewords.count
        guard checkCount > 0, count > checkCount, count < field.size else { return nil }
        let syndromes = self.syndromes(codewords, checkCount: checkCount, field: field)
        guard syndromes.contains(where: { $0 != 0 }) else { return 0 }

        // Berlekamp–Massey: the shortest locator Λ(x) (coefficients from x⁰) that generates the syndromes.
        var locator = [1], previous = [1]
        var degree = 0, shift = 1, previousDiscrepancy = 1
        for step in 0..<checkCount {
            var discrepancy = syndromes[step]
            for index in 1..<min(locator.count, degree + 1) where step - index >= 0 {
                discrepancy ^= field.multiply(locator[index], syndromes[step - index])
            }
            if discrepancy == 0 {
                shift += 1
                continue
            }
            let scale = field.divide(discrepancy, previousDiscrepancy)
            var next = locator
            if next.count < previous.count + shift { next += [Int](repeating: 0, count: previous.count + shift - next.count) }
            for (index, coefficient) in previous.enumerated() { next[index + shift] ^= field.multiply(scale, coefficient) }
            if 2 * degree <= step {
                previous = locator
                degree = step + 1 - degree
                previousDiscrepancy = discrepancy
                shift = 1
            } else {
                shift += 1
            }
            locator = next
        }
        while locator.count > 1 && locator[locator.count - 1] == 0 { locator.removeLast() }
        let errors = locator.count - 1
        guard errors == degree, errors >= 1, 2 * errors <= checkCount else { return nil }

        // Chien search over the block's positions: word i stands at power count − 1 − i.
        var positions: [Int] = []
        for index in 0..<count {
            let inverse = field.power(-(count - 1 - index))
            if field.evaluate(locator, at: inverse) == 0 { positions.append(index) }
        }
        guard positions.count == errors else { return nil }

        // Ω(x) = S(x)·Λ(x) mod x^checkCount, and Λ′ (in characteristic 2 only odd powers survive).
        var evaluator = [Int](repeating: 0, count: checkCount)
        for (i, syndrome) in syndromes.enumerated() where syndrome != 0 {
            for (j, coefficient) in locator.enumerated() where i + j < checkCount {
                evaluator[i + j] ^= field.multiply(syndrome, coefficient)
            }
        }
        var derivative = [Int](repeating: 0, count: max(1, locator.count - 1))
        for power in stride(from: 1, to: locator.count, by: 2) { derivative[power - 1] = locator[power] }
        for index in positions {
            let inverse = field.power(-(count - 1 - index))
            let denominator = field.evaluate(derivative, at: inverse)
            guard denominator != 0 else { return nil }
            var magnitude = field.divide(field.evaluate(evaluator, at: inverse), denominator)
            // Forney's X^(1−b): the code's first root is α^b.
            magnitude = field.multiply(magnitude, field.power((count - 1 - index) * (1 - field.generatorBase)))
            codewords[index] ^= magnitude
        }
        guard !self.syndromes(codewords, checkCount: checkCount, field: field).contains(where: { $0 != 0 }) else { return nil }
        return errors
    }

    /// S_j = r(α^(b+j)), j = 0..<checkCount.
    private static func syndromes(_ codewords: [Int], checkCount: Int, field: GaloisField) -> [Int] {
        (0..<checkCount).map { j in
            let x = field.power(field.generatorBase + j)
            var value = 0
            for word in codewords { value = field.multiply(value, x) ^ word }
            return value
        }
    }
}
