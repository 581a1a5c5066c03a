import CofferCrypto
import CofferTestSupport
import Foundation
import Testing

/// The one CSV reader, against Python's `csv` module (which reads as spreadsheets do) and on its refusals.
@Suite struct CSVTests {
    static let documents: [String] = [
        "a,b,c\n1,2,3\n",
        "a,b\r\n1,2\r\n",
        "a,b\r1,2\r",
        "\"x, y\",\"say \"\"hi\"\"\",z\n",
        "\"multi\nline\",2\n3,4",
        "a,,c\n,\n",
        "head\n\nafter blank\n",
        "literal\"quote,ok\n",
        "\"\",\"\"\n",
        "Zoë,東京,🙂\n",
        "no newline at end",
        "a,b,\n",
    ]

    @Test func sameRecordsAsPython() throws {
        let script = """
            import csv, io, json, sys
            print(json.dumps([list(csv.reader(io.StringIO(text, newline=""))) for text in json.load(sys.stdin)]))
            """
        let run = try TestSupport.run("/usr/bin/env", ["python3", "-c", script], input: Array(try JSONSerialization.data(withJSONObject: Self.documents)))
        try #require(run.status == 0, "python3 is needed: \(String(decoding: run.standardError.suffix(300), as: UTF8.self))")
        let expected = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput)) as? [[[String]]])
        for (document, records) in zip(Self.documents, expected) {
            // Python gives a blank line as an empty record; this reader, as one empty field (Catima's separator).
            let python = records.map { $0.isEmpty ? [""] : $0 }
            #expect(try CSV.records(Array(document.utf8)).map(\.fields) == python, "\(document.debugDescription)")
        }
    }

    @Test func linesAndBlankLines() throws {
        let records = try CSV.records(Array("\u{FEFF}a,b\n\n\"two\nlines\",x\nlast,y".utf8), skippingBlankLines: true)
        #expect(
            records == [
                CSV.Record(line: 1, fields: ["a", "b"]), CSV.Record(line: 3, fields: ["two\nlines", "x"]),
                CSV.Record(line: 5, fields: ["last", "y"]),
            ])
        #expect(try CSV.records(Array("a;\"b;c\"\n".utf8), delimiter: UInt8(ascii: ";")).map(\.fields) == [["a", "b;c"]])
    }

    @Test(
        "refusals name the line and the rule",
        arguments: [
            ("a,\"open\n", CSV.Failure.unclosedQuote(line: 1)),
            ("a,\"closed\"x\n", .textAfterQuote(line: 1)),
            // A quote left open takes the next opening quote as its close: the first one is reported.
            ("h\n\"never closed,1\nnext,\"quoted\",2\n", .unclosedQuote(line: 2)),
        ])
    func refusals(text: String, failure: CSV.Failure) {
        #expect(throws: failure) { try CSV.records(Array(text.utf8)) }
    }
}
