import CofferCrypto
@testable import CofferInterop
import Testing

/// The key-derivation floor belongs to fuzzing builds only: in every other build each format's costs are its own and
/// files may ask for what the importers' documented limits allow.
@Suite("Fuzzing floor")
struct FuzzingFloorTests {
    @Test("off outside fuzzing builds: fixed costs and the limits files may ask for are the real ones")
    func offOutsideFuzzing() {
        #expect(!FuzzingFloor.active)
        #expect(TwoFASImporter.iterations == 10_000)
        #expect(SteamMaFileImporter.iterations == 50_000)
        #expect(StratumImporter.legacyIterations == 64_000)
        #expect(StratumImporter.argonParameters == Argon2.Parameters(iterations: 3, memoryKiB: 64 * 1024, lanes: 4))
        #expect(ProtonAuthenticatorImporter.encryptedParameters == Argon2.Parameters(iterations: 2, memoryKiB: 19 * 1024, lanes: 1))
        #expect(AuthyImporter.appIterations == 1_000 && AuthyImporter.apiDefaultIterations == 100_000)
        #expect(OTPImport.pbkdf2IterationRange == 1...10_000_000)
        #expect(AegisImporter.maxScryptWork == 1 << 24)
        #expect(KeePassDatabase.Limits.aesRounds == 1...200_000_000)
        #expect(Argon2.Limits.importing.memoryKiB == 8...(1 << 20))
    }
}
