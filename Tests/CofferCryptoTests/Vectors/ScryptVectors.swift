// swift-format-ignore-file
// (Data written by a tool, test vectors or encoder output, is kept as the tool wrote it.)
// Source: RFC 7914 ("The scrypt Password-Based Key Derivation Function"), section 12 "Test Vectors for scrypt".
// Selection rule: all 4 vectors, in RFC order; hex of the ASCII password/salt and the 64-byte output.
// Cross-checks: the same values are in apple/swift-crypto Tests/CryptoExtrasVectors/rfc-7914-scrypt.txt and in
//   several independent public test suites; every vector was verified with Python hashlib.scrypt (see verify.py).
// Facts only (published test data); the Swift below is written for Coffer.

import Testing

/// One scrypt test case from RFC 7914 section 12.
///
/// `password`, `salt` and `dk` are lower-case hex; `n` is the CPU/memory cost (a power of two), `r` the block
/// size and `p` the parallelism; `dkLen` is in bytes. scrypt needs about 128 * r * n bytes of memory, so the
/// vector with n = 2^20 (1 GiB, several seconds) has `isSlow == true`: run it only in a deliberate slow test.
struct ScryptVector: Sendable, CustomTestStringConvertible {
    let name: String
    let password: String
    let salt: String
    let n: Int
    let r: Int
    let p: Int
    let dkLen: Int
    let dk: String
    let isSlow: Bool

    /// Names the case only, so test output never prints key material or payloads.
    var testDescription: String { name }
}

/// RFC 7914 section 12 scrypt vectors; the last one (n = 2^20) is marked slow.
let rfc7914Scrypt: [ScryptVector] = [
    ScryptVector(name: "RFC 7914 section 12, vector 1 (N=16, r=1, p=1)", password: "", salt: "", n: 16, r: 1, p: 1, dkLen: 64, dk: "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906", isSlow: false),
    ScryptVector(name: "RFC 7914 section 12, vector 2 (N=1024, r=8, p=16)", password: "70617373776f7264", salt: "4e61436c", n: 1024, r: 8, p: 16, dkLen: 64, dk: "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640", isSlow: false),
    ScryptVector(name: "RFC 7914 section 12, vector 3 (N=16384, r=8, p=1)", password: "706c656173656c65746d65696e", salt: "536f6469756d43686c6f72696465", n: 16384, r: 8, p: 1, dkLen: 64, dk: "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887", isSlow: false),
    ScryptVector(name: "RFC 7914 section 12, vector 4 (N=1048576, r=8, p=1, slow)", password: "706c656173656c65746d65696e", salt: "536f6469756d43686c6f72696465", n: 1048576, r: 8, p: 1, dkLen: 64, dk: "2101cb9b6a511aaeaddbbe09cf70f881ec568d574a2ffd4dabe5ee9820adaa478e56fd8f4ba5d09ffa1c6d927c40f4c337304049e8a952fbcbf45c6fa77a41a4", isSlow: true),
]
