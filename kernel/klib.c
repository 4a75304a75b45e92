// SPDX-License-Identifier: MIT
// The five C library functions the kernel owns (port/ supplies the rest). Built with
// -fno-builtin -fno-tree-loop-distribute-patterns so gcc cannot turn the loops back
// into calls to themselves.
#include <stddef.h>
#include <stdint.h>

#include "arch.h"

// Unaligned eight-byte access that may alias anything (memmove, memcmp).
typedef uint64_t __attribute__((may_alias, aligned(1))) unaligned_u64;

void *memcpy(void *restrict dst, const void *restrict src, size_t n) {
    size_t body = n & ~(size_t)7;
    arch_copy_qwords(dst, src, n >> 3);
    arch_copy_bytes((unsigned char *)dst + body, (const unsigned char *)src + body, n & 7);
    return dst;
}

void *memmove(void *dst, const void *src, size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d == s || n == 0) {
        return dst;
    }
    if (d < s || d >= s + n) {
        return memcpy(dst, src, n);
    }
    // Overlap with dst above src: copy backwards, the top eight bytes at a time (each
    // read lies below every byte written before it). Not `std; rep movs`: an interrupt
    // taken with the direction flag set would run its handler's copies backwards.
    while (n >= 8) {
        n -= 8;
        *(unaligned_u64 *)(d + n) = *(const unaligned_u64 *)(s + n);
    }
    while (n--) {
        d[n] = s[n];
    }
    return dst;
}

void *memset(void *dst, int c, size_t n) {
    size_t body = n & ~(size_t)7;
    arch_fill_qwords(dst, (uint64_t)(unsigned char)c * 0x0101010101010101ull, n >> 3);
    arch_fill_bytes((unsigned char *)dst + body, c, n & 7);
    return dst;
}

int memcmp(const void *a, const void *b, size_t n) {
    const unsigned char *x = a, *y = b;
    size_t i = 0;
    // Whole equal words are skipped; the first differing one is compared byte by byte.
    while (i + 8 <= n && *(const unaligned_u64 *)(x + i) == *(const unaligned_u64 *)(y + i)) {
        i += 8;
    }
    for (; i < n; i++) {
        if (x[i] != y[i]) {
            return x[i] < y[i] ? -1 : 1;
        }
    }
    return 0;
}

size_t strlen(const char *s) {
    const char *p = s;
    while (*p) {
        p++;
    }
    return (size_t)(p - s);
}
