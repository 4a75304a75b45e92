// SPDX-License-Identifier: MIT
// Type feedback for float sites (rw_float.c); the mode and the emitter's counter are
// py/nativeglue.h's (vm/patches/0029).
#ifndef LOCIOS_VM_OPT_MOD_RW_FLOAT_H
#define LOCIOS_VM_OPT_MOD_RW_FLOAT_H

#include <stddef.h>

void rw_float_forget(void);
size_t rw_float_noted(void);

#endif
