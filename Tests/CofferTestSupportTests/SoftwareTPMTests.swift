import CofferTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Software TPM")
struct SoftwareTPMTests {
    /// What the descriptors of process `pid` refer to (`socket:[inode]`, `pipe:[inode]`, paths).
    private static func descriptorTargets(_ pid: String) throws -> Set<String> {
        let directory = "/proc/\(pid)/fd"
        return Set(
            try FileManager.default.contentsOfDirectory(atPath: directory).compactMap {
                try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\($0)")
            })
    }

    @Test("swtpm inherits no descriptor of the test process: a socket it kept made another test's swtpm wait on it for good")
    func noInheritedDescriptors() throws {
        guard SoftwareTPM.unavailableReason == nil else { return }
        // A descriptor without close-on-exec, as libtss2 opens its sockets.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        let held = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(ends[0])")
        let tpm = try SoftwareTPM()
        defer { withExtendedLifetime(tpm) {} }
        let pid = try String(contentsOfFile: tpm.stateDirectory + "/swtpm.pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let targets = try Self.descriptorTargets(pid)
        #expect(targets.contains { $0.hasPrefix("socket:") })
        #expect(!targets.contains(held))
    }
}
