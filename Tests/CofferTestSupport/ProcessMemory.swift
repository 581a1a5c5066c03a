import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Another process's writable memory, read through `/proc/PID/mem` (root, or a ptrace-capable reader): where a
/// canary that process once held would still be found.
public enum ProcessMemory {
    /// One readable, writable mapping's bytes and where it lies.
    public struct Region {
        public let description: String
        public let bytes: [UInt8]
    }

    /// The private writable mappings of `pid` (heap, stacks, anonymous maps, the binary's data), each as read now.
    /// Mappings that cannot be read (guard pages, `[vvar]`) are left out.
    public static func writableRegions(of pid: Int32) throws -> [Region] {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        let memory = open("/proc/\(pid)/mem", O_RDONLY)
        guard memory >= 0 else { throw TestSupport.OracleError.failed("cannot open /proc/\(pid)/mem (errno \(errno))") }
        defer { close(memory) }
        var regions: [Region] = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].hasPrefix("rw") else { continue }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt64(bounds[0], radix: 16), let end = UInt64(bounds[1], radix: 16), end > start
            else { continue }
            var bytes = [UInt8](repeating: 0, count: Int(end - start))
            let read = bytes.withUnsafeMutableBytes { pread(memory, $0.baseAddress, $0.count, off_t(Int64(bitPattern: start))) }
            guard read > 0 else { continue }
            regions.append(Region(description: String(line), bytes: Array(bytes.prefix(read))))
        }
        return regions
    }

    /// The regions of `regions` that hold `needle`, by their `maps` line.
    public static func holders(of needle: [UInt8], in regions: [Region]) -> [String] {
        guard !needle.isEmpty else { return [] }
        return regions.filter { contains($0.bytes, needle) }.map(\.description)
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        let first = needle[0]
        var index = 0
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first, haystack[index..<index + needle.count].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
