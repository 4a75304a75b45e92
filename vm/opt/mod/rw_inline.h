// SPDX-License-Identifier: MIT
// Inlined calls (rw_inline.c): the callees the optimiser names while it compiles a twin.
// The mode and the emitter's counter are py/nativeglue.h's (vm/patches/0030).
#ifndef LOCIOS_VM_OPT_MOD_RW_INLINE_H
#define LOCIOS_VM_OPT_MOD_RW_INLINE_H

#include "py/obj.h"

MP_DECLARE_CONST_FUN_OBJ_1(rw_inline_obj);
MP_DECLARE_CONST_FUN_OBJ_0(rw_inline_stats_obj);
void rw_inline_deinit(void);

#endif
