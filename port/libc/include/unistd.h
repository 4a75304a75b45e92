// SPDX-License-Identifier: MIT
// <unistd.h> for the freestanding port: only the types MicroPython's core refers to.
#ifndef LOCIOS_PORT_LIBC_INCLUDE_UNISTD_H
#define LOCIOS_PORT_LIBC_INCLUDE_UNISTD_H

#include <stddef.h>

typedef long ssize_t;
typedef long off_t;

#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2

#endif
