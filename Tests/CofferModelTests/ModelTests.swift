import CofferBarcode
import CofferCrypto
import CofferOTP
import CofferTestSupport
import Foundation
import Testing

@testable import CofferModel

private var utc: Calendar {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    return calendar
}

private func day(_ text: String) -> Date {
    let formatter = ISO8601DateFormatter()
    return formatter.date(from: text + "T12:00:00Z")!
}

@Suite("Cards (CardOnCue semantics)")
struct CardTests {
    func card(validFrom: Date? = nil, validTo: Date? = nil, oneTime: Bool = false) throws -> Card {
        try Card(
            name: "  Costco  ", symbology: .code128, payload: Array("111222333".utf8), tags: ["Grocery", "grocery"],
            networkIDs: ["Costco"], validFrom: validFrom, validTo: validTo, oneTime: oneTime)
    }

    @Test("Names are trimmed, tags de-duplicated, networks lower-cased")
    func normalisation() throws {
        let card = try card()
        #expect(card.name == "Costco")
        #expect(card.tags == ["Grocery", "grocery"])
        #expect(card.networkIDs == ["costco"])
    }

    @Test(
        "Validity window and labels",
        arguments: [
            ("2026-11-22", "2026-12-22", "2026-11-22", true, "Expires in 30 days"),
            ("2026-11-22", "2026-12-01", "2026-11-22", true, "Expires in 9 days"),
            ("2026-11-22", "2026-11-23", "2026-11-22", true, "Expires tomorrow"),
            ("2026-11-22", "2027-03-01", "2026-11-22", true, nil),
            ("2026-11-01", "2026-11-20", "2026-11-22", false, "Expired"),
            ("2026-12-01", "2027-01-01", "2026-11-22", false, "Not valid until 2026-12-01"),
        ] as [(String, String, String, Bool, String?)])
    func validity(_ from: String, _ to: String, _ now: String, _ valid: Bool, _ label: String?) throws {
        let card = try card(validFrom: day(from), validTo: day(to))
        #expect(card.isValid(at: day(now)) == valid)
        #expect(card.validityLabel(at: day(now), calendar: utc) == label)
    }

    @Test("One-time passes: used once, then invalid and labelled Used")
    func oneTime() throws {
        var pass = try card(oneTime: true)
        #expect(pass.isValid(at: day("2026-11-22")))
        try pass.markUsed(at: day("2026-11-22"))
        #expect(!pass.isValid(at: day("2026-11-22")))
        #expect(pass.isExpired(at: day("2026-11-22")))
        #expect(pass.validityLabel(at: day("2026-11-22"), calendar: utc) == "Used")
        #expect(throws: ModelError.alreadyUsed) { try pass.markUsed(at: day("2026-11-23")) }
        var normal = try card()
        #expect(throws: ModelError.notOneTime) { try normal.markUsed(at: day("2026-11-22")) }
    }

    @Test("Bad cards are refused with the rule named, never the payload")
    func refused() {
        let canary = "CANARY-PAYLOAD-991"
        let attempts: [() throws -> Card] = [
            { try Card(name: " ", symbology: .qr, payload: Array(canary.utf8)) },
            { try Card(name: "X", symbology: .qr, payload: []) },
            { try Card(name: "X", symbology: .qr, payload: Array(repeating: 0x41, count: 5000)) },
            { try Card(name: "X", symbology: .qr, payload: [0xFF, 0xFE] + Array(canary.utf8)) },
            { try Card(name: "X", symbology: .qr, payload: Array(canary.utf8), validFrom: day("2027-01-01"), validTo: day("2026-01-01")) },
            { try Card(name: "X\u{7}", symbology: .qr, payload: Array(canary.utf8)) },
        ]
        for attempt in attempts {
            do {
                _ = try attempt()
                Issue.record("accepted a bad card")
            } catch {
                #expect(CanaryScan.encodings(of: canary, in: Data(String(describing: error).utf8)).isEmpty)
            }
        }
    }

    @Test("Binary and Latin-1 payloads keep their exact bytes")
    func payloadBytes() throws {
        let bytes: [UInt8] = [0x00, 0xFF, 0x1D, 0x80]
        let binary = try Card(name: "B", symbology: .code128, payload: bytes, payloadCharset: .binary)
        #expect(binary.payloadText == "00ff1d80")
        let latin = try Card(name: "L", symbology: .code128, payload: [0x4D, 0xFC], payloadCharset: .latin1)
        #expect(latin.payloadText == "Mü")
    }

    @Test("A card without a barcode keeps its number as the payload, is never drawn, and still needs a number")
    func withoutBarcode() throws {
        // "ABC" is not drawable as EAN-13: without a symbology nothing is drawn, so nothing refuses it.
        let card = try Card(name: "Library", symbology: nil, payload: Array("ABC".utf8))
        #expect(card.symbology == nil && card.payloadText == "ABC")
        #expect(try card.barcode() == nil)
        #expect(throws: ModelError.emptyField("payload")) { try Card(name: "Library", symbology: nil, payload: []) }
        var drawn = card
        drawn.symbology = .ean13
        #expect(throws: ModelError.self) { try drawn.validate() }
    }
}

@Suite("Credentials, notes, tokens, keys")
struct OtherKindsTests {
    @Test(
        "Credentials show their first 8 characters only when that is at most a third of them",
        arguments: [
            ("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "sk-proj-…"),
            ("ghp_0123456789abcdefghij", "ghp_0123…"),
            ("correct horse battery", "…"),
            ("ab", "…"),
        ])
    func masking(_ value: String, _ masked: String) throws {
        #expect(try Credential(name: "OpenAI", value: value).maskedValue == masked)
    }

    @Test("Token issuer and account follow seed 002's rules")
    func tokens() throws {
        let parameters = try OTPParameters(secret: Array(repeating: 7, count: 20))
        // No issuer is none: the account names the token, and nothing is made up for it.
        let bare = try OTPItem(issuer: "  ", account: "a", parameters: parameters)
        #expect(bare.issuer == "" && bare.displayName == "a" && bare.lookupNames == ["a"])
        #expect(try bare.token().uri.hasPrefix("otpauth://totp/a?") && bare.token().issuer == nil)
        #expect(throws: ModelError.emptyField("account")) { _ = try OTPItem(issuer: "GitHub", account: " ", parameters: parameters) }
        #expect(throws: ModelError.tooLong(field: "issuer", limit: 100)) {
            _ = try OTPItem(issuer: String(repeating: "x", count: 101), account: "a", parameters: parameters)
        }
        #expect(throws: ModelError.tooLong(field: "account", limit: 200)) {
            _ = try OTPItem(issuer: "x", account: String(repeating: "a", count: 201), parameters: parameters)
        }
        let token = try OTPItem(issuer: " GitHub ", account: " alice ", parameters: parameters)
        #expect(token.displayName == "GitHub (alice)")
    }

    @Test("HOTP counters advance by one; time-based tokens do not advance")
    func hotp() throws {
        let hotp = try OTPItem(issuer: "Duo", account: "a", parameters: try OTPParameters(secret: Array(repeating: 1, count: 20), kind: .hotp(counter: 41)))
        let next = try #require(try hotp.advancingCounter())
        #expect(next.parameters.kind == .hotp(counter: 42))
        let totp = try OTPItem(issuer: "X", account: "a", parameters: try OTPParameters(secret: Array(repeating: 1, count: 20)))
        #expect(try totp.advancingCounter() == nil)
        let exhausted = try OTPItem(
            issuer: "Duo", account: "a", parameters: try OTPParameters(secret: Array(repeating: 1, count: 20), kind: .hotp(counter: .max)))
        #expect(throws: ModelError.self) { _ = try exhausted.advancingCounter() }
    }

    @Test("Notes need fields or text; labels are bounded")
    func notes() throws {
        #expect(throws: ModelError.self) { _ = try Note(name: "Empty") }
        let note = try Note(name: "KYC", template: .kyc, fields: [.init(label: " First name ", value: "Ada")])
        #expect(note.fields[0].label == "First name")
        #expect(Note.suggestedLabels(for: .kyc).contains("Date of birth"))
    }

    @Test("Stellar seeds: version and checksum checked (independent CRC from Python binascii.crc_hqx)")
    func stellar() throws {
        let seedBytes = SystemRandom().bytes(32)
        let answers = try TestSupport.openSSLOracle([["op": "stellar_seed_from_bytes", "seed": TestSupport.hex(seedBytes)]])
        let seed = try #require(answers[0] as? String)
        #expect(seed.hasPrefix("S"))
        #expect(try StellarStrKey.decodeSeed(seed).bytes == seedBytes)
        var typo = Array(seed.utf8)
        typo[10] = typo[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: StellarStrKey.StrKeyError.badChecksum) { _ = try StellarStrKey.decodeSeed(String(decoding: typo, as: UTF8.self)) }
        #expect(throws: StellarStrKey.StrKeyError.malformed) { _ = try StellarStrKey.decodeSeed("S123") }
        let publicAddress = StellarStrKey.encode(try Ed25519.publicKey(seed: SecretBytes(seedBytes)), version: .accountID)
        let oracle = try TestSupport.openSSLOracle([["op": "stellar_public_from_seed", "seed": seed]])
        #expect(oracle[0] as? String == publicAddress)
        #expect(throws: StellarStrKey.StrKeyError.wrongVersion) { _ = try StellarStrKey.decodeSeed(publicAddress) }
    }
}

@Suite("Item content coding")
struct ContentCodingTests {
    @Test("Every kind round-trips through the box plaintext")
    func roundTrip() throws {
        let contents: [ItemContent] = [
            .card(
                try Card(
                    name: "Library", symbology: .pdf417, payload: [0, 1, 2, 255], payloadCharset: .binary,
                    cardNumber: "42", tags: ["books"], networkIDs: ["sfpl"], validTo: Date(timeIntervalSince1970: 1_800_000_000),
                    oneTime: true, usedAt: Date(timeIntervalSince1970: 1_790_000_000), metadata: ["preferredForNetwork_sfpl": "true"])),
            .otp(
                try OTPItem(
                    issuer: "GitHub", account: "a",
                    parameters: try OTPParameters(secret: Array(repeating: 9, count: 20), algorithm: .sha512, digits: 8, kind: .totp(period: 50)))),
            .otp(try OTPItem(issuer: "Steam", account: "a", parameters: try OTPParameters(secret: Array(repeating: 9, count: 20), kind: .steam))),
            .credential(try Credential(name: "OpenAI", provider: "openai", value: "sk-x", notes: "prod")),
            .note(try Note(name: "Bob", template: .contact, fields: [.init(label: "Email", value: "b@x")], text: "hi")),
        ]
        for content in contents {
            let created = Date(timeIntervalSince1970: 1_700_000_000.123)
            let data = try ItemContentCoding.encode(content, createdAt: created)
            let decoded = try ItemContentCoding.decode(data, kind: content.kind)
            #expect(decoded.content == content)
            #expect(abs(decoded.createdAt.timeIntervalSince(created)) < 0.001)
        }
    }

    @Test("Newer content versions and wrong kinds are refused clearly")
    func refused() throws {
        #expect(throws: ModelError.unsupportedContentVersion(2)) {
            _ = try ItemContentCoding.decode(Data([2, 1, 8, 0, 0, 0, 0, 0, 0, 0, 0]), kind: .card)
        }
        let note = try ItemContentCoding.encode(.note(try Note(name: "N", text: "t")), createdAt: Date())
        #expect(throws: ModelError.self) { _ = try ItemContentCoding.decode(note, kind: .card) }
        #expect(throws: ModelError.self) { _ = try ItemContentCoding.decode(Data("not json".utf8), kind: .card) }
        #expect(throws: ModelError.self) { _ = try ItemContentCoding.decode(Data(), kind: .card) }
    }

    @Test("Unknown fields are skipped, so a later version can add fields")
    func forwardCompatible() throws {
        var bytes = Array(try ItemContentCoding.encode(.credential(try Credential(name: "K", value: "v")), createdAt: Date()))
        bytes += [200, 3, 1, 2, 3]
        let decoded = try ItemContentCoding.decode(Data(bytes), kind: .credential)
        #expect(decoded.content == .credential(try Credential(name: "K", value: "v")))
    }

    @Test("Random and truncated bytes are refused with a ModelError, never a crash")
    func hostileBytes() throws {
        var random = SplitMix64(seed: 2026)
        let valid = Array(
            try ItemContentCoding.encode(
                .card(try Card(name: "C", symbology: .qr, payload: [1, 2, 3], payloadCharset: .binary, tags: ["t"], metadata: ["k": "v"])), createdAt: Date()))
        var inputs: [[UInt8]] = (0..<valid.count).map { Array(valid.prefix($0)) }
        for _ in 0..<3000 {
            var mutated = valid
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                mutated[Int.random(in: 0..<mutated.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            inputs.append(mutated)
            inputs.append([1] + random.bytes(Int.random(in: 0...64, using: &random)))
        }
        for input in inputs {
            for kind in ItemKind.allCases {
                do {
                    _ = try ItemContentCoding.decode(Data(input), kind: kind)
                } catch {
                    // Typed throws: only ModelError can arrive here; reaching this line is the property.
                    _ = error.description
                }
            }
        }
    }
}

@Suite struct CredentialRedactionTests {
    @Test func descriptionsAndMirrorsHideTheSecretFields() throws {
        let credential = try Credential(
            name: "Mail", provider: "example", value: "hunter2-secret-value", notes: "pin 1234", username: "frank",
            url: "https://mail.example.org/")
        for text in [
            String(describing: credential), String(reflecting: credential), "\(credential)",
            String(describing: Mirror(reflecting: credential).children.map(\.value)),
        ] {
            #expect(text.contains("Mail"))
            for secret in ["hunter2", "1234", "frank", "mail.example.org"] { #expect(!text.contains(secret), "\(text)") }
        }
    }
}

/// Times at the ends of what a box can hold: a fuzzer found a creation time of Int64.max milliseconds trapping when
/// the decoded content was encoded again.
@Suite("Times at the edges of the range")
struct EdgeTimeTests {
    @Test("the fuzzer's finding: a note created at Int64.max ms decodes and encodes again, to the same time")
    func fuzzFinding() throws {
        let input = Array(try #require(Data(base64Encoded: "BAEBCH//////////EANCb2IRB2NvbnRhY3QSGAEFRW1haWwCD2JvYkBleGFtcGxlYWbDqQ==")))
        let decoded = try ItemContentCoding.decode(Data(input.dropFirst()), kind: .note)
        let encoded = try ItemContentCoding.encode(decoded.content, createdAt: decoded.createdAt)
        let again = try ItemContentCoding.decode(encoded, kind: .note)
        #expect(UnixTime.milliseconds(again.createdAt) == .max)
        #expect(again.content == decoded.content)
    }

    @Test(
        "milliseconds of dates beyond 64 bits are the nearest end of the range; ordinary ones are exact",
        arguments: [
            (Date(timeIntervalSince1970: 1_700_000_000.123), Int64(1_700_000_000_123)),
            (Date(timeIntervalSince1970: -1.5), Int64(-1_500)),
            (Date(timeIntervalSince1970: 1e300), Int64.max),
            (Date(timeIntervalSince1970: -1e300), Int64.min),
            (UnixTime.date(milliseconds: .max), Int64.max),
            (UnixTime.date(milliseconds: .min), Int64.min),
        ])
    func milliseconds(date: Date, expected: Int64) {
        #expect(UnixTime.milliseconds(date) == expected)
    }

    @Test(
        "seconds round down and clamp as milliseconds do",
        arguments: [
            (Date(timeIntervalSince1970: 1_700_000_000.999), Int64(1_700_000_000)),
            (Date(timeIntervalSince1970: -1.5), Int64(-2)),
            (Date(timeIntervalSince1970: 1e300), Int64.max),
            (Date(timeIntervalSince1970: -1e300), Int64.min),
            (UnixTime.date(seconds: 1_766_674_620), Int64(1_766_674_620)),
        ])
    func seconds(date: Date, expected: Int64) {
        #expect(UnixTime.seconds(date) == expected)
    }
}
