// SPDX-License-Identifier: MIT
// <stdlib.h> for the freestanding port. There is no malloc: MicroPython allocates from
// its own GC heap (MICROPY_GC...), so only the pure helpers are declared.
#ifndef LOCIOS_PORT_LIBC_INCLUDE_STDLIB_H
#define LOCIOS_PORT_LIBC_INCLUDE_STDLIB_H

#include <stddef.h>

#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1

void abort(void) __attribute__((noreturn));
void exit(int status) __attribute__((noreturn));
int abs(int x);
long labs(long x);
long long llabs(long long x);

#endif
