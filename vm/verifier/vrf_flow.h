// SPDX-License-Identifier: MIT
// Private to the worklist pass (vrf_flow.c, vrf_state.c, vrf_block.c, vrf_step.c): slot
// kinds, the abstract state, the per-offset tables and the helpers they share.
#ifndef LOCIOS_VM_VERIFIER_VRF_FLOW_H
#define LOCIOS_VM_VERIFIER_VRF_FLOW_H

#include "vrf_internal.h"

// What the verifier knows about one value-stack slot (slots 1..32).
enum {
    K_OBJ = 0,     // some object
    K_CAUSE,       // None or the VM's exception/unwind cause: END_FINALLY may consume it
    K_NONE,        // None (LOAD_CONST_NONE): a cause, and what a class body may return
    K_QSTR,        // an interned string (LOAD_CONST_STRING): a keyword argument's name
    K_CLASSBODY,   // a function made on top of LOAD_BUILD_CLASS: __build_class__'s body
    K_MODULE,      // IMPORT_NAME's result: IMPORT_STAR reads it as a module unchecked
    K_LIST,        // made by BUILD_LIST (STORE_COMP appends without a type check)
    K_MAP,         // made by BUILD_MAP
    K_SET,         // made by BUILD_SET
    K_CELL,        // a closure cell loaded by LOAD_FAST
    K_NULL,        // MP_OBJ_NULL (LOAD_NULL): only deletes and method calls take it
    K_NULLABLE,    // an object or MP_OBJ_NULL (LOAD_METHOD's self slot)
    K_BUILDCLASS,  // __build_class__ (LOAD_BUILD_CLASS): only called with a class body
    K_EXC,         // None or an exception instance, never an unwind sentinel: what an
                   // async-with handler's END_FINALLY may take when it falls through
    K_UDATA,       // unwind data below the sentinel: a raw jump address or the return
                   // value; only moved, never consumed
    K_USENT,       // the unwind sentinel (a small int) on top of K_UDATA
    K_RAW,         // iterator buffer words (GET_ITER_STACK): never an object; the
                   // four words are K_RAW..K_RAW+3 so FOR_ITER finds whole buffers
};
#define K_RAW_END (K_RAW + VRF_ITER_NSLOTS)
// K_TUPLE + n, n <= VRF_MAX_TUPLE: a tuple of n items (BUILD_TUPLE, a constant), so
// MAKE_*_DEFARGS knows how many defaults it passes.
#define K_TUPLE   (64)

#define F_START  (1)    // an instruction starts here
#define F_SEEN   (2)    // primary state recorded
#define F_QUEUED (4)    // primary state on the worklist
#define F_SETUP  (8)    // a SETUP_* here made a block node
#define F_INNER  (16)   // an operand byte of some instruction
#define F_TARGET (32)   // some state (primary or unwind layout) flows here
#define F_ASYNC  (64)   // the SETUP_FINALLY here opens an async-with block
#define F_ATAIL  (128)  // the ROT_TWO that ends an async-with body (vrf_async_tail)

// The abstract state at one instruction. unw is 0 for the layouts the VM makes by
// exception entry and normal flow; for an async-with handler entered by an unwind it is
// that block (setup offset + 1): its (data, sentinel) pair is then explicit on the
// stack, and such states are kept apart from the others at the same offset.
typedef struct {
    uint32_t d;    // depth
    uint32_t blk;  // innermost block: setup offset + 1, 0 for none
    uint32_t unw;
    uint8_t k[VRF_MASK_SLOTS];  // kinds of slots 1..32
} st_t;

// Unwind-layout states live in a small pool (VRF_MAX_ALT), at most one per offset.
typedef struct {
    uint16_t off, d, blk, unw;
    uint8_t queued;
    uint8_t k[VRF_MASK_SLOTS];
} alt_t;
#define WORK_ALT (0x8000)  // worklist entry: pool index | WORK_ALT
_Static_assert(VRF_MAX_CODE <= WORK_ALT, "offsets must leave the worklist's alt bit free");

// Static, so the verifier needs no allocator; sized by vrf_config.h (vrf_state.c).
extern uint8_t vrf_s_flags[VRF_MAX_CODE];
extern uint16_t vrf_s_depth[VRF_MAX_CODE];
extern uint16_t vrf_s_block[VRF_MAX_CODE];
extern uint8_t vrf_s_kind[VRF_MAX_CODE][VRF_MASK_SLOTS];
extern uint16_t vrf_s_alt_at[VRF_MAX_CODE];  // pool index + 1, 0: none
extern alt_t vrf_s_alt[VRF_MAX_ALT];
extern uint32_t vrf_s_nalt;
extern vrf_child_t vrf_s_child[VRF_MAX_CHILDREN];
extern uint8_t vrf_s_child_made[VRF_MAX_CHILDREN];
extern uint16_t vrf_s_work[VRF_MAX_CODE + VRF_MAX_ALT];
extern uint16_t vrf_s_nparent[VRF_MAX_CODE];
extern uint16_t vrf_s_nbase[VRF_MAX_CODE];
extern uint16_t vrf_s_nhandler[VRF_MAX_CODE];
extern uint8_t vrf_s_nlevel[VRF_MAX_CODE];
extern uint8_t vrf_s_cells[32];
extern uint32_t vrf_s_dirty;

typedef struct {
    const vrf_fn_t *fn;
    const vrf_profile_t *prof;
    vrf_result_t *res;
    vrf_prelude_t pr;
    uint32_t end;
    uint32_t nwork;
    uint32_t max_local;  // highest local index used + 1
    uint32_t max_need;   // deepest slot the VM may touch, incl. unwind shifts
    uint8_t generator;
    uint8_t rewritten;  // rewrite opcodes allowed: a replacement check (vrf_replace.c)
} ctx_t;

#define FAIL(rule, what) return vrf_fail(c->res, (rule), in->off, in->op, (what), "")

static inline int is_raw(int k) {
    return k >= K_RAW && k < K_RAW_END;
}

static inline int is_object_kind(int k) {
    return k != K_NULL && k != K_NULLABLE && k != K_BUILDCLASS && k != K_UDATA && !is_raw(k);
}

// Object or MP_OBJ_NULL: what deletes (STORE_ATTR/STORE_SUBSCR) and method self take.
static inline int is_object_or_null(int k) {
    return is_object_kind(k) || k == K_NULL || k == K_NULLABLE;
}

static inline int is_cause(int k) {
    return k == K_CAUSE || k == K_NONE || k == K_EXC;
}

static inline void need(ctx_t *c, uint32_t n) {
    if (n > c->max_need) {
        c->max_need = n;
    }
}

// vrf_state.c: slot kinds, pushes and pops, merges.
int vrf_kget(const st_t *s, uint32_t slot);
int vrf_kset(st_t *s, uint32_t slot, int kind);
void vrf_kclear_above(st_t *s, uint32_t d);
int vrf_is_iter_buf(const st_t *s, uint32_t top);
int vrf_pop_n(ctx_t *c, const vrf_insn_t *in, st_t *s, uint32_t n);
int vrf_push(ctx_t *c, const vrf_insn_t *in, st_t *s, int kind);
int vrf_flow_to(ctx_t *c, const vrf_insn_t *in, int64_t t, const st_t *s);
int vrf_use_local(ctx_t *c, const vrf_insn_t *in, uint32_t i);
int vrf_is_cell_local(ctx_t *c, uint32_t i);

// vrf_block.c: exception blocks.
uint32_t vrf_node_base(uint32_t blk);
int vrf_node_op(const ctx_t *c, uint32_t blk);
int vrf_node_active(uint32_t blk, uint32_t off);
int vrf_node_async(uint32_t blk);
uint32_t vrf_floor(const st_t *s, uint32_t off);
uint32_t vrf_unwind_shift(const ctx_t *c, uint32_t blk, uint32_t off);
int vrf_setup_block(ctx_t *c, const vrf_insn_t *in, st_t *s, uint32_t base);
int vrf_unwind_runs(ctx_t *c, const vrf_insn_t *in, uint32_t blk);
int vrf_keeps_active(ctx_t *c, const vrf_insn_t *in, uint32_t blk, uint32_t off);
int vrf_unwind_jump(ctx_t *c, const vrf_insn_t *in, st_t *s);
int vrf_async_tail(ctx_t *c, const vrf_insn_t *in, st_t *s);
int vrf_block_op(ctx_t *c, const vrf_insn_t *in, st_t *s, int *falls);

// vrf_step.c: one instruction's effect.
int vrf_step(ctx_t *c, const vrf_insn_t *in, st_t *s, int *falls);

// vrf_flow.c: decoding an instruction on first sight (bound mode); the whole proof,
// with rewritten = 1 accepting the rewriter's opcodes (only the replacement path does).
int vrf_decode_one(ctx_t *c, uint32_t off, vrf_insn_t *out);
int vrf_verify_mode(const vrf_fn_t *fn, const vrf_profile_t *profile, vrf_result_t *res,
                    int rewritten);

// vrf_rewrite.c: a rewrite head's fast and slow paths.
int vrf_rw_step(ctx_t *c, const vrf_insn_t *in, st_t *s, int *falls);

// Short names inside the verifier's own files; the linked symbols keep the vrf_ prefix
// (the image links these files with all of MicroPython).
#define kget         vrf_kget
#define kset         vrf_kset
#define kclear_above vrf_kclear_above
#define pop_n        vrf_pop_n
#define push         vrf_push
#define flow_to      vrf_flow_to
#define node_base    vrf_node_base
#define node_op      vrf_node_op
#define node_active  vrf_node_active

#endif
