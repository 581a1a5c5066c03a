#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include "coffer_platform.h"
#include <alloca.h>
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

int coffer_set_not_dumpable(void) {
#if defined(__linux__)
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int coffer_is_dumpable(void) {
#if defined(__linux__)
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
#else
    return -1;
#endif
}

int coffer_peer_uid(int descriptor, unsigned int *uid) {
#if defined(__linux__)
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *uid = (unsigned int)credentials.uid;
    return 0;
#else
    uid_t user;
    gid_t group;
    if (getpeereid(descriptor, &user, &group) != 0) return -1;
    *uid = (unsigned int)user;
    return 0;
#endif
}

int coffer_memlock_resource(void) {
    return RLIMIT_MEMLOCK;
}

__attribute__((noinline)) void coffer_scrub_stack(unsigned long bytes) {
    unsigned char *below = alloca(bytes);
    memset(below, 0, bytes);
    // The compiler may not drop a store it cannot see read: a barrier that claims to read the buffer.
    __asm__ __volatile__("" : : "r"(below) : "memory");
}

#if defined(__GLIBC__)
#include <malloc.h>
#endif

void coffer_reuse_large_blocks(int mmap_threshold, int trim_threshold) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    mallopt(M_TRIM_THRESHOLD, trim_threshold);
#else
    (void)mmap_threshold;
    (void)trim_threshold;
#endif
}
