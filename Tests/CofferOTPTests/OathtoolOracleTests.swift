import CofferTestSupport
import Foundation
import Testing

import CofferOTP

/// Compares our codes with OATH Toolkit's `oathtool`, an independent C implementation, over random tuples.
///
/// All invocations run in one `/bin/sh` process, so a few hundred tuples take well under a second. Failures name the
/// tuple index and seed only: the random secrets are never printed.
@Suite("oathtool oracle", .offCooperativePool)
struct OathtoolOracleTests {
    struct Tuple {
        var secret: [UInt8]
        var algorithm: OTPAlgorithm
        var digits: Int
        /// TOTP: (period, time). HOTP (oathtool supports SHA1 only): counter and a look-ahead window.
        var totp: (period: Int, time: Int64)?
        var hotp: (counter: UInt64, window: Int)?
    }

    static func makeTuples(seed: UInt64, count: Int) -> [Tuple] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { index in
            let secret = (0..<Int.random(in: 10...100, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            let digits = Int.random(in: 6...8, using: &random)
            if index % 3 == 2 {
                let counter: UInt64 =
                    switch index % 4 {
                    case 0: UInt64.random(in: 0...1000, using: &random)
                    case 1: .max - 2
                    default: UInt64.random(in: 0...(.max - 2), using: &random)
                    }
                return Tuple(secret: secret, algorithm: .sha1, digits: digits, hotp: (counter, 2))
            }
            let period = [1, 30, 60, 86_400, Int.random(in: 1...86_400, using: &random)].randomElement(using: &random)!
            // Times up to 2^36 s cover the Year 2038 and 2106 boundaries of 32-bit clocks.
            let time: Int64 =
                switch index % 5 {
                case 0: 2_147_483_647 + Int64.random(in: -60...60, using: &random)
                case 1: Int64.random(in: 0...100, using: &random)
                default: Int64.random(in: 0...(1 << 36), using: &random)
                }
            return Tuple(
                secret: secret, algorithm: OTPAlgorithm.allCases.randomElement(using: &random)!, digits: digits,
                totp: (period, time))
        }
    }

    static func findOathtool() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"])
            .map { $0 + "/oathtool" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs every tuple through oathtool in one shell; returns the output lines of each tuple, in order.
    static func oracle(_ tuples: [Tuple], tool: String) throws -> [[String]] {
        var script = ""
        for (index, tuple) in tuples.enumerated() {
            let key = hexString(tuple.secret)
            script += "echo '#\(index)'\n"
            if let totp = tuple.totp {
                script += "\(tool) --totp=\(tuple.algorithm.name) -d \(tuple.digits) -s \(totp.period) "
                script += "-N @\(totp.time) \(key) || echo FAILED\n"
            } else if let hotp = tuple.hotp {
                script += "\(tool) --hotp -d \(tuple.digits) -c \(hotp.counter) -w \(hotp.window) \(key) || echo FAILED\n"
            }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.environment = ["LC_ALL": "C", "TZ": "UTC"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var groups: [[String]] = []
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("#") {
                groups.append([])
            } else if !groups.isEmpty {
                groups[groups.count - 1].append(String(line))
            }
        }
        return groups
    }

    static func ours(_ tuple: Tuple) throws -> [String] {
        if let totp = tuple.totp {
            let parameters = try OTPParameters(
                secret: tuple.secret, algorithm: tuple.algorithm, digits: tuple.digits, kind: .totp(period: totp.period))
            return [try parameters.code(atUnixTime: totp.time)]
        }
        guard let hotp = tuple.hotp else { return [] }
        return try (0...UInt64(hotp.window)).map { offset throws(OTPError) in
            let parameters = try OTPParameters(
                secret: tuple.secret, algorithm: tuple.algorithm, digits: tuple.digits,
                kind: .hotp(counter: hotp.counter + offset))
            return try parameters.code(atUnixTime: 0)
        }
    }

    @Test("Random tuples agree with oathtool", arguments: [UInt64(0x0A7_4100), UInt64.random(in: 0...UInt64.max)])
    func randomTuples(seed: UInt64) throws {
        guard let tool = Self.findOathtool() else {
            Issue.record("oathtool not found: apt-get install oathtool (OATH Toolkit is the outside oracle)")
            return
        }
        let tuples = Self.makeTuples(seed: seed, count: 240)
        let expected = try Self.oracle(tuples, tool: tool)
        try #require(expected.count == tuples.count, "oathtool answered for \(expected.count) of \(tuples.count) tuples")
        var mismatches: [Int] = []
        for (index, tuple) in tuples.enumerated() where try Self.ours(tuple) != expected[index] {
            mismatches.append(index)
        }
        #expect(mismatches.isEmpty, "seed \(seed): tuples \(mismatches) differ from oathtool")
    }

    @Test("The oracle itself reproduces RFC 6238 (guards against a misconfigured oathtool call)")
    func oracleSanity() throws {
        guard let tool = Self.findOathtool() else {
            Issue.record("oathtool not found: apt-get install oathtool (OATH Toolkit is the outside oracle)")
            return
        }
        let tuples = [
            Tuple(secret: RFCSeeds.sha512, algorithm: .sha512, digits: 8, totp: (30, 20_000_000_000)),
            Tuple(secret: RFCSeeds.sha1, algorithm: .sha1, digits: 6, hotp: (0, 2)),
        ]
        #expect(try Self.oracle(tuples, tool: tool) == [["47863826"], ["755224", "287082", "359152"]])
    }
}
