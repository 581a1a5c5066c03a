import CofferCrypto
import Testing

@Suite struct ConstantTimeTests {
    @Test(
        "equal bytes, a difference at each end and in the middle, other lengths, empty",
        arguments: [
            ([UInt8](), [UInt8](), true),
            ([1, 2, 3], [1, 2, 3], true),
            ([0, 2, 3], [1, 2, 3], false),
            ([1, 2, 3], [1, 2, 4], false),
            ([1, 9, 3], [1, 2, 3], false),
            ([1, 2], [1, 2, 3], false),
            ([1, 2, 3], [], false),
            ([UInt8](repeating: 0xFF, count: 32), [UInt8](repeating: 0xFF, count: 32), true),
        ])
    func equal(first: [UInt8], second: [UInt8], same: Bool) {
        #expect(ConstantTime.equal(first, second) == same)
        #expect(ConstantTime.equal(second, first) == same)
        #expect(SecretBytes(first).isEqual(to: SecretBytes(second)) == same)
    }
}
