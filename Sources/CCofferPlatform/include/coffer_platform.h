#ifndef COFFER_PLATFORM_H
#define COFFER_PLATFORM_H

/// Marks this process not dumpable (Linux `prctl(PR_SET_DUMPABLE, 0)`): no core file, no same-uid ptrace, and its
/// /proc entries become root's. `prctl` is variadic, so Swift cannot call it directly. Returns 0, or -1 with errno
/// set (ENOSYS where the system has no such call).
int coffer_set_not_dumpable(void);

/// Whether this process is dumpable: 1 yes, 0 no, -1 unknown.
int coffer_is_dumpable(void);

/// The uid of the process at the other end of the Unix socket `descriptor` (`SO_PEERCRED` on Linux, whose
/// `struct ucred` Swift's Glibc module does not show; `getpeereid` elsewhere). Returns 0, or -1 with errno set.
int coffer_peer_uid(int descriptor, unsigned int *uid);

/// `RLIMIT_MEMLOCK`, which Swift's Glibc module does not show.
int coffer_memlock_resource(void);

/// Overwrites `bytes` of this thread's stack below the caller's frame with zeros: what deeper calls left there (a
/// decrypted value in a frame that has returned) is gone. `bytes` must be well inside the thread's stack size.
void coffer_scrub_stack(unsigned long bytes);

/// Zeroes every vector register of the calling thread (x86-64: ZMM0–31 with AVX-512, YMM0–15 with AVX, XMM0–15
/// otherwise; arm64: V0–31). A thread starts with a copy of its creator's registers, and saves them to its own stack
/// (lazy symbol binding, signal frames), so what a copy or a cipher left in them would end up in the new thread's memory.
void coffer_clear_vector_registers(void);

/// The width in bytes of the vector registers `coffer_clear_vector_registers` clears: 64, 32 or 16 on x86-64 (as the
/// processor and system support), 16 on arm64, 0 elsewhere.
int coffer_vector_register_bytes(void);

/// Keeps blocks below `mmap_threshold` bytes on the heap and up to `trim_threshold` bytes free at its top before
/// giving memory back (glibc's `mallopt`); does nothing where the allocator has no such settings.
void coffer_reuse_large_blocks(int mmap_threshold, int trim_threshold);

#endif
