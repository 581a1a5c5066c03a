import CofferPlatform
import Testing

/// The `GLIBC_TUNABLES` the agent restarts itself with: its own settings added, another program's kept, nothing
/// when they are already in effect.
@Suite("The agent's wiping allocator settings")
struct WipingAllocatorTests {
    @Test(
        "merged into what is there",
        arguments: [
            (nil, "glibc.malloc.tcache_count=0:glibc.malloc.perturb=165"),
            ("", "glibc.malloc.tcache_count=0:glibc.malloc.perturb=165"),
            ("glibc.malloc.arena_max=2", "glibc.malloc.arena_max=2:glibc.malloc.tcache_count=0:glibc.malloc.perturb=165"),
            ("glibc.malloc.perturb=1:glibc.malloc.tcache_count=7", "glibc.malloc.tcache_count=0:glibc.malloc.perturb=165"),
            ("glibc.malloc.perturb=165", "glibc.malloc.tcache_count=0:glibc.malloc.perturb=165"),
        ] as [(String?, String)])
    func merged(_ current: String?, _ expected: String) {
        #expect(ProcessHardening.wipingAllocatorEnvironment(current: current) == expected)
    }

    @Test("nothing to do when both are in effect, in any order")
    func alreadySet() {
        #expect(ProcessHardening.wipingAllocatorEnvironment(current: "glibc.malloc.perturb=165:glibc.malloc.tcache_count=0") == nil)
        #expect(ProcessHardening.wipingAllocatorEnvironment(current: "glibc.malloc.tcache_count=0:x=1:glibc.malloc.perturb=165") == nil)
    }
}
