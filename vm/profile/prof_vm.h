// SPDX-License-Identifier: MIT
// The profiler's VM half: the published chain of running bytecode frames and the
// counters' fast paths, inlined into mp_execute_bytecode by the hooks in mpconfigport.h.
#ifndef LOCIOS_PROF_VM_H
#define LOCIOS_PROF_VM_H

#include <stdint.h>

struct _mp_code_state_t;

// One counted function, keyed by its bytecode (fun_bc->bytecode). The table lives in
// the GC's root pointers, so `key` and `fun` keep what they name alive until reset.
typedef struct prof_slot {
    const void *key;        // the bytecode (shared by every closure of one def)
    const void *fun;        // the first function object seen running it
    uint64_t calls;         // frames that finished (returned or raised)
    uint64_t back;          // backward jumps taken
    uint64_t next_hot;      // calls + back at which the next hot event fires
    uint64_t hot;           // hot events so far
} prof_slot_t;

// One sample as the timer interrupt wrote it: the running function object and its ip.
// The ring is a root pointer too: a sample keeps its function alive until drained.
typedef struct prof_sample {
    const void *fun;
    const void *ip;
} prof_sample_t;

// One link per running mp_execute_bytecode, in that function's C stack frame. The
// chain's head is the running frame; the timer interrupt reads it (prof.c says why that
// is always safe).
typedef struct prof_frame {
    const struct _mp_code_state_t *cs;
    struct prof_frame *prev;
    uint32_t left;          // back edges still to come before the next batch flush
} prof_frame_t;

extern prof_frame_t *volatile prof_top;

void prof_batch(prof_frame_t *f);
void prof_hot(prof_slot_t *s);
void prof_leave_slow(prof_frame_t *f, prof_slot_t *table, const void *key, int finished);
void prof_abort_unwind(const void *abort_point);

#define PROF_ALWAYS_INLINE static inline __attribute__((always_inline))

// Publish f (fully written first: the compiler barrier keeps the stores in order, and
// an interrupt on this CPU sees them in program order).
PROF_ALWAYS_INLINE void prof_enter(prof_frame_t *f, const struct _mp_code_state_t *cs) {
    f->cs = cs;
    f->prev = prof_top;
    f->left = LOCIOS_PROF_BATCH;
    __asm__ volatile ("" ::: "memory");
    prof_top = f;
}

// Unpublish f while it is still intact, then count it: the table slot is found at its
// home index by one compare; anything else (collision, first sight) and the hot event
// are out of line.
PROF_ALWAYS_INLINE void prof_leave(prof_frame_t *f, prof_slot_t *table, const void *key,
    int finished) {
    prof_top = f->prev;
    __asm__ volatile ("" ::: "memory");
    #if LOCIOS_PROF_COUNTERS
    prof_slot_t *s = &table[((uintptr_t)key >> 4) & (LOCIOS_PROF_SLOTS - 1)];
    if (__builtin_expect(s->key == key, 1)) {
        s->calls += finished;
        s->back += LOCIOS_PROF_BATCH - f->left;
        if (__builtin_expect(s->calls + s->back >= s->next_hot, 0)) {
            prof_hot(s);
        }
    } else {
        prof_leave_slow(f, table, key, finished);
    }
    #else
    (void)table;
    (void)key;
    (void)finished;
    #endif
}

#endif
