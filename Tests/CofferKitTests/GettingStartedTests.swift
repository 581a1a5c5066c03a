@_spi(Sync) import CofferKit
import CofferKeystore
import CofferTestSupport
import Foundation
import Testing

/// The DocC getting-started article (Sources/CofferKit/CofferKit.docc/GettingStarted.md), run: its code blocks are
/// the body of `article()`, checked line by line, so the article cannot drift from the library.
@Suite("DocC getting-started article", .offCooperativePool)
struct GettingStartedTests {
    @Test("the article's code runs: a vault, a card, a token, a code, and the vault opened again")
    func article() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-example-\(UUID())").path
        let location = CofferLocation(vaultDirectory: directory + "/vault", keystore: FileKeystore(directory: directory + "/keys"))
        let coffer = try Coffer.initialize(at: location, passphrase: "correct horse battery staple")

        let card = try Card(name: "Costco", symbology: .ean13, payload: Array("590123412345".utf8), networkIDs: ["costco"])
        try coffer.add(.card(card))

        let secret = try Base32.decode("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        let token = try OTPItem(issuer: "GitHub", account: "alice", parameters: try OTPParameters(secret: secret))
        try coffer.add(.otp(token))

        let before = Int(Date().timeIntervalSince1970)
        let github = try coffer.find("git", kind: .otp)
        let (code, secondsLeft) = try coffer.code(for: github, at: Date())
        print("\(code), \(secondsLeft ?? 0) s left")

        let reopened = try Coffer.open(at: location)
        let costco = try reopened.find("costco")

        // The code, checked by OATH Toolkit's oathtool at the instants around it.
        let after = Int(Date().timeIntervalSince1970)
        let expected = try Set(
            [before, after].map { time in
                try TestSupport.run("/usr/bin/oathtool", ["--totp", "-b", "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", "-N", "@\(time)"])
                    .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            })
        #expect(expected.contains(code))
        #expect(costco.content == .card(card))
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test("every code block of the article is in the test above, line for line")
    func articleMatches() throws {
        let root = TestSupport.repositoryRoot
        let article = try String(contentsOf: root.appendingPathComponent("Sources/CofferKit/CofferKit.docc/GettingStarted.md"), encoding: .utf8)
        let test = try String(contentsOf: root.appendingPathComponent("Tests/CofferKitTests/GettingStartedTests.swift"), encoding: .utf8)
        let testLines = test.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let blocks = article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(blocks.count == 4)
        for block in blocks {
            let lines = block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let start = try #require(testLines.firstIndex(of: lines[0]), "\(lines[0]) is not in the test")
            #expect(Array(testLines[start...].filter { !$0.isEmpty }.prefix(lines.count)) == lines)
        }
    }
}
