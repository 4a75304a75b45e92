// SPDX-License-Identifier: MIT
// <inttypes.h> for the freestanding port: <stdint.h> and the 32-bit printf macros
// (lib/littlefs includes it; LP64, so int32_t is int).
#ifndef LOCIOS_PORT_LIBC_INCLUDE_INTTYPES_H
#define LOCIOS_PORT_LIBC_INCLUDE_INTTYPES_H

#include <stdint.h>

#define PRId32 "d"
#define PRIi32 "i"
#define PRIu32 "u"
#define PRIx32 "x"
#define PRIX32 "X"

#endif
