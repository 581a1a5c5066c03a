import CCofferPlatform

/// How Coffer's executables set up the C allocator, in one place.
public enum AllocatorTuning {
    /// glibc serves blocks from 128 KiB up as fresh `mmap`s and hands free heap memory back to the system once 128 KiB
    /// of it lies at the top; its adaptive threshold moves, but trimming still returns the memory between two large
    /// blocks. A process that seals and opens boxes of a MiB or more (card photos, a whole vault's rotation) then pays
    /// page faults and zeroing for every box: a 1 MiB AES-GCM seal+open ran at a quarter of the cipher's own rate.
    /// Blocks up to 32 MiB now come from the heap, which keeps up to 64 MiB free before trimming, so they are reused.
    /// The agent's freed blocks are still overwritten (`ProcessHardening.wipingAllocatorEnvironment`).
    public static func reuseLargeBlocks() {
        coffer_reuse_large_blocks(Int32(mmapThreshold), Int32(trimThreshold))
    }

    /// The largest block served from the heap, in bytes.
    public static let mmapThreshold = 32 << 20
    /// How much free memory the heap keeps at its top before giving it back, in bytes.
    public static let trimThreshold = 64 << 20
}
