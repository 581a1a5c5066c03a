import CofferTestSupport
import Foundation
import Testing

@testable import CofferCrypto

@Suite("Argon2 (libargon2)")
struct Argon2Tests {
    /// RFC 9106 §5.1–5.3: password 32 × 0x01, salt 16 × 0x02, secret 8 × 0x03, associated data 12 × 0x04, 3 passes,
    /// 32 KiB, 4 lanes, a 32-byte tag.
    @Test(
        "RFC 9106 test vectors",
        arguments: [
            (Argon2.Variant.argon2d, "512b391b6f1162975371d30919734294f868e3be3984f3c1a13a4db9fabe4acb"),
            (.argon2i, "c814d9d1dc7f37aa13f0d77f2494bda1c8de6b016dd388d29952a4c4672b6ce8"),
            (.argon2id, "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659"),
        ])
    func rfc9106(variant: Argon2.Variant, tag: String) throws {
        let derived = try Argon2.derive(
            SecretBytes(Array(repeating: 0x01, count: 32)), salt: Array(repeating: 0x02, count: 16),
            parameters: Argon2.Parameters(iterations: 3, memoryKiB: 32, lanes: 4), variant: variant,
            secret: Array(repeating: 0x03, count: 8), associatedData: Array(repeating: 0x04, count: 12))
        #expect(TestSupport.hex(derived.bytes) == tag)
    }

    /// OpenSSL's Argon2id (through Python's `cryptography`) is a separate implementation from libargon2.
    @Test("Argon2id agrees with OpenSSL's implementation on seeded random inputs and parameters")
    func agreesWithOpenSSL() throws {
        var random = SplitMix64(seed: 0xA2_9106)
        var cases: [(password: [UInt8], salt: [UInt8], secret: [UInt8], ad: [UInt8], parameters: Argon2.Parameters, length: Int)] = []
        for index in 0..<12 {
            let lanes = Int(random.next() % 4) + 1
            cases.append(
                (
                    random.bytes(Int(random.next() % 40)), random.bytes(8 + Int(random.next() % 32)),
                    index % 3 == 0 ? random.bytes(Int(random.next() % 16) + 1) : [],
                    index % 4 == 0 ? random.bytes(Int(random.next() % 16) + 1) : [],
                    Argon2.Parameters(iterations: Int(random.next() % 3) + 1, memoryKiB: 8 * lanes + Int(random.next() % 256), lanes: lanes),
                    [16, 32, 64, 4, 100][index % 5]
                ))
        }
        let answers = try TestSupport.openSSLOracle(
            cases.map { item in
                [
                    "op": "argon2id", "password": TestSupport.hex(item.password), "salt": TestSupport.hex(item.salt),
                    "secret": TestSupport.hex(item.secret), "ad": TestSupport.hex(item.ad), "iterations": item.parameters.iterations,
                    "memory_kib": item.parameters.memoryKiB, "lanes": item.parameters.lanes, "length": item.length,
                ]
            })
        try #require(answers.count == cases.count)
        for (index, (item, answer)) in zip(cases, answers).enumerated() {
            let derived = try Argon2.derive(
                SecretBytes(item.password), salt: item.salt, parameters: item.parameters, secret: item.secret,
                associatedData: item.ad, outputByteCount: item.length)
            #expect(TestSupport.hex(derived.bytes) == answer as? String, "case \(index): \(item.parameters)")
        }
    }

    /// A hostile file's parameters are refused before libargon2 allocates or runs anything.
    @Test(
        "Parameters and lengths out of bounds are refused at once",
        arguments: [
            (Argon2.Parameters(iterations: 0, memoryKiB: 64, lanes: 1), 16, 32),
            (Argon2.Parameters(iterations: 33, memoryKiB: 64, lanes: 1), 16, 32),
            (Argon2.Parameters(iterations: 1, memoryKiB: (1 << 20) + 1, lanes: 1), 16, 32),
            (Argon2.Parameters(iterations: 1, memoryKiB: Int(UInt32.max), lanes: 1), 16, 32),
            (Argon2.Parameters(iterations: 9, memoryKiB: 1 << 20, lanes: 4), 16, 32),
            (Argon2.Parameters(iterations: 1, memoryKiB: 64, lanes: 0), 16, 32),
            (Argon2.Parameters(iterations: 1, memoryKiB: 64, lanes: 17), 16, 32),
            (Argon2.Parameters(iterations: 1, memoryKiB: 31, lanes: 4), 16, 32),
            (Argon2.Parameters(iterations: 1, memoryKiB: 64, lanes: 1), 7, 32),
            (Argon2.Parameters(iterations: 1, memoryKiB: 64, lanes: 1), 16, 3),
            (Argon2.Parameters(iterations: 1, memoryKiB: 64, lanes: 1), 16, 1025),
        ])
    func refusesOutOfBounds(parameters: Argon2.Parameters, saltLength: Int, length: Int) {
        var failure: CofferCryptoError?
        do throws(CofferCryptoError) {
            _ = try Argon2.derive(
                SecretBytes(utf8: "pw"), salt: Array(repeating: 7, count: saltLength), parameters: parameters,
                outputByteCount: length)
        } catch {
            failure = error
        }
        guard case .kdfParametersOutOfBounds? = failure else {
            Issue.record("expected kdfParametersOutOfBounds, got \(String(describing: failure))")
            return
        }
    }

    @Test("The limits' edges are accepted")
    func edgesAccepted() throws {
        #expect(throws: Never.self) { try Argon2.Limits.importing.check(Argon2.Parameters(iterations: 8, memoryKiB: 1 << 20, lanes: 16)) }
        #expect(throws: Never.self) { try Argon2.Limits.importing.check(Argon2.Parameters(iterations: 32, memoryKiB: 256 << 10, lanes: 1)) }
        #expect(throws: Never.self) { try Argon2.Limits.importing.check(Argon2.Parameters(iterations: 1, memoryKiB: 8, lanes: 1)) }
    }
}
