import CofferCrypto
import Foundation

/// One entry of a KeePass database as its XML holds it: its string fields (protected ones already revealed), its
/// tags and the group it sits in.
struct KeePassEntry {
    struct Field {
        let key: String
        let value: String
        let protected: Bool
    }

    /// A file attached to the entry: its name, and its bytes when the database holds the file it refers to.
    struct Attachment {
        let name: String
        let bytes: [UInt8]?
    }

    var fields: [Field] = []
    /// The files attached to the entry.
    var attachments: [Attachment] = []
    var tags: [String] = []
    /// The name of the group holding the entry; `nil` in the root group.
    var group: String?

    /// The value of the standard or custom field `key`.
    func value(_ key: String) -> String? { fields.first { $0.key == key }?.value }
}

/// Reads entries out of a KeePass XML document (`KeePassFile/Root/Group/…/Entry`).
///
/// Every `Protected="True"` value, wherever it sits (history, recycle bin, attachments of KDBX 3.1), is revealed in
/// document order, because the stream is one sequence; entries in `History` and in the recycle bin are then left
/// out. A document with a DTD is refused before parsing (KeePass never writes one; entities are how XML bombs work).
final class KeePassXMLReader {
    private var stream: KeePassInnerStream
    private(set) var entries: [KeePassEntry] = []
    private var failure: InteropError?

    private var path: [String] = []
    private var text = ""
    private var protectedValue = false
    /// Per open group: its name, whether it is the root group, and whether it is (or is inside) the recycle bin.
    private var groups: [(name: String?, uuid: String?, deleted: Bool)] = []
    private var recycleBinUUID: String?
    private var recycleBinEnabled = true
    private var entry: KeePassEntry?
    private var entryDepth = 0
    private var fieldKey: String?
    private var fieldValue: (text: String, protected: Bool)?
    /// Attached files by reference: KDBX 4's from the inner header, KDBX 3.1's read from `Meta/Binaries`.
    private var binaries: [Int: [UInt8]]
    /// The open `Meta/Binaries/Binary`'s id and whether it is gzip-compressed.
    private var binary: (id: Int, compressed: Bool)?
    /// The open attachment's name and reference (`Entry/Binary/Key` and `Value Ref`).
    private var attachment: (name: String?, ref: Int?)?
    /// The bytes of the last protected value read, which attached files need as bytes rather than text.
    private var protectedBytes: [UInt8]?
    /// The attached files' bytes so far: each gzip member is capped, so their sum is too, as a database's payload is.
    private var binaryBytes = 0

    /// The most entries read, far above any real database and well inside the importer's size cap.
    static let entryLimit = 100_000

    init(stream: KeePassInnerStream, binaries: [[UInt8]]) {
        self.stream = stream
        self.binaries = Dictionary(uniqueKeysWithValues: binaries.enumerated().map { ($0.offset, $0.element) })
    }

    static func entries(_ xml: [UInt8], stream: KeePassInnerStream, binaries: [[UInt8]] = []) throws(InteropError) -> [KeePassEntry] {
        if xml.count >= 9,
            (0...(xml.count - 9)).contains(where: {
                xml[$0] == UInt8(ascii: "<") && xml[$0 + 1] == UInt8(ascii: "!")
                    && String(decoding: xml[($0 + 2)..<($0 + 9)], as: UTF8.self).uppercased() == "DOCTYPE"
            })
        {
            throw .malformedFile("the database XML declares a DTD")
        }
        let reader = KeePassXMLReader(stream: stream, binaries: binaries)
        let finished: Bool
        do {
            finished = try XMLEventReader.read(xml) { event in
                switch event {
                case .start(let name, let attributes): reader.startElement(name, attributes: attributes)
                case .text(let text): reader.text += text
                case .end(let name): reader.endElement(name)
                }
                return reader.failure == nil
            }
        } catch .unavailable {
            throw .readerUnavailable("reading a KeePass database needs libxml2, which is not installed")
        } catch .declaresDocumentType {
            throw .malformedFile("the database XML declares a DTD")
        } catch {
            throw .malformedFile("the database XML is not well-formed")
        }
        if let failure = reader.failure { throw failure }
        guard reader.sawRoot else { throw .malformedFile("the database XML is not a KeePassFile") }
        guard finished, reader.closedRoot else { throw .malformedFile("the database XML is not well-formed") }
        return reader.entries
    }

    private var sawRoot = false
    private var closedRoot = false

    private func startElement(_ name: String, attributes: [String: String]) {
        if path.isEmpty {
            guard name == "KeePassFile" else {
                fail(.malformedFile("the database XML is not a KeePassFile"))
                return
            }
            sawRoot = true
        }
        path.append(name)
        text = ""
        protectedValue = attributes["Protected"]?.lowercased() == "true"
        switch name {
        case "Group" where path.dropLast().last == "Root" || path.dropLast().last == "Group":
            groups.append((nil, nil, groups.last?.deleted ?? false))
        case "Entry" where path.dropLast().last == "Group":
            entry = KeePassEntry(group: groups.count > 1 ? groups.last?.name : nil)
            entryDepth = path.count
        case "String" where entry != nil && path.count == entryDepth + 1:
            fieldKey = nil
            fieldValue = nil
        case "Binary" where entry != nil && path.count == entryDepth + 1:
            attachment = (nil, nil)
        case "Value" where entry != nil && path.count == entryDepth + 2 && path.dropLast().last == "Binary":
            attachment?.ref = attributes["Ref"].flatMap { Int($0) }
        case "Binary" where entry == nil && path.dropLast().last == "Binaries":
            binary = (attributes["ID"].flatMap { Int($0) } ?? -1, attributes["Compressed"]?.lowercased() == "true")
        default:
            break
        }
    }

    private func endElement(_ name: String) {
        defer {
            path.removeLast()
            text = ""
            protectedValue = false
        }
        var value = text
        protectedBytes = nil
        if protectedValue {
            guard let sealed = Data(base64Encoded: text.trimmingWhitespace()) else {
                fail(.malformedFile("a protected value is not base64"))
                return
            }
            do {
                let revealed = try stream.apply(Array(sealed))
                protectedBytes = revealed
                value = String(decoding: revealed, as: UTF8.self)
            } catch {
                fail(error)
                return
            }
        }
        let parent = path.dropLast().last
        switch name {
        case "KeePassFile" where path.count == 1:
            closedRoot = true
        case "RecycleBinUUID" where parent == "Meta":
            recycleBinUUID = value
        case "RecycleBinEnabled" where parent == "Meta":
            recycleBinEnabled = value.lowercased() == "true"
        case "UUID" where parent == "Group" && entry == nil:
            if let last = groups.indices.last {
                groups[last].uuid = value
                if recycleBinEnabled, value == recycleBinUUID { groups[last].deleted = true }
            }
        case "Name" where parent == "Group" && entry == nil:
            if let last = groups.indices.last { groups[last].name = value }
        case "Group" where !groups.isEmpty && entry == nil:
            groups.removeLast()
        case "Key" where parent == "String" && path.count == entryDepth + 2:
            fieldKey = value
        case "Value" where parent == "String" && path.count == entryDepth + 2:
            fieldValue = (value, protectedValue)
        case "String" where path.count == entryDepth + 1 && entry != nil:
            if let fieldKey, let fieldValue {
                entry?.fields.append(KeePassEntry.Field(key: fieldKey, value: fieldValue.text, protected: fieldValue.protected))
            }
        case "Key" where parent == "Binary" && path.count == entryDepth + 2 && entry != nil:
            attachment?.name = value
        case "Binary" where path.count == entryDepth + 1 && entry != nil:
            if let name = attachment?.name {
                entry?.attachments.append(KeePassEntry.Attachment(name: name, bytes: attachment?.ref.flatMap { binaries[$0] }))
            }
            attachment = nil
        case "Binary" where entry == nil && parent == "Binaries":
            defer { binary = nil }
            guard let binary, binary.id >= 0, binaries[binary.id] == nil else {
                fail(.malformedFile("an attached file has no id, or one used twice"))
                return
            }
            guard var bytes = protectedBytes ?? Data(base64Encoded: text.trimmingWhitespace()).map(Array.init) else {
                fail(.malformedFile("an attached file is not base64"))
                return
            }
            if binary.compressed {
                do {
                    bytes = try KeePassDatabase.gunzip(bytes)
                } catch {
                    fail(error)
                    return
                }
            }
            binaryBytes += bytes.count
            guard binaryBytes <= KeePassDatabase.Limits.payloadByteCount else {
                fail(.tooLarge(limit: KeePassDatabase.Limits.payloadByteCount))
                return
            }
            binaries[binary.id] = bytes
        case "Tags" where path.count == entryDepth + 1 && entry != nil:
            entry?.tags = value.split(whereSeparator: { $0 == ";" || $0 == "," }).map(String.init)
        case "Entry" where path.count == entryDepth && entry != nil:
            // History entries are nested deeper than entryDepth; the recycle bin's are deleted.
            if let finished = entry, !(groups.last?.deleted ?? false) {
                guard entries.count < Self.entryLimit else {
                    fail(.malformedFile("more than \(Self.entryLimit) entries"))
                    return
                }
                entries.append(finished)
            }
            entry = nil
            entryDepth = 0
        default:
            break
        }
    }

    /// Records the first failure; the read stops after the current event.
    private func fail(_ error: InteropError) {
        if failure == nil { failure = error }
    }
}
