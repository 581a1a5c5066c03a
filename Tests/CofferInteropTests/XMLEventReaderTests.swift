@testable import CofferInterop
import CofferTestSupport
import Foundation
import Testing

/// The XML reader (libxml2's xmlTextReader, loaded at run time) against Expat through Python
/// (Tests/oracles/xml_oracle.py): the same events for well-formed documents, a refusal for the others.
@Suite struct XMLEventReaderTests {
    static let documents: [String] = [
        "<KeePassFile/>",
        "<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?>\n<a>\n  <b x=\"1\" y='two'>text</b>\n</a>\n",
        "<a>x &amp; y &lt;&gt; &quot;&apos; &#65;&#x42;&#x1F600;</a>",
        "<a><![CDATA[<not> &amp; markup]]>after</a>",
        "<a>Zoë 東京 🙂 café</a>",
        "<a p=\"a&amp;b &#10;c\tline\nnext\"/>",
        "<a><!-- a comment --><?pi data?>kept</a>",
        "<a><b/><c></c><d> </d>\n\t<e>  spaced  </e></a>",
        "<a xmlns:k=\"urn:x\"><k:b k:attr=\"v\">q</k:b></a>",
        "<Value Protected=\"True\">AAEC</Value>",
        "\u{FEFF}<a>bom</a>",
        // Not well-formed: each is refused by both.
        "<a><b></a></b>",
        "<a>",
        "<a>&undefined;</a>",
        "<a x=\"1\" x=\"2\"/>",
        "<a/><b/>",
        "",
        "<a>\u{1}</a>",
        "<a attr=unquoted/>",
        "<a>&#0;</a>",
    ]

    static func events(_ document: [UInt8]) throws -> [[String: String]]? {
        var found: [XMLEvent] = []
        do {
            _ = try XMLEventReader.read(document) { event in
                if case .text(let more) = event, case .text(let text)? = found.last {
                    found[found.count - 1] = .text(text + more)
                } else {
                    found.append(event)
                }
                return true
            }
        } catch .malformed {
            return nil
        }
        return found.map { event in
            switch event {
            case .start(let name, let attributes): return attributes.merging(["event": "start", "name": name]) { $1 }
            case .text(let text): return ["event": "text", "text": text]
            case .end(let name): return ["event": "end", "name": name]
            }
        }
    }

    static func oracle(_ answer: Any) -> [[String: String]]? {
        guard let events = answer as? [[Any]] else { return nil }
        return events.map { event in
            switch event[0] as? String {
            case "start":
                return (event[2] as? [String: String] ?? [:]).merging(["event": "start", "name": event[1] as? String ?? ""]) { $1 }
            case "text": return ["event": "text", "text": event[1] as? String ?? ""]
            default: return ["event": "end", "name": event[1] as? String ?? ""]
            }
        }
    }

    @Test func sameEventsAsExpat() throws {
        let documents = Self.documents.map { Array($0.utf8) }
        let answers = try TestSupport.pythonOracle("xml_oracle.py", input: documents.map { $0.map { String(format: "%02x", $0) }.joined() })
        try #require(answers.count == documents.count)
        var refused = 0
        for (document, answer) in zip(documents, answers) {
            let expected = Self.oracle(answer)
            if expected == nil { refused += 1 }
            #expect(try Self.events(document) == expected, "\(String(decoding: document, as: UTF8.self))")
        }
        // The list holds both kinds: a reader refusing everything, or nothing, fails above.
        #expect(refused == 9)
    }

    @Test func stopsWhenTheVisitorSaysSo() throws {
        var seen = 0
        let finished = try XMLEventReader.read(Array("<a><b/><c/></a>".utf8)) { _ in
            seen += 1
            return seen < 2
        }
        #expect(!finished)
        #expect(seen == 2)
    }

    /// A document type declaration is refused by the reader itself, in any encoding (the importer's byte scan for
    /// `<!DOCTYPE` sees only UTF-8): its entities are how XML bombs work, and one left unexpanded would lose its text.
    @Test("a DTD is refused, in UTF-8 and in UTF-16, and no entity is ever expanded", arguments: [false, true])
    func documentTypesAreRefused(utf16: Bool) throws {
        let laughs = "<!DOCTYPE a [<!ENTITY l \"lol\"><!ENTITY m \"&l;&l;&l;&l;&l;&l;&l;&l;&l;&l;\">]><a>&m;</a>"
        let bytes = utf16 ? utf16LittleEndian(laughs) : Array(laughs.utf8)
        var texts: [String] = []
        #expect(throws: XMLEventReader.Failure.declaresDocumentType) {
            _ = try XMLEventReader.read(bytes) { event in
                if case .text(let text) = event { texts.append(text) }
                return true
            }
        }
        #expect(texts.isEmpty)
    }

    @Test("a UTF-16 document reads as its UTF-8 twin does")
    func utf16() throws {
        let text = "<a k=\"v\">Zoë 東京 🙂</a>"
        let twin = try Self.events(Array(text.utf8))
        #expect(twin != nil)
        #expect(try Self.events(utf16LittleEndian(text)) == twin)
    }
}

/// `text` as UTF-16LE with its byte-order mark, as a Windows tool may write XML.
func utf16LittleEndian(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = [0xFF, 0xFE]
    for unit in text.utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
    return bytes
}
