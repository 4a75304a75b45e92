// SPDX-License-Identifier: MIT
// Forced into every file of the unix oracle build (-include, vm/rewrite.mk): the rewritten
// opcodes (vm/patches/0007), aggressive mode's frame-enter hook and the watched swaps'
// frame-raise hook (0011), as port/mpconfigport.h
// sets them for LociOS, without the profiler.
#include "rw_opcodes.h"
#define MICROPY_VM_EXTRA_OPCODES_H "rw_ops.h"
#define MICROPY_VM_EXTRA_ENTRIES_H "rw_entries.h"
#define MICROPY_VM_HOOK_FRAME_ENTER \
    { extern uint8_t rw_enter_flags; extern void rw_frame_enter(struct _mp_code_state_t *); if (__builtin_expect(rw_enter_flags, 0)) { rw_frame_enter(code_state); } }
#define MICROPY_VM_HOOK_FRAME_RAISE(fun, exc) \
    { extern size_t rw_watch_n; extern void rw_watch_raise(mp_obj_t, mp_obj_t); \
      if (__builtin_expect(rw_watch_n, 0)) { rw_watch_raise(MP_OBJ_FROM_PTR(fun), (exc)); } }
