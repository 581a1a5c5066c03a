import CofferTestSupport
import Foundation
import Testing

/// What every `coffer` process pays for before it does anything: the shared libraries the loader maps and relocates.
@Suite("coffer start-up")
struct StartupTests {
    /// libxml2 (with the system's ICU and liblzma) cost each command about 2 ms when FoundationXML was linked for the
    /// KeePass importer; the importer now loads it when it runs. Debug builds name FoundationXML's own library,
    /// release builds (Foundation linked in) libxml2.
    @Test("the executable needs no XML library at start: KeePass import loads libxml2 when it runs")
    func noXMLLibraryAtStart() throws {
        let result = try TestSupport.run("/usr/bin/env", ["readelf", "--dynamic", CLI.binary])
        try #require(result.status == 0, "readelf (binutils): \(result.stderr)")
        let needed = String(decoding: result.standardOutput, as: UTF8.self).split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libc.so") }, "readelf's answer lists the libraries")
        #expect(!needed.contains { $0.contains("xml2") || $0.contains("FoundationXML") }, "\(needed)")
    }
}
