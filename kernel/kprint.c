// SPDX-License-Identifier: MIT
// kprintf: the kernel's formatted output to every console end (console.c), and
// kvsnprintf into a buffer.
// Integers, strings, characters and pointers; no floating point (interrupt paths use it
// too).
#include "kernel.h"

struct sink {
    char *buf;  // NULL: the console, through `chunk`
    size_t cap, len;
    char chunk[64];
    size_t used;
};

static struct sink *out;  // where put() writes; set for the length of one format call

static void console_flush_chunk(struct sink *s) {
    if (s->used) {
        kcon_write(s->chunk, s->used);
        s->used = 0;
    }
}

static void uart_putc_sink(char c) {
    if (!out->buf) {
        if (out->used == sizeof out->chunk) {
            console_flush_chunk(out);
        }
        out->chunk[out->used++] = c;
        return;
    }
    if (out->len + 1 < out->cap) {
        out->buf[out->len] = c;
    }
    out->len++;
}
#define uart_putc uart_putc_sink

static void put_str(const char *s, int width, bool left) {
    int len = 0;
    while (s[len]) {
        len++;
    }
    for (int i = len; !left && i < width; i++) {
        uart_putc(' ');
    }
    while (*s) {
        uart_putc(*s++);
    }
    for (int i = len; left && i < width; i++) {
        uart_putc(' ');
    }
}

static void put_uint(uint64_t v, unsigned base, int width, char pad, bool neg) {
    char buf[24];
    int n = 0;
    do {
        unsigned d = (unsigned)(v % base);
        buf[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        v /= base;
    } while (v);
    if (neg) {
        if (pad == '0') {
            uart_putc('-');
        } else {
            buf[n++] = '-';
        }
        width--;
    }
    for (int i = n; i < width; i++) {
        uart_putc(pad);
    }
    while (n) {
        uart_putc(buf[--n]);
    }
}

static void format(struct sink *to, const char *fmt, va_list ap) {
    struct sink *saved = out;
    out = to;
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            if (*fmt == '\n' && !to->buf) {
                uart_putc('\r');
            }
            uart_putc(*fmt);
            continue;
        }
        fmt++;
        bool left = false;
        char pad = ' ';
        if (*fmt == '-') {
            left = true;
            fmt++;
        }
        if (*fmt == '0') {
            pad = '0';
            fmt++;
        }
        int width = 0;
        while (*fmt >= '0' && *fmt <= '9') {
            width = width * 10 + (*fmt++ - '0');
        }
        int longs = 0;
        while (*fmt == 'l' || *fmt == 'z') {
            longs++;
            fmt++;
        }
        switch (*fmt) {
            case 'd': {
                int64_t v = longs ? va_arg(ap, int64_t) : va_arg(ap, int);
                put_uint(v < 0 ? -(uint64_t)v : (uint64_t)v, 10, width, pad, v < 0);
                break;
            }
            case 'u':
                put_uint(longs ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 10, width, pad,
                         false);
                break;
            case 'x':
                put_uint(longs ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 16, width, pad,
                         false);
                break;
            case 'p':
                put_str("0x", 0, false);
                put_uint((uintptr_t)va_arg(ap, void *), 16, 16, '0', false);
                break;
            case 's': {
                const char *s = va_arg(ap, const char *);
                put_str(s ? s : "(null)", width, left);
                break;
            }
            case 'c':
                uart_putc((char)va_arg(ap, int));
                break;
            case '%':
                uart_putc('%');
                break;
            default:
                uart_putc('%');
                if (*fmt) {
                    uart_putc(*fmt);
                } else {
                    out = saved;
                    return;
                }
        }
    }
    out = saved;
}

void kvprintf(const char *fmt, va_list ap) {
    struct sink console = { .buf = NULL };
    format(&console, fmt, ap);
    console_flush_chunk(&console);
}

size_t kvsnprintf(char *buf, size_t cap, const char *fmt, va_list ap) {
    struct sink b = { .buf = buf, .cap = cap };
    format(&b, fmt, ap);
    if (cap) {
        buf[b.len < cap ? b.len : cap - 1] = '\0';
    }
    return b.len < cap ? b.len : (cap ? cap - 1 : 0);
}

void kprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    kvprintf(fmt, ap);
    va_end(ap);
}

size_t ksnprintf(char *buf, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    size_t n = kvsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}
