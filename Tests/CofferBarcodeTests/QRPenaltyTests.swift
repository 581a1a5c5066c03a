import CofferTestSupport
import Testing

@testable import CofferBarcode

/// The bit-parallel penalty must equal a plain module-by-module reading of ISO/IEC 18004 §7.8.3.
struct QRPenaltyTests {
    /// Straightforward reference: runs, 2 × 2 blocks, 1011101 cores with four light modules on a side (outside the
    /// symbol counts as light), dark proportion.
    static func reference(_ grid: [UInt8], size: Int) -> Int {
        func at(_ line: [UInt8], _ i: Int) -> UInt8 { i >= 0 && i < line.count ? line[i] : 0 }
        func lineScore(_ line: [UInt8]) -> Int {
            var score = 0
            var start = 0
            for i in 1...line.count where i == line.count || line[i] != line[start] {
                if i - start >= 5 { score += i - start - 2 }
                start = i
            }
            for i in 0..<line.count where [1, 0, 1, 1, 1, 0, 1].enumerated().allSatisfy({ at(line, i + $0.offset) == $0.element }) {
                let before = (1...4).allSatisfy { at(line, i - $0) == 0 }
                let after = (7...10).allSatisfy { at(line, i + $0) == 0 }
                if before || after { score += 40 }
            }
            return score
        }
        var total = 0
        for i in 0..<size {
            total += lineScore((0..<size).map { grid[i * size + $0] })
            total += lineScore((0..<size).map { grid[$0 * size + i] })
        }
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let v = grid[y * size + x]
                if v == grid[y * size + x + 1] && v == grid[(y + 1) * size + x] && v == grid[(y + 1) * size + x + 1] {
                    total += 3
                }
            }
        }
        let dark = grid.reduce(0) { $0 + Int($1) }
        let k = abs(dark * 20 - size * size * 10) / (size * size)
        return total + k * 10
    }

    @Test(arguments: [21, 25, 57, 63, 64, 65, 101, 127, 128, 129, 177])
    func matchesReference(size: Int) {
        var random = SeededRandom(seed: UInt64(size))
        for trial in 0..<4 {
            // Mix uniform noise with long runs and planted finder-like cores at the edges.
            var grid = random.bytes(size * size).map { $0 & 1 }
            if trial % 2 == 1 {
                for i in stride(from: 0, to: grid.count, by: 7) where random.next() % 3 == 0 { grid[i] = grid[max(i - 1, 0)] }
                let core: [UInt8] = [1, 0, 1, 1, 1, 0, 1]
                for (k, bit) in core.enumerated() {
                    grid[k] = bit
                    grid[(size - 1) * size + size - 7 + k] = bit
                    grid[k * size + 3] = bit
                }
            }
            #expect(QRPenalty.score(grid, size: size) == Self.reference(grid, size: size), "size \(size) trial \(trial)")
        }
    }
}
