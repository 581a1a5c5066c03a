import CofferCrypto
import CofferTestSupport
import Foundation
import Testing

/// The one untyped JSON reader, against Python's `json` module: 1,500 generated documents (escapes, surrogate pairs,
/// numbers at every edge of 64 bits and of a double, nesting, white space) and the malformed ones in
/// `Tests/oracles/json_oracle.py`, each read to the same values or refused alike.
@Suite struct JSONValueTests {
    /// The oracle's canonical form of `value` (see json_oracle.py).
    static func canonical(_ value: JSONValue) -> String {
        switch value {
        case .null: "n"
        case .bool(let flag): flag ? "t" : "f"
        case .integer(let number): "i:\(number)"
        case .unsignedInteger(let number): "u:\(number)"
        case .fraction(let number): "d:\(number.bitPattern)"
        case .string(let text): "s:" + Hex.encode(Array(text.utf8))
        case .array(let items): "[" + items.map(canonical).joined(separator: ",") + "]"
        case .object(let members):
            "{"
                + members.keys.sorted { $0.unicodeScalars.map(\.value).lexicographicallyPrecedes($1.unicodeScalars.map(\.value)) }
                .map { "s:" + Hex.encode(Array($0.utf8)) + "=" + canonical(members[$0]!) }.joined(separator: ",") + "}"
        }
    }

    @Test("reads what Python reads, to the same values, and refuses what it refuses")
    func sameAsPython() throws {
        let script = TestSupport.repositoryRoot.appendingPathComponent("Tests/oracles/json_oracle.py").path
        let run = try TestSupport.run("/usr/bin/env", ["python3", script])
        try #require(run.status == 0, "python3 is needed: \(String(decoding: run.standardError.suffix(300), as: UTF8.self))")
        let oracle = try #require(JSONValue.parse(run.standardOutput)?["documents"]?.arrayValue)
        #expect(oracle.count > 1500)
        var refused = 0
        for document in oracle {
            let text = try #require(document["text"]?.stringValue.flatMap { Hex.decode($0) })
            let expected = document["reading"]?.stringValue
            if expected == nil { refused += 1 }
            let parsed = JSONValue.parse(text)
            #expect(parsed.map(Self.canonical) == expected, "\(String(decoding: text, as: UTF8.self).debugDescription)")
            // What the writer makes of it reads back to the same value, compact and pretty.
            if let parsed {
                #expect(JSONValue.parse(Array(parsed.text().utf8)) == parsed)
                #expect(JSONValue.parse(Array(parsed.text(pretty: true).utf8)) == parsed)
            }
        }
        #expect(refused >= 40, "the malformed documents are there")
    }

    @Test("nesting is bounded; a byte-order mark is skipped; a name given twice keeps its last value")
    func edges() {
        let nested = { (depth: Int) in Array(String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).map { UInt8($0.asciiValue!) } }
        #expect(JSONValue.parse(nested(JSONValue.maximumDepth)) != nil)
        #expect(JSONValue.parse(nested(JSONValue.maximumDepth + 1)) == nil)
        #expect(JSONValue.parse(nested(100_000)) == nil, "deep input is refused, not a stack overflow")
        #expect(JSONValue.parse([0xEF, 0xBB, 0xBF] + Array("{\"a\":1}".utf8)) == .object(["a": .integer(1)]))
        #expect(JSONValue.parse(Array("{\"a\":1,\"a\":true}".utf8)) == .object(["a": .bool(true)]))
        #expect(JSONValue.parse(Array("[true, 1, 1.5]".utf8)) == .array([.bool(true), .integer(1), .fraction(1.5)]))
        #expect(JSONValue.parse(Array("[true]".utf8))?.arrayValue?.first?.doubleValue == nil, "a boolean is never a number")
    }

    @Test("the writer escapes only what JSON requires, sorts members, and indents as --json does")
    func writer() {
        let value: JSONValue = ["b": [1, "x/y", true], "a": .string("quote \" back \\ tab \t bell \u{07} é"), "c": [:], "d": []]
        #expect(value.text() == #"{"a":"quote \" back \\ tab \t bell \u0007 é","b":[1,"x/y",true],"c":{},"d":[]}"#)
        #expect(
            value.text(pretty: true) == """
                {
                  "a" : "quote \\" back \\\\ tab \\t bell \\u0007 é",
                  "b" : [
                    1,
                    "x/y",
                    true
                  ],
                  "c" : {},
                  "d" : []
                }
                """)
        #expect(JSONValue.fraction(.infinity).text() == "null")
        #expect(JSONValue.number(UInt64.max) == .unsignedInteger(.max) && JSONValue.number(Int32.min) == .integer(-2_147_483_648))
    }
}
