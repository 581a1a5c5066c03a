/// An Android app's shared preferences file (`shared_prefs/NAME.xml`), which several authenticators keep their
/// tokens in: a `<map>` root of typed values, `<string name="key">text</string>` among them. Only the strings are
/// read (the apps keep JSON and hex there); the other value types are skipped.
enum AndroidPreferences {
    /// The string values by name, in file order, or an error when the file is not such a map.
    static func strings(_ document: [UInt8], format: String) throws(InteropError) -> [(name: String, value: String)] {
        var strings: [(name: String, value: String)] = []
        var depth = 0
        var sawMap = false
        var pendingName: String?
        var text = ""
        do {
            _ = try XMLEventReader.read(document) { event in
                switch event {
                case .start(let name, let attributes):
                    depth += 1
                    if depth == 1 { sawMap = name == "map" }
                    if depth == 2, name == "string" {
                        pendingName = attributes["name"]
                        text = ""
                    }
                case .text(let value):
                    if pendingName != nil { text += value }
                case .end:
                    if depth == 2, let name = pendingName {
                        strings.append((name, text))
                        pendingName = nil
                    }
                    depth -= 1
                }
                return sawMap && strings.count <= entryLimit
            }
        } catch .unavailable {
            throw .readerUnavailable("reading \(format) preferences needs libxml2, which is not installed")
        } catch {
            throw .malformedFile("\(format)'s file is an Android preferences XML file (shared_prefs), and this is not one")
        }
        guard sawMap else { throw .malformedFile("\(format)'s file is an Android preferences XML file (a <map> of values)") }
        guard strings.count <= entryLimit else { throw .malformedFile("the file holds more than \(entryLimit) values") }
        return strings
    }

    /// The most values read: far above any real app's.
    static let entryLimit = 100_000

    /// Whether `bytes` start like an XML document (after any byte-order mark and white space).
    static func looksLikeXML(_ bytes: [UInt8]) -> Bool {
        var rest = bytes[...]
        if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
        return rest.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }.first == UInt8(ascii: "<")
    }
}
