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

    /// Entities are never expanded from a DTD: the importer refuses any DTD first, and the reader alone treats an
    /// entity the document declares as unknown rather than expanding it (no billion laughs).
    @Test func declaredEntitiesAreNotExpanded() throws {
        let laughs = "<!DOCTYPE a [<!ENTITY l \"lol\"><!ENTITY m \"&l;&l;&l;&l;&l;&l;&l;&l;&l;&l;\">]><a>&m;</a>"
        let events = try Self.events(Array(laughs.utf8))
        #expect(events?.contains { $0["text"]?.contains("lol") ?? false } != true)
    }
}
