import CofferCrypto
import CofferModel
import CofferOTP

/// Reads FreeOTP's tokens: the app's own `tokens.xml` (FreeOTP 1.x, and FreeOTP+'s internal file), and the encrypted
/// backup FreeOTP 2 writes (`externalBackup.xml`, which despite its name is not XML).
///
/// `tokens.xml` is Android shared preferences: one string per token, named `issuer:label`, holding the same token JSON
/// as FreeOTP+'s export (``FreeOTPPlusImporter``), and `tokenOrder`, which only orders the list.
///
/// The FreeOTP 2 backup is a Java-serialised `java.util.HashMap<String, String>` (``JavaSerializedMap``). Its
/// `masterKey` is JSON: `mAlgorithm` (`PBKDF2withHmacSHA1` or `PBKDF2withHmacSHA512`), `mIterations` (the app writes
/// 100,000), `mSalt` (signed bytes), and `mEncryptedKey`, an AES-GCM box: `mCipherText` (ciphertext and 16-byte tag,
/// signed bytes), `mParameters` (DER: the 12-byte nonce as an OCTET STRING, alone or in a SEQUENCE with the tag
/// length) and `mToken`, whose UTF-8 is the associated data (`AES`). PBKDF2 of the password (32 bytes) opens the
/// master key. Each token is two entries: `UUID` → `{"key": "<AES-GCM box JSON>"}`, its secret sealed under the master
/// key with `mToken` (`HmacSHA1`…) as associated data, and `UUID-token` → the token JSON without its secret.
public enum FreeOTPImporter: Importer {
    public static let formatName = "freeotp"

    public static func read(_ data: [UInt8], password: String?) throws(InteropError) -> ImportResult {
        try OTPImport.checkSize(data)
        if data.starts(with: JavaSerializedMap.magic) {
            return try readBackup(try JavaSerializedMap.strings(data), password: password)
        }
        guard AndroidPreferences.looksLikeXML(data) else {
            throw .malformedFile("a FreeOTP file is its tokens.xml or a FreeOTP 2 backup (externalBackup.xml)")
        }
        var result = ImportResult()
        for (index, (name, value)) in try AndroidPreferences.strings(data, format: "FreeOTP").enumerated() where name != "tokenOrder" {
            let token = JSONValue.parse(Array(value.utf8)) ?? .null
            do throws(ImportEntryError) {
                result.items.append(.otp(try FreeOTPPlusImporter.item(token)))
            } catch {
                result.problems.append(ImportProblem(entry: entryName(token, key: name, index: index), reason: error.reason))
            }
        }
        return result
    }

    private static func readBackup(_ map: [String: String], password: String?) throws(InteropError) -> ImportResult {
        guard let masterText = map["masterKey"], let master = JSONValue.parse(Array(masterText.utf8)), case .object = master else {
            throw .malformedFile("the backup has no masterKey")
        }
        guard let password else { throw .passwordRequired }
        let masterKey = try openMasterKey(master, password: password)
        var result = ImportResult()
        // HashMap order is no order: the tokens come back in the order of their names, which is stable.
        let tokenKeys = map.keys.filter { $0.hasSuffix("-token") }.sorted()
        for (index, key) in tokenKeys.enumerated() {
            let token = map[key].flatMap { JSONValue.parse(Array($0.utf8)) } ?? .null
            do throws(ImportEntryError) {
                guard case .object(var members) = token else { throw ImportEntryError("the token is not a JSON object") }
                let id = String(key.dropLast("-token".count))
                guard let sealedText = map[id] else { throw ImportEntryError("the token's secret is missing from the backup") }
                guard let wrapper = JSONValue.parse(Array(sealedText.utf8)), let boxText = try wrapper.string("key"),
                    let box = JSONValue.parse(Array(boxText.utf8)), case .object = box
                else { throw ImportEntryError("the token's secret is not a sealed key") }
                guard let secret = try open(box, key: masterKey) else {
                    throw ImportEntryError("the token's secret does not decrypt: the backup is damaged")
                }
                members["secret"] = .array(secret.map { .integer(Int64(Int8(bitPattern: $0))) })
                result.items.append(.otp(try FreeOTPPlusImporter.item(.object(members))))
            } catch {
                result.problems.append(ImportProblem(entry: entryName(token, key: key, index: index), reason: error.reason))
            }
        }
        return result
    }

    private static func openMasterKey(_ master: JSONValue, password: String) throws(InteropError) -> SecretBytes {
        let hash: PBKDF2.Hash
        switch master["mAlgorithm"]?.stringValue {
        case "PBKDF2withHmacSHA1": hash = .sha1
        case "PBKDF2withHmacSHA512": hash = .sha512
        default: throw .malformedFile("the master key's algorithm is not PBKDF2withHmacSHA1 or PBKDF2withHmacSHA512")
        }
        guard let iterations = master["mIterations"]?.intValue else { throw .malformedFile("the master key has no mIterations") }
        guard OTPImport.pbkdf2IterationRange.contains(iterations) else {
            throw .kdfParametersOutOfBounds(
                "PBKDF2 iterations must be \(OTPImport.pbkdf2IterationRange.lowerBound)...\(OTPImport.pbkdf2IterationRange.upperBound)")
        }
        guard let saltValue = master["mSalt"], let salt = try? FreeOTPPlusImporter.secretBytes(saltValue), !salt.isEmpty,
            let box = master["mEncryptedKey"], case .object = box
        else { throw .malformedFile("the master key's salt or sealed key is missing") }
        let passwordKey = try OTPImport.pbkdf2(password, salt: salt, hash: hash, iterations: iterations)
        let opened: [UInt8]?
        do throws(ImportEntryError) {
            opened = try open(box, key: passwordKey)
        } catch {
            throw .malformedFile("the sealed master key is damaged: \(error.reason)")
        }
        // GCM's tag is the only check there is: a wrong password and a damaged master key look the same.
        guard let opened, opened.count == 32 else { throw .wrongPassword }
        return SecretBytes(opened)
    }

    /// Opens a FreeOTP AES-GCM box (`mCipher` `AES/GCM/NoPadding`); nil when its tag does not verify.
    private static func open(_ box: JSONValue, key: SecretBytes) throws(ImportEntryError) -> [UInt8]? {
        guard try box.string("mCipher") == "AES/GCM/NoPadding" else { throw ImportEntryError("the cipher is not AES/GCM/NoPadding") }
        let sealed = try FreeOTPPlusImporter.secretBytes(box["mCipherText"])
        let parameters = try FreeOTPPlusImporter.secretBytes(box["mParameters"])
        guard let nonce = gcmNonce(fromDER: parameters) else { throw ImportEntryError("the cipher parameters hold no 12-byte nonce") }
        let associatedData = Array((try box.string("mToken") ?? "").utf8)
        return OTPImport.openAESGCM(sealed, key: key, nonce: nonce, associatedData: associatedData)
    }

    /// The nonce in Java's encoded `GCMParameterSpec`: `SEQUENCE { OCTET STRING nonce, INTEGER tagBits }`, or the
    /// bare OCTET STRING older Android versions wrote.
    static func gcmNonce(fromDER der: [UInt8]) -> [UInt8]? {
        var bytes = der[...]
        if bytes.first == 0x30, bytes.count >= 2, Int(bytes[bytes.startIndex + 1]) == bytes.count - 2 {
            bytes = bytes.dropFirst(2)
        }
        guard bytes.count >= 2 + OTPImport.gcmNonceByteCount, bytes.first == 0x04,
            bytes[bytes.startIndex + 1] == UInt8(OTPImport.gcmNonceByteCount)
        else { return nil }
        return Array(bytes.dropFirst(2).prefix(OTPImport.gcmNonceByteCount))
    }

    private static func entryName(_ token: JSONValue, key: String, index: Int) -> String {
        let issuer = token["issuerExt"]?.stringValue, label = token["label"]?.stringValue
        if OTPImport.nonEmpty(issuer) != nil || OTPImport.nonEmpty(label) != nil {
            return OTPImport.entryName(issuer: issuer, account: label, index: index)
        }
        return key.isEmpty ? "entry \(index + 1)" : key
    }
}

/// A Java-serialised `java.util.HashMap` of strings (`ObjectOutputStream`, protocol version 2), read as the Java
/// Object Serialization Specification lays it out: the class description (only `java.util.HashMap`, with its
/// primitive fields), their values, the block of capacity and size, then that many key and value strings — a string
/// is `TC_STRING` (u16 length), `TC_LONGSTRING` (u64 length) or `TC_REFERENCE` to one read before, in Java's modified
/// UTF-8. Anything else is refused: no other class is ever instantiated or described.
enum JavaSerializedMap {
    static let magic: [UInt8] = [0xAC, 0xED, 0x00, 0x05]
    static let entryLimit = 100_000

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func byte() throws(InteropError) -> UInt8 {
            guard offset < bytes.count else { throw .malformedFile("the backup ends early") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func take(_ count: Int) throws(InteropError) -> ArraySlice<UInt8> {
            guard count >= 0, count <= bytes.count - offset else { throw .malformedFile("the backup ends early") }
            defer { offset += count }
            return bytes[offset..<(offset + count)]
        }

        mutating func integer(_ width: Int) throws(InteropError) -> UInt64 {
            try take(width).reduce(0) { $0 << 8 | UInt64($1) }
        }
    }

    static func strings(_ bytes: [UInt8]) throws(InteropError) -> [String: String] {
        var reader = Reader(bytes: bytes)
        guard Array(try reader.take(4)) == magic else { throw .malformedFile("not a Java serialisation stream") }
        guard try reader.byte() == 0x73, try reader.byte() == 0x72 else { throw .malformedFile("the backup is not a serialised map") }
        let className = try reader.take(Int(try reader.integer(2)))
        guard Array(className) == Array("java.util.HashMap".utf8) else { throw .malformedFile("the backup is not a serialised HashMap") }
        _ = try reader.take(8)  // serialVersionUID
        _ = try reader.byte()  // flags
        let fieldCount = Int(try reader.integer(2))
        var valueBytes = 0
        for _ in 0..<fieldCount {
            let type = try reader.byte()
            _ = try reader.take(Int(try reader.integer(2)))
            switch type {
            case UInt8(ascii: "B"), UInt8(ascii: "Z"): valueBytes += 1
            case UInt8(ascii: "C"), UInt8(ascii: "S"): valueBytes += 2
            case UInt8(ascii: "F"), UInt8(ascii: "I"): valueBytes += 4
            case UInt8(ascii: "D"), UInt8(ascii: "J"): valueBytes += 8
            default: throw .malformedFile("the map's class has a field that is not a number")
            }
        }
        // No class annotations (TC_ENDBLOCKDATA), no superclass (TC_NULL).
        guard try reader.byte() == 0x78, try reader.byte() == 0x70 else { throw .malformedFile("the map's class description is not HashMap's") }
        _ = try reader.take(valueBytes)
        guard try reader.byte() == 0x77, try reader.byte() >= 8 else { throw .malformedFile("the map has no size") }
        _ = try reader.take(4)  // capacity
        let size = Int(try reader.integer(4))
        guard (0...entryLimit).contains(size) else { throw .malformedFile("the map holds more than \(entryLimit) entries") }
        // Handles: the class description, the map, then each new string in order.
        var handles: [String?] = [nil, nil]
        func string() throws(InteropError) -> String {
            let tag = try reader.byte()
            let length: Int
            switch tag {
            case 0x74: length = Int(try reader.integer(2))
            case 0x7C:
                let long = try reader.integer(8)
                guard long <= UInt64(bytes.count) else { throw .malformedFile("the backup ends early") }
                length = Int(long)
            case 0x71:
                let handle = Int(try reader.integer(4)) - 0x7E0000
                guard handles.indices.contains(handle), let text = handles[handle] else {
                    throw .malformedFile("the map refers to something that is not a string")
                }
                return text
            default:
                throw .malformedFile("the map holds something other than strings")
            }
            guard let text = modifiedUTF8(try reader.take(length)) else { throw .malformedFile("a string is not modified UTF-8") }
            handles.append(text)
            return text
        }
        var map: [String: String] = [:]
        for _ in 0..<size {
            let key = try string()
            map[key] = try string()
        }
        return map
    }

    /// Java's modified UTF-8: UTF-8 with U+0000 as `C0 80` and characters beyond the BMP as two three-byte surrogates.
    static func modifiedUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        func continuation(_ at: Int) -> UInt16? {
            guard at < bytes.endIndex, bytes[at] & 0xC0 == 0x80 else { return nil }
            return UInt16(bytes[at] & 0x3F)
        }
        while index < bytes.endIndex {
            let lead = bytes[index]
            switch lead {
            case 0x01...0x7F:
                units.append(UInt16(lead))
                index += 1
            case 0xC0...0xDF:
                guard let next = continuation(index + 1) else { return nil }
                units.append(UInt16(lead & 0x1F) << 6 | next)
                index += 2
            case 0xE0...0xEF:
                guard let second = continuation(index + 1), let third = continuation(index + 2) else { return nil }
                units.append(UInt16(lead & 0x0F) << 12 | second << 6 | third)
                index += 3
            default:
                return nil
            }
        }
        var text = ""
        var iterator = units.makeIterator()
        var decoder = UTF16()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): text.unicodeScalars.append(scalar)
            case .emptyInput: return text
            case .error: return nil
            }
        }
    }
}
