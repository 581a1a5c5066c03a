import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one canary search every leak test uses: a marker is looked for in each spelling a file, a log or a database
/// dump can give it, not only as its raw UTF-8 bytes. A scan for raw bytes alone cannot see a leak into a PostgreSQL
/// `bytea` column (`pg_dump` writes it as hex), into base64 on the wire or in JSON, or into an escaped string.
public enum CanaryScan {
    /// The names of the encodings in which `marker` occurs in `data`; empty when `data` is clean.
    ///
    /// Looked for: raw UTF-8; UTF-16 in both byte orders; hex (either case); base64 and base64url at each of the
    /// three byte alignments the marker can start at; and escaped forms: as a JSON encoder writes the string, every
    /// character as `\uXXXX`, every byte as `\xHH`, as octal `\ooo` (PostgreSQL's `bytea` escape format, C) and as
    /// `%HH` (URLs, form bodies).
    public static func encodings(of marker: String, in data: Data) -> [String] {
        found(spellings(of: Array(marker.utf8), text: marker), in: data)
    }

    /// The same for a marker that is not text (a key, a seed): every encoding above that spells bytes, that is all
    /// but UTF-16 and `\uXXXX`.
    public static func encodings(ofBytes marker: [UInt8], in data: Data) -> [String] {
        found(spellings(of: marker, text: nil), in: data)
    }

    /// Markers shorter than this would match clean data by chance in the shorter spellings (base64 keeps only the
    /// characters a marker fixes alone: two for three bytes at some alignments).
    public static let minimumMarkerLength = 4

    private static func found(_ spellings: [Spelling], in data: Data) -> [String] {
        spellings.compactMap { spelling in
            spelling.needles.contains { contains(data, $0) } ? spelling.name : nil
        }
    }

    /// One encoding of a marker: its name and the byte strings that spell the marker in it (several when the
    /// encoding allows a choice, like the case of hex digits).
    struct Spelling {
        let name: String
        let needles: [[UInt8]]
    }

    static func spellings(of bytes: [UInt8], text: String?) -> [Spelling] {
        precondition(bytes.count >= minimumMarkerLength, "a canary shorter than \(minimumMarkerLength) bytes would match by chance")
        var result = [
            Spelling(name: "raw", needles: [bytes]),
            Spelling(name: "hex", needles: bothCases { hex in bytes.map { hex($0) }.joined() }),
        ]
        if let text {
            let utf16 = Array(text.utf16)
            result += [
                Spelling(name: "UTF-16LE", needles: [utf16.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8($0 >> 8)] }]),
                Spelling(name: "UTF-16BE", needles: [utf16.flatMap { [UInt8($0 >> 8), UInt8(truncatingIfNeeded: $0)] }]),
                Spelling(name: "JSON-escaped", needles: [Array(jsonEscaped(text).utf8)]),
                Spelling(
                    name: "\\u-escaped",
                    needles: bothCases { hex in
                        utf16.map { "\\u" + hex(UInt8($0 >> 8)) + hex(UInt8(truncatingIfNeeded: $0)) }.joined()
                    }),
            ]
        }
        for alignment in 0..<3 {
            let standard = base64Core(bytes, alignment: alignment)
            let urlSafe = String(standard.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
            result.append(Spelling(name: "base64 (alignment \(alignment))", needles: [Array(standard.utf8)]))
            result.append(Spelling(name: "base64url (alignment \(alignment))", needles: [Array(urlSafe.utf8)]))
        }
        result += [
            Spelling(name: "\\x-escaped", needles: bothCases { hex in bytes.map { "\\x" + hex($0) }.joined() }),
            Spelling(name: "octal-escaped", needles: [Array(bytes.map { "\\" + octal($0) }.joined().utf8)]),
            Spelling(name: "percent-escaped", needles: bothCases { hex in bytes.map { "%" + hex($0) }.joined() }),
        ]
        // A spelling identical to an earlier one (JSON escaping of a marker with nothing to escape) is not a second
        // place the marker was found.
        var seen: Set<[UInt8]> = []
        return result.compactMap { spelling in
            let needles = spelling.needles.filter { seen.insert($0).inserted }
            return needles.isEmpty ? nil : Spelling(name: spelling.name, needles: needles)
        }
    }

    /// The needles of a hex-digit encoding in lower and in upper case.
    private static func bothCases(_ spell: ((UInt8) -> String) -> String) -> [[UInt8]] {
        [spell { String(format: "%02x", $0) }, spell { String(format: "%02X", $0) }].map { Array($0.utf8) }
    }

    private static func octal(_ byte: UInt8) -> String {
        String(format: "%03o", byte)
    }

    /// The base64 characters that depend on the marker's bytes alone when the marker starts `alignment` bytes into
    /// a 3-byte group: characters mixing the marker's bits with its neighbours' are dropped at both ends.
    static func base64Core(_ bytes: [UInt8], alignment: Int) -> String {
        let encoded = Array((Data(repeating: 0, count: alignment) + Data(bytes)).base64EncodedString())
        let firstBit = 8 * alignment
        let endBit = 8 * (alignment + bytes.count)
        let characters = encoded.indices.filter { 6 * $0 >= firstBit && 6 * $0 + 6 <= endBit }
        return String(characters.map { encoded[$0] })
    }

    /// The marker as a JSON string body is written by JSONSerialization and JSONEncoder (which escape `/` too).
    static func jsonEscaped(_ marker: String) -> String {
        var escaped = ""
        for scalar in marker.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "/": escaped += "\\/"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Whether `needle` occurs in `data`: memchr to each candidate first byte, memcmp there (dumps run to megabytes
    /// and each is searched for a few dozen needles).
    private static func contains(_ data: Data, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, data.count >= needle.count else { return false }
        return data.withUnsafeBytes { haystack in
            needle.withUnsafeBytes { needle in
                guard let start = haystack.baseAddress, let wanted = needle.baseAddress else { return false }
                let lastStart = haystack.count - needle.count
                var offset = 0
                while offset <= lastStart {
                    guard let hit = memchr(start + offset, Int32(needle[0]), lastStart - offset + 1) else { return false }
                    if memcmp(hit, wanted, needle.count) == 0 { return true }
                    offset = start.distance(to: UnsafeRawPointer(hit)) + 1
                }
                return false
            }
        }
    }
}
