import CofferPlatform
import CofferTestSupport
import Foundation
import Testing

@testable import CofferAgent

#if canImport(Glibc)
import Glibc
#endif

/// The agent's clock must count suspend: a clock that stops while the lid is closed keeps a vault unlocked all
/// night. No test machine suspends, but a Linux time namespace gives `CLOCK_BOOTTIME` an offset that
/// `CLOCK_MONOTONIC` lacks, as a suspend would: this test runs its own binary again in such a namespace, where the
/// probe below checks that the agent's clock carries the offset. Reading `CLOCK_MONOTONIC` (or Swift's
/// `SuspendingClock`) instead fails it.
@Suite("Agent clock")
struct AgentClockTests {
    static let offsetSeconds: UInt64 = 1_000_000
    static let probeVariable = "COFFER_TEST_BOOT_OFFSET_MARKER"

    @Test(
        "the agent's clock counts what CLOCK_MONOTONIC does not (a boot-time offset, as suspend adds)",
        .enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"), "needs root for a time namespace"))
    func countsSuspend() throws {
        let marker = try TestSupport.temporaryDirectory("clock") + "/probe-passed"
        let binary = try #require(CommandLine.arguments.first)
        let result = try TestSupport.run(
            "/usr/bin/unshare",
            [
                "--time", "--boottime", String(Self.offsetSeconds), binary,
                "--testing-library", "swift-testing", "--filter", "AgentClockTests/probe",
            ],
            environment: ProcessInfo.processInfo.environment.merging([Self.probeVariable: marker]) { $1 })
        #expect(result.status == 0, "\(result.stdout.suffix(2000))\(result.stderr.suffix(2000))")
        // The probe ran and passed (a filter matching nothing would also exit 0).
        #expect(FileManager.default.fileExists(atPath: marker))
    }

    @Test("probe, run in a time namespace by countsSuspend", .enabled(if: ProcessInfo.processInfo.environment[probeVariable] != nil))
    func probe() throws {
        var monotonic = timespec()
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        let agent = AgentClock.boot.milliseconds()
        let monotonicMilliseconds = UInt64(monotonic.tv_sec) * 1000 + UInt64(monotonic.tv_nsec) / 1_000_000
        #expect(agent >= monotonicMilliseconds + Self.offsetSeconds * 1000 - 60_000, "agent \(agent) ms, monotonic \(monotonicMilliseconds) ms")
        if agent >= monotonicMilliseconds + Self.offsetSeconds * 1000 - 60_000 {
            let path = try #require(ProcessInfo.processInfo.environment[Self.probeVariable])
            try Data().write(to: URL(fileURLWithPath: path))
        }
    }
}
