#define _GNU_SOURCE
#include "register_probe.h"
#include "coffer_platform.h"
#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
// The XSAVE components for x87, SSE, AVX and AVX-512 (bits 0–7); what the system has not enabled is left out.
static unsigned char saved[8192] __attribute__((aligned(64)));

static void *save_registers(void *unused) {
    (void)unused;
    __asm__ __volatile__("xsave64 %0" : "=m"(saved) : "a"(0xffu), "d"(0u) : "memory");
    return NULL;
}

// Loaded in one asm statement, with nothing between it and the thread's start but the clearing call.
#define LOAD_YMM(n) "vmovdqu (%0), %%ymm" #n "\n\t"
#define LOAD_ZMM(n) "vmovdqu64 (%0), %%zmm" #n "\n\t"
#endif

int register_probe_inherited(const unsigned char *canary, int clear) {
#if defined(__x86_64__)
    int width = coffer_vector_register_bytes();
    if (width < 32) return -1;
    memset(saved, 0, sizeof(saved));
    __asm__ __volatile__(
        LOAD_YMM(0) LOAD_YMM(1) LOAD_YMM(2) LOAD_YMM(3) LOAD_YMM(4) LOAD_YMM(5) LOAD_YMM(6) LOAD_YMM(7)
        LOAD_YMM(8) LOAD_YMM(9) LOAD_YMM(10) LOAD_YMM(11) LOAD_YMM(12) LOAD_YMM(13) LOAD_YMM(14) LOAD_YMM(15)
        :: "r"(canary) : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
          "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory");
    if (width == 64) {
        __asm__ __volatile__(
            LOAD_ZMM(16) LOAD_ZMM(17) LOAD_ZMM(18) LOAD_ZMM(19) LOAD_ZMM(20) LOAD_ZMM(21) LOAD_ZMM(22) LOAD_ZMM(23)
            LOAD_ZMM(24) LOAD_ZMM(25) LOAD_ZMM(26) LOAD_ZMM(27) LOAD_ZMM(28) LOAD_ZMM(29) LOAD_ZMM(30) LOAD_ZMM(31)
            :: "r"(canary) : "memory");
    }
    if (clear) coffer_clear_vector_registers();
    pthread_t thread;
    if (pthread_create(&thread, NULL, save_registers, NULL) != 0) return -1;
    pthread_join(thread, NULL);
    int lanes = 0;
    for (size_t offset = 0; offset + 16 <= sizeof(saved); offset += 16) {
        if (memcmp(saved + offset, canary, 16) == 0) lanes += 1;
    }
    return lanes;
#else
    (void)canary;
    (void)clear;
    return -1;
#endif
}
