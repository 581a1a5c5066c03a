import CArgon2
import Foundation

/// Argon2 (RFC 9106, version 0x13) through libargon2, the reference implementation as Debian packages it
/// (`libargon2-dev`), for the other apps' files that use it (Proton Authenticator, Bitwarden, KeePass).
///
/// Its parameters come from those files, so they are hostile: ``derive(_:salt:parameters:variant:secret:associatedData:outputByteCount:limits:)``
/// checks them against ``Limits`` before any memory is allocated or any pass is run.
public enum Argon2 {
    /// Which Argon2: data-dependent (d), data-independent (i), or the hybrid RFC 9106 recommends (id).
    public enum Variant: Sendable, Hashable, CaseIterable {
        case argon2d, argon2i, argon2id
    }

    /// The cost parameters a file names.
    public struct Parameters: Sendable, Hashable, CustomStringConvertible {
        /// Passes over the memory (t).
        public var iterations: Int
        /// Memory in KiB (m); at least 8 per lane.
        public var memoryKiB: Int
        /// Lanes (p), the degree of parallelism.
        public var lanes: Int

        public init(iterations: Int, memoryKiB: Int, lanes: Int) {
            self.iterations = iterations
            self.memoryKiB = memoryKiB
            self.lanes = lanes
        }

        public var description: String { "Argon2 t=\(iterations) m=\(memoryKiB) KiB p=\(lanes)" }
    }

    /// Accepted ranges for parameters read from a file.
    public struct Limits: Sendable, Hashable {
        public var iterations: ClosedRange<Int>
        public var memoryKiB: ClosedRange<Int>
        public var lanes: ClosedRange<Int>
        /// The most work accepted: memory (KiB) × passes.
        public var maxMemoryPasses: Int

        public init(iterations: ClosedRange<Int>, memoryKiB: ClosedRange<Int>, lanes: ClosedRange<Int>, maxMemoryPasses: Int) {
            self.iterations = iterations
            self.memoryKiB = memoryKiB
            self.lanes = lanes
            self.maxMemoryPasses = maxMemoryPasses
        }

        /// What importers accept: up to 1 GiB, 32 passes, 16 lanes, and 8 GiB of memory passes in all (1 GiB × 8,
        /// or 256 MiB × 32), so a hostile file costs seconds, not minutes. Bitwarden's defaults (64 MiB, 3 passes,
        /// 4 lanes) and KeePassXC's are far inside.
        /// In fuzzing builds (`-DFUZZING`) near the floor only: 2 passes, 1 MiB (the least Bitwarden's whole MiB
        /// allow), 2 lanes (see CofferInterop's `FuzzingFloor`).
        #if FUZZING
        public static let importing = Limits(iterations: 1...2, memoryKiB: 8...1024, lanes: 1...2, maxMemoryPasses: 2048)
        #else
        public static let importing = Limits(iterations: 1...32, memoryKiB: 8...(1 << 20), lanes: 1...16, maxMemoryPasses: 8 << 20)
        #endif

        /// Throws unless `parameters` are inside these limits and valid Argon2 parameters.
        public func check(_ parameters: Parameters) throws(CofferCryptoError) {
            guard iterations.contains(parameters.iterations) else {
                throw .kdfParametersOutOfBounds("Argon2 passes must be \(iterations.lowerBound)...\(iterations.upperBound)")
            }
            guard lanes.contains(parameters.lanes) else {
                throw .kdfParametersOutOfBounds("Argon2 lanes must be \(lanes.lowerBound)...\(lanes.upperBound)")
            }
            guard memoryKiB.contains(parameters.memoryKiB), parameters.memoryKiB >= 8 * parameters.lanes else {
                throw .kdfParametersOutOfBounds(
                    "Argon2 memory must be \(memoryKiB.lowerBound)...\(memoryKiB.upperBound) KiB and at least 8 KiB per lane")
            }
            guard parameters.memoryKiB * parameters.iterations <= maxMemoryPasses else {
                throw .kdfParametersOutOfBounds("Argon2 memory × passes must be at most \(maxMemoryPasses >> 20) GiB")
            }
        }
    }

    /// Salts, secrets and associated data longer than this are refused (libargon2 takes 32-bit lengths).
    public static let maxInputByteCount = 1 << 20

    /// Derives `outputByteCount` bytes from `password`. `limits` are checked first.
    ///
    /// - Parameters:
    ///   - salt: at least 8 bytes (libargon2's floor).
    ///   - secret: RFC 9106's optional key K (empty for the importers).
    ///   - associatedData: RFC 9106's optional X.
    ///   - outputByteCount: 4 to 1024 bytes.
    /// - Throws: ``CofferCryptoError/kdfParametersOutOfBounds(_:)`` for parameters or lengths out of range, before any
    ///   work; ``CofferCryptoError/primitiveFailure(_:)`` if libargon2 fails (out of memory).
    public static func derive(
        _ password: SecretBytes, salt: [UInt8], parameters: Parameters, variant: Variant = .argon2id,
        secret: [UInt8] = [], associatedData: [UInt8] = [], outputByteCount: Int = 32, limits: Limits = .importing
    ) throws(CofferCryptoError) -> SecretBytes {
        try limits.check(parameters)
        guard (8...maxInputByteCount).contains(salt.count) else {
            throw .kdfParametersOutOfBounds("the Argon2 salt must be 8 to \(maxInputByteCount) bytes")
        }
        guard secret.count <= maxInputByteCount, associatedData.count <= maxInputByteCount,
            password.count <= maxInputByteCount
        else {
            throw .kdfParametersOutOfBounds("an Argon2 input is longer than \(maxInputByteCount) bytes")
        }
        guard (4...1024).contains(outputByteCount) else {
            throw .kdfParametersOutOfBounds("the Argon2 output must be 4 to 1024 bytes")
        }
        let type: argon2_type
        switch variant {
        case .argon2d: type = Argon2_d
        case .argon2i: type = Argon2_i
        case .argon2id: type = Argon2_id
        }
        let output = UnsafeMutableRawBufferPointer.allocate(byteCount: outputByteCount, alignment: 1)
        defer {
            SecretBytes.wipe(output)
            output.deallocate()
        }
        var salt = salt
        var secret = secret
        var associatedData = associatedData
        let status: Int32 = password.withUnsafeBytes { passwordBytes in
            salt.withUnsafeMutableBytes { saltBytes in
                secret.withUnsafeMutableBytes { secretBytes in
                    associatedData.withUnsafeMutableBytes { adBytes in
                        // Flags 0: libargon2 neither reads past nor writes to the password it is given.
                        var context = argon2_context(
                            out: output.baseAddress?.assumingMemoryBound(to: UInt8.self), outlen: UInt32(outputByteCount),
                            pwd: UnsafeMutablePointer(mutating: passwordBytes.baseAddress?.assumingMemoryBound(to: UInt8.self)),
                            pwdlen: UInt32(passwordBytes.count),
                            salt: saltBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), saltlen: UInt32(saltBytes.count),
                            secret: secretBytes.count == 0 ? nil : secretBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                            secretlen: UInt32(secretBytes.count),
                            ad: adBytes.count == 0 ? nil : adBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                            adlen: UInt32(adBytes.count),
                            t_cost: UInt32(parameters.iterations), m_cost: UInt32(parameters.memoryKiB),
                            lanes: UInt32(parameters.lanes),
                            threads: UInt32(max(1, min(parameters.lanes, ProcessInfo.processInfo.activeProcessorCount))),
                            version: UInt32(ARGON2_VERSION_13.rawValue), allocate_cbk: nil, free_cbk: nil,
                            flags: 0)
                        return argon2_ctx(&context, type)
                    }
                }
            }
        }
        secret.withUnsafeMutableBytes { SecretBytes.wipe($0) }
        guard status == ARGON2_OK.rawValue else {
            throw .primitiveFailure("Argon2: \(String(cString: argon2_error_message(status)))")
        }
        return SecretBytes(UnsafeRawBufferPointer(output))
    }
}
