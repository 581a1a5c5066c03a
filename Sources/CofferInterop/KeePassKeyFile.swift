import CofferCrypto
import Crypto
import Foundation

/// The key a KeePass key file adds to the composite key, read as KeePass 2 and KeePassXC read one: an XML key file
/// (version 1.0 holds the key in base64; 2.0 in hex, with the first four bytes of the key's SHA-256 as a check), else a
/// file of exactly 32 bytes (the key itself), else 64 hex digits (the key in hex), else any file at all, whose SHA-256
/// is the key.
enum KeePassKeyFile {
    /// Key files are small; a larger file is refused before it is hashed.
    static let sizeLimit = 16 << 20

    static func key(_ file: [UInt8]) throws(InteropError) -> [UInt8] {
        guard file.count <= sizeLimit else { throw .tooLarge(limit: sizeLimit) }
        if let key = try xmlKey(file) { return key }
        if file.count == 32 { return file }
        if file.count == 64, let text = String(validating: file, as: UTF8.self), let key = Hex.decode(text) { return key }
        return Array(SHA256.hash(data: file))
    }

    /// The key of an XML key file, or nil when the file is not one (KeePass then hashes the file whole).
    private static func xmlKey(_ file: [UInt8]) throws(InteropError) -> [UInt8]? {
        guard AndroidPreferences.looksLikeXML(file) else { return nil }
        var path: [String] = []
        var version = "", data = ""
        var hash: String?
        var isKeyFile = false
        do {
            _ = try XMLEventReader.read(file) { event in
                switch event {
                case .start(let name, let attributes):
                    path.append(name)
                    if path == ["KeyFile"] { isKeyFile = true }
                    if path == ["KeyFile", "Key", "Data"] { hash = attributes["Hash"] }
                case .text(let text):
                    if path == ["KeyFile", "Meta", "Version"] { version += text }
                    if path == ["KeyFile", "Key", "Data"] { data += text }
                case .end:
                    path.removeLast()
                }
                return isKeyFile
            }
        } catch .unavailable {
            throw .readerUnavailable("reading an XML key file needs libxml2, which is not installed")
        } catch {
            return nil
        }
        guard isKeyFile else { return nil }
        let digits = data.filter { !$0.isWhitespace }
        switch version.trimmingWhitespace() {
        case "1.0", "1.00":
            guard let key = Data(base64Encoded: digits), !key.isEmpty else { throw .malformedFile("the key file's key is not base64") }
            return Array(key)
        case "2.0", "2.00":
            guard let key = Hex.decode(digits), !key.isEmpty else { throw .malformedFile("the key file's key is not hex") }
            if let hash, Hex.decode(hash.filter { !$0.isWhitespace }) != Array(SHA256.hash(data: key).prefix(4)) {
                throw .malformedFile("the key file is damaged: its key does not match its check hash")
            }
            return key
        default:
            throw .unsupportedVersion("key file \(version.trimmingWhitespace())")
        }
    }
}
