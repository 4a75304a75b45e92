// SPDX-License-Identifier: MIT
// The string functions MicroPython needs beyond the five the kernel provides
// (memcpy, memmove, memset, memcmp, strlen). Built with -fno-builtin so gcc cannot
// turn these loops back into calls to themselves.
#include <string.h>

void *memchr(const void *s, int c, size_t n) {
    const unsigned char *p = s;
    for (; n > 0; n--, p++) {
        if (*p == (unsigned char)c) {
            return (void *)p;
        }
    }
    return NULL;
}

size_t strnlen(const char *s, size_t max) {
    size_t n = 0;
    while (n < max && s[n] != '\0') {
        n++;
    }
    return n;
}

int strcmp(const char *a, const char *b) {
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n) {
    for (; n > 0; n--, a++, b++) {
        if (*a != *b || *a == '\0') {
            return (unsigned char)*a - (unsigned char)*b;
        }
    }
    return 0;
}

char *strchr(const char *s, int c) {
    for (;; s++) {
        if (*s == (char)c) {
            return (char *)s;
        }
        if (*s == '\0') {
            return NULL;
        }
    }
}

char *strrchr(const char *s, int c) {
    const char *last = NULL;
    for (;; s++) {
        if (*s == (char)c) {
            last = s;
        }
        if (*s == '\0') {
            return (char *)last;
        }
    }
}

char *strstr(const char *haystack, const char *needle) {
    size_t n = strlen(needle);
    for (; *haystack != '\0'; haystack++) {
        if (strncmp(haystack, needle, n) == 0) {
            return (char *)haystack;
        }
    }
    return n == 0 ? (char *)haystack : NULL;
}

char *strcpy(char *restrict dst, const char *restrict src) {
    char *d = dst;
    while ((*d++ = *src++) != '\0') {
    }
    return dst;
}

char *strncpy(char *restrict dst, const char *restrict src, size_t n) {
    size_t i = 0;
    for (; i < n && src[i] != '\0'; i++) {
        dst[i] = src[i];
    }
    for (; i < n; i++) {
        dst[i] = '\0';
    }
    return dst;
}

char *strcat(char *restrict dst, const char *restrict src) {
    strcpy(dst + strlen(dst), src);
    return dst;
}

// Length of the prefix of s made only of bytes in `set` (want_in) or only of bytes not
// in it (!want_in).
static size_t span(const char *s, const char *set, int want_in) {
    size_t n = 0;
    for (; s[n]; n++) {
        if ((strchr(set, s[n]) != NULL) != want_in) {
            break;
        }
    }
    return n;
}

size_t strspn(const char *s, const char *accept) {
    return span(s, accept, 1);
}

size_t strcspn(const char *s, const char *reject) {
    return span(s, reject, 0);
}
