/// Reed–Solomon decoding over the prime field GF(929) (ISO/IEC 15438 §5.9, the code Coffer's encoder writes with
/// `PDF417ErrorCorrection`): generator roots 3¹…3ᵏ, the first codeword the highest power. Errors and erasures
/// (codewords the reader could not read, whose positions it knows) are corrected together by Berlekamp–Massey started
/// from the erasure locator, Chien search and Forney's formula; the result is accepted only when every syndrome of the
/// corrected word is zero.
enum PDF417ReedSolomon {
    static let modulus = 929

    /// 3ⁱ for i in 0..<928 (3 generates the field's multiplicative group), and its inverse.
    private static let tables: (exp: [Int], log: [Int]) = {
        var exp = [Int](repeating: 0, count: 928)
        var log = [Int](repeating: 0, count: 929)
        var value = 1
        for power in 0..<928 {
            exp[power] = value
            log[value] = power
            value = value * 3 % 929
        }
        return (exp, log)
    }()

    @inline(__always) private static func multiply(_ a: Int, _ b: Int) -> Int { a * b % modulus }

    private static func inverse(_ a: Int) -> Int { tables.exp[(928 - tables.log[a]) % 928] }

    private static func power(_ exponent: Int) -> Int { tables.exp[exponent % 928] }

    /// Corrects `codewords` in place (all of them: data, then `checkCount` check codewords; at most 928), treating the
    /// indexes in `erasures` as unknown. Returns the number of codewords changed, or nil (and leaves `codewords` as
    /// it was) when more went wrong than the check codewords can repair.
    static func correct(_ codewords: inout [Int], checkCount: Int, erasures: [Int] = []) -> Int? {
        let count = codewords.count
        guard checkCount >= 1, count > checkCount, count <= 928, erasures.count <= checkCount,
            codewords.allSatisfy({ $0 >= 0 && $0 < modulus }), erasures.allSatisfy({ $0 >= 0 && $0 < count })
        else { return nil }
        let syndromes = syndromes(of: codewords, checkCount: checkCount)
        if syndromes.allSatisfy({ $0 == 0 }) { return 0 }

        // The locator of position j is X = 3^(count−1−j); Γ(x) = Π (1 − X x) over the erasures.
        var locator = [1]
        for position in Set(erasures) {
            locator = product(locator, [1, (modulus - power(count - 1 - position)) % modulus])
        }
        let erasureCount = locator.count - 1
        var previous = locator
        var length = erasureCount
        for step in stride(from: erasureCount + 1, through: checkCount, by: 1) {
            var discrepancy = 0
            for (degree, coefficient) in locator.enumerated() where step - degree >= 1 {
                discrepancy = (discrepancy + multiply(coefficient, syndromes[step - degree - 1])) % modulus
            }
            let shifted = [0] + previous
            if discrepancy == 0 {
                previous = shifted
            } else if 2 * length <= step + erasureCount - 1 {
                let next = subtract(locator, scaled(shifted, by: discrepancy))
                previous = scaled(locator, by: inverse(discrepancy))
                length = step + erasureCount - length
                locator = next
            } else {
                locator = subtract(locator, scaled(shifted, by: discrepancy))
                previous = shifted
            }
        }
        while locator.count > 1, locator[locator.count - 1] == 0 { locator.removeLast() }
        let degree = locator.count - 1
        guard degree == length, 2 * (degree - erasureCount) + erasureCount <= checkCount else { return nil }

        // Chien search over the positions that exist, then Forney: e = −Ω(X⁻¹) / Λ′(X⁻¹).
        var evaluator = product(syndromes, locator)
        if evaluator.count > checkCount { evaluator.removeLast(evaluator.count - checkCount) }
        var derivative: [Int] = []
        for index in 1..<locator.count { derivative.append(multiply(locator[index], index % modulus)) }
        var corrected = codewords
        var found = 0
        for position in 0..<count {
            let xInverse = inverse(power(count - 1 - position))
            guard evaluate(locator, at: xInverse) == 0 else { continue }
            found += 1
            let denominator = evaluate(derivative, at: xInverse)
            guard denominator != 0 else { return nil }
            let magnitude = multiply(evaluate(evaluator, at: xInverse), inverse(denominator))
            // r − e where e = −Ω/Λ′: add Ω/Λ′.
            corrected[position] = (corrected[position] + magnitude) % modulus
        }
        guard found == degree, self.syndromes(of: corrected, checkCount: checkCount).allSatisfy({ $0 == 0 }) else { return nil }
        var changed = 0
        for index in 0..<count where corrected[index] != codewords[index] { changed += 1 }
        codewords = corrected
        return changed
    }

    /// Sᵢ = r(3ⁱ) for i = 1…checkCount, the first codeword the highest power.
    private static func syndromes(of codewords: [Int], checkCount: Int) -> [Int] {
        (1...checkCount).map { index in
            let root = power(index)
            var value = 0
            for codeword in codewords { value = (value * root + codeword) % modulus }
            return value
        }
    }

    /// A polynomial with the lowest degree first, at `x`.
    private static func evaluate(_ polynomial: [Int], at x: Int) -> Int {
        var value = 0
        for coefficient in polynomial.reversed() { value = (value * x + coefficient) % modulus }
        return value
    }

    private static func product(_ a: [Int], _ b: [Int]) -> [Int] {
        var result = [Int](repeating: 0, count: a.count + b.count - 1)
        for (i, x) in a.enumerated() where x != 0 {
            for (j, y) in b.enumerated() { result[i + j] = (result[i + j] + multiply(x, y)) % modulus }
        }
        return result
    }

    private static func scaled(_ a: [Int], by factor: Int) -> [Int] { a.map { multiply($0, factor) } }

    private static func subtract(_ a: [Int], _ b: [Int]) -> [Int] {
        var result = [Int](repeating: 0, count: max(a.count, b.count))
        for (index, value) in a.enumerated() { result[index] = value }
        for (index, value) in b.enumerated() { result[index] = (result[index] + modulus - value) % modulus }
        return result
    }
}
