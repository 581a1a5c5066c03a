import Foundation

/// What the fuzz executables share when they run without libFuzzer: corpus replay and generated inputs.
public enum FuzzReplay {
    /// Calls `body` with the bytes of every file named in `paths`, reading directories one level deep, sorted.
    public static func corpus(_ paths: some Sequence<String>, _ body: ([UInt8]) -> Void) throws {
        let manager = FileManager.default
        for path in paths {
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            let files =
                isDirectory.boolValue
                ? try manager.contentsOfDirectory(atPath: path).sorted().map { path + "/" + $0 } : [path]
            for file in files {
                if let data = manager.contents(atPath: file) { body(Array(data)) }
            }
        }
    }
}

/// A deterministic byte generator (a 64-bit LCG), so generated inputs are the same on every run.
public struct FuzzBytes {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt8 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 33)
    }
}
