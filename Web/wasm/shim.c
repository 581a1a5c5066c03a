// The little of libc that Embedded Swift's runtime and CofferBarcode need on wasm32 with no operating system:
// memory functions, an allocator over the WebAssembly memory, and the two calls the runtime makes for randomness
// (hash seeds) and for printing a fatal error. Built by scripts/build-wasm.sh only.
#include <stddef.h>
#include <stdint.h>

// With bulk memory (WebAssembly's memory.copy and memory.fill), which every browser that runs the app has: the
// reader copies and clears megabyte buffers for each camera frame, and a byte loop there costs milliseconds.
void *memcpy(void *dst, const void *src, size_t n) {
  __builtin_memcpy(dst, src, n);
  return dst;
}

void *memmove(void *dst, const void *src, size_t n) {
  __builtin_memmove(dst, src, n);
  return dst;
}

void *memset(void *dst, int value, size_t n) {
  __builtin_memset(dst, value, n);
  return dst;
}

int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (; n; n--, x++, y++) if (*x != *y) return *x - *y;
  return 0;
}

size_t strlen(const char *s) {
  size_t n = 0;
  while (s[n]) n++;
  return n;
}

// Size classes of powers of two from 16 bytes; each block has a 16-byte header holding its class, and freed blocks go
// on their class's list, so memory is reused across calls without fragmentation growing unbounded.
extern unsigned char __heap_base;
static uintptr_t heap_top = 0;
static uintptr_t heap_end = 0;
static void *free_lists[32];

static int size_class(size_t size) {
  int c = 4;
  while (((size_t)1 << c) < size + 16) c++;
  return c;
}

static void *grab(size_t bytes) {
  if (heap_top == 0) {
    heap_top = ((uintptr_t)&__heap_base + 15) & ~(uintptr_t)15;
    heap_end = __builtin_wasm_memory_size(0) * 65536;
  }
  while (heap_top + bytes > heap_end) {
    if (__builtin_wasm_memory_grow(0, (bytes + 65535) / 65536) == (size_t)-1) return NULL;
    heap_end = __builtin_wasm_memory_size(0) * 65536;
  }
  void *block = (void *)heap_top;
  heap_top += bytes;
  return block;
}

void *malloc(size_t size) {
  int c = size_class(size);
  if (c >= 31) return NULL;
  unsigned char *block = free_lists[c];
  if (block) {
    free_lists[c] = *(void **)(block + 16);
  } else {
    block = grab((size_t)1 << c);
    if (!block) return NULL;
  }
  *(uint32_t *)block = (uint32_t)c;
  return block + 16;
}

void free(void *pointer) {
  if (!pointer) return;
  unsigned char *block = (unsigned char *)pointer - 16;
  int c = (int)*(uint32_t *)block;
  *(void **)pointer = free_lists[c];
  free_lists[c] = block;
}

int posix_memalign(void **out, size_t alignment, size_t size) {
  if (alignment > 16) return 12; // ENOMEM: nothing in CofferBarcode asks for more than 16
  void *pointer = malloc(size);
  if (!pointer) return 12;
  *out = pointer;
  return 0;
}

void *calloc(size_t count, size_t size) {
  size_t bytes = count * size;
  if (size && bytes / size != count) return NULL;
  void *pointer = malloc(bytes);
  if (pointer) memset(pointer, 0, bytes);
  return pointer;
}

void *realloc(void *pointer, size_t size) {
  if (!pointer) return malloc(size);
  unsigned char *block = (unsigned char *)pointer - 16;
  size_t capacity = ((size_t)1 << *(uint32_t *)block) - 16;
  if (size <= capacity) return pointer;
  void *moved = malloc(size);
  if (moved) {
    memcpy(moved, pointer, capacity);
    free(pointer);
  }
  return moved;
}

// Randomness only seeds Swift's hashing: the page supplies it through the `env.random` import (crypto.getRandomValues).
__attribute__((import_module("env"), import_name("random"))) void coffer_random(void *buffer, size_t count);

void arc4random_buf(void *buffer, size_t count) { coffer_random(buffer, count); }

int putchar(int c) { return c; }

// Swift's stack protector: a canary, and a trap when one is overwritten.
uintptr_t __stack_chk_guard = 0x5f3759df;

void __stack_chk_fail(void) { __builtin_trap(); }

// Rounding half away from zero (Swift's `rounded()`), which the barcode reader uses; the rest of its arithmetic is
// WebAssembly's own instructions.
double round(double x) {
  double whole = __builtin_trunc(x);
  if (__builtin_fabs(x - whole) >= 0.5) whole += __builtin_copysign(1.0, x);
  return whole;
}

// The 128-bit product Swift's overflow-checked 64-bit multiplication asks for (compiler-rt's `__multi3`, which a
// freestanding build has no library for): the low halves' full product from 32-bit parts, plus the cross terms.
typedef union {
  __int128 all;
  struct {
    uint64_t low;
    uint64_t high;
  } parts;
} words128;

static __int128 multiply64(uint64_t a, uint64_t b) {
  const uint64_t mask = 0xffffffffu;
  words128 r;
  r.parts.low = (a & mask) * (b & mask);
  uint64_t t = r.parts.low >> 32;
  r.parts.low &= mask;
  t += (a >> 32) * (b & mask);
  r.parts.low += (t & mask) << 32;
  r.parts.high = t >> 32;
  t = r.parts.low >> 32;
  r.parts.low &= mask;
  t += (b >> 32) * (a & mask);
  r.parts.low += (t & mask) << 32;
  r.parts.high += t >> 32;
  r.parts.high += (a >> 32) * (b >> 32);
  return r.all;
}

__int128 __multi3(__int128 a, __int128 b) {
  words128 x = {.all = a}, y = {.all = b};
  words128 r = {.all = multiply64(x.parts.low, y.parts.low)};
  r.parts.high += x.parts.high * y.parts.low + x.parts.low * y.parts.high;
  return r.all;
}
