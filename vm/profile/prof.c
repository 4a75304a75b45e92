// SPDX-License-Identifier: MIT
// The profiler's core: the published frame chain, the call and back-edge counters with
// their hot threshold, and the LAPIC-timer sampler writing (function, ip) into a ring.
#include "prof.h"

#include "kapi.h"
#include "py/bc.h"
#include "py/mpstate.h"
#include "py/objfun.h"

// ---- Why the interrupt never reads freed or reused memory ------------------------------
// prof_top is the head of a chain of prof_frame_t links, one in the C stack frame of
// every running mp_execute_bytecode (vm/patches/0006). At every instruction boundary:
//  - a link is published only after its fields are written (prof_enter: compiler
//    barrier, then one 8-byte store; one CPU, so the interrupt sees program order), and
//    unpublished (prof_top = prev, one store) before its C frame returns;
//  - every way out of mp_execute_bytecode passes FRAME_LEAVE (return, yield, escaping
//    exception, unknown opcode) except nlr_jump_abort, which skips whole frames; its
//    hook (prof_abort_unwind) pops every link below the abort point first (links are
//    on the one C stack, which grows down, so "below" is an address compare);
//  - a published link's code_state is live: it is in the same C frame or a caller's
//    (alloca or heap, freed by fun_bc_call only after mp_execute_bytecode returned), or
//    in a generator object that the resuming caller holds on its stack;
//  - its fun_bc is constant for the frame and kept alive by the code_state; its ip is
//    one aligned 8-byte word the VM stores at each dispatch.
// So the interrupt copies two words (fun_bc, ip) out of a live code_state and never
// follows them. In the ring those words are GC roots (the ring is a root pointer), so
// the function stays alive until the sample is drained, and the bytecode with it.
// Samples are not taken while the GC collects: finalisers may run bytecode whose
// function is freed in the same sweep, after the roots were marked.

prof_frame_t *volatile prof_top;

static volatile uint64_t ring_head;  // written by the interrupt only
static volatile uint64_t ring_tail;  // written by the thread only
static struct prof_stats stats;
static uint32_t saved_hz;  // the tick rate before prof_start

#define RING  (MP_STATE_VM(prof_ring))
#define TABLE (MP_STATE_VM(prof_table))

static bool collecting(void) {
    return (MP_STATE_THREAD(gc_lock_depth) & GC_COLLECT_FLAG) != 0;
}

// ---- Sampler (interrupt context: no allocation, no locks) -------------------------------
static void prof_tick(void) {
    prof_frame_t *f = prof_top;
    if (f == NULL) {
        stats.idle++;
        return;
    }
    if (collecting()) {
        stats.in_gc++;
        return;
    }
    uint64_t head = ring_head;
    if (head - ring_tail >= LOCIOS_PROF_RING) {
        stats.lost_full++;
        return;
    }
    prof_sample_t *e = &RING[head & (LOCIOS_PROF_RING - 1)];
    e->fun = f->cs->fun_bc;
    e->ip = f->cs->ip;
    __asm__ volatile("" ::: "memory");
    ring_head = head + 1;
    stats.taken++;
}

bool prof_start(uint32_t hz) {
    uint32_t old = ktime_tick_hz();
    if (!ktime_set_tick_hz(hz)) {
        return false;
    }
    if (stats.hz == 0) {
        saved_hz = old;
    }
    stats.hz = hz;
    ktime_set_tick_hook(prof_tick);
    return true;
}

void prof_stop(void) {
    if (stats.hz == 0) {
        return;
    }
    ktime_set_tick_hook(NULL);
    ktime_set_tick_hz(saved_hz);
    stats.hz = 0;
}

bool prof_pop(prof_sample_t *out) {
    uint64_t tail = ring_tail;
    if (tail == ring_head) {
        return false;
    }
    prof_sample_t *e = &RING[tail & (LOCIOS_PROF_RING - 1)];
    *out = *e;
    e->fun = e->ip = NULL;  // drained: no longer pins the function
    __asm__ volatile("" ::: "memory");
    ring_tail = tail + 1;
    return true;
}

void prof_get_stats(struct prof_stats *out) {
    *out = stats;
}

// ---- Counters --------------------------------------------------------------------------
// A function's slot is found by linear probing from its home index. New slots are
// made only outside a collection (a finaliser's function may die in the same sweep).
// Exits add calls and back edges to the slot (prof_leave); the hot events are settled
// from those counts whenever someone reads them (prof_settle), so the exit path stays
// a mask, a compare and two adds.
typedef struct prof_heat {
    uint64_t next_hot;  // calls + back at which the next hot event fires
    uint64_t hot;       // hot events so far
} prof_heat_t;
static prof_heat_t heat[LOCIOS_PROF_SLOTS];

static size_t home_of(const void *key) {
    return ((uintptr_t)key >> 4) & (LOCIOS_PROF_SLOTS - 1);
}

static prof_slot_t *claim(size_t at, const void *key, const void *fun) {
    prof_slot_t *s = &TABLE[at];
    s->calls = s->back = 0;
    s->fun = fun;
    heat[at] = (prof_heat_t){ .next_hot = LOCIOS_PROF_HOT_FIRST };
    __asm__ volatile("" ::: "memory");
    s->key = key;
    return s;
}

// When every slot of the probe window holds another function, the newcomer takes the
// slot of the least active one (calls + back edges; the table would otherwise keep
// whatever it counted first for ever, and every exit of a function it has no room for
// would probe the window again: 55 % on a generator chain). A function that stays hot
// soon outweighs the stale entries around its home; the evicted one starts from zero
// if it comes back.
static prof_slot_t *find_slot(const void *key, const void *fun, bool make) {
    size_t home = home_of(key);
    size_t least = home;
    for (size_t i = 0; i < LOCIOS_PROF_PROBES; i++) {
        size_t at = (home + i) & (LOCIOS_PROF_SLOTS - 1);
        prof_slot_t *s = &TABLE[at];
        if (s->key == key) {
            return s;
        }
        if (s->key == NULL) {
            return make && !collecting() ? claim(at, key, fun) : NULL;
        }
        if (s->calls + s->back < TABLE[least].calls + TABLE[least].back) {
            least = at;
        }
    }
    if (!make || collecting()) {
        return NULL;
    }
    stats.evicted++;
    return claim(least, key, fun);
}

static void add(const prof_frame_t *f, uint64_t calls, uint64_t back) {
    const mp_obj_fun_bc_t *fun = f->cs->fun_bc;
    prof_slot_t *s = find_slot(fun->bytecode, fun, true);
    if (s == NULL) {
        stats.unslotted++;
        return;
    }
    s->calls += calls;
    s->back += back;
}

void prof_leave_slow(prof_frame_t *f, const void *key, int finished) {
    (void)key;
    add(f, (uint64_t)finished, f->back);
}

// The frames nlr_jump_abort is about to skip are intact until it jumps: count their
// back edges (not a call: they never finished) and unpublish them.
void prof_abort_unwind(const void *abort_point) {
    prof_frame_t *f = prof_top;
    while (f != NULL && (uintptr_t)f < (uintptr_t)abort_point) {
#if LOCIOS_PROF_COUNTERS
        add(f, 0, f->back);
#endif
        f = f->prev;
        prof_top = f;
    }
}

// Threshold and back-off: a slot's first hot event fires when calls + back edges reach
// LOCIOS_PROF_HOT_FIRST; each event doubles the threshold, so a function that stays hot
// is reported about log2(count) times, not on every call (the optimiser reads `hot`).
// Settling first moves the back edges still held by running frames (every published
// link: their frames are live, and this is thread context) into the table, so reads
// see exact counts; then it fires every threshold crossed since the last read, which
// gives the same events as testing at every exit would have.
void prof_settle(void) {
#if LOCIOS_PROF_COUNTERS
    for (prof_frame_t *f = prof_top; f != NULL; f = f->prev) {
        if (f->back != 0) {
            add(f, 0, f->back);
            f->back = 0;
        }
    }
#endif
    for (size_t i = 0; i < LOCIOS_PROF_SLOTS; i++) {
        const prof_slot_t *s = &TABLE[i];
        if (s->key == NULL) {
            continue;
        }
        while (s->calls + s->back >= heat[i].next_hot) {
            heat[i].hot++;
            stats.hot++;
            heat[i].next_hot *= 2;
        }
    }
}

uint64_t prof_hot_events(size_t slot) {
    return heat[slot].hot;
}

const prof_slot_t *prof_table(void) {
    return TABLE;
}

void prof_reset(void) {
    for (size_t i = 0; i < LOCIOS_PROF_SLOTS; i++) {
        TABLE[i] = (prof_slot_t){ 0 };
        heat[i] = (prof_heat_t){ 0 };
    }
    prof_sample_t s;
    while (prof_pop(&s)) {
    }
    uint32_t hz = stats.hz;
    stats = (struct prof_stats){ 0 };
    stats.hz = hz;
}

void prof_deinit(void) {
    prof_stop();
    prof_reset();
}

// ---- Source positions ------------------------------------------------------------------
const byte *prof_code_start(const mp_obj_fun_bc_t *fun) {
    const byte *ip = fun->bytecode;
    MP_BC_PRELUDE_SIG_DECODE(ip);
    MP_BC_PRELUDE_SIZE_DECODE(ip);
    return ip + n_info + n_cell;
}

// As the VM does for tracebacks (py/vm.c, exception_handler).
void prof_where(const mp_obj_fun_bc_t *fun, const byte *ip_at, prof_where_t *out) {
    const byte *ip = fun->bytecode;
    MP_BC_PRELUDE_SIG_DECODE(ip);
    MP_BC_PRELUDE_SIZE_DECODE(ip);
    const byte *line_info_top = ip + n_info;
    const byte *code = ip + n_info + n_cell;
    size_t name = mp_decode_uint_value(ip);
    for (size_t i = 0; i < 1 + n_pos_args + n_kwonly_args; ++i) {
        ip = mp_decode_uint_skip(ip);
    }
    const qstr_short_t *qstrs = fun->context->constants.qstr_table;
    out->offset = (size_t)(ip_at - code);
    out->line = mp_bytecode_get_source_line(ip, line_info_top, out->offset);
    out->name = qstrs[name];
    out->file = qstrs[0];
    out->opcode = *ip_at;
}
