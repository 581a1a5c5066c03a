import CofferTestSupport
import Testing

import CofferOTP

@Suite("Base32 (RFC 4648)")
struct Base32Tests {
    /// RFC 4648 §10 test vectors.
    static let rfcVectors: [(plain: String, encoded: String)] = [
        ("", ""),
        ("f", "MY======"),
        ("fo", "MZXQ===="),
        ("foo", "MZXW6==="),
        ("foob", "MZXW6YQ="),
        ("fooba", "MZXW6YTB"),
        ("foobar", "MZXW6YTBOI======"),
    ]

    @Test("RFC 4648 §10 encode with padding", arguments: rfcVectors)
    func encodePadded(plain: String, encoded: String) {
        #expect(Base32.encode(asciiBytes(plain), padding: true) == encoded)
    }

    @Test("RFC 4648 §10 encode without padding", arguments: rfcVectors)
    func encodeUnpadded(plain: String, encoded: String) {
        let unpadded = String(encoded.prefix { $0 != "=" })
        #expect(Base32.encode(asciiBytes(plain)) == unpadded)
    }

    @Test("RFC 4648 §10 decode padded, unpadded and lower-case", arguments: rfcVectors)
    func decode(plain: String, encoded: String) throws {
        let unpadded = String(encoded.prefix { $0 != "=" })
        #expect(try Base32.decode(encoded) == asciiBytes(plain))
        #expect(try Base32.decode(unpadded) == asciiBytes(plain))
        #expect(try Base32.decode(encoded.lowercased()) == asciiBytes(plain))
    }

    /// Expected bytes come from Python's `base64.b32decode` after padding the input.
    @Test(
        "Real-world secrets decode like Python's base64",
        arguments: [
            ("S46SQCPPTCNPROMHWYBDCTBZXV", "973d2809ef989af8b987b602314c39bd"),
            ("qlt6vmy6svfx4bt4rpmisaiyol6hihca", "82e7eab31e954b7e067c8bd889011872fc741c40"),
            ("63BEDWCQZKTQWPESARIERL5DTTQFCJTK", "f6c241d850caa70b3c92045048afa39ce051266a"),
            (
                "IFADSABWAA2AAMAAHFAFCABRAAWQAQIAIFADOABXAAWQANAAG4ADOACDAAWQAQQAIYAFIACFAAWQARIAGQAFFABVAA3AANIAHAAFIABYAAYAAQYAIMAA",
                "414039003600340030003940510031002d0041004140370037002d0034003700370043002d0042004600540045002d00450034005280350036003500380054003800300043004300"
            ),
        ])
    func realWorldSecrets(text: String, hex: String) throws {
        #expect(try Base32.decode(text) == hexBytes(hex))
    }

    @Test("The wiki key JBSWY3DPEHPK3PXP is Hello! followed by DEADBEEF")
    func wikiKey() throws {
        #expect(try Base32.decode("JBSWY3DPEHPK3PXP") == asciiBytes("Hello!") + [0xDE, 0xAD, 0xBE, 0xEF])
    }

    @Test(
        "Spaces, tabs, line breaks and dashes are ignored",
        arguments: ["JBSW Y3DP EHPK 3PXP", "JBSW-Y3DP-EHPK-3PXP", " jbsw y3dp\tehpk\n3pxp ", "JBSWY3DPEHPK3PXP===="])
    func separatorsIgnored(text: String) throws {
        #expect(try Base32.decode(text) == Base32.decode("JBSWY3DPEHPK3PXP"))
    }

    @Test("Dangling bits of an impossible length are dropped (2fas-ios#178)")
    func danglingBitsDropped() throws {
        let truncated = try Base32.decode("6G2NUZHN6QCF7KDAV")
        #expect(truncated == hexBytes("f1b4da64edf4045fa860"))
        #expect(truncated == (try Base32.decode("6G2NUZHN6QCF7KDA")))
        // 1, 3 and 6 characters past a whole quantum: only the complete bytes survive.
        #expect(try Base32.decode("M") == [])
        #expect(try Base32.decode("MZX") == asciiBytes("f"))
        #expect(try Base32.decode("MZXW6Y") == asciiBytes("foo"))
    }

    @Test(
        "Characters outside the alphabet are rejected",
        arguments: ["MZXW0===", "MZXW1", "MZXW8", "MZXW9", "INVALID!@#$", "MZ_W6", "MZXWé", "MZ.XW", "MZXW6%3D"])
    func invalidCharacters(text: String) {
        #expect(throws: Base32.DecodingError.invalidCharacter) { try Base32.decode(text) }
    }

    @Test("Data after padding is rejected", arguments: ["MY======MY", "MZ=XW6", "=MZXW6"])
    func dataAfterPadding(text: String) {
        #expect(throws: Base32.DecodingError.dataAfterPadding) { try Base32.decode(text) }
    }

    @Test("Error descriptions name the rule, not the input")
    func errorDescriptions() {
        for error in [Base32.DecodingError.invalidCharacter, .dataAfterPadding] {
            #expect(!error.description.isEmpty)
            #expect(!error.description.contains("MZXW"))
        }
    }

    @Test("Encode then decode is the identity on random bytes")
    func roundTrip() throws {
        var random = SplitMix64(seed: 0xB32)
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0...80, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            #expect(try Base32.decode(Base32.encode(bytes)) == bytes)
            #expect(try Base32.decode(Base32.encode(bytes, padding: true)) == bytes)
            #expect(try Base32.decode(Base32.encode(bytes).lowercased()) == bytes)
        }
    }
}
