import CZlib
import Foundation

/// A minimal reader for the ZIP files other apps export (Catima backups, Apple Wallet passes, Authenticator Plus):
/// stored and deflated entries, plain or encrypted with a password (traditional PKWARE encryption or WinZip AES,
/// ``ZipDecryption``), no ZIP64. Archives are hostile, so every count, offset and size is checked against the file
/// and against fixed limits before anything is allocated; any breach is `InteropError.malformedFile`.
struct ZipArchive {
    /// One file in the archive, as the central directory describes it.
    struct Entry: Equatable {
        let name: String
        /// The compression method of the data (for a WinZip AES entry, the one inside its encryption).
        let method: UInt16
        let crc32: UInt32
        let compressedSize: Int
        let uncompressedSize: Int
        let localHeaderOffset: Int
        var flags: UInt16 = 0
        var modificationTime: UInt16 = 0
        /// Set for WinZip AES entries: key strength (1–3: AES-128, -192, -256) and vendor version (AE-1, AE-2).
        var aes: (strength: UInt8, version: UInt16)? = nil

        var isEncrypted: Bool { flags & 1 != 0 }

        static func == (lhs: Entry, rhs: Entry) -> Bool {
            lhs.name == rhs.name && lhs.method == rhs.method && lhs.crc32 == rhs.crc32 && lhs.compressedSize == rhs.compressedSize
                && lhs.uncompressedSize == rhs.uncompressedSize && lhs.localHeaderOffset == rhs.localHeaderOffset
                && lhs.flags == rhs.flags && lhs.aes?.strength == rhs.aes?.strength && lhs.aes?.version == rhs.aes?.version
        }

        /// The name's last path segment (Catima reads entries by it).
        var baseName: String { name.split(separator: "/").last.map(String.init) ?? name }
    }

    static let entryLimit = 10_000
    static let totalSizeLimit = 64 << 20

    let entries: [Entry]
    private let bytes: [UInt8]
    /// What encrypted entries are opened with when `contents(of:password:)` is given none.
    var password: String?

    /// Whether `bytes` starts like a ZIP file (a local header, or the end record of an empty archive).
    static func looksLikeZip(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 4 && bytes[0] == 0x50 && bytes[1] == 0x4B
            && ((bytes[2] == 3 && bytes[3] == 4) || (bytes[2] == 5 && bytes[3] == 6))
    }

    init(_ bytes: [UInt8]) throws(InteropError) {
        self.bytes = bytes
        let end = try Self.endRecord(bytes)
        let count = Int(Self.u16(bytes, end + 10))
        let directorySize = Int(Self.u32(bytes, end + 12))
        let directoryOffset = Int(Self.u32(bytes, end + 16))
        guard Self.u16(bytes, end + 4) == 0, Self.u16(bytes, end + 6) == 0,
            Int(Self.u16(bytes, end + 8)) == count
        else { throw .malformedFile("multi-part ZIP archives are not supported") }
        guard count != 0xFFFF, directorySize != 0xFFFF_FFFF, directoryOffset != 0xFFFF_FFFF else {
            throw .malformedFile("ZIP64 archives are not supported")
        }
        guard count <= Self.entryLimit else { throw .malformedFile("more than \(Self.entryLimit) ZIP entries") }
        guard directoryOffset + directorySize <= end else {
            throw .malformedFile("the ZIP central directory lies outside the file")
        }

        var entries: [Entry] = []
        entries.reserveCapacity(count)
        var position = directoryOffset
        var total = 0
        let directoryEnd = directoryOffset + directorySize
        for _ in 0..<count {
            guard position + 46 <= directoryEnd, Self.u32(bytes, position) == 0x0201_4B50 else {
                throw .malformedFile("a ZIP central directory record is damaged")
            }
            let flags = Self.u16(bytes, position + 8)
            var method = Self.u16(bytes, position + 10)
            let modificationTime = Self.u16(bytes, position + 12)
            let crc = Self.u32(bytes, position + 16)
            let compressed = Int(Self.u32(bytes, position + 20))
            let uncompressed = Int(Self.u32(bytes, position + 24))
            let nameLength = Int(Self.u16(bytes, position + 28))
            let extraLength = Int(Self.u16(bytes, position + 30))
            let commentLength = Int(Self.u16(bytes, position + 32))
            let localOffset = Int(Self.u32(bytes, position + 42))
            let nameEnd = position + 46 + nameLength
            guard nameEnd + extraLength + commentLength <= directoryEnd else {
                throw .malformedFile("a ZIP central directory record runs past the directory")
            }
            var aes: (strength: UInt8, version: UInt16)?
            if method == 99 {
                // WinZip AES: the extra field 0x9901 holds the vendor version, key strength and the real method.
                guard flags & 1 != 0, let field = Self.extraField(0x9901, in: bytes[nameEnd..<(nameEnd + extraLength)]), field.count == 7,
                    field[field.startIndex + 2] == UInt8(ascii: "A"), field[field.startIndex + 3] == UInt8(ascii: "E"),
                    (1...3).contains(field[field.startIndex + 4])
                else { throw .malformedFile("a WinZip AES entry lacks its AES extra field") }
                let version = UInt16(field[field.startIndex]) | UInt16(field[field.startIndex + 1]) << 8
                guard version == 1 || version == 2 else { throw .malformedFile("WinZip AES version \(version) is not supported") }
                aes = (field[field.startIndex + 4], version)
                method = UInt16(field[field.startIndex + 5]) | UInt16(field[field.startIndex + 6]) << 8
            }
            guard method == 0 || method == 8 else {
                throw .malformedFile("ZIP compression method \(method) is not supported")
            }
            let name = try Self.checkedName(Array(bytes[(position + 46)..<nameEnd]))
            total += uncompressed
            guard total <= Self.totalSizeLimit else {
                throw .malformedFile("the ZIP entries expand to more than \(Self.totalSizeLimit) bytes")
            }
            guard method != 0 || flags & 1 != 0 || compressed == uncompressed else {
                throw .malformedFile("a stored ZIP entry's sizes disagree")
            }
            guard localOffset + 30 <= directoryOffset else {
                throw .malformedFile("a ZIP entry's offset lies outside the file")
            }
            entries.append(
                Entry(
                    name: name, method: method, crc32: crc, compressedSize: compressed, uncompressedSize: uncompressed,
                    localHeaderOffset: localOffset, flags: flags, modificationTime: modificationTime, aes: aes))
            position = nameEnd + extraLength + commentLength
        }
        self.entries = entries
    }

    /// The first entry whose last path segment is `baseName`.
    func entry(named baseName: String) -> Entry? {
        entries.first { $0.baseName == baseName }
    }

    /// Whether any entry is encrypted (a password is needed to read it).
    var isEncrypted: Bool { entries.contains(where: \.isEncrypted) }

    /// The entry's bytes, decrypted with `password` when it is encrypted, decompressed and checked against its CRC-32
    /// (a WinZip AE-2 entry, which carries no CRC, is checked by its authentication code instead).
    func contents(of entry: Entry, password: String? = nil) throws(InteropError) -> [UInt8] {
        let local = entry.localHeaderOffset
        guard local + 30 <= bytes.count, Self.u32(bytes, local) == 0x0403_4B50 else {
            throw .malformedFile("a ZIP local header is damaged")
        }
        let dataStart = local + 30 + Int(Self.u16(bytes, local + 26)) + Int(Self.u16(bytes, local + 28))
        guard dataStart + entry.compressedSize <= bytes.count else {
            throw .malformedFile("a ZIP entry's data runs past the end of the file")
        }
        var data = bytes[dataStart..<(dataStart + entry.compressedSize)]
        if entry.isEncrypted {
            guard let password = password ?? self.password else { throw .passwordRequired }
            data = try ZipDecryption.decrypt(data, entry: entry, password: password)[...]
        }
        let output: [UInt8]
        do throws(InteropError) {
            output = entry.method == 0 ? Array(data) : try Self.inflate(data, expected: entry.uncompressedSize)
            guard entry.aes?.version == 2 || Self.crc32(output) == entry.crc32 else {
                throw .malformedFile("a ZIP entry fails its CRC-32 check")
            }
        } catch {
            // The traditional scheme checks a password by one byte: 1 in 256 wrong ones get this far.
            if entry.isEncrypted, entry.aes == nil { throw .wrongPassword }
            throw error
        }
        guard entry.method != 0 || output.count == entry.uncompressedSize else {
            throw .malformedFile("a stored ZIP entry's sizes disagree")
        }
        return output
    }

    /// The data of extra field `id` in a central directory record's extra fields.
    private static func extraField(_ id: UInt16, in extra: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        var position = extra.startIndex
        while position + 4 <= extra.endIndex {
            let fieldID = UInt16(extra[position]) | UInt16(extra[position + 1]) << 8
            let size = Int(UInt16(extra[position + 2]) | UInt16(extra[position + 3]) << 8)
            guard position + 4 + size <= extra.endIndex else { return nil }
            if fieldID == id { return extra[(position + 4)..<(position + 4 + size)] }
            position += 4 + size
        }
        return nil
    }

    /// Inflates a raw deflate stream into at most `expected` bytes; a stream that yields more or fewer is refused,
    /// which is what stops a bomb whose header understates its size.
    private static func inflate(_ input: ArraySlice<UInt8>, expected: Int) throws(InteropError) -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .malformedFile("the deflate decoder could not start")
        }
        defer { inflateEnd(&stream) }
        // One spare byte shows whether the stream holds more than the header claims.
        var output = [UInt8](repeating: 0, count: expected + 1)
        var input = Array(input)
        let status: Int32 = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                return CZlib.inflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END, Int(stream.total_out) == expected else {
            throw .malformedFile("a ZIP entry's deflate data is damaged or does not match its size")
        }
        output.removeLast()
        return output
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        data.withUnsafeBufferPointer { UInt32(CZlib.crc32(0, $0.baseAddress, uInt($0.count))) }
    }

    /// Finds the end-of-central-directory record, searching back over the longest possible archive comment.
    private static func endRecord(_ bytes: [UInt8]) throws(InteropError) -> Int {
        guard bytes.count >= 22 else { throw .malformedFile("too short to be a ZIP archive") }
        let lowest = max(0, bytes.count - 22 - 0xFFFF)
        var position = bytes.count - 22
        while position >= lowest {
            if u32(bytes, position) == 0x0605_4B50, position + 22 + Int(u16(bytes, position + 20)) == bytes.count {
                return position
            }
            position -= 1
        }
        throw .malformedFile("no ZIP end-of-central-directory record")
    }

    /// Entry names must be relative paths that stay inside the archive.
    private static func checkedName(_ raw: [UInt8]) throws(InteropError) -> String {
        guard let name = String(validating: raw, as: UTF8.self), !name.isEmpty, !name.contains("\0") else {
            throw .malformedFile("a ZIP entry name is not valid UTF-8")
        }
        let normalised = name.replacingOccurrences(of: "\\", with: "/")
        let segments = normalised.split(separator: "/", omittingEmptySubsequences: false)
        guard !normalised.hasPrefix("/"), !(segments.first?.contains(":") ?? false), !segments.contains("..") else {
            throw .malformedFile("a ZIP entry name is absolute or climbs out of the archive")
        }
        return name
    }

    fileprivate static func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
        UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    fileprivate static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(u16(bytes, at)) | UInt32(u16(bytes, at + 2)) << 16
    }
}

/// Writes a ZIP archive of stored (uncompressed) entries: enough for exports other apps read back, and simple enough
/// to check by eye. Entries are limited to 4 GiB each (no ZIP64), far beyond any export Coffer makes.
struct ZipWriter {
    private var body: [UInt8] = []
    private var directory: [UInt8] = []
    private var count = 0

    mutating func add(_ name: String, _ data: [UInt8]) {
        let nameBytes = Array(name.utf8)
        let crc = ZipArchive.crc32(data)
        let offset = UInt32(body.count)
        // Version 2.0, UTF-8 names (flag bit 11), stored, a fixed 1980-01-01 timestamp so exports are reproducible.
        var local: [UInt8] = []
        Self.put32(&local, 0x0403_4B50)
        Self.put16(&local, 20); Self.put16(&local, 0x0800); Self.put16(&local, 0)
        Self.put16(&local, 0); Self.put16(&local, 0x21)
        Self.put32(&local, crc); Self.put32(&local, UInt32(data.count)); Self.put32(&local, UInt32(data.count))
        Self.put16(&local, UInt16(nameBytes.count)); Self.put16(&local, 0)
        body += local + nameBytes + data

        Self.put32(&directory, 0x0201_4B50)
        Self.put16(&directory, 20); Self.put16(&directory, 20)
        Self.put16(&directory, 0x0800); Self.put16(&directory, 0)
        Self.put16(&directory, 0); Self.put16(&directory, 0x21)
        Self.put32(&directory, crc)
        Self.put32(&directory, UInt32(data.count)); Self.put32(&directory, UInt32(data.count))
        Self.put16(&directory, UInt16(nameBytes.count)); Self.put16(&directory, 0); Self.put16(&directory, 0)
        Self.put16(&directory, 0); Self.put16(&directory, 0); Self.put32(&directory, 0)
        Self.put32(&directory, offset)
        directory += nameBytes
        count += 1
    }

    func finish() -> [UInt8] {
        var end: [UInt8] = []
        Self.put32(&end, 0x0605_4B50)
        Self.put16(&end, 0); Self.put16(&end, 0)
        Self.put16(&end, UInt16(count)); Self.put16(&end, UInt16(count))
        Self.put32(&end, UInt32(directory.count)); Self.put32(&end, UInt32(body.count))
        Self.put16(&end, 0)
        return body + directory + end
    }

    private static func put16(_ out: inout [UInt8], _ value: UInt16) {
        out.append(UInt8(value & 0xFF)); out.append(UInt8(value >> 8))
    }

    private static func put32(_ out: inout [UInt8], _ value: UInt32) {
        put16(&out, UInt16(value & 0xFFFF)); put16(&out, UInt16(value >> 16))
    }
}
