/// An RFC 4180 reader, the one for every CSV Coffer reads (Bitwarden, Catima and FidMe exports; place lists).
///
/// Fields are separated by commas (or another `delimiter`: FidMe uses semicolons) and records by CRLF, LF or a lone
/// CR. A field in double quotes may hold delimiters, line breaks and doubled quotes; an unquoted field keeps any
/// quote it contains literally, as spreadsheets and Python's reader do. A UTF-8 byte-order mark is skipped.
///
/// It lives beside `Hex` as a format helper that the importers and the places reader share; it knows nothing of
/// either, and its failures carry a line number and a rule, never a field's text.
public enum CSV {
    /// One record, with the 1-based line it starts on, for naming it in problems.
    public struct Record: Equatable, Sendable {
        public let line: Int
        public let fields: [String]

        public init(line: Int, fields: [String]) {
            self.line = line
            self.fields = fields
        }
    }

    /// Why the text is not CSV.
    public enum Failure: Error, Equatable, Sendable {
        /// The quoted field starting on `line` never closes (it runs to the end, or its quote is taken by a later
        /// field's opening quote).
        case unclosedQuote(line: Int)
        /// Text follows a closing quote on `line`.
        case textAfterQuote(line: Int)
    }

    /// Every record of `bytes`. With `skippingBlankLines`, an empty line is no record; without, it is a record
    /// of one empty field (Catima separates its sections with them).
    public static func records(
        _ bytes: some Collection<UInt8>, delimiter: UInt8 = UInt8(ascii: ","), skippingBlankLines: Bool = false
    ) throws(Failure) -> [Record] {
        let bytes = Array(bytes)
        let quote = UInt8(ascii: "\""), lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        var records: [Record] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var line = 1
        var recordLine = 1
        // Whether the record has begun: a blank line has not.
        var started = false

        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
        }
        func endRecord() {
            endField()
            if started || !skippingBlankLines { records.append(Record(line: recordLine, fields: fields)) }
            fields.removeAll(keepingCapacity: true)
            started = false
        }

        while index < bytes.count {
            let byte = bytes[index]
            // Only at a field's start: a quoted field is always followed by a delimiter or a line end.
            if byte == quote, field.isEmpty {
                // A quoted field: runs to the quote not followed by another quote.
                let quoteLine = line
                index += 1
                var closed = false
                while index < bytes.count {
                    let inner = bytes[index]
                    if inner == quote {
                        if index + 1 < bytes.count, bytes[index + 1] == quote {
                            field.append(quote)
                            index += 2
                            continue
                        }
                        closed = true
                        index += 1
                        break
                    }
                    if inner == lf || (inner == cr && !(index + 1 < bytes.count && bytes[index + 1] == lf)) { line += 1 }
                    field.append(inner)
                    index += 1
                }
                guard closed else { throw .unclosedQuote(line: quoteLine) }
                guard index == bytes.count || [delimiter, lf, cr].contains(bytes[index]) else {
                    // Text after a quote that spanned lines: most likely that quote never closed and this one opened
                    // a later field.
                    throw quoteLine == line ? .textAfterQuote(line: line) : .unclosedQuote(line: quoteLine)
                }
                started = true
                // The field ends at the delimiter or line end that follows, as an unquoted one does.
                if index == bytes.count { break }
                continue
            }
            switch byte {
            case delimiter:
                endField()
                started = true
                index += 1
            case lf, cr:
                endRecord()
                index += (byte == cr && index + 1 < bytes.count && bytes[index + 1] == lf) ? 2 : 1
                line += 1
                recordLine = line
            default:
                field.append(byte)
                started = true
                index += 1
            }
        }
        if started || !field.isEmpty || !fields.isEmpty { endRecord() }
        return records
    }
}
