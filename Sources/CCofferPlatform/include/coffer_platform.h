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

/// Keeps blocks below `mmap_threshold` bytes on the heap and up to `trim_threshold` bytes free at its top before
/// giving memory back (glibc's `mallopt`); does nothing where the allocator has no such settings.
void coffer_reuse_large_blocks(int mmap_threshold, int trim_threshold);

#endif
