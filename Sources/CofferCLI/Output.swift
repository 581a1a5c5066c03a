import CofferKit
import CofferPlatform
import Foundation

/// Writing results: plain text for people, JSON for scripts, colour only on a terminal and never under NO_COLOR.
package enum Output {
    package static let colorEnabled: Bool = {
        let environment = processEnvironment
        return Terminal.standardOutputIsTTY && environment["NO_COLOR"].map(\.isEmpty) ?? true && environment["TERM"] != "dumb"
    }()

    package static func line(_ text: String = "") {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    package static func raw(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// A note on standard error (warnings, progress, one-time messages).
    package static func note(_ text: String) {
        Terminal.writeError(text + "\n")
    }

    package static func warning(_ text: String) {
        Terminal.writeError("coffer: warning: \(text)\n")
    }

    /// "1 item", "2 items", "1 copy", "3 copies": a count with its noun.
    package static func count(_ number: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(number) \(number == 1 ? singular : plural ?? singular + "s")"
    }

    package static func json(_ value: some Encodable) throws {
        line(try jsonText(value))
    }

    /// `value` as `json` prints it.
    package static func jsonText(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        // Foundation prints an empty array as "[", a blank line and "]"; scripts and people expect `[]`. JSON text has
        // no raw newline inside a string, so the pattern can only be an empty array.
        let text = String(decoding: try encoder.encode(value), as: UTF8.self)
        return text.replacingOccurrences(of: #"\[\n\s*\n\s*\]"#, with: "[]", options: .regularExpression)
    }

    /// `value` as an element of an array that `json` prints: indented one level. A long listing encodes each
    /// element as it comes and prints `jsonArray` of them, the same text as `json` of the whole array without holding
    /// every value.
    package static func jsonElement(_ value: some Encodable) throws -> String {
        try jsonText(value).split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n")
    }

    /// Prints elements made by `jsonElement` as one JSON array.
    package static func jsonArray(_ elements: [String]) {
        guard !elements.isEmpty else { return line("[]") }
        raw("[\n")
        for start in stride(from: 0, to: elements.count, by: 1_000) {
            let end = min(start + 1_000, elements.count)
            raw(elements[start..<end].joined(separator: ",\n") + (end == elements.count ? "\n]\n" : ",\n"))
        }
    }

    package enum Tone { case dim, bold, red, yellow, green }

    package static func styled(_ text: String, _ tone: Tone) -> String {
        guard colorEnabled else { return text }
        let code: String
        switch tone {
        case .dim: code = "2"
        case .bold: code = "1"
        case .red: code = "31"
        case .yellow: code = "33"
        case .green: code = "32"
        }
        return "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }

    package static let isoDay: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter
    }()

    /// Parses `YYYY-MM-DD` (start of that day, local time) or a full ISO 8601 timestamp.
    package static func parseDate(_ text: String, endOfDay: Bool = false) throws -> Date {
        if let day = isoDay.date(from: text) {
            return endOfDay ? day.addingTimeInterval(86_399) : day
        }
        if let moment = ISO8601DateFormatter().date(from: text) { return moment }
        throw CLIError.usage("\(text) is not a date (use YYYY-MM-DD)")
    }
}

/// A progress bar on standard error, shown only on a terminal and only once an operation has run for a second.
package final class ProgressBar {
    private let label: String
    private let start = Date()
    private var shown = false

    package init(label: String) {
        self.label = label
    }

    package func update(_ done: Int, of total: Int) {
        guard Terminal.standardErrorIsTTY, total > 0, Date().timeIntervalSince(start) >= 1 else { return }
        let width = 30
        let filled = width * done / total
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        Terminal.writeError("\r\(label) \(bar) \(done)/\(total)")
        shown = true
    }

    package func finish() {
        if shown { Terminal.writeError("\n") }
    }
}
