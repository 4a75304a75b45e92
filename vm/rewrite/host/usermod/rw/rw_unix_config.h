// SPDX-License-Identifier: MIT
// Forced into every file of the unix oracle build (-include, vm/rewrite.mk): the rewritten
// opcodes (vm/patches/0007) and aggressive mode's frame-enter hook, as port/mpconfigport.h
// sets them for LociOS, without the profiler.
#include "rw_opcodes.h"
#define MICROPY_VM_EXTRA_OPCODES_H "rw_ops.h"
#define MICROPY_VM_EXTRA_ENTRIES_H "rw_entries.h"
#define MICROPY_VM_HOOK_FRAME_ENTER \
    { extern uint8_t rw_enter_flags; extern void rw_frame_enter(struct _mp_code_state_t *); if (__builtin_expect(rw_enter_flags, 0)) { rw_frame_enter(code_state); } }
