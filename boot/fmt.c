// SPDX-License-Identifier: MIT
// Bounded formatter for the loader (see fmt.h): integers in decimal or hex, strings,
// characters. No floating point, no allocation.
#include "fmt.h"

#include <stdint.h>

struct out {
    char *buf;
    size_t cap;
    size_t len;
};

static void put(struct out *o, char c) {
    if (o->len + 1 < o->cap) {
        o->buf[o->len++] = c;
    }
}

static void put_unsigned(struct out *o, uint64_t v, unsigned base, int upper, unsigned width,
                         char pad) {
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char tmp[24];
    unsigned n = 0;
    do {
        tmp[n++] = digits[v % base];
        v /= base;
    } while (v != 0);
    while (width > n) {
        put(o, pad);
        width--;
    }
    while (n > 0) {
        put(o, tmp[--n]);
    }
}

size_t fmt_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap) {
    struct out o = { buf, cap, 0 };
    for (const char *p = fmt; *p != '\0'; p++) {
        if (*p != '%') {
            put(&o, *p);
            continue;
        }
        p++;
        char pad = ' ';
        if (*p == '0') {
            pad = '0';
            p++;
        }
        unsigned width = 0;
        while (*p >= '0' && *p <= '9') {
            width = width * 10 + (unsigned)(*p++ - '0');
        }
        int longs = 0;
        while (*p == 'l' || *p == 'z') {
            longs = (*p == 'z') ? 2 : longs + 1;
            p++;
        }
        uint64_t u;
        switch (*p) {
            case 'd': {
                int64_t s = longs ? va_arg(ap, long long) : va_arg(ap, int);
                if (s < 0) {
                    put(&o, '-');
                    u = (uint64_t)0 - (uint64_t)s;
                } else {
                    u = (uint64_t)s;
                }
                put_unsigned(&o, u, 10, 0, width, pad);
                break;
            }
            case 'u':
            case 'x':
            case 'X':
                u = longs ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned);
                put_unsigned(&o, u, *p == 'u' ? 10 : 16, *p == 'X', width, pad);
                break;
            case 's': {
                const char *s = va_arg(ap, const char *);
                if (s == NULL) {
                    s = "(null)";
                }
                while (*s != '\0') {
                    put(&o, *s++);
                }
                break;
            }
            case 'c':
                put(&o, (char)va_arg(ap, int));
                break;
            case '%':
                put(&o, '%');
                break;
            case '\0':
                p--;
                break;
            default:
                put(&o, '%');
                put(&o, *p);
                break;
        }
    }
    if (cap > 0) {
        buf[o.len] = '\0';
    }
    return o.len;
}

size_t fmt_snprintf(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    size_t n = fmt_vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}
