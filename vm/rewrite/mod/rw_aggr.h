// SPDX-License-Identifier: MIT
// The rewriter's aggressive mode (issue 7 testing aid): the VM's frame-enter hook
// rewrites every heap function at its first call, after the verifier's replacement check.
#ifndef LOCIOS_VM_REWRITE_MOD_RW_AGGR_H
#define LOCIOS_VM_REWRITE_MOD_RW_AGGR_H

#include <stddef.h>
#include <stdint.h>

#include "rw_plan.h"

// Functions remembered as seen (direct-mapped by bytecode address, power of two); one
// evicted by a collision is planned again at its next call, which finds nothing new.
#ifndef RW_AGGR_SEEN
#define RW_AGGR_SEEN (2048)
#endif
// Bytes of frozen code aggressive mode may copy to rewrite between soft resets (more: the
// rest is left alone, counted as frozen).
#ifndef RW_AGGR_POOL
#define RW_AGGR_POOL (256 * 1024)
#endif
// Most edits one function may take in aggressive mode (more: left alone, too_big).
#ifndef RW_AGGR_MAX_EDITS
#define RW_AGGR_MAX_EDITS (1024)
#endif

// A heap function's opcodes: code (its first opcode) up to the end of its GC block
// (len; zero padding may follow the last instruction), off bytes into the fun_data.
typedef struct {
    uint8_t *code;
    size_t len;
    size_t off;
} rw_code_t;

// Fills *c for the fun_data at bytecode and returns 1, or returns 0 when it is not a
// GC heap block (frozen code lives in the image's read-only memory).
int rw_code_of(const uint8_t *bytecode, rw_code_t *c);

typedef struct {
    uint32_t seen;       // functions planned at a first call
    uint32_t rewritten;  // of those, verified and rewritten
    uint32_t refused;    // the verifier refused the rewritten code
    uint32_t too_big;    // over RW_AGGR_MAX_EDITS or the verifier's VRF_MAX_CODE
    uint32_t frozen;     // not on the GC heap and not copied
    uint32_t copied;     // frozen code copied into the pool (then planned as the others)
    uint32_t unchanged;  // nothing to rewrite
    uint32_t edits[RW_KIND_N];
    char last_refusal[160];
} rw_aggr_stats_t;

// The bits of rw_enter_flags, read by the one line in MICROPY_VM_HOOK_FRAME_ENTER
// (vm/vm_hooks.h, which declares it and rw_frame_enter): zero keeps the hook to one
// test; a set bit sends every frame entry to rw_frame_enter.
#define RW_ENTER_AGGRESSIVE (1)  // rewrite each heap function at its first call
#define RW_ENTER_RECORD     (2)  // record the arguments of calls to one function (rw_record.c)
void rw_aggr_set(int on);
// Forgets the copies of frozen code: only when no function object can point at them (the
// heap they were made in is gone: a soft reset).
void rw_aggr_forget(void);
const rw_aggr_stats_t *rw_aggr_stats(void);

#endif
