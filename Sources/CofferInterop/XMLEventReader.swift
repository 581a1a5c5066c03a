import CofferPlatform
import Foundation

/// One step through an XML document, in document order.
enum XMLEvent: Equatable {
    /// An element opens; an empty element (`<a/>`) opens and closes at once.
    case start(name: String, attributes: [String: String])
    /// Character data inside an element: text, CDATA, whitespace (the predefined entities and character references
    /// resolved).
    case text(String)
    case end(name: String)
}

/// Reads an XML document as a stream of ``XMLEvent``s through libxml2's `xmlTextReader`, loaded on first use.
///
/// Foundation's `XMLParser` is libxml2 as well, but on Linux it lives in FoundationXML, whose static link makes every
/// process of the executable load libxml2 and the system's ICU at start: about 2 ms of each `coffer` command, for
/// the one importer (KeePass) that reads XML. Loaded here with `dlopen`, libxml2 costs only the imports that use it.
/// The document is parsed without network access and without recovery from errors; a document type declaration is
/// refused (so no entity is ever expanded), libxml2's own limits (depth, text and name lengths) stand, and libxml2
/// reports nothing on standard error.
enum XMLEventReader {
    enum Failure: Error, Equatable {
        /// libxml2 is not installed (or lacks the reader's functions).
        case unavailable
        /// The document is not well-formed XML.
        case malformed
        /// The document has a document type declaration (a DTD, whose entities this reader never expands).
        case declaresDocumentType
    }

    /// Passes each event of `document` to `visit` until `visit` returns false or the document ends. Returns whether
    /// the whole document was read (false: `visit` stopped it); throws when it is not well-formed.
    static func read(_ document: [UInt8], _ visit: (XMLEvent) -> Bool) throws(Failure) -> Bool {
        guard let library = LibXML2.shared else { throw .unavailable }
        return try library.read(document, visit)
    }
}

/// The functions of libxml2's reader API (present and unchanged from 2.6 to 2.14).
final class LibXML2: @unchecked Sendable {
    // Immutable after init; libxml2's reader functions are safe on distinct readers once xmlInitParser has run.
    typealias Reader = OpaquePointer
    typealias Text = UnsafePointer<UInt8>

    static let shared = LibXML2()

    private let readerForMemory: @convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32) -> Reader?
    typealias ErrorHandler = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int32, UnsafeMutableRawPointer?) -> Void
    typealias SetErrorHandler = @convention(c) (Reader, ErrorHandler?, UnsafeMutableRawPointer?) -> Void
    private let setErrorHandler: SetErrorHandler?
    private let readNext: @convention(c) (Reader) -> Int32
    private let nodeType: @convention(c) (Reader) -> Int32
    private let constName: @convention(c) (Reader) -> Text?
    private let constValue: @convention(c) (Reader) -> Text?
    private let isEmptyElement: @convention(c) (Reader) -> Int32
    private let moveToNextAttribute: @convention(c) (Reader) -> Int32
    private let moveToElement: @convention(c) (Reader) -> Int32
    private let freeReader: @convention(c) (Reader) -> Void

    /// The sonames of libxml2 2.x before 2.14 and from 2.14 on, and Apple's.
    private static let names = ["libxml2.so.2", "libxml2.so.16", "/usr/lib/libxml2.2.dylib"]

    // XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NONET (xmlParserOption); entities are not substituted
    // (no XML_PARSE_NOENT) and no DTD is loaded (no XML_PARSE_DTDLOAD).
    private static let options: Int32 = 1 << 5 | 1 << 6 | 1 << 11

    // xmlReaderTypes
    private static let element: Int32 = 1
    private static let textNode: Int32 = 3
    private static let cdata: Int32 = 4
    private static let whitespace: Int32 = 13
    private static let significantWhitespace: Int32 = 14
    private static let endElement: Int32 = 15
    private static let entityReference: Int32 = 5
    private static let documentType: Int32 = 10

    private init?() {
        guard let library = DynamicLibrary(names: Self.names) else { return nil }
        func symbol<T>(_ name: String, _ type: T.Type) -> T? { library.function(name, as: type) }
        guard let initParser = symbol("xmlInitParser", (@convention(c) () -> Void).self),
            let readerForMemory = symbol("xmlReaderForMemory", type(of: self.readerForMemory)),
            let readNext = symbol("xmlTextReaderRead", type(of: self.readNext)),
            let nodeType = symbol("xmlTextReaderNodeType", type(of: self.nodeType)),
            let constName = symbol("xmlTextReaderConstName", type(of: self.constName)),
            let constValue = symbol("xmlTextReaderConstValue", type(of: self.constValue)),
            let isEmptyElement = symbol("xmlTextReaderIsEmptyElement", type(of: self.isEmptyElement)),
            let moveToNextAttribute = symbol("xmlTextReaderMoveToNextAttribute", type(of: self.moveToNextAttribute)),
            let moveToElement = symbol("xmlTextReaderMoveToElement", type(of: self.moveToElement)),
            let freeReader = symbol("xmlFreeTextReader", type(of: self.freeReader))
        else { return nil }
        // libxml2 asks for this once, before readers are used from several threads (`shared` runs it once).
        initParser()
        self.readerForMemory = readerForMemory
        // Optional: XML_PARSE_NOERROR already keeps most reports off standard error.
        self.setErrorHandler = symbol("xmlTextReaderSetErrorHandler", SetErrorHandler.self)
        self.readNext = readNext
        self.nodeType = nodeType
        self.constName = constName
        self.constValue = constValue
        self.isEmptyElement = isEmptyElement
        self.moveToNextAttribute = moveToNextAttribute
        self.moveToElement = moveToElement
        self.freeReader = freeReader
    }

    func read(_ document: [UInt8], _ visit: (XMLEvent) -> Bool) throws(XMLEventReader.Failure) -> Bool {
        guard let size = Int32(exactly: document.count) else { throw .malformed }
        // libxml2 reads the bytes in place for the whole parse: the reader lives and dies inside this closure.
        let outcome = document.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { characters -> Result<Bool, XMLEventReader.Failure> in
                guard let reader = readerForMemory(characters.baseAddress, size, nil, nil, Self.options) else {
                    return .failure(.malformed)
                }
                defer { freeReader(reader) }
                // Errors are the caller's to report, as one line: libxml2 would print them on standard error.
                setErrorHandler?(reader, { _, _, _, _ in }, nil)
                return Result { () throws(XMLEventReader.Failure) -> Bool in try events(reader, visit) }
            }
        }
        return try outcome.get()
    }

    private func events(_ reader: Reader, _ visit: (XMLEvent) -> Bool) throws(XMLEventReader.Failure) -> Bool {
        while true {
            switch readNext(reader) {
            case 1: break
            case 0: return true
            default: throw .malformed
            }
            let event: XMLEvent
            switch nodeType(reader) {
            case Self.element:
                let name = string(constName(reader))
                let empty = isEmptyElement(reader) == 1
                guard visit(.start(name: name, attributes: attributes(reader))) else { return false }
                guard empty else { continue }
                event = .end(name: name)
            case Self.textNode, Self.cdata, Self.whitespace, Self.significantWhitespace:
                event = .text(string(constValue(reader)))
            case Self.endElement:
                event = .end(name: string(constName(reader)))
            case Self.documentType, Self.entityReference:
                // Entities are how XML bombs work, and an unexpanded one would lose its text without a word.
                throw .declaresDocumentType
            default:
                continue
            }
            guard visit(event) else { return false }
        }
    }

    private func attributes(_ reader: Reader) -> [String: String] {
        var attributes: [String: String] = [:]
        while moveToNextAttribute(reader) == 1 {
            attributes[string(constName(reader))] = string(constValue(reader))
        }
        _ = moveToElement(reader)
        return attributes
    }

    private func string(_ text: Text?) -> String {
        text.map { String(cString: $0) } ?? ""
    }
}
