// SPDX-License-Identifier: MIT
// The profiler's public C interface: the timer sampler, the sample ring, the counters
// table and the source position of a (function, offset) pair. No qstrs here.
#ifndef LOCIOS_VM_PROFILE_PROF_H
#define LOCIOS_VM_PROFILE_PROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "py/obj.h"
#include "py/objfun.h"

#include "prof_vm.h"

struct prof_stats {
    uint64_t taken;      // samples written to the ring
    uint64_t lost_full;  // ticks that found the ring full
    uint64_t idle;       // ticks with no bytecode frame running (REPL wait, C only)
    uint64_t in_gc;      // ticks during a collection (skipped: see prof.c)
    uint64_t unslotted;  // function exits not counted (no slot made during a collection)
    uint64_t evicted;    // slots given to a newcomer, its probe window being full
    uint64_t hot;        // hot events (threshold crossings) so far
    uint32_t hz;         // sampling rate, 0 when stopped
};

// Start sampling at hz (the kernel's tick rate becomes hz); false if out of range.
bool prof_start(uint32_t hz);
void prof_stop(void);
void prof_get_stats(struct prof_stats *out);
// Forget samples, counters and statistics (sampling keeps its state).
void prof_reset(void);
// Soft reset: stop and forget everything (the heap the table pins is going away).
void prof_deinit(void);

// Take the oldest sample; false when the ring is empty. Thread context only.
bool prof_pop(prof_sample_t *out);

// Where `ip` is in bytecode function `fun`: offset from the first opcode, source line,
// the function's name and file (qstrs), and the opcode byte there.
typedef struct prof_where {
    size_t offset;
    size_t line;
    qstr name;
    qstr file;
    int opcode;
} prof_where_t;
void prof_where(const mp_obj_fun_bc_t *fun, const byte *ip, prof_where_t *out);
const byte *prof_code_start(const mp_obj_fun_bc_t *fun);

// The counters table (LOCIOS_PROF_SLOTS entries; key NULL = empty). Call prof_settle()
// before reading it (or the stats' `hot`): it adds the back edges running frames still
// hold and fires the hot events the counts have crossed.
const prof_slot_t *prof_table(void);
void prof_settle(void);
uint64_t prof_hot_events(size_t slot);

#endif
