import CRegisterProbe
import CofferPlatform
import Testing

/// A new thread starts with a copy of its creator's vector registers (the kernel copies them on `clone`), and saves
/// them to its own stack at a lazily bound call or a signal: the agent clears them before anything can start a
/// thread. The probe loads a canary into every register and reads back, with XSAVE, what a new thread begins with.
@Suite("Vector registers a new thread inherits", .serialized)
struct VectorRegisterTests {
    static let canary = Array("canary-in-a-vector-register-0123456789-abcdefghijklmnopqrstuvwxy".utf8)

    @Test(
        "without clearing, a new thread begins with the canary in its registers (the probe can see it)",
        .enabled(if: ProcessHardening.vectorRegisterBytes >= 32, "the probe needs x86-64 with AVX"))
    func inheritedWithoutClearing() {
        #expect(Self.canary.count == 64)
        #expect(register_probe_inherited(Self.canary, 0) > 0)
    }

    @Test(
        "after clearVectorRegisters, a new thread inherits none of it",
        .enabled(if: ProcessHardening.vectorRegisterBytes >= 32, "the probe needs x86-64 with AVX"))
    func clearedBeforeSpawning() {
        #expect(register_probe_inherited(Self.canary, 1) == 0)
    }

    @Test("the registers cleared are as wide as the processor's (64 bytes with AVX-512)")
    func width() {
        #expect([0, 16, 32, 64].contains(ProcessHardening.vectorRegisterBytes))
        #if arch(x86_64)
        #expect(ProcessHardening.vectorRegisterBytes >= 16)
        #endif
    }
}
