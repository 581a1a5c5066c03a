import CCofferPlatform
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a process holding unlocked keys does to keep them out of swap, core files and debuggers (the agent). The one
/// place for `mlockall`, `prctl(PR_SET_DUMPABLE)`, `RLIMIT_CORE` and `MADV_DONTDUMP`.
public enum ProcessHardening {
    /// Which protections took effect; the agent reports them in its status.
    public struct Report: Sendable, Equatable {
        /// Core files disabled (`RLIMIT_CORE` 0).
        public var coreDumpsDisabled: Bool
        /// Not dumpable: no core file, no ptrace by the same uid, /proc files root's (Linux only).
        public var notDumpable: Bool
        /// Every page, present and future, locked in memory (never swapped).
        public var memoryLocked: Bool
    }

    /// Applies every protection the system offers and returns which took. Memory is locked with `mlockall` only when
    /// the lock limit cannot be hit later (no limit, or root): with a finite limit, a later allocation past it would
    /// fail and take the process down, so it is better to report memory unlocked than to lock and crash.
    public static func apply() -> Report {
        hardened.store(true, ordering: .releasing)
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        let coreDisabled = setrlimit(resourceCore, &noCore) == 0
        let notDumpable = coffer_set_not_dumpable() == 0
        var locked = false
        var limit = rlimit()
        if getrlimit(resourceMemlock, &limit) == 0 {
            if limit.rlim_cur != limit.rlim_max {
                limit.rlim_cur = limit.rlim_max
                _ = setrlimit(resourceMemlock, &limit)
            }
            // RLIM_INFINITY is all ones (Swift reads the macro as -1, which rlim_t cannot hold).
            if limit.rlim_max == rlim_t.max || geteuid() == 0 {
                locked = mlockall(MCL_CURRENT | MCL_FUTURE) == 0
            }
        }
        return Report(coreDumpsDisabled: coreDisabled, notDumpable: notDumpable, memoryLocked: locked)
    }

    #if canImport(Glibc) || canImport(Musl)
    private static let resourceCore = __rlimit_resource_t(RLIMIT_CORE.rawValue)
    private static let resourceMemlock = __rlimit_resource_t(coffer_memlock_resource())
    #else
    private static let resourceCore = RLIMIT_CORE
    private static let resourceMemlock = RLIMIT_MEMLOCK
    #endif
}

/// A fixed-size buffer outside the Swift heap for bytes that carry secrets on their way in (a request holding a
/// passphrase): its pages are locked and left out of core dumps, and it is wiped after each use and when freed.
public final class LockedBuffer: @unchecked Sendable {
    // Owned by one connection handler at a time: the agent serves one request after another.
    public let capacity: Int
    private let base: UnsafeMutableRawPointer

    /// Maps `capacity` bytes (rounded up to whole pages), locks them and excludes them from dumps where the system
    /// can; returns nil only when the memory cannot be mapped.
    public init?(capacity: Int) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let size = (capacity + page - 1) / page * page
        guard let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), mapped != MAP_FAILED else {
            return nil
        }
        base = mapped
        self.capacity = size
        _ = mlock(mapped, size)
        #if canImport(Glibc) || canImport(Musl)
        _ = madvise(mapped, size, MADV_DONTDUMP)
        #endif
    }

    deinit {
        wipe()
        munlock(base, capacity)
        munmap(base, capacity)
    }

    /// The buffer's memory for the length of `body`.
    public func withBytes<Result>(_ body: (UnsafeMutableRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeMutableRawBufferPointer(start: base, count: capacity))
    }

    /// Zeroes every byte (the memory is read again later, so the compiler cannot drop the writes).
    public func wipe() {
        memset(base, 0, capacity)
    }
}

extension ProcessHardening {
    /// glibc tunables under which `free` overwrites each block it frees: `perturb` fills a freed block with its byte,
    /// and a thread cache of 0 sends every free through the path that does so (glibc's per-thread cache keeps blocks
    /// untouched). Swift's strings and arrays cannot be wiped one by one; with these, what a process held in the heap
    /// is gone once released. They are read at start-up only, so a process that needs them runs itself again with
    /// them (`wipingAllocatorEnvironment`).
    public static let wipingAllocatorTunables = ["glibc.malloc.tcache_count=0", "glibc.malloc.perturb=165"]

    /// The `GLIBC_TUNABLES` value that adds `wipingAllocatorTunables` to `current`; nil when `current` already has
    /// them, or where the C library is not glibc.
    public static func wipingAllocatorEnvironment(current: String?) -> String? {
        #if canImport(Glibc)
        let settings = (current ?? "").split(separator: ":").map(String.init).filter { !$0.isEmpty }
        let missing = wipingAllocatorTunables.filter { !settings.contains($0) }
        guard !missing.isEmpty else { return nil }
        let names = Set(wipingAllocatorTunables.map { $0.prefix { $0 != "=" } })
        return (settings.filter { !names.contains($0.prefix { $0 != "=" }) } + wipingAllocatorTunables).joined(separator: ":")
        #else
        return nil
        #endif
    }
}

extension ProcessHardening {
    /// Zeroes `bytes` of the calling thread's stack below its frame, then its vector registers: the frames of calls
    /// that have returned (and the decrypted values they held) do not outlive them, and no thread started later
    /// inherits what a copy or a cipher left in the registers. The agent calls it after each request and each lock.
    public static func scrubStack(bytes: Int = 256 * 1024) {
        coffer_scrub_stack(UInt(bytes))
        coffer_clear_vector_registers()
    }

    /// Zeroes the calling thread's vector registers. A new thread starts with a copy of its creator's, and saves them
    /// to its own stack (at a lazily bound call, in a signal frame), where they outlive the thread: call this before
    /// starting threads in a process that may hold secrets in them.
    public static func clearVectorRegisters() {
        coffer_clear_vector_registers()
    }

    /// The width in bytes of the registers `clearVectorRegisters` clears (64 with AVX-512), 0 where it clears none.
    public static var vectorRegisterBytes: Int { Int(coffer_vector_register_bytes()) }

    /// Whether `apply()` hardened this process (the agent): code that spreads secret work over threads then leaves
    /// nothing on them (`scrubWorkerThread`).
    public static var isHardened: Bool { hardened.load(ordering: .acquiring) }

    private static let hardened = Atomic<Bool>(false)

    /// For the end of secret work done on a thread other than the caller's (a chunk of items opened in parallel):
    /// in a hardened process, zeroes that thread's stack below the caller's frame and its vector registers, since a
    /// pool thread's stack outlives the work and even the thread (the C library keeps stacks for reuse). Elsewhere it
    /// does nothing: a command's threads end with it.
    public static func scrubWorkerThread() {
        guard isHardened else { return }
        scrubStack()
    }
}
