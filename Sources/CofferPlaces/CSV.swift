/// RFC 4180 CSV: fields separated by commas, optionally in double quotes (`""` inside is one quote), records ending
/// in CRLF or LF; a UTF-8 byte-order mark is ignored. Each record comes with its 1-based line number, so errors can
/// say where.
struct CSVReader {
    struct Record {
        var line: Int
        var fields: [String]
    }

    /// Every record of `bytes`; blank lines are dropped.
    static func records(_ bytes: [UInt8]) throws(PlacesError) -> [Record] {
        var records: [Record] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var line = 1
        var recordLine = 1
        var quoted = false
        var wasQuoted = false
        var quoteLine = 1

        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
            wasQuoted = false
        }
        func endRecord() {
            endField()
            if !(fields.count == 1 && fields[0].isEmpty && !wasQuoted) {
                records.append(Record(line: recordLine, fields: fields))
            }
            fields.removeAll(keepingCapacity: true)
        }

        while index < bytes.count {
            let byte = bytes[index]
            if quoted {
                if byte == 0x22 {
                    if index + 1 < bytes.count && bytes[index + 1] == 0x22 {
                        field.append(0x22)
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    if byte == 0x0A { line += 1 }
                    field.append(byte)
                }
            } else {
                switch byte {
                case 0x22:
                    guard field.isEmpty else { throw .record(line, .malformed("a quote inside an unquoted field")) }
                    quoted = true
                    wasQuoted = true
                    quoteLine = line
                case 0x2C:
                    endField()
                case 0x0D where index + 1 < bytes.count && bytes[index + 1] == 0x0A:
                    break
                case 0x0A:
                    endRecord()
                    line += 1
                    recordLine = line
                default:
                    if wasQuoted {
                        // A quote that ran over lines and met another quote: the first one was never closed.
                        if quoteLine != line { throw .record(quoteLine, .malformed("a quoted field is never closed")) }
                        throw .record(line, .malformed("text after a closing quote"))
                    }
                    field.append(byte)
                }
            }
            index += 1
        }
        if quoted { throw .record(recordLine, .malformed("a quoted field is never closed")) }
        if !field.isEmpty || !fields.isEmpty || wasQuoted { endRecord() }
        return records
    }
}

/// A CSV with a header row, read by column name.
struct CSVTable {
    let columns: [String: Int]
    let rows: [CSVReader.Record]

    init(_ bytes: [UInt8], required: [String]) throws(PlacesError) {
        let records = try CSVReader.records(bytes)
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
    func value(_ row: CSVReader.Record, _ column: String) -> String? {
        guard let index = columns[column], index < row.fields.count else { return nil }
        let text = row.fields[index].trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? nil : text
    }
}

import Foundation
