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
        }
    }
}
