import Testing

import CofferOTP

@Suite("Known-answer vectors")
struct GeneratorVectorTests {
    /// RFC 4226 Appendix D: (count, truncated value in hex, HOTP with 6 digits).
    static let rfc4226Vectors: [(counter: UInt64, truncated: UInt32, code: String)] = [
        (0, 0x4c93cf18, "755224"), (1, 0x41397eea, "287082"), (2, 0x082fef30, "359152"),
        (3, 0x66ef7655, "969429"), (4, 0x61c5938a, "338314"), (5, 0x33c083d4, "254676"),
        (6, 0x7256c032, "287922"), (7, 0x04e5b397, "162583"), (8, 0x2823443f, "399871"),
        (9, 0x2679dc69, "520489"),
    ]

    @Test("RFC 4226 Appendix D", arguments: rfc4226Vectors)
    func rfc4226(counter: UInt64, truncated: UInt32, code: String) throws {
        let generator = try OTPGenerator(secret: RFCSeeds.sha1, algorithm: .sha1)
        #expect(generator.truncatedValue(counter: counter) == truncated)
        #expect(try generator.code(counter: counter, digits: 6) == code)
        let parameters = try OTPParameters(secret: RFCSeeds.sha1, kind: .hotp(counter: counter))
        #expect(try parameters.code(atUnixTime: 0) == code)
    }

    /// RFC 6238 Appendix B with each hash's own Appendix A seed, 8 digits, 30 s; the last row needs 64-bit time.
    static let rfc6238Vectors: [(time: Int64, counter: UInt64, sha1: String, sha256: String, sha512: String)] = [
        (59, 0x1, "94287082", "46119246", "90693936"),
        (1_111_111_109, 0x23523EC, "07081804", "68084774", "25091201"),
        (1_111_111_111, 0x23523ED, "14050471", "67062674", "99943326"),
        (1_234_567_890, 0x273EF07, "89005924", "91819424", "93441116"),
        (2_000_000_000, 0x3F940AA, "69279037", "90698825", "38618901"),
        (20_000_000_000, 0x27BC86AA, "65353130", "77737706", "47863826"),
    ]

    @Test("RFC 6238 Appendix B, per-hash seeds", arguments: rfc6238Vectors)
    func rfc6238(time: Int64, counter: UInt64, sha1: String, sha256: String, sha512: String) throws {
        let cases: [(OTPAlgorithm, [UInt8], String)] = [
            (.sha1, RFCSeeds.sha1, sha1), (.sha256, RFCSeeds.sha256, sha256), (.sha512, RFCSeeds.sha512, sha512),
        ]
        for (algorithm, seed, expected) in cases {
            let parameters = try OTPParameters(secret: seed, algorithm: algorithm, digits: 8)
            #expect(try parameters.counter(atUnixTime: time) == counter)
            #expect(try parameters.code(atUnixTime: time) == expected, "\(algorithm) at \(time)")
        }
    }

    /// The "Google" reading of RFC 6238: the 20-byte seed for every hash, 6 digits (from the GA iOS tests).
    static let googleVectors: [(time: Int64, sha1: String, sha256: String, sha512: String)] = [
        (1_111_111_111, "050471", "584430", "380122"),
        (1_234_567_890, "005924", "829826", "671578"),
        (2_000_000_000, "279037", "428693", "464532"),
    ]

    @Test("Google variant: 20-byte seed for all hashes, leading zeros kept", arguments: googleVectors)
    func googleVariant(time: Int64, sha1: String, sha256: String, sha512: String) throws {
        for (algorithm, expected) in [(OTPAlgorithm.sha1, sha1), (.sha256, sha256), (.sha512, sha512)] {
            let parameters = try OTPParameters(secret: RFCSeeds.sha1, algorithm: algorithm, digits: 6)
            #expect(try parameters.code(atUnixTime: time) == expected, "\(algorithm) at \(time)")
        }
    }

    @Test("speakeasy#135: 26-character secret")
    func speakeasy135() throws {
        let parameters = try OTPParameters(secret: Base32.decode("S46SQCPPTCNPROMHWYBDCTBZXV"))
        #expect(try parameters.code(atUnixTime: 1_612_380_872) == "100172")
    }

    @Test("rotp#86: 116-character secret")
    func rotp86() throws {
        let secret = try Base32.decode(
            "IFADSABWAA2AAMAAHFAFCABRAAWQAQIAIFADOABXAAWQANAAG4ADOACDAAWQAQQAIYAFIACFAAWQARIAGQAFFABVAA3AANIAHAAFIABYAAYAAQYAIMAA"
        )
        let parameters = try OTPParameters(secret: secret)
        #expect(try parameters.code(atUnixTime: 1_557_416_826) == "861917")
    }

    /// freeotp-android#54: FreeOTP's "counter 0" was HOTP at 2^64 - 1; the counter must be the full 64-bit value.
    @Test("FreeOTP off-by-one and the UInt64 counter range")
    func freeOTPCounters() throws {
        let short = try OTPGenerator(secret: Base32.decode("DINBUGX7"), algorithm: .sha1)
        #expect(try short.code(counter: 0, digits: 6) == "609693")
        #expect(try short.code(counter: 1, digits: 6) == "701651")
        #expect(try short.code(counter: .max, digits: 6) == "969901")
        let rfc = try OTPParameters(secret: RFCSeeds.sha1, kind: .hotp(counter: .max))
        #expect(try rfc.code(atUnixTime: 0) == "094451")
    }

    /// KeePassXC `testSteamTotp`, real device codes.
    @Test(
        "Steam Guard",
        arguments: [(Int64(1_511_200_518), "FR8RV"), (1_511_200_714, "9P3VP")])
    func steam(time: Int64, code: String) throws {
        let parameters = try OTPParameters(secret: Base32.decode("63BEDWCQZKTQWPESARIERL5DTTQFCJTK"), kind: .steam)
        #expect(try parameters.code(atUnixTime: time) == code)
        #expect(parameters.digits == 5 && parameters.algorithm == .sha1 && parameters.period == 30)
    }

    @Test("Codes are the same from copies and from many concurrent tasks")
    func concurrentUse() async throws {
        let parameters = try OTPParameters(secret: RFCSeeds.sha1, kind: .hotp(counter: 0))
        let generator = try OTPGenerator(secret: RFCSeeds.sha1, algorithm: .sha1)
        let results = await withTaskGroup(of: Bool.self) { group in
            for vector in Self.rfc4226Vectors {
                group.addTask {
                    (try? generator.code(counter: vector.counter, digits: 6)) == vector.code
                        && (try? parameters.code(atUnixTime: 0)) == "755224"
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 10 && results.allSatisfy { $0 })
    }
}
