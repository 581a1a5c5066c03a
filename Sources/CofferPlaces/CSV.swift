import CofferCrypto
import Foundation

/// A CSV with a header row, read by column name.
struct CSVTable {
    let columns: [String: Int]
    let rows: [CSV.Record]

    init(_ bytes: [UInt8], required: [String]) throws(PlacesError) {
        let records: [CSV.Record]
        do {
            records = try CSV.records(bytes, skippingBlankLines: true)
        } catch {
            switch error {
            case .unclosedQuote(let line): throw .record(line, .malformed("a quoted field is never closed"))
            case .textAfterQuote(let line): throw .record(line, .malformed("text after a closing quote"))
            }
        }
        guard let header = records.first else { throw .malformed("the file is empty") }
        var columns: [String: Int] = [:]
        for (index, name) in header.fields.enumerated() {
            columns[name.trimmingCharacters(in: .whitespaces).lowercased()] = index
        }
        for name in required where columns[name] == nil {
            throw .malformed("the header has no \(name) column (it needs \(required.joined(separator: ",")))")
        }
        self.columns = columns
        self.rows = Array(records.dropFirst())
    }

    /// The trimmed value of `column` in `row`; `nil` when empty or absent.
    func value(_ row: CSV.Record, _ column: String) -> String? {
        guard let index = columns[column], index < row.fields.count else { return nil }
        let text = row.fields[index].trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? nil : text
    }
}
