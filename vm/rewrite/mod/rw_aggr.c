// SPDX-License-Identifier: MIT
// Aggressive mode: at the first call of each heap function (the VM's frame-enter hook),
// plan every kind, check the result with the C verifier's replacement check, apply.
// A frozen function's code (in the image's read-only memory) is first copied into a
// static pool and its function pointed at the copy, which is then rewritten the same way.
#include <string.h>

#include "py/bc.h"
#include "py/gc.h"
#include "py/objfun.h"
#include "py/runtime.h"

#include "rw_aggr.h"
#include "rw_own.h"
#include "rw_record.h"
#include "verify.h"
#include "vm_describe.h"

uint8_t rw_enter_flags;

// Not GC roots on purpose: addresses are only compared, never followed. Code freed and
// reused at the same address is taken for seen (left as it is: still correct code).
static const uint8_t *s_seen[RW_AGGR_SEEN];
static rw_aggr_stats_t s_stats;
// The hook runs at frame entry and may not allocate (a collection there could run a
// finaliser's bytecode, and a MemoryError would escape from a call): static buffers.
static rw_edit_t s_edits[RW_AGGR_MAX_EDITS];
static uint8_t s_new[VRF_MAX_CODE];

static const mp_obj_type_t *cell_type(void);

// ---- Copies of frozen code --------------------------------------------------------------
// The hook may not allocate from the GC heap, so copies go to a static pool, each after a
// header naming the frozen code it copies. Function objects point into the pool until the
// heap they live in is dropped: rw_aggr_forget (a soft reset) empties it.
typedef struct {
    const uint8_t *orig;  // the frozen fun_data copied
    size_t total;         // bytes copied: the prelude and the reachable opcodes
} pool_head_t;

static uint8_t s_pool[RW_AGGR_POOL] __attribute__((aligned(16)));
static size_t s_pool_used;

static const pool_head_t *pool_head_of(const uint8_t *bytecode) {
    if (bytecode < s_pool || bytecode >= s_pool + s_pool_used) {
        return NULL;
    }
    return (const pool_head_t *)(bytecode - sizeof(pool_head_t));
}

// f's frozen code copied into the pool (*c describes the copy, f now runs it), with the
// entering frame moved onto the copy. 0, with nothing changed, when the frame is not at
// the code's first opcode, the function object is itself frozen, the code does not
// decode to a closed prefix or the pool is full.
static int pool_copy(mp_code_state_t *cs, rw_code_t *c) {
    mp_obj_fun_bc_t *f = cs->fun_bc;
    const uint8_t *bc = f->bytecode;
    if (gc_nbytes(f) == 0 || cs->exc_sp_idx != 0) {
        return 0;
    }
    const byte *ip = bc;
    MP_BC_PRELUDE_SIG_DECODE(ip);
    MP_BC_PRELUDE_SIZE_DECODE(ip);
    size_t off = (size_t)(ip - bc) + n_info + n_cell;
    if (cs->ip != bc + off) {
        return 0;
    }
    size_t len = rw_reachable_len(bc + off, VRF_MAX_CODE);
    // A zero byte after the last opcode, as on heap code; entries stay 16-byte aligned.
    size_t need = sizeof(pool_head_t) + ((off + len + 1 + 15) & ~(size_t)15);
    if (len == 0 || off + len > VRF_MAX_CODE || need > sizeof(s_pool) - s_pool_used) {
        return 0;
    }
    pool_head_t *h = (pool_head_t *)(s_pool + s_pool_used);
    uint8_t *copy = (uint8_t *)(h + 1);
    h->orig = bc;
    h->total = off + len;
    memcpy(copy, bc, off + len);
    memset(copy + off + len, 0, need - sizeof(pool_head_t) - (off + len));
    s_pool_used += need;
    f->bytecode = copy;
    cs->ip = copy + off;
    c->code = copy + off;
    c->len = len;
    c->off = off;
    return 1;
}

// A frame of a function copied since the frame began (a generator made before its first
// resume, an outer call of a recursion) still points into the frozen code: move it onto
// the copy, byte for byte the same code at the same offsets, so that the VM finds its
// line numbers and handlers where the function's code now is.
static void follow_copy(mp_code_state_t *cs) {
    const uint8_t *bc = cs->fun_bc->bytecode;
    const pool_head_t *h = pool_head_of(bc);
    if (h == NULL) {
        return;
    }
    if (cs->ip >= h->orig && cs->ip < h->orig + h->total) {
        cs->ip = bc + (cs->ip - h->orig);
    }
    mp_exc_stack_t *exc = (mp_exc_stack_t *)(cs->state + cs->n_state);
    for (size_t i = 0; i < cs->exc_sp_idx; i++) {
        if (exc[i].handler >= h->orig && exc[i].handler < h->orig + h->total) {
            exc[i].handler = bc + (exc[i].handler - h->orig);
        }
    }
}

void rw_aggr_forget(void) {
    s_pool_used = 0;
}

int rw_code_of(const uint8_t *bytecode, rw_code_t *c) {
    size_t n = gc_nbytes(bytecode);  // 0 unless bytecode heads a GC heap block
    if (n == 0) {
        return 0;
    }
    const byte *ip = bytecode;
    MP_BC_PRELUDE_SIG_DECODE(ip);
    MP_BC_PRELUDE_SIZE_DECODE(ip);
    c->off = (size_t)(ip - bytecode) + n_info + n_cell;
    if (c->off >= n) {
        return 0;
    }
    c->code = (uint8_t *)bytecode + c->off;
    c->len = n - c->off;
    return 1;
}

void rw_aggr_set(int on) {
    cell_type();  // while allocating is plainly safe
    if (on) {
        // Forget addresses seen before: a soft reset's fresh heap puts new code at the
        // addresses of the old (the guest upstream suite's every test would be skipped).
        memset(s_seen, 0, sizeof(s_seen));
    }
    rw_enter_flags =
        (uint8_t)((rw_enter_flags & ~RW_ENTER_AGGRESSIVE) | (on ? RW_ENTER_AGGRESSIVE : 0));
}

const rw_aggr_stats_t *rw_aggr_stats(void) {
    return &s_stats;
}

// ---- The verifier's replacement check ---------------------------------------------------
// What vrf_verify_replacement needs to know of a heap function, as `vm` describes it for
// vm.check_replacement (vm/verifier/mod/vm_describe.h).

// py/objcell.c keeps the cell type static: learn it from a cell made once (under
// nlr: a MemoryError here is not the caller's). NULL if that failed.
static const mp_obj_type_t *s_cell_type;

static const mp_obj_type_t *cell_type(void) {
    if (s_cell_type == NULL) {
        nlr_buf_t nlr;
        if (nlr_push(&nlr) == 0) {
            s_cell_type = mp_obj_get_type(mp_obj_new_cell(MP_OBJ_NULL));
            nlr_pop();
        }
    }
    return s_cell_type;
}

// Cells a closure passes come first among the arguments (py/objclosure.c); Python code
// has no way to pass a cell itself, so the leading cell locals at entry are those.
static uint32_t count_free(const mp_code_state_t *cs, const mp_obj_type_t *cell) {
    const byte *ip = cs->fun_bc->bytecode;
    MP_BC_PRELUDE_SIG_DECODE(ip);
    uint32_t n = 0;
    while (n < n_pos_args && n < cs->n_state &&
           mp_obj_get_type(cs->state[cs->n_state - 1 - n]) == cell) {
        n++;
    }
    return n;
}

// The replacement check aggressive mode runs before applying: 0 when the rewritten
// fun_data (new, len bytes) verifies as a replacement of the running function's, else
// the verifier's message. Profile 'trusted': heap code here has no other owner profile.
static const char *rw_check_replacement(const mp_code_state_t *cs, const uint8_t *new_code,
                                        size_t len) {
    static vrf_result_t res;
    vrf_fn_t nf, of;
    const mp_obj_type_t *cell = cell_type();
    if (cell == NULL) {
        return "no memory to learn the cell type";
    }
    // A root: no defaults are known to be passed, and the cells are those at entry.
    vrf_child_t made = { (int16_t)count_free(cs, cell), -1, -1, 0 };
    const mp_obj_fun_bc_t *f = cs->fun_bc;
    vm_describe(&nf, new_code, len, &f->context->constants, f->child_table, &made);
    vm_describe(&of, f->bytecode, len, &f->context->constants, f->child_table, &made);
    return vrf_verify_replacement(&nf, &of, &vrf_profile_trusted, &res) ? res.msg : NULL;
}

// ---- The hook ---------------------------------------------------------------------------

static size_t seen_slot(const uint8_t *p) {
    uintptr_t a = (uintptr_t)p >> 4;  // GC blocks are 16-byte aligned
    return (size_t)((a ^ (a >> 11)) & (RW_AGGR_SEEN - 1));
}

void rw_frame_enter(struct _mp_code_state_t *cs) {
    if (rw_enter_flags & RW_ENTER_RECORD) {
        rw_record_enter(cs);
    }
    if (!(rw_enter_flags & RW_ENTER_AGGRESSIVE)) {
        return;
    }
    // Inside a collection or under heap_lock: a finaliser's frame may have interrupted
    // the verifier itself (its tables are static). Try again at a later call.
    if (gc_is_locked()) {
        return;
    }
    follow_copy(cs);
    const uint8_t *bc = cs->fun_bc->bytecode;
    size_t slot = seen_slot(bc);
    if (s_seen[slot] == bc) {
        return;
    }
    s_seen[slot] = bc;
    s_stats.seen++;
    if (pool_head_of(bc) != NULL) {
        return;  // a copy met again after its slot was taken: rewritten when it was made
    }
    rw_code_t c;
    if (!rw_code_of(bc, &c)) {
        if (!pool_copy(cs, &c)) {
            s_stats.frozen++;
            return;
        }
        s_stats.copied++;
        bc = cs->fun_bc->bytecode;
        s_seen[seen_slot(bc)] = bc;
    }
    size_t n = rw_plan(c.code, c.len, s_edits, RW_AGGR_MAX_EDITS, rw_kinds_all);
    if (n == 0) {
        s_stats.unchanged++;
        return;
    }
    size_t total = c.off + c.len;
    if (n > RW_AGGR_MAX_EDITS || total > sizeof(s_new)) {
        s_stats.too_big++;
        return;
    }
    memcpy(s_new, bc, total);
    rw_apply(s_new + c.off, c.len, s_edits, n);
    const char *why = rw_check_replacement(cs, s_new, total);
    if (why) {
        s_stats.refused++;
        size_t m = strlen(why);
        m = m < sizeof(s_stats.last_refusal) - 1 ? m : sizeof(s_stats.last_refusal) - 1;
        memcpy(s_stats.last_refusal, why, m);
        s_stats.last_refusal[m] = 0;
        return;
    }
    rw_apply(c.code, c.len, s_edits, n);
    s_stats.rewritten++;
    for (size_t i = 0; i < n; i++) {
        s_stats.edits[s_edits[i].kind]++;
    }
}
