// SPDX-License-Identifier: MIT
// <stdio.h> for the freestanding port: only what MicroPython's core refers to.
// printf and friends come from MicroPython's shared/libc/printf.c.
#ifndef LOCIOS_PORT_LIBC_INCLUDE_STDIO_H
#define LOCIOS_PORT_LIBC_INCLUDE_STDIO_H

#include <stdarg.h>
#include <stddef.h>

#include <unistd.h>  // SEEK_SET, SEEK_CUR, SEEK_END

#define EOF (-1)

int printf(const char *fmt, ...);
int vprintf(const char *fmt, va_list ap);
int snprintf(char *buf, size_t len, const char *fmt, ...);
int vsnprintf(char *buf, size_t len, const char *fmt, va_list ap);
int putchar(int c);
int puts(const char *s);

#endif
