// SPDX-License-Identifier: MIT
// A tiny, bounded printf-style formatter with no libc and no UEFI dependency, shared
// by the loader's console and the pure checkers (which build on the host too).
#ifndef LOCIOS_BOOT_FMT_H
#define LOCIOS_BOOT_FMT_H

#include <stdarg.h>
#include <stddef.h>

// Conversions: %s %c %d %u %x %X %%, with an optional '0' flag, a width, and the
// length modifiers l, ll, z. Output is always NUL-terminated when cap > 0 and is
// truncated rather than overrun. Returns the number of characters written (no NUL).
size_t fmt_vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap);
size_t fmt_snprintf(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
