// SPDX-License-Identifier: MIT
// <assert.h>: a failed assert prints where and stops the machine (port/libc/assert.c).
#ifndef LOCIOS_PORT_LIBC_INCLUDE_ASSERT_H
#define LOCIOS_PORT_LIBC_INCLUDE_ASSERT_H

void __assert_func(const char *file, int line, const char *func, const char *expr)
    __attribute__((noreturn));

#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : __assert_func(__FILE__, __LINE__, __func__, #e))
#endif

#ifndef __cplusplus
#define static_assert _Static_assert
#endif

#endif
