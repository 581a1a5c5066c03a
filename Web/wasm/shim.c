// The little of libc that Embedded Swift's runtime and CofferBarcode need on wasm32 with no operating system:
// memory functions, an allocator over the WebAssembly memory, and the two calls the runtime makes for randomness
// (hash seeds) and for printing a fatal error. Built by scripts/build-wasm.sh only.
#include <stddef.h>
#include <stdint.h>

void *memcpy(void *dst, const void *src, size_t n) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  while (n--) *d++ = *s++;
  return dst;
}

void *memmove(void *dst, const void *src, size_t n) {
  unsigned char *d = dst;
  const unsigned char *s = src;
  if (d < s) {
    while (n--) *d++ = *s++;
  } else {
    while (n--) d[n] = s[n];
  }
  return dst;
}

void *memset(void *dst, int value, size_t n) {
  unsigned char *d = dst;
  while (n--) *d++ = (unsigned char)value;
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
