// SPDX-License-Identifier: MIT
// Source texts kept for native twins: see rw_source.c. rw_src_keep, the lexer's hook, and
// rw_src_deinit are declared in vm/vm_hooks.h.
#ifndef LOCIOS_VM_OPT_MOD_RW_SOURCE_H
#define LOCIOS_VM_OPT_MOD_RW_SOURCE_H

#include "py/obj.h"

// [(source name, bytes)] of the kept source texts, newest first.
mp_obj_t rw_src_list(void);
// The serial number of the text the lexer was last given (0: not kept).
extern uint32_t rw_src_current;
// The kept (source name, bytes) with this serial number, or None.
mp_obj_t rw_src_by_serial(uint32_t serial);

#endif
