import Foundation

/// Image bytes for photo tests: the real PNG or JPEG signature (all Coffer checks) followed by a body drawn from a
/// seed, so that every part of a photo differs. `marker` is repeated through the body for canary scans.
public enum TestPhotos {
    public static func png(size: Int, seed: UInt64 = 1, marker: [UInt8] = []) -> [UInt8] {
        image(header: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], size: size, seed: seed, marker: marker)
    }

    public static func jpeg(size: Int, seed: UInt64 = 2, marker: [UInt8] = []) -> [UInt8] {
        image(header: [0xFF, 0xD8, 0xFF, 0xE0], size: size, seed: seed, marker: marker)
    }

    static func image(header: [UInt8], size: Int, seed: UInt64, marker: [UInt8]) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        var bytes = header + random.bytes(max(size - header.count, 0))
        if !marker.isEmpty {
            for start in stride(from: header.count, to: bytes.count - marker.count, by: 4096) {
                bytes.replaceSubrange(start..<start + marker.count, with: marker)
            }
        }
        return Array(bytes.prefix(size))
    }
}
