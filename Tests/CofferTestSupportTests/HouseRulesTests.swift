import CofferTestSupport
import Foundation
import Testing

/// Rules of the code's layout that the compiler does not enforce.
@Suite struct HouseRulesTests {
    /// Swift files under Sources/, with their paths relative to it.
    static func sources() throws -> [(path: String, text: String)] {
        let root = TestSupport.repositoryRoot.appendingPathComponent("Sources")
        let walker = try #require(FileManager.default.enumerator(atPath: root.path))
        return try walker.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted().map { path in
            (path, try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8))
        }
    }

    @Test("the C library (Glibc, Musl, Darwin) is imported only by CofferPlatform, the OS seam, and the benchmarks")
    func systemImports() throws {
        let files = try Self.sources()
        #expect(files.count > 100)
        let importing = files.filter { file in
            file.text.split(separator: "\n").contains { ["import Glibc", "import Musl", "import Darwin"].contains($0.trimmingCharacters(in: .whitespaces)) }
        }.map(\.path)
        // The seam itself does import it: a scan that saw nothing would pass vacuously.
        #expect(importing.contains("CofferPlatform/Terminal.swift"))
        #expect(importing.filter { !$0.hasPrefix("CofferPlatform/") && !$0.hasPrefix("coffer-bench/") } == [])
    }
}
