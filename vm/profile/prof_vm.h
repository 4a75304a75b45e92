// SPDX-License-Identifier: MIT
// The profiler's VM half: the published chain of running bytecode frames and the
// counters' fast paths, inlined into mp_execute_bytecode by the hooks in vm/vm_hooks.h.
#ifndef LOCIOS_VM_PROFILE_PROF_VM_H
#define LOCIOS_VM_PROFILE_PROF_VM_H

#include <stdint.h>

struct _mp_code_state_t;

// One counted function, keyed by its bytecode (fun_bc->bytecode). The table lives in
// the GC's root pointers, so `key` and `fun` keep what they name alive until reset.
// 32 bytes, so a frame exit finds the home slot with one mask and a scaled address.
// The hot-event state (threshold, events) is kept apart in prof.c: exits never touch it.
typedef struct prof_slot {
    const void *key;  // the bytecode (shared by every closure of one def)
    const void *fun;  // the first function object seen running it
    uint64_t calls;   // frames that finished (returned or raised)
    uint64_t back;    // backward jumps taken
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
    uint64_t back;  // back edges taken in this frame, not yet in the table
} prof_frame_t;

extern prof_frame_t *volatile prof_top;

void prof_leave_slow(prof_frame_t *f, const void *key, int finished);
void prof_abort_unwind(const void *abort_point);

#define PROF_ALWAYS_INLINE static inline __attribute__((always_inline))
// A compiler barrier (GCC's: no instruction on any CPU): the stores before it are not
// moved after it. An interrupt on this CPU sees the stores in program order, so this is
// all publishing a link takes.
#define PROF_BARRIER()     __asm__ volatile("" ::: "memory")

// The counting fast paths: prof_branch(f, target, jump) adds 1 to f->back when the jump
// goes back (target <= jump); prof_count_exit(f, table, key, finished) adds the frame's
// call (if finished) and back edges to key's home slot, or goes out of line to
// prof_leave_slow when the slot holds another key. Per CPU, in the file the port names
// in LOCIOS_PROF_ARCH_H (prof_vmx64.h); plain C otherwise.
#ifdef LOCIOS_PROF_ARCH_H
#include LOCIOS_PROF_ARCH_H
#else
PROF_ALWAYS_INLINE void prof_branch(prof_frame_t *f, const void *target, const void *jump) {
    f->back += (uintptr_t)target <= (uintptr_t)jump;
}

PROF_ALWAYS_INLINE void prof_count_exit(prof_frame_t *f, prof_slot_t *table, const void *key,
                                        int finished) {
    prof_slot_t *s = &table[((uintptr_t)key >> 4) & (LOCIOS_PROF_SLOTS - 1)];
    if (s->key != key) {
        prof_leave_slow(f, key, finished);
        return;
    }
    s->calls += finished ? 1 : 0;
    s->back += f->back;
}
#endif

// Publish f, fully written first.
PROF_ALWAYS_INLINE void prof_enter(prof_frame_t *f, const struct _mp_code_state_t *cs) {
    f->cs = cs;
    f->prev = prof_top;
    f->back = 0;
    PROF_BARRIER();
    prof_top = f;
}

// Unpublish f while it is still intact, then count it into its home slot. No threshold
// test here: hot events are settled when the counters are read (prof_settle).
PROF_ALWAYS_INLINE void prof_leave(prof_frame_t *f, prof_slot_t *table, const void *key,
                                   int finished) {
    prof_top = f->prev;
    PROF_BARRIER();
#if LOCIOS_PROF_COUNTERS
    prof_count_exit(f, table, key, finished);
#else
    (void)table;
    (void)key;
    (void)finished;
#endif
}

#endif
