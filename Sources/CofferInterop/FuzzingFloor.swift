import CofferCrypto

/// Key-derivation costs in fuzzing builds (`-DFUZZING`, scripts/fuzz.sh): every cost a format fixes is held at its
/// floor, and the costs a file may ask for are capped there, so that an input reaches the parsers behind the password
/// in microseconds (scripts/fuzz-seeds.py writes its encrypted seeds at these costs). Other builds never define it.
enum FuzzingFloor {
    #if FUZZING
    static let active = true
    #else
    static let active = false
    #endif

    /// `cost`, or 1 in a fuzzing build.
    static func iterations(_ cost: Int) -> Int { active ? 1 : cost }

    /// `parameters`, or the least Argon2 allows (1 pass, 8 KiB, 1 lane) in a fuzzing build.
    static func argon2(_ parameters: Argon2.Parameters) -> Argon2.Parameters {
        active ? Argon2.Parameters(iterations: 1, memoryKiB: 8, lanes: 1) : parameters
    }
}
