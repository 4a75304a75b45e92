// SPDX-License-Identifier: MIT
// <alloca.h>: stack allocation through the compiler builtin.
#ifndef LOCIOS_LIBC_ALLOCA_H
#define LOCIOS_LIBC_ALLOCA_H

#include <stddef.h>

#define alloca(size) __builtin_alloca(size)

#endif
