// SPDX-License-Identifier: MIT
// The profiler's VM half: the published chain of running bytecode frames and the
// counters' fast paths, inlined into mp_execute_bytecode by the hooks in mpconfigport.h.
#ifndef LOCIOS_PROF_VM_H
#define LOCIOS_PROF_VM_H

#include <stdint.h>

struct _mp_code_state_t;

// One counted function, keyed by its bytecode (fun_bc->bytecode). The table lives in
// the GC's root pointers, so `key` and `fun` keep what they name alive until reset.
// 32 bytes, so a frame exit finds the home slot with one mask and a scaled address.
// The hot-event state (threshold, events) is kept apart in prof.c: exits never touch it.
typedef struct prof_slot {
    const void *key;        // the bytecode (shared by every closure of one def)
    const void *fun;        // the first function object seen running it
    uint64_t calls;         // frames that finished (returned or raised)
    uint64_t back;          // backward jumps taken
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
    uint64_t back;          // back edges taken in this frame, not yet in the table
} prof_frame_t;

extern prof_frame_t *volatile prof_top;

void prof_leave_slow(prof_frame_t *f, const void *key, int finished);
void prof_abort_unwind(const void *abort_point);

#define PROF_ALWAYS_INLINE static inline __attribute__((always_inline))

// Publish f (fully written first: the compiler barrier keeps the stores in order, and
// an interrupt on this CPU sees them in program order).
PROF_ALWAYS_INLINE void prof_enter(prof_frame_t *f, const struct _mp_code_state_t *cs) {
    f->cs = cs;
    f->prev = prof_top;
    f->back = 0;
    __asm__ volatile ("" ::: "memory");
    prof_top = f;
}

// A jump from `jump` to `target` is a back edge when the target is not after it. The
// compare sets the carry for a forward jump (jump < target) and `sbb $-1` adds 1 - carry:
// two instructions and no branch (C's `back += target <= jump` compiles to four).
PROF_ALWAYS_INLINE void prof_branch(prof_frame_t *f, const void *target, const void *jump) {
    __asm__ ("cmpq %[t], %[j]\n\tsbbq $-1, %[n]"
        : [n] "+m" (f->back)
        : [t] "r" (target), [j] "rm" (jump)
        : "cc");
}

// Unpublish f while it is still intact, then count it into its home slot: one mask, one
// compare, two adds (a collision or a first sight goes out of line). No threshold test
// here: hot events are settled when the counters are read (prof_settle). In asm because
// GCC spends an extra lea on the slot address and pairs the adds into SSE (six
// instructions for two adds); `table` must be a link-time constant (it is
// MP_STATE_VM(prof_table)), used as the displacement of a scaled index: a slot is 32
// bytes, so &table[(key >> 4) & (SLOTS - 1)] = table + 2 * (key & ((SLOTS - 1) << 4)).
PROF_ALWAYS_INLINE void prof_leave(prof_frame_t *f, prof_slot_t *table, const void *key,
    int finished) {
    prof_top = f->prev;
    __asm__ volatile ("" ::: "memory");
    #if LOCIOS_PROF_COUNTERS
    _Static_assert(sizeof(prof_slot_t) == 32, "prof_slot_t is 32 bytes");
    uintptr_t at = (uintptr_t)key & ((uintptr_t)(LOCIOS_PROF_SLOTS - 1) << 4);
    uint64_t back = f->back;
    if (finished) {
        __asm__ goto (
            "cmpq %[key], %c[tab](,%[at],2)\n\t"
            "jne %l[miss]\n\t"
            "addq $1, %c[tab]+16(,%[at],2)\n\t"
            "addq %[back], %c[tab]+24(,%[at],2)"
            : : [key] "r" (key), [at] "r" (at), [back] "r" (back), [tab] "i" (table)
            : "cc", "memory" : miss);
    } else {
        __asm__ goto (
            "cmpq %[key], %c[tab](,%[at],2)\n\t"
            "jne %l[miss]\n\t"
            "addq %[back], %c[tab]+24(,%[at],2)"
            : : [key] "r" (key), [at] "r" (at), [back] "r" (back), [tab] "i" (table)
            : "cc", "memory" : miss);
    }
    return;
miss:
    prof_leave_slow(f, key, finished);
    #else
    (void)table;
    (void)key;
    (void)finished;
    #endif
}

#endif
