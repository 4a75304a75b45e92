// SPDX-License-Identifier: MIT
// <alloca.h>: stack allocation through the compiler builtin.
#ifndef LOCIOS_PORT_LIBC_INCLUDE_ALLOCA_H
#define LOCIOS_PORT_LIBC_INCLUDE_ALLOCA_H

#include <stddef.h>

#define alloca(size) __builtin_alloca(size)

#endif
