import CofferTestSupport
import Foundation
import Testing

@testable import CofferInterop

@Suite struct ZipArchiveTests {
    /// Python's zipfile wrote these (Fixtures/catima/make_catima.py); the CSV inside is compared with Python's own.
    @Test(arguments: ["catima_v2.zip", "catima_v2_stored.zip"])
    func readsPythonZips(file: String) throws {
        let archive = try ZipArchive(CatimaFixtures.bytes("catima", file))
        let entry = try #require(archive.entry(named: "catima.csv"))
        let csv = try archive.contents(of: entry)
        #expect(String(decoding: csv.prefix(10), as: UTF8.self) == "2\r\n\r\n_id\r\n")
        #expect(csv.count == entry.uncompressedSize)
        if file == "catima_v2.zip" {
            #expect(entry.method == 8)
            #expect(
                archive.entries.map(\.name) == [
                    "catima.csv", "card_1_front.png", "card_1_back.png", "card_2_front.png", "card_5_back.png", "card_6_icon.png",
                ])
        }
    }

    @Test func writerOutputIsReadBack() throws {
        var writer = ZipWriter()
        writer.add("a.txt", Array("alpha".utf8))
        writer.add("dir/b.bin", [0, 1, 2, 255])
        writer.add("empty", [])
        let archive = try ZipArchive(writer.finish())
        #expect(archive.entries.map(\.name) == ["a.txt", "dir/b.bin", "empty"])
        #expect(try archive.entries.map { try archive.contents(of: $0) } == [Array("alpha".utf8), [0, 1, 2, 255], []])
        #expect(archive.entry(named: "b.bin")?.name == "dir/b.bin")
    }

    /// CRC-32 against Python's zlib.crc32 / the check value in the CRC catalogue ("123456789" → CBF43926).
    @Test func crc32MatchesTheStandardCheckValue() {
        #expect(ZipArchive.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    static func valid() throws -> [UInt8] { try CatimaFixtures.bytes("catima", "catima_v2_stored.zip") }

    @Test func truncatedArchivesAreMalformed() throws {
        let data = try Self.valid()
        for length in [0, 3, 21, data.count / 2, data.count - 1] {
            #expect(throws: InteropError.self) {
                let archive = try ZipArchive(Array(data.prefix(length)))
                for entry in archive.entries { _ = try archive.contents(of: entry) }
            }
        }
    }

    /// Every one-field corruption a hostile archive could make, each refused with `malformedFile`, never a crash.
    @Test(arguments: [
        ("central directory offset", -6, UInt32(0xFFFF_FF00)),
        ("central directory size", -10, UInt32(0x7FFF_FFFF)),
    ])
    func wrongEndRecordFieldsAreMalformed(field: String, fromEnd: Int, value: UInt32) throws {
        var data = try Self.valid()
        Self.put32(&data, data.count + fromEnd, value)
        #expect(throws: InteropError.malformedFile("the ZIP central directory lies outside the file"), "\(field)") {
            try ZipArchive(data)
        }
    }

    @Test func wrongLocalHeaderOffsetIsMalformed() throws {
        var data = try Self.valid()
        let central = try #require(Self.lastIndex(of: [0x50, 0x4B, 1, 2], in: data))
        Self.put32(&data, central + 42, 0x00FF_FFFF)
        #expect(throws: InteropError.malformedFile("a ZIP entry's offset lies outside the file")) {
            try ZipArchive(data)
        }
    }

    @Test func wrongSizesAndCRCAreMalformed() throws {
        var data = try Self.valid()
        let central = try #require(Self.lastIndex(of: [0x50, 0x4B, 1, 2], in: data))
        var badCRC = data
        badCRC[central + 16] ^= 0xFF
        let archive = try ZipArchive(badCRC)
        #expect(throws: InteropError.malformedFile("a ZIP entry fails its CRC-32 check")) {
            try archive.contents(of: archive.entries[0])
        }
        Self.put32(&data, central + 20, 0x0010_0000)
        Self.put32(&data, central + 24, 0x0010_0000)
        let grown = try ZipArchive(data)
        #expect(throws: InteropError.malformedFile("a ZIP entry's data runs past the end of the file")) {
            try grown.contents(of: grown.entries[0])
        }
    }

    @Test func tooManyEntriesAreMalformed() throws {
        var writer = ZipWriter()
        for index in 0...ZipArchive.entryLimit { writer.add("f\(index)", []) }
        #expect(throws: InteropError.malformedFile("more than 10000 ZIP entries")) { try ZipArchive(writer.finish()) }
    }

    @Test(arguments: ["../x", "a/../../x", "/etc/x", "C:/x", "..\\x"])
    func escapingNamesAreMalformed(name: String) {
        var writer = ZipWriter()
        writer.add(name, [1])
        #expect(throws: InteropError.malformedFile("a ZIP entry name is absolute or climbs out of the archive")) {
            try ZipArchive(writer.finish())
        }
    }

    @Test func randomCorruptionNeverCrashes() throws {
        let original = try CatimaFixtures.bytes("catima", "catima_v2.zip")
        var random = SplitMix64(seed: 0x5A1F)
        for _ in 0..<2000 {
            var data = original
            for _ in 0...Int(random.next() % 4) {
                data[Int(random.next() % UInt64(data.count))] = UInt8(truncatingIfNeeded: random.next())
            }
            if let archive = try? ZipArchive(data) {
                for entry in archive.entries { _ = try? archive.contents(of: entry) }
            }
            _ = try? CatimaImporter.read(data, password: nil)
        }
    }

    static func put32(_ data: inout [UInt8], _ at: Int, _ value: UInt32) {
        for offset in 0..<4 { data[at + offset] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(offset))) }
    }

    static func lastIndex(of pattern: [UInt8], in data: [UInt8]) -> Int? {
        stride(from: data.count - pattern.count, through: 0, by: -1).first { Array(data[$0..<($0 + pattern.count)]) == pattern }
    }
}
