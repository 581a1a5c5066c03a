import Testing

import CofferOTP

@Suite("otpauth:// parsing")
struct KeyURIParseTests {
    static let jbswy = "JBSWY3DPEHPK3PXP"

    @Test("Google wiki example with every parameter")
    func wikiExample() throws {
        let token = try OTPToken(
            uri: "otpauth://totp/ACME%20Co:john.doe@email.com?secret=HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ"
                + "&issuer=ACME%20Co&algorithm=SHA1&digits=6&period=30")
        #expect(token.issuer == "ACME Co")
        #expect(token.account == "john.doe@email.com")
        #expect(token.parameters.secret == (try Base32.decode("HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ")))
        #expect(token.parameters.kind == .totp(period: 30))
        #expect(token.parameters.algorithm == .sha1 && token.parameters.digits == 6)
    }

    /// Labels from the wiki and Coffer's seed 002 contract: (URI, issuer, account).
    @Test(
        "Label forms",
        arguments: [
            ("otpauth://totp/Example:alice@gmail.com?secret=\(jbswy)&issuer=Example", "Example", "alice@gmail.com"),
            ("otpauth://totp/Provider1:Alice%20Smith?secret=\(jbswy)", "Provider1", "Alice Smith"),
            ("otpauth://totp/Big%20Corporation%3A%20alice%40bigco.com?secret=\(jbswy)", "Big Corporation", "alice@bigco.com"),
            ("otpauth://totp/GitHub:user@example.com?secret=\(jbswy)", "GitHub", "user@example.com"),
            ("otpauth://totp/Google%20Workspace:admin%40company.com?secret=\(jbswy)", "Google Workspace", "admin@company.com"),
            ("otpauth://totp/Foo:%20%20alice?secret=\(jbswy)", "Foo", "alice"),
            ("otpauth://totp/Foo: alice?secret=\(jbswy)", "Foo", "alice"),
            ("otpauth://totp/Air%20Canada:bob?secret=\(jbswy)&issuer=Air+Canada", "Air Canada", "bob"),
            ("otpauth://totp/Shop:%E6%A9%A1%E7%9A%AE%E9%B8%AD?secret=\(jbswy)", "Shop", "橡皮鸭"),
            ("otpauth://totp/Shop:橡皮鸭?secret=\(jbswy)", "Shop", "橡皮鸭"),
            ("otpauth://totp/a+b:c+d?secret=\(jbswy)", "a+b", "c+d"),
            ("otpauth://totp/Foo:al%2Fice/x?secret=\(jbswy)", "Foo", "al/ice/x"),
        ])
    func labels(uri: String, issuer: String, account: String) throws {
        let token = try OTPToken(uri: uri)
        #expect(token.issuer == issuer)
        #expect(token.account == account)
    }

    @Test("Label without an issuer: issuer from the parameter, or none")
    func labelWithoutPrefix() throws {
        let amazon = try OTPToken(uri: "otpauth://totp/user@example.com?secret=\(Self.jbswy)&issuer=Amazon")
        #expect(amazon.issuer == "Amazon" && amazon.account == "user@example.com")
        let bare = try OTPToken(uri: "otpauth://totp/alice?secret=\(Self.jbswy)")
        #expect(bare.issuer == nil && bare.account == "alice")
        let empty = try OTPToken(uri: "otpauth://totp/?secret=\(Self.jbswy)")
        #expect(empty.issuer == nil && empty.account == "")
        let noPath = try OTPToken(uri: "otpauth://totp?secret=\(Self.jbswy)")
        #expect(noPath.issuer == nil && noPath.account == "")
    }

    @Test("The issuer parameter wins over a different label prefix; an empty one does not count")
    func issuerMismatch() throws {
        let token = try OTPToken(uri: "otpauth://totp/Foo:alice?secret=\(Self.jbswy)&issuer=Bar")
        #expect(token.issuer == "Bar" && token.account == "alice")
        let empty = try OTPToken(uri: "otpauth://totp/Foo:alice?issuer=&secret=\(Self.jbswy)")
        #expect(empty.issuer == "Foo")
    }

    @Test("Colon policy: the label splits at its last colon; issuers may contain colons")
    func colonPolicy() throws {
        let many = try OTPToken(uri: "otpauth://totp/a:b:c?secret=\(Self.jbswy)")
        #expect(many.issuer == "a:b" && many.account == "c")
        let encoded = try OTPToken(uri: "otpauth://totp/a%3Ab%3Ac?secret=\(Self.jbswy)")
        #expect(encoded.issuer == "a:b" && encoded.account == "c")
        let port = try OTPToken(uri: "otpauth://totp/gitlab.example.com:8443:alice?secret=\(Self.jbswy)")
        #expect(port.issuer == "gitlab.example.com:8443" && port.account == "alice")
        let withParameter = try OTPToken(
            uri: "otpauth://totp/Foo%3A%20Bar:alice?secret=\(Self.jbswy)&issuer=Foo%3A%20Bar")
        #expect(withParameter.issuer == "Foo: Bar" && withParameter.account == "alice")
        let trailing = try OTPToken(uri: "otpauth://totp/Foo:?secret=\(Self.jbswy)")
        #expect(trailing.issuer == "Foo" && trailing.account == "")
    }

    @Test("Ente's funny account name: raw spaces, '!', '@' and '#' (not a fragment)")
    func enteFunnyAccount() throws {
        let token = try OTPToken(
            uri: "otpauth://totp/Mongo Atlas:Acc !@#444?algorithm=sha1&digits=6&issuer=Mongo Atlas&period=30"
                + "&secret=NI4CTTFEV4G2JFE6")
        #expect(token.issuer == "Mongo Atlas" && token.account == "Acc !@#444")
        #expect(token.parameters.secret == (try Base32.decode("NI4CTTFEV4G2JFE6")))
    }

    @Test("Issuer parameter with percent, plus and encoded plus")
    func issuerEncodings() throws {
        let percent = try OTPToken(uri: "otpauth://totp/x?secret=\(Self.jbswy)&issuer=100%25%20Secure")
        #expect(percent.issuer == "100% Secure")
        let plus = try OTPToken(uri: "otpauth://totp/x?secret=\(Self.jbswy)&issuer=A%2BB+C")
        #expect(plus.issuer == "A+B C")
    }

    @Test("Scheme, type, parameter names and algorithm are case-insensitive; whitespace around the URI is ignored")
    func caseInsensitivity() throws {
        let token = try OTPToken(
            uri: "  OTPAUTH://TOTP/Foo:bar?SECRET=\(Self.jbswy)&Algorithm=sha512&DIGITS=8&Period=60\n")
        #expect(token.parameters.algorithm == .sha512 && token.parameters.digits == 8)
        #expect(token.parameters.kind == .totp(period: 60))
    }

    @Test("Seed 002 vector: SHA256, 8 digits, 60 s")
    func seed002() throws {
        let token = try OTPToken(
            uri: "otpauth://totp/Google:user@gmail.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Google"
                + "&algorithm=SHA256&digits=8&period=60")
        #expect(token.parameters.secret == RFCSeeds.sha1)
        #expect(token.parameters.algorithm == .sha256 && token.parameters.digits == 8)
        #expect(token.parameters.kind == .totp(period: 60))
    }

    @Test(
        "Secret spellings that decode to the same key",
        arguments: [
            "JBSWY3DPEHPK3PXP", "jbswy3dpehpk3pxp", "JBSW+Y3DP+EHPK+3PXP", "JBSW%20Y3DP%20EHPK%203PXP",
            "JBSW-Y3DP-EHPK-3PXP", "JBSWY3DPEHPK3PXP====", "JBSWY3DPEHPK3PXP%3D%3D%3D%3D",
        ])
    func secretSpellings(secret: String) throws {
        let token = try OTPToken(uri: "otpauth://totp/x?secret=\(secret)")
        #expect(token.parameters.secret == (try Base32.decode(Self.jbswy)))
    }

    @Test("Odd-length and long secrets")
    func oddSecrets() throws {
        let dangling = try OTPToken(uri: "otpauth://totp/x?secret=6G2NUZHN6QCF7KDAV")
        #expect(dangling.parameters.secret == hexBytes("f1b4da64edf4045fa860"))
        let lower = try OTPToken(uri: "otpauth://totp/x?secret=qlt6vmy6svfx4bt4rpmisaiyol6hihca")
        #expect(lower.parameters.secret == hexBytes("82e7eab31e954b7e067c8bd889011872fc741c40"))
        let speakeasy = try OTPToken(uri: "otpauth://totp/x?secret=S46SQCPPTCNPROMHWYBDCTBZXV")
        #expect(try speakeasy.parameters.code(atUnixTime: 1_612_380_872) == "100172")
        let rotp = try OTPToken(
            uri: "otpauth://totp/x?secret=IFADSABWAA2AAMAAHFAFCABRAAWQAQIAIFADOABXAAWQANAAG4ADOACDAAWQAQQAIYAFIACFAAWQARIAGQAFFABVAA3AANIAHAAFIABYAAYAAQYAIMAA"
        )
        #expect(try rotp.parameters.code(atUnixTime: 1_557_416_826) == "861917")
        let amazon = try OTPToken(uri: "otpauth://totp/x?secret=\(String(repeating: "ABCD", count: 13))")
        #expect(amazon.parameters.secret.count == 32)
    }

    @Test("HOTP counters from 0 to UInt64.max")
    func hotpCounters() throws {
        let zero = try OTPToken(uri: "otpauth://hotp/x?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=0")
        #expect(zero.parameters.kind == .hotp(counter: 0))
        #expect(try zero.parameters.code(atUnixTime: 0) == "755224")
        let max = try OTPToken(uri: "otpauth://hotp/x?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=18446744073709551615")
        #expect(max.parameters.kind == .hotp(counter: .max))
        #expect(try max.parameters.code(atUnixTime: 0) == "094451")
        let padded = try OTPToken(uri: "otpauth://hotp/x?secret=\(Self.jbswy)&counter=007&digits=08")
        #expect(padded.parameters.kind == .hotp(counter: 7) && padded.parameters.digits == 8)
    }

    @Test("Seven digits are accepted from a URI")
    func sevenDigits() throws {
        #expect(try OTPToken(uri: "otpauth://totp/x?secret=\(Self.jbswy)&digits=7").parameters.digits == 7)
    }

    @Test(
        "Steam forms",
        arguments: [
            "otpauth://steam/Steam:bob?secret=63BEDWCQZKTQWPESARIERL5DTTQFCJTK&issuer=Steam",
            "otpauth://totp/Steam:bob?secret=63BEDWCQZKTQWPESARIERL5DTTQFCJTK&period=30&digits=5&issuer=Steam&encoder=steam",
            "otpauth://totp/Steam:bob?secret=63BEDWCQZKTQWPESARIERL5DTTQFCJTK&encoder=STEAM&issuer=Steam",
            "otpauth://steam/Steam:bob?secret=63BEDWCQZKTQWPESARIERL5DTTQFCJTK&algorithm=SHA1&digits=5&period=30",
        ])
    func steamForms(uri: String) throws {
        let token = try OTPToken(uri: uri)
        #expect(token.parameters.kind == .steam)
        #expect(token.issuer == "Steam" && token.account == "bob")
        #expect(try token.parameters.code(atUnixTime: 1_511_200_518) == "FR8RV")
    }

    @Test("Bitwarden/Proton steam:// secret URI")
    func steamScheme() throws {
        for uri in ["steam://63BEDWCQZKTQWPESARIERL5DTTQFCJTK", "STEAM://63bedwcqzktqwpesarierl5dttqfcjtk"] {
            let token = try OTPToken(uri: uri)
            #expect(token.parameters.kind == .steam && token.issuer == nil && token.account == "")
            #expect(try token.parameters.code(atUnixTime: 1_511_200_714) == "9P3VP")
        }
        #expect(throws: OTPError.missingSecret) { try OTPToken(uri: "steam://") }
        #expect(throws: OTPError.invalidSecret) { try OTPToken(uri: "steam://63BEDWCQZKTQWPES/ARIERL5DTTQFCJTK") }
    }

    @Test("Unknown parameters, even repeated or undecodable, are ignored")
    func unknownParameters() throws {
        let token = try OTPToken(
            uri: "otpauth://totp/x?image=https%3A%2F%2Fexample.com%2Fa.png&foo=1&foo=2&codeDisplay=%7B%22pinned%22%7D"
                + "&bad=%ZZ&&secret=\(Self.jbswy)&flag")
        #expect(token.parameters.secret == (try Base32.decode(Self.jbswy)))
    }

    @Test("A URI of exactly the maximum length is parsed; one byte more is refused")
    func lengthCap() throws {
        let base = "otpauth://totp/x?secret=\(Self.jbswy)&pad="
        let exact = base + String(repeating: "a", count: OTPToken.maximumURILength - base.utf8.count)
        #expect(exact.utf8.count == OTPToken.maximumURILength)
        _ = try OTPToken(uri: exact)
        #expect(throws: OTPError.uriTooLong) { try OTPToken(uri: exact + "a") }
        #expect(throws: OTPError.uriTooLong) { try OTPToken(uri: String(repeating: "\u{1F511}", count: 1025)) }
    }

    @Test(
        "Rejected URIs give the rule they break",
        arguments: [
            // Secret
            ("otpauth://totp/x?issuer=Foo", OTPError.missingSecret),
            ("otpauth://totp/x?secret=", .missingSecret),
            ("otpauth://totp/x?secret=%20-", .missingSecret),
            ("otpauth://totp/x?secret", .missingSecret),
            ("otpauth://totp/x?secret=INVALID!@%23$", .invalidSecret),
            ("otpauth://totp/x?secret=JBSWY3DPEHPK3PX0", .invalidSecret),
            ("otpauth://totp/x?secret=JBSWY3DPEHPK3PX1", .invalidSecret),
            ("otpauth://totp/x?secret=JBSWY3DP%3DEHPK3PXP", .invalidSecret),
            ("otpauth://totp/x?secret=JBSWY3DP", .secretTooShort),
            ("otpauth://totp/x?secret=====", .secretTooShort),
            // Type and scheme
            ("otpauth://yandex/x?secret=\(jbswy)&pin=1234", .unsupportedType),
            ("otpauth://motp/x?secret=\(jbswy)", .unsupportedType),
            ("otpauth://yaotp/x?secret=\(jbswy)", .unsupportedType),
            ("otpauth:///x?secret=\(jbswy)", .unsupportedType),
            ("otpauth://hotp/x?secret=\(jbswy)&counter=1&encoder=steam", .unsupportedType),
            ("otpauth-migration://offline?data=CjEKCkhlbGxvId6tvu8", .unsupportedScheme),
            ("motp://x?secret=e3152afee62599c8", .unsupportedScheme),
            ("https://example.com/?secret=\(jbswy)", .unsupportedScheme),
            ("otpauth:/totp/x?secret=\(jbswy)", .malformedURI),
            ("otpauth:totp/x?secret=\(jbswy)", .malformedURI),
            ("\(jbswy)", .malformedURI),
            ("", .malformedURI),
            // Percent escapes and UTF-8
            ("otpauth://totp/a%2?secret=\(jbswy)", .malformedURI),
            ("otpauth://totp/a%ZZb?secret=\(jbswy)", .malformedURI),
            ("otpauth://totp/a%FFb?secret=\(jbswy)", .malformedURI),
            ("otpauth://totp/x?secret=\(jbswy)&issuer=%C3", .malformedURI),
            ("otpauth://totp/x?secret=JBSW%G3DPEHPK3PXP", .malformedURI),
            ("otpauth://totp/x?secret=\(jbswy)&%ZZ=1", .malformedURI),
            // Digits
            ("otpauth://totp/x?secret=\(jbswy)&digits=5", .invalidDigits),
            ("otpauth://totp/x?secret=\(jbswy)&digits=9", .invalidDigits),
            ("otpauth://totp/x?secret=\(jbswy)&digits=3", .invalidDigits),
            ("otpauth://totp/x?secret=\(jbswy)&digits=0", .invalidDigits),
            ("otpauth://totp/x?secret=\(jbswy)&digits=-6", .invalidDigits),
            ("otpauth://totp/x?secret=\(jbswy)&digits=%2B6", .invalidDigits),
            ("otpauth://totp/x?secret=\(jbswy)&digits=six", .invalidDigits),
            ("otpauth://totp/x?secret=\(jbswy)&digits=", .invalidDigits),
            ("otpauth://totp/x?secret=\(jbswy)&digits=+6", .invalidDigits),
            ("otpauth://totp/x?secret=\(jbswy)&digits=99999999999999999999999", .invalidDigits),
            ("otpauth://steam/x?secret=\(jbswy)&digits=6", .invalidDigits),
            // Period
            ("otpauth://totp/x?secret=\(jbswy)&period=0", .invalidPeriod),
            ("otpauth://totp/x?secret=\(jbswy)&period=-30", .invalidPeriod),
            ("otpauth://totp/x?secret=\(jbswy)&period=86401", .invalidPeriod),
            ("otpauth://totp/x?secret=\(jbswy)&period=90000", .invalidPeriod),
            ("otpauth://totp/x?secret=\(jbswy)&period=30s", .invalidPeriod),
            ("otpauth://totp/x?secret=\(jbswy)&period=", .invalidPeriod),
            ("otpauth://steam/x?secret=\(jbswy)&period=60", .invalidPeriod),
            // Counter
            ("otpauth://hotp/x?secret=\(jbswy)", .missingCounter),
            ("otpauth://hotp/x?secret=\(jbswy)&counter=", .invalidCounter),
            ("otpauth://hotp/x?secret=\(jbswy)&counter=-1", .invalidCounter),
            ("otpauth://hotp/x?secret=\(jbswy)&counter=1.5", .invalidCounter),
            ("otpauth://hotp/x?secret=\(jbswy)&counter=18446744073709551616", .invalidCounter),
            // Algorithm
            ("otpauth://totp/x?secret=\(jbswy)&algorithm=SHA-1", .unsupportedAlgorithm),
            ("otpauth://totp/x?secret=\(jbswy)&algorithm=MD5", .unsupportedAlgorithm),
            ("otpauth://totp/x?secret=\(jbswy)&algorithm=", .unsupportedAlgorithm),
            ("otpauth://steam/x?secret=\(jbswy)&algorithm=SHA256", .unsupportedAlgorithm),
            // Duplicates
            ("otpauth://totp/x?secret=\(jbswy)&secret=\(jbswy)", .duplicateParameter("secret")),
            ("otpauth://totp/x?secret=\(jbswy)&SECRET=GEZDGNBVGY3TQOJQ", .duplicateParameter("secret")),
            ("otpauth://totp/x?secret=\(jbswy)&issuer=A&issuer=B", .duplicateParameter("issuer")),
            ("otpauth://totp/x?secret=\(jbswy)&digits=6&digits=6", .duplicateParameter("digits")),
            ("otpauth://totp/x?secret=\(jbswy)&period=30&period=60", .duplicateParameter("period")),
            ("otpauth://hotp/x?secret=\(jbswy)&counter=1&counter=2", .duplicateParameter("counter")),
            ("otpauth://totp/x?algorithm=SHA1&secret=\(jbswy)&algorithm=SHA256", .duplicateParameter("algorithm")),
            ("otpauth://totp/x?encoder=steam&secret=\(jbswy)&encoder=steam", .duplicateParameter("encoder")),
        ])
    func rejected(uri: String, error: OTPError) {
        #expect(throws: error) { try OTPToken(uri: uri) }
    }
}
