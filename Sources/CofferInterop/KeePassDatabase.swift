import CofferCrypto
import CZlib
import Crypto
import Foundation

/// A KeePass database file (KDBX 4.x, and the KDBX 3.1 that KeePassXC still writes for AES-KDF databases) opened
/// with a password: header, key derivation, integrity checks, payload cipher, gzip and inner header, up to the XML
/// and the stream that hides its protected values. `docs/FORMAT.md` ("KeePass") describes the layout as read.
///
/// The file is hostile until proven otherwise: every length is checked against what remains, the header's hash
/// before any key work, the KDF's cost against ``KeePassDatabase/Limits`` before any memory is allocated or any
/// round is run, the header HMAC (KDBX 4) or the stream start bytes (3.1) before the payload is trusted, and each
/// payload block's HMAC (4) or SHA-256 (3.1) before it is used.
struct KeePassDatabase {
    /// What the XML reader needs: the document and the protected-value stream.
    let xml: [UInt8]
    let innerStream: KeePassInnerStream
    /// KDBX 4's attached files, from the inner header, by the index entries refer to them by (`<Value Ref="N"/>`);
    /// KDBX 3.1 keeps them in the XML instead (`Meta/Binaries`), where the XML reader finds them.
    let binaries: [[UInt8]]

    static let signature1: UInt32 = 0x9AA2_D903
    static let signature2: UInt32 = 0xB54B_FB67
    static let aes256 = uuid("31c1f2e6bf714350be5805216afc5aff")
    static let chaCha20 = uuid("d6038a2b8b6f4cb5a524339a31dbb59a")
    static let twofish = uuid("ad68f29f576f4bb9a36ad47af965346c")
    /// AES-KDF as KDBX 4 names it, and the UUID KDBX 3.1 used for the same function.
    static let aesKDF = uuid("c9d9f39a628a4460bf740d08c18a4fea")
    static let aesKDFVersion3 = uuid("7c02bb8279a74ac0927d114a00648238")
    static let argon2d = uuid("ef636ddf8c29444b91f7a9a403e30a0c")
    static let argon2id = uuid("9e298b1956db4773b23dfc3ec6f0a1e6")

    /// Bounds on the work a file may ask for, checked before any is done.
    enum Limits {
        /// AES-KDF rounds: KeePassXC's one-second benchmark gives tens of millions on a fast machine (37 million
        /// for two seconds here); 200 million take about seven seconds of CPU here, so a hostile file costs seconds.
        static let aesRounds: ClosedRange<UInt64> = 1...(FuzzingFloor.active ? 16 : 200_000_000)
        /// The decompressed payload: four times the largest file read.
        static let payloadByteCount = 4 * importSizeLimit
    }

    private enum Cipher { case aes256, chaCha20 }

    private enum KDF {
        case aes(seed: [UInt8], rounds: UInt64)
        case argon2(Argon2.Variant, salt: [UInt8], parameters: Argon2.Parameters, secret: [UInt8], associatedData: [UInt8])
    }

    /// Whether `data` starts like a KeePass database of any version (KeePass 1.x's `.kdb` included, so that it is
    /// refused by name).
    static func looksLikeKeePass(_ data: [UInt8]) -> Bool {
        var reader = ByteReader(data[...])
        return (try? reader.u32()) == signature1
    }

    init(_ data: [UInt8], key: KeePassCompositeKey) throws(InteropError) {
        var reader = ByteReader(data[...])
        guard try reader.u32() == Self.signature1 else { throw .malformedFile("not a KeePass database (signature)") }
        let second = try reader.u32()
        guard second == Self.signature2 else {
            // 0xB54BFB65 is KeePass 1.x's .kdb, 0xB54BFB66 a KeePass 2 pre-release.
            throw .unsupportedVersion("KeePass signature \(String(second, radix: 16)) (only KDBX 3.1 and 4 are read)")
        }
        let minor = try reader.u16()
        let major = try reader.u16()
        switch major {
        case 4: self = try Self.openVersion4(data, reader: &reader, key: key)
        case 3 where minor >= 1: self = try Self.openVersion3(data, reader: &reader, key: key)
        default: throw .unsupportedVersion("KDBX \(major).\(minor) (only KDBX 3.1 and 4 are read)")
        }
    }

    private init(xml: [UInt8], innerStream: KeePassInnerStream, binaries: [[UInt8]] = []) {
        self.xml = xml
        self.innerStream = innerStream
        self.binaries = binaries
    }

    // MARK: KDBX 4

    private static func openVersion4(_ data: [UInt8], reader: inout ByteReader, key: KeePassCompositeKey) throws(InteropError) -> Self {
        // The fields are only framed here; none is interpreted before the header's hash is checked.
        var fields: [UInt8: [UInt8]] = [:]
        while true {
            let id = try reader.u8()
            let length = Int(try reader.u32())
            fields[id] = try reader.bytes(length)
            if id == 0 { break }
        }
        let headerEnd = reader.offset
        let headerHash = try reader.bytes(32)
        let headerMAC = try reader.bytes(32)
        guard Array(SHA256.hash(data: data[..<headerEnd])) == headerHash else {
            throw .malformedFile("the header fails its SHA-256 check (damaged)")
        }
        // 2 cipher, 3 compression, 4 master seed, 7 IV, 11 KDF parameters; comments and public custom data are
        // not needed to read entries.
        guard let cipherID = fields[2], let compression = fields[3], let masterSeed = fields[4], masterSeed.count == 32,
            let iv = fields[7], let kdfParameters = fields[11]
        else {
            throw .malformedFile("the header lacks its cipher, compression, master seed, IV or KDF parameters")
        }
        let cipher = try Self.cipher(cipherID)
        let compressed = try Self.compression(compression)
        let kdf = try Self.kdf(VariantDictionary(kdfParameters))
        let transformed = try Self.transform(key, kdf: kdf)
        let hmacBase = Array(SHA512.hash(data: masterSeed + transformed + [1]))
        guard
            HMAC<SHA256>.isValidAuthenticationCode(
                headerMAC, authenticating: data[..<headerEnd], using: blockKey(index: .max, base: hmacBase))
        else {
            throw key.refused
        }

        var ciphertext: [UInt8] = []
        var index: UInt64 = 0
        while true {
            let mac = try reader.bytes(32, "a payload block is cut short (truncated file)")
            let length = try reader.u32("a payload block is cut short (truncated file)")
            let block = try reader.bytes(Int(length), "a payload block is cut short (truncated file)")
            let message = withUnsafeBytes(of: index.littleEndian, Array.init) + withUnsafeBytes(of: length.littleEndian, Array.init) + block
            guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: message, using: blockKey(index: index, base: hmacBase))
            else {
                throw .malformedFile("payload block \(index) fails its HMAC check (damaged or altered)")
            }
            if length == 0 { break }
            ciphertext += block
            index += 1
        }
        let masterKey = Array(SHA256.hash(data: masterSeed + transformed))
        var payload = try Self.decrypt(ciphertext, cipher: cipher, key: masterKey, iv: iv)
        if compressed { payload = try gunzip(payload) }

        var inner = ByteReader(payload[...])
        var streamCipher: KeePassInnerStream.Cipher?
        var streamKey: [UInt8]?
        var binaries: [[UInt8]] = []
        while true {
            let id = try inner.u8()
            let length = Int(try inner.u32())
            let value = try inner.bytes(length)
            switch id {
            case 0: break
            case 1:
                guard value.count == 4 else { throw .malformedFile("the inner stream id is not 4 bytes") }
                streamCipher = try Self.streamCipher(value.reversed().reduce(0) { $0 << 8 | UInt32($1) })
            case 2: streamKey = value
            case 3:
                // An attached file: a flags byte (bit 0: protected in memory, which changes nothing on disk), then it.
                guard !value.isEmpty else { throw .malformedFile("an attached file in the inner header has no flags byte") }
                binaries.append(Array(value.dropFirst()))
            default: continue
            }
            if id == 0 { break }
        }
        guard let streamCipher, let streamKey else { throw .malformedFile("the inner header lacks its stream cipher or key") }
        return Self(
            xml: Array(payload[inner.offset...]), innerStream: KeePassInnerStream(cipher: streamCipher, key: streamKey), binaries: binaries)
    }

    /// HMAC key of block `index` (UInt64.max for the header): SHA-512 of the index and the 64-byte base key.
    private static func blockKey(index: UInt64, base: [UInt8]) -> SymmetricKey {
        SymmetricKey(data: Array(SHA512.hash(data: withUnsafeBytes(of: index.littleEndian, Array.init) + base)))
    }

    private static func kdf(_ parameters: VariantDictionary) throws(InteropError) -> KDF {
        guard let uuid = parameters.bytes("$UUID") else { throw .malformedFile("the KDF parameters lack $UUID") }
        switch uuid {
        case aesKDF, aesKDFVersion3:
            guard let seed = parameters.bytes("S"), seed.count == 32, let rounds = parameters.uint64("R") else {
                throw .malformedFile("the AES-KDF parameters lack a 32-byte seed or a round count")
            }
            return .aes(seed: seed, rounds: try checkedRounds(rounds))
        case argon2d, argon2id:
            guard let salt = parameters.bytes("S"), let lanes = parameters.uint64("P"),
                let memory = parameters.uint64("M"), let iterations = parameters.uint64("I"),
                let version = parameters.uint64("V")
            else {
                throw .malformedFile("the Argon2 parameters lack S, P, M, I or V")
            }
            guard version == 0x13 else {
                throw .unsupportedVersion("Argon2 version 0x\(String(version, radix: 16)) (only 0x13 is read)")
            }
            // Checked as integers from the file before any conversion, then by Argon2's own limits.
            let limits = Argon2.Limits.importing
            guard memory % 1024 == 0, memory / 1024 <= UInt64(limits.memoryKiB.upperBound),
                iterations <= UInt64(limits.iterations.upperBound), lanes <= UInt64(limits.lanes.upperBound)
            else {
                throw .kdfParametersOutOfBounds(
                    "Argon2 needs whole KiB of memory up to \(limits.memoryKiB.upperBound) KiB, at most "
                        + "\(limits.iterations.upperBound) passes and \(limits.lanes.upperBound) lanes")
            }
            let argon = Argon2.Parameters(iterations: Int(iterations), memoryKiB: Int(memory / 1024), lanes: Int(lanes))
            do {
                try limits.check(argon)
            } catch {
                throw .kdfParametersOutOfBounds(error.description)
            }
            return .argon2(
                uuid == argon2d ? .argon2d : .argon2id, salt: salt, parameters: argon,
                secret: parameters.bytes("K") ?? [], associatedData: parameters.bytes("A") ?? [])
        default:
            throw .unsupportedVersion("a key-derivation function other than AES-KDF, Argon2d and Argon2id")
        }
    }

    private static func checkedRounds(_ rounds: UInt64) throws(InteropError) -> UInt64 {
        guard Limits.aesRounds.contains(rounds) else {
            throw .kdfParametersOutOfBounds("AES-KDF rounds must be 1...\(Limits.aesRounds.upperBound)")
        }
        return rounds
    }

    /// The composite key run through the file's KDF.
    private static func transform(_ key: KeePassCompositeKey, kdf: KDF) throws(InteropError) -> [UInt8] {
        let composite = key.composite
        switch kdf {
        case .aes(let seed, let rounds):
            return try KeePassCrypto.aesKDF(composite, seed: seed, rounds: rounds)
        case .argon2(let variant, let salt, let parameters, let secret, let associatedData):
            do {
                return try Argon2.derive(
                    SecretBytes(composite), salt: salt, parameters: parameters, variant: variant, secret: secret,
                    associatedData: associatedData
                ).withUnsafeBytes { Array($0) }
            } catch {
                throw .kdfParametersOutOfBounds("Argon2 could not run (\(error.description))")
            }
        }
    }

    private static func cipher(_ value: [UInt8]) throws(InteropError) -> Cipher {
        switch value {
        case aes256: return .aes256
        case chaCha20: return .chaCha20
        case twofish: throw .unsupportedVersion("the Twofish cipher (AES-256 and ChaCha20 are read)")
        default: throw .unsupportedVersion("an unknown cipher (AES-256 and ChaCha20 are read)")
        }
    }

    private static func compression(_ value: [UInt8]) throws(InteropError) -> Bool {
        guard value == [0, 0, 0, 0] || value == [1, 0, 0, 0] else {
            throw .unsupportedVersion("a compression other than none and gzip")
        }
        return value[0] == 1
    }

    private static func streamCipher(_ id: UInt32) throws(InteropError) -> KeePassInnerStream.Cipher {
        guard let cipher = KeePassInnerStream.Cipher(rawValue: id) else {
            throw .unsupportedVersion("inner stream cipher \(id) (Salsa20 and ChaCha20 are read)")
        }
        return cipher
    }

    private static func decrypt(_ ciphertext: [UInt8], cipher: Cipher, key: [UInt8], iv: [UInt8]) throws(InteropError) -> [UInt8] {
        switch cipher {
        case .aes256: return try KeePassCrypto.decryptAESCBC(ciphertext, key: key, iv: iv)
        case .chaCha20:
            guard iv.count == 12 else { throw .malformedFile("the ChaCha20 IV is not 12 bytes") }
            return try KeePassCrypto.chaCha20(ciphertext, key: key, nonce: iv)
        }
    }

    // MARK: KDBX 3.1

    private static func openVersion3(_ data: [UInt8], reader: inout ByteReader, key: KeePassCompositeKey) throws(InteropError) -> Self {
        var fields: [UInt8: [UInt8]] = [:]
        while true {
            let id = try reader.u8()
            let length = Int(try reader.u16())
            fields[id] = try reader.bytes(length)
            if id == 0 { break }
        }
        guard let cipherID = fields[2], let masterSeed = fields[4], masterSeed.count == 32, let seed = fields[5],
            seed.count == 32, let roundBytes = fields[6], roundBytes.count == 8, let iv = fields[7],
            let streamKey = fields[8], let startBytes = fields[9], startBytes.count == 32,
            let streamID = fields[10], streamID.count == 4, let compression = fields[3]
        else {
            throw .malformedFile("the KDBX 3.1 header lacks a required field")
        }
        let cipher = try Self.cipher(cipherID)
        let compressed = try Self.compression(compression)
        let rounds = try checkedRounds(roundBytes.reversed().reduce(0) { $0 << 8 | UInt64($1) })
        let stream = try Self.streamCipher(streamID.reversed().reduce(0) { $0 << 8 | UInt32($1) })
        let transformed = try Self.transform(key, kdf: .aes(seed: seed, rounds: rounds))
        let masterKey = Array(SHA256.hash(data: masterSeed + transformed))
        let ciphertext = Array(data[reader.offset...])
        if case .aes256 = cipher, ciphertext.isEmpty || ciphertext.count % 16 != 0 {
            throw .malformedFile("the payload is cut short (truncated file)")
        }
        let plain: [UInt8]
        do {
            plain = try Self.decrypt(ciphertext, cipher: cipher, key: masterKey, iv: iv)
        } catch {
            // AES-CBC under the wrong key fails its padding check before the start bytes can be compared.
            if case .malformedFile = error { throw key.refused }
            throw error
        }
        guard plain.count >= 32, Array(plain[..<32]) == startBytes else { throw key.refused }

        var blocks = ByteReader(plain[32...])
        var payload: [UInt8] = []
        while true {
            let truncated = "a payload block is cut short (truncated file)"
            _ = try blocks.u32(truncated)
            let hash = try blocks.bytes(32, truncated)
            let length = Int(try blocks.u32(truncated))
            let block = try blocks.bytes(length, truncated)
            if length == 0 {
                guard hash.allSatisfy({ $0 == 0 }) else { throw .malformedFile("the last payload block is damaged") }
                break
            }
            guard Array(SHA256.hash(data: block)) == hash else {
                throw .malformedFile("a payload block fails its SHA-256 check (damaged)")
            }
            payload += block
        }
        if compressed { payload = try gunzip(payload) }
        return Self(xml: payload, innerStream: KeePassInnerStream(cipher: stream, key: streamKey))
    }

    // MARK: Helpers

    private static func uuid(_ hex: String) -> [UInt8] { Hex.decode(hex) ?? [] }

    /// Inflates a gzip member into at most ``Limits/payloadByteCount`` bytes.
    static func gunzip(_ input: [UInt8]) throws(InteropError) -> [UInt8] {
        var stream = z_stream()
        // 16 + MAX_WBITS: a gzip wrapper, not raw deflate or zlib.
        guard inflateInit2_(&stream, 16 + MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .malformedFile("the gzip decoder could not start")
        }
        defer { inflateEnd(&stream) }
        var input = input
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { inBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = uInt(inBuffer.count)
            while status == Z_OK, output.count <= Limits.payloadByteCount {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = uInt(outBuffer.count)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return outBuffer.count - Int(stream.avail_out)
                }
                output += chunk[..<produced]
                if status == Z_BUF_ERROR, produced > 0 { status = Z_OK }
            }
        }
        guard output.count <= Limits.payloadByteCount else {
            throw .tooLarge(limit: Limits.payloadByteCount)
        }
        guard status == Z_STREAM_END else { throw .malformedFile("the gzip payload is damaged or cut short") }
        return output
    }
}

/// KDBX 4's typed key–value list (KDF parameters): a 2-byte version, then entries of a type byte, a 4-byte key
/// length and key, a 4-byte value length and value, ended by a 0 type byte.
struct VariantDictionary {
    private var values: [String: (type: UInt8, bytes: [UInt8])] = [:]

    init(_ data: [UInt8]) throws(InteropError) {
        var reader = ByteReader(data[...])
        let version = try reader.u16()
        guard version >> 8 == 1 else { throw .unsupportedVersion("KDF parameter list version \(version >> 8)") }
        while true {
            let type = try reader.u8()
            if type == 0 { break }
            let key = try reader.bytes(Int(try reader.u32()))
            let value = try reader.bytes(Int(try reader.u32()))
            values[String(decoding: key, as: UTF8.self)] = (type, value)
        }
    }

    /// A byte-array (0x42) value.
    func bytes(_ key: String) -> [UInt8]? {
        guard let entry = values[key], entry.type == 0x42 else { return nil }
        return entry.bytes
    }

    /// An unsigned 32- or 64-bit (0x04, 0x05) value.
    func uint64(_ key: String) -> UInt64? {
        guard let entry = values[key], (entry.type == 0x04 && entry.bytes.count == 4) || (entry.type == 0x05 && entry.bytes.count == 8)
        else { return nil }
        return entry.bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }
}

/// Little-endian reads that never run past the end: a short read is ``InteropError/malformedFile(_:)``.
struct ByteReader {
    private let data: ArraySlice<UInt8>
    private(set) var offset: Int

    init(_ data: ArraySlice<UInt8>) {
        self.data = data
        offset = data.startIndex
    }

    mutating func bytes(_ count: Int, _ problem: String = "the file is cut short") throws(InteropError) -> [UInt8] {
        guard count >= 0, count <= data.endIndex - offset else { throw .malformedFile(problem) }
        defer { offset += count }
        return Array(data[offset..<(offset + count)])
    }

    mutating func u8() throws(InteropError) -> UInt8 { try bytes(1)[0] }

    mutating func u16() throws(InteropError) -> UInt16 {
        let b = try bytes(2)
        return UInt16(b[0]) | UInt16(b[1]) << 8
    }

    mutating func u32(_ problem: String = "the file is cut short") throws(InteropError) -> UInt32 {
        try bytes(4, problem).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// What opens a KeePass database: its password, the key from its key file (``KeePassKeyFile``), or both. The
/// composite key is SHA-256 of their concatenation: SHA-256 of the password's UTF-8 bytes, then the key file's key.
struct KeePassCompositeKey {
    let password: String?
    let keyFile: [UInt8]?

    var composite: [UInt8] {
        var parts: [UInt8] = []
        if let password { parts += Array(SHA256.hash(data: Array(password.utf8))) }
        if let keyFile { parts += keyFile }
        return Array(SHA256.hash(data: parts))
    }

    /// The error for a database this key does not open: a wrong password only where a password alone was tried, and
    /// then with what else the database may need.
    var refused: InteropError {
        switch (password, keyFile) {
        case (_?, nil): .wrongKey("the password does not open this database (if it also needs a key file, give it with --key-file)")
        case (nil, _?): .wrongKey("the key file does not open this database (if it also needs a password, type it when asked)")
        default: .wrongKey("the password and key file together do not open this database")
        }
    }
}
