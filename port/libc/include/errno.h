// SPDX-License-Identifier: MIT
// <errno.h>: the port uses MicroPython's internal errno table
// (MICROPY_USE_INTERNAL_ERRNO), so this only declares the variable.
#ifndef LOCIOS_PORT_LIBC_INCLUDE_ERRNO_H
#define LOCIOS_PORT_LIBC_INCLUDE_ERRNO_H

extern int errno;

#endif
