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

#if defined(__x86_64__)
#include <cpuid.h>

// XCR0 bits the system must save for the registers to be usable: SSE and AVX state; opmask, ZMM0–15 upper halves and
// ZMM16–31 for AVX-512.
#define COFFER_XCR0_AVX 0x6u
#define COFFER_XCR0_AVX512 0xe6u

static int coffer_detect_vector_bytes(void) {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 16;
    if (!(ecx & bit_OSXSAVE) || !(ecx & bit_AVX)) return 16;
    unsigned xcr0, xcr0High;
    __asm__ __volatile__("xgetbv" : "=a"(xcr0), "=d"(xcr0High) : "c"(0));
    if ((xcr0 & COFFER_XCR0_AVX) != COFFER_XCR0_AVX) return 16;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx & bit_AVX512F) && (xcr0 & COFFER_XCR0_AVX512) == COFFER_XCR0_AVX512)
        return 64;
    return 32;
}
#endif

int coffer_vector_register_bytes(void) {
#if defined(__x86_64__)
    // CPUID traps to the hypervisor in a VM: asked once. Threads that race here store the same answer.
    static int cached = 0;
    int bytes = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (bytes == 0) {
        bytes = coffer_detect_vector_bytes();
        __atomic_store_n(&cached, bytes, __ATOMIC_RELAXED);
    }
    return bytes;
#elif defined(__aarch64__)
    return 16;
#else
    return 0;
#endif
}

// What the x86-64 statements below overwrite, for the compiler: it keeps nothing of its own there across them.
#define COFFER_XMM0_15 "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
    "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

__attribute__((noinline)) void coffer_clear_vector_registers(void) {
#if defined(__x86_64__)
    switch (coffer_vector_register_bytes()) {
    case 64:
        // ZMM16–31 first; vzeroall below clears YMM0–15 whole, and so ZMM0–15's upper halves.
        __asm__ __volatile__(
            "vpxord %%zmm16, %%zmm16, %%zmm16\n\tvpxord %%zmm17, %%zmm17, %%zmm17\n\t"
            "vpxord %%zmm18, %%zmm18, %%zmm18\n\tvpxord %%zmm19, %%zmm19, %%zmm19\n\t"
            "vpxord %%zmm20, %%zmm20, %%zmm20\n\tvpxord %%zmm21, %%zmm21, %%zmm21\n\t"
            "vpxord %%zmm22, %%zmm22, %%zmm22\n\tvpxord %%zmm23, %%zmm23, %%zmm23\n\t"
            "vpxord %%zmm24, %%zmm24, %%zmm24\n\tvpxord %%zmm25, %%zmm25, %%zmm25\n\t"
            "vpxord %%zmm26, %%zmm26, %%zmm26\n\tvpxord %%zmm27, %%zmm27, %%zmm27\n\t"
            "vpxord %%zmm28, %%zmm28, %%zmm28\n\tvpxord %%zmm29, %%zmm29, %%zmm29\n\t"
            "vpxord %%zmm30, %%zmm30, %%zmm30\n\tvpxord %%zmm31, %%zmm31, %%zmm31" ::: "memory");
        __attribute__((fallthrough));
    case 32:
        __asm__ __volatile__("vzeroall" ::: COFFER_XMM0_15, "memory");
        break;
    default:
        __asm__ __volatile__(
            "pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm2, %%xmm2\n\tpxor %%xmm3, %%xmm3\n\t"
            "pxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\tpxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\t"
            "pxor %%xmm8, %%xmm8\n\tpxor %%xmm9, %%xmm9\n\tpxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
            "pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\tpxor %%xmm14, %%xmm14\n\tpxor %%xmm15, %%xmm15"
            ::: COFFER_XMM0_15, "memory");
        break;
    }
#elif defined(__aarch64__)
    __asm__ __volatile__(
        "movi v0.16b, #0\n\tmovi v1.16b, #0\n\tmovi v2.16b, #0\n\tmovi v3.16b, #0\n\t"
        "movi v4.16b, #0\n\tmovi v5.16b, #0\n\tmovi v6.16b, #0\n\tmovi v7.16b, #0\n\t"
        "movi v8.16b, #0\n\tmovi v9.16b, #0\n\tmovi v10.16b, #0\n\tmovi v11.16b, #0\n\t"
        "movi v12.16b, #0\n\tmovi v13.16b, #0\n\tmovi v14.16b, #0\n\tmovi v15.16b, #0\n\t"
        "movi v16.16b, #0\n\tmovi v17.16b, #0\n\tmovi v18.16b, #0\n\tmovi v19.16b, #0\n\t"
        "movi v20.16b, #0\n\tmovi v21.16b, #0\n\tmovi v22.16b, #0\n\tmovi v23.16b, #0\n\t"
        "movi v24.16b, #0\n\tmovi v25.16b, #0\n\tmovi v26.16b, #0\n\tmovi v27.16b, #0\n\t"
        "movi v28.16b, #0\n\tmovi v29.16b, #0\n\tmovi v30.16b, #0\n\tmovi v31.16b, #0"
        ::: "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15",
          "v16", "v17", "v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30",
          "v31", "memory");
#endif
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
