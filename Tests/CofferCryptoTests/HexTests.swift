import CofferCrypto
import Foundation
import Testing

/// The one hex codec, against Foundation's own formatting and Python's `bytes.hex()`/`bytes.fromhex()` rules.
@Suite("Hex")
struct HexTests {
    @Test("every byte value encodes as String(format: \"%02x\") does, and decodes back in either case")
    func everyByte() {
        let all = (0...255).map { UInt8($0) }
        let encoded = Hex.encode(all)
        #expect(encoded == all.map { String(format: "%02x", $0) }.joined())
        #expect(Hex.decode(encoded) == all)
        #expect(Hex.decode(encoded.uppercased()) == all)
    }

    @Test("what is not an even run of hex digits is refused", arguments: ["0", "abc", "0g", "zz", " 00", "00 ", "+1", "-1", "0x00", "é0"])
    func refusals(_ text: String) {
        #expect(Hex.decode(text) == nil)
    }

    @Test("the empty string is no bytes")
    func empty() {
        #expect(Hex.encode([]) == "")
        #expect(Hex.decode("") == [])
    }

    @Test("an id prints as Foundation's uuidString in lower case: random ids, and ids of every byte value")
    func uuidStrings() {
        var ids = (0..<1_000).map { _ in UUID() }
        ids += (0...255).map { UUID(bytes: [UInt8](repeating: UInt8($0), count: 16)) }
        ids.append(UUID(bytes: Array(0..<16)))
        for id in ids {
            #expect(id.lowercasedString == id.uuidString.lowercased())
            #expect(UUID(uuidString: id.lowercasedString) == id)
            #expect(UUID(text: id.lowercasedString) == id)
            #expect(UUID(text: id.uuidString) == id)
        }
    }

    /// `UUID(text:)` reads what Foundation's `UUID(uuidString:)` reads, in either case.
    @Test(arguments: [
        "", "00000000-0000-0000-0000-00000000000", "00000000-0000-0000-0000-0000000000000", "000000000000-0000-0000-00000000",
        "00000000_0000-0000-0000-000000000000", "0000000g-0000-0000-0000-000000000000", "{00000000-0000-0000-0000-00000000}",
        "00000000-0000-0000-0000-00000000000é", "0000000-00000-0000-0000-000000000000", "AbCdEf01-2345-6789-aBcD-eF0123456789",
        "00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-00000000000G", "00000000 0000 0000 0000 000000000000",
    ])
    func uuidText(_ text: String) {
        #expect(UUID(text: text) == UUID(uuidString: text))
    }

    /// Foundation reads each group with `sscanf("%x")` on Linux, which lets a space, a sign or `0x` through; an id
    /// on the wire is only hex digits.
    @Test(arguments: [" 0000000-0000-0000-0000-000000000000", "+0000000-0000-0000-0000-000000000000", "0x000000-0000-0000-0000-000000000000"])
    func uuidTextRefusesWhatSscanfLetsThrough(_ text: String) {
        #expect(UUID(text: text) == nil)
    }
}
