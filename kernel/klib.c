// SPDX-License-Identifier: MIT
// The five C library functions the kernel owns (port/ supplies the rest). Built with
// -fno-builtin -fno-tree-loop-distribute-patterns so gcc cannot turn the loops back
// into calls to themselves.
#include <stddef.h>
#include <stdint.h>

#include "arch.h"

void *memcpy(void *restrict dst, const void *restrict src, size_t n) {
    void *ret = dst;
    arch_copy_bytes(dst, src, n);
    return ret;
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
    // Overlap with dst above src: copy backwards.
    while (n--) {
        d[n] = s[n];
    }
    return dst;
}

void *memset(void *dst, int c, size_t n) {
    void *ret = dst;
    arch_fill_bytes(dst, c, n);
    return ret;
}

int memcmp(const void *a, const void *b, size_t n) {
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++) {
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
