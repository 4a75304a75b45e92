// SPDX-License-Identifier: MIT
// The verifier proper: a linear decoding sweep, then abstract interpretation of the
// value stack, slot kinds and exception blocks over the CFG with a worklist.
#include <string.h>

#include "vrf_internal.h"

// What the verifier knows about one value-stack slot (4 bits, slots 1..32).
enum {
    K_OBJ = 0,    // some object
    K_CAUSE,      // None or the VM's exception/unwind cause: END_FINALLY may consume it
    K_NONE,       // None (LOAD_CONST_NONE): a cause, and what a class body may return
    K_QSTR,       // an interned string (LOAD_CONST_STRING): a keyword argument's name
    K_CLASSBODY,  // a function made on top of LOAD_BUILD_CLASS: __build_class__'s body
    K_MODULE,     // IMPORT_NAME's result: IMPORT_STAR reads it as a module unchecked
    K_LIST,       // made by BUILD_LIST (STORE_COMP appends without a type check)
    K_MAP,        // made by BUILD_MAP
    K_SET,        // made by BUILD_SET
    K_CELL,       // a closure cell loaded by LOAD_FAST
    K_NULL,       // MP_OBJ_NULL (LOAD_NULL): only deletes and method calls take it
    K_NULLABLE,   // an object or MP_OBJ_NULL (LOAD_METHOD's self slot)
    K_BUILDCLASS, // __build_class__ (LOAD_BUILD_CLASS): only called with a class body
    K_RAW,        // iterator buffer words (GET_ITER_STACK): never an object; the
                  // four words are K_RAW..K_RAW+3 so FOR_ITER finds whole buffers
};
#define K_RAW_END (K_RAW + VRF_ITER_NSLOTS)
// K_TUPLE + n, n <= VRF_MAX_TUPLE: a tuple of n items (BUILD_TUPLE, a constant), so
// MAKE_*_DEFARGS knows how many defaults it passes.
#define K_TUPLE (64)

static int is_raw(int k) {
    return k >= K_RAW && k < K_RAW_END;
}

static int is_object_kind(int k) {
    return k != K_NULL && k != K_NULLABLE && k != K_BUILDCLASS && !is_raw(k);
}

// Object or MP_OBJ_NULL: what deletes (STORE_ATTR/STORE_SUBSCR) and method self take.
static int is_object_or_null(int k) {
    return is_object_kind(k) || k == K_NULL || k == K_NULLABLE;
}

static int is_cause(int k) {
    return k == K_CAUSE || k == K_NONE;
}

#define F_START (1)   // an instruction starts here
#define F_SEEN (2)    // state recorded
#define F_QUEUED (4)  // on the worklist
#define F_SETUP (8)   // a SETUP_* here made a block node
#define F_INNER (16)  // an operand byte of some instruction

typedef struct {
    uint32_t d;      // depth
    uint32_t blk;    // innermost block: setup offset + 1, 0 for none
    uint8_t k[VRF_MASK_SLOTS];  // kinds of slots 1..32
} st_t;

// Static, so the verifier needs no allocator; sized by vrf_config.h.
static uint8_t s_flags[VRF_MAX_CODE];
static uint16_t s_depth[VRF_MAX_CODE];
static uint16_t s_block[VRF_MAX_CODE];
static uint8_t s_kind[VRF_MAX_CODE][VRF_MASK_SLOTS];
static vrf_child_t s_child[VRF_MAX_CHILDREN];  // how each child is made
static uint8_t s_child_made[VRF_MAX_CHILDREN]; // 0 never, 1 made, 2 made two ways
static uint16_t s_work[VRF_MAX_CODE];
static uint16_t s_nparent[VRF_MAX_CODE];
static uint16_t s_nbase[VRF_MAX_CODE];
static uint16_t s_nhandler[VRF_MAX_CODE];
static uint8_t s_nlevel[VRF_MAX_CODE];
static uint8_t s_cells[32];   // bitmap: locals 0..255 listed in the cell section
// s_flags bytes the last run may have set: only those are cleared by the next one, so a
// bound-mode run over a short frozen function does not clear all VRF_MAX_CODE bytes.
static uint32_t s_dirty = VRF_MAX_CODE;

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
} ctx_t;

static int kget(const st_t *s, uint32_t slot) {
    if (slot == 0 || slot > VRF_MASK_SLOTS) {
        return K_OBJ;
    }
    return s->k[slot - 1];
}

// Slots above the tracked 32 are plain objects: kinds that only grant something
// (cause, collection, cell, qstr) degrade to K_OBJ there, which can only refuse more;
// kinds that forbid something (NULL, raw, __build_class__, class body) cannot be
// dropped and fail under rule "limit".
static int kset(st_t *s, uint32_t slot, int kind) {
    if (slot == 0 || slot > VRF_MASK_SLOTS) {
        return is_object_kind(kind) && kind != K_CLASSBODY;
    }
    s->k[slot - 1] = (uint8_t)kind;
    return 1;
}

static int is_iter_buf(const st_t *s, uint32_t top) {
    if (top < VRF_ITER_NSLOTS) {
        return 0;
    }
    uint32_t b = top - VRF_ITER_NSLOTS + 1;
    if (kget(s, b) == K_NULL && is_object_kind(kget(s, b + 1))) {
        for (uint32_t i = 2; i < VRF_ITER_NSLOTS; i++) {
            if (is_raw(kget(s, b + i))) {
                return 0;
            }
        }
        return 1;
    }
    for (uint32_t i = 0; i < VRF_ITER_NSLOTS; i++) {
        if (kget(s, top - VRF_ITER_NSLOTS + 1 + i) != K_RAW + (int)i) {
            return 0;
        }
    }
    return 1;
}

// Forgets the kinds of slots above depth d (they were popped).
static void kclear_above(st_t *s, uint32_t d) {
    if (d < VRF_MASK_SLOTS) {
        memset(s->k + d, 0, VRF_MASK_SLOTS - d);
    }
}

#define FAIL(rule, what) return vrf_fail(c->res, (rule), in->off, in->op, (what), "")
#define FAILD(rule, what, detail) return vrf_fail(c->res, (rule), in->off, in->op, (what), (detail))

static uint32_t node_base(uint32_t blk) {
    return blk ? s_nbase[blk - 1] : 0;
}

// The SETUP_* opcode that made block blk (its byte is still in the code).
static int node_op(const ctx_t *c, uint32_t blk) {
    return blk ? c->fn->code[blk - 1] : -1;
}

static int node_active(uint32_t blk, uint32_t off) {
    return s_nhandler[blk - 1] <= off;
}

// Pops n slots that must hold objects (allow: extra kinds accepted besides objects).
static int pop_n(ctx_t *c, const vrf_insn_t *in, st_t *s, uint32_t n) {
    if (n > s->d) {
        FAIL(VRF_RULE_STACK, "pops below the bottom of the value stack");
    }
    if (s->d - n < node_base(s->blk)) {
        FAIL(VRF_RULE_BLOCK, "pops below the base of its exception block");
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!is_object_kind(kget(s, s->d - i))) {
            FAIL(VRF_RULE_STACK, "consumes a raw or NULL slot as an object");
        }
    }
    s->d -= n;
    kclear_above(s, s->d);
    return 0;
}

static int push(ctx_t *c, const vrf_insn_t *in, st_t *s, int kind) {
    if (s->d + 1 > VRF_MAX_DEPTH) {
        FAIL(VRF_RULE_LIMIT, "value stack deeper than the verifier's limit");
    }
    s->d += 1;
    if (!kset(s, s->d, kind)) {
        FAIL(VRF_RULE_LIMIT, "raw, NULL or typed slot deeper than the tracked 32");
    }
    return 0;
}

static int join_kind(int a, int b) {
    if (a == b) {
        return a;
    }
    if (is_raw(a) || is_raw(b) || a == K_BUILDCLASS || b == K_BUILDCLASS
        || a == K_CLASSBODY || b == K_CLASSBODY) {
        return -1;
    }
    if (is_cause(a) && is_cause(b)) {
        return K_CAUSE;
    }
    if (a == K_NULL || a == K_NULLABLE || b == K_NULL || b == K_NULLABLE) {
        return K_NULLABLE;
    }
    return K_OBJ;
}

// Records state s flowing from instruction in to offset t.
static int flow_to(ctx_t *c, const vrf_insn_t *in, int64_t t, const st_t *s) {
    uint8_t need = c->fn->len_is_bound ? 0 : F_START;
    if (t < c->pr.code_off || t >= c->end || (s_flags[t] & need) != need
        || (s_flags[t] & F_INNER)) {
        FAIL(VRF_RULE_FLOW, "jumps off an instruction boundary or outside the code");
    }
    if (t <= in->off && !vrf_op_polls(in->op)) {
        FAIL(VRF_RULE_INTERRUPT, "makes a backward edge without a pending-exception check");
    }
    uint32_t u = (uint32_t)t;
    if (u + 1 > s_dirty) {
        s_dirty = u + 1;
    }
    if (!(s_flags[u] & F_SEEN)) {
        s_flags[u] |= F_SEEN;
        s_depth[u] = (uint16_t)s->d;
        s_block[u] = (uint16_t)s->blk;
        memcpy(s_kind[u], s->k, VRF_MASK_SLOTS);
    } else {
        if (s_depth[u] != s->d) {
            FAIL(VRF_RULE_STACK, "reaches a merge point with a different stack depth");
        }
        if (s_block[u] != s->blk) {
            FAIL(VRF_RULE_BLOCK, "reaches a merge point with different exception blocks");
        }
        st_t old = { s->d, s->blk, { 0 } };
        memcpy(old.k, s_kind[u], VRF_MASK_SLOTS);
        st_t mix = old;
        uint32_t top = s->d < VRF_MASK_SLOTS ? s->d : VRF_MASK_SLOTS;
        for (uint32_t i = 1; i <= top; i++) {
            int j = join_kind(kget(&old, i), kget(s, i));
            if (j < 0) {
                FAIL(VRF_RULE_STACK, "merges a raw, __build_class__ or class-body slot with another");
            }
            kset(&mix, i, j);
        }
        if (memcmp(mix.k, old.k, VRF_MASK_SLOTS) == 0) {
            return 0;
        }
        memcpy(s_kind[u], mix.k, VRF_MASK_SLOTS);
    }
    if (!(s_flags[u] & F_QUEUED)) {
        s_flags[u] |= F_QUEUED;
        s_work[c->nwork++] = (uint16_t)u;
    }
    return 0;
}

static int is_cell_local(ctx_t *c, uint32_t i) {
    return i < c->fn->n_free || (i < 256 && (s_cells[i >> 3] & (1u << (i & 7))));
}

static int use_local(ctx_t *c, const vrf_insn_t *in, uint32_t i) {
    if (i >= c->pr.n_state) {
        FAIL(VRF_RULE_DECODE, "local index beyond n_state");
    }
    if (i + 1 > c->max_local) {
        c->max_local = i + 1;
    }
    return 0;
}

// Number of active finally/with handlers on the block chain: each may have been
// entered by an unwind that leaves one more raw word below its cause.
static uint32_t unwind_shift(const ctx_t *c, uint32_t blk, uint32_t off) {
    uint32_t n = 0;
    for (; blk; blk = s_nparent[blk - 1]) {
        if (node_active(blk, off) && node_op(c, blk) != OP_SETUP_EXCEPT) {
            n++;
        }
    }
    return n;
}

// A new exception block for the SETUP_* at in->off, with base depth base.
static int setup_block(ctx_t *c, const vrf_insn_t *in, st_t *s, uint32_t base) {
    uint32_t so = in->off;
    uint32_t level = s->blk ? s_nlevel[s->blk - 1] + 1u : 1u;
    if (level > 255) {
        FAIL(VRF_RULE_LIMIT, "exception blocks nested too deeply");
    }
    if (level > c->res->max_blocks) {
        c->res->max_blocks = level;
    }
    s_flags[so] |= F_SETUP;
    s_nparent[so] = (uint16_t)s->blk;
    s_nbase[so] = (uint16_t)base;
    s_nhandler[so] = (uint16_t)in->target;
    s_nlevel[so] = (uint8_t)level;
    // Exception entry: sp reset to the base, the exception pushed, block still on the
    // exception stack (the handler is "active" by layout: handler <= ip).
    st_t h = *s;
    h.d = base;
    kclear_above(&h, base);
    h.blk = so + 1;
    int r = push(c, in, &h, K_CAUSE);
    if (r) {
        return r;
    }
    r = flow_to(c, in, in->target, &h);
    if (r) {
        return r;
    }
    s->blk = so + 1;
    return 0;
}

// UNWIND_JUMP: the VM pops (extra & 0x7f) blocks, running inactive finally handlers
// (which return here through END_FINALLY) and cancelling active ones, then jumps.
static int unwind_jump(ctx_t *c, const vrf_insn_t *in, st_t *s) {
    uint32_t n = in->extra & 0x7f;
    uint32_t d = s->d, blk = s->blk;
    for (uint32_t i = 0; i < n; i++) {
        if (!blk) {
            FAIL(VRF_RULE_BLOCK, "unwinds more exception blocks than are open");
        }
        int op = node_op(c, blk);
        if (op != OP_SETUP_EXCEPT) {
            if (!node_active(blk, in->off)) {
                if (d != node_base(blk)) {
                    FAIL(VRF_RULE_BLOCK, "unwinds through a finally with the stack off its base");
                }
                // The handler runs and comes back; WITH_CLEANUP drops __exit__ and self.
                if (op == OP_SETUP_WITH) {
                    d -= 2;
                }
            } else {
                if (d != node_base(blk) + 1 || !is_cause(kget(s, d))) {
                    FAIL(VRF_RULE_BLOCK, "cancels an active finally without its cause on top");
                }
                d -= 1;
            }
        }
        blk = s_nparent[blk - 1];
    }
    st_t t = *s;
    t.d = d;
    t.blk = blk;
    kclear_above(&t, d);
    if (in->extra & 0x80) {
        if (d < VRF_ITER_NSLOTS) {
            FAIL(VRF_RULE_STACK, "pops an iterator that is not there");
        }
        if (!is_iter_buf(&t, d)) {
            FAIL(VRF_RULE_STACK, "pops an iterator buffer that is not one");
        }
        t.d = d - VRF_ITER_NSLOTS;
        kclear_above(&t, t.d);
    }
    if (t.d < node_base(t.blk)) {
        FAIL(VRF_RULE_BLOCK, "jumps out below the base of the enclosing block");
    }
    return flow_to(c, in, in->target, &t);
}

static int call_pops(ctx_t *c, const vrf_insn_t *in, st_t *s, int method, int var_kw) {
    if (in->arg > 0xffff) {
        FAIL(VRF_RULE_DECODE, "call argument encodes more than positional/keyword counts");
    }
    uint32_t n_pos = in->arg & 0xff, n_kw = (in->arg >> 8) & 0xff;
    uint32_t n = n_pos + 2 * n_kw + (var_kw ? 1u : 0u);
    uint32_t fslot = s->d - n - (method ? 1u : 0u);  // the callable (checked below)
    if (s->d < n + 1 + (method ? 1u : 0u)) {
        FAIL(VRF_RULE_STACK, "calls with fewer slots than arguments");
    }
    // The VM takes keyword names as interned strings without checking; with star
    // arguments a NULL name marks a **map.
    for (uint32_t i = 0; i < n_kw; i++) {
        uint32_t key = s->d - n + 1 + n_pos + 2 * i;
        int k = kget(s, key);
        if (k != K_QSTR && !(var_kw && k == K_NULL)) {
            FAIL(VRF_RULE_STACK, "passes a keyword whose name is not an interned string");
        }
        kset(s, key, K_OBJ);
    }
    // __build_class__ runs its first argument and stores the class in what it returns:
    // only a class body proved to return None or a cell may be passed.
    if (!method && kget(s, fslot) == K_BUILDCLASS) {
        if (n_pos < 1 || kget(s, fslot + 1) != K_CLASSBODY) {
            FAIL(VRF_RULE_STACK, "calls __build_class__ without a class body");
        }
        kset(s, fslot, K_OBJ);
    }
    int r = pop_n(c, in, s, n);
    if (r) {
        return r;
    }
    if (method) {
        if (s->d < 2 || s->d - 2 < node_base(s->blk)) {
            FAIL(VRF_RULE_STACK, "calls a method that is not on the stack");
        }
        if (!is_object_or_null(kget(s, s->d)) || !is_object_kind(kget(s, s->d - 1))) {
            FAIL(VRF_RULE_STACK, "calls a raw or NULL slot");
        }
        s->d -= 2;
        kclear_above(s, s->d);
    } else if ((r = pop_n(c, in, s, 1))) {
        return r;
    }
    return push(c, in, s, K_OBJ);
}

// Checks one instruction and propagates its state; s becomes the fall-through state.
// *falls is cleared for instructions that never continue to the next one.
static int step(ctx_t *c, const vrf_insn_t *in, st_t *s, int *falls) {
    int r = 0, op = in->op;
    uint32_t a = in->arg;
    *falls = 1;
    if (op >= OP_SMALL_INT_MULTI && op < OP_LOAD_FAST_MULTI) {
        return push(c, in, s, K_OBJ);
    }
    if (op >= OP_LOAD_FAST_MULTI && op < OP_STORE_FAST_MULTI) {
        op = OP_LOAD_FAST_N;
        a = in->op - OP_LOAD_FAST_MULTI;
    } else if (op >= OP_STORE_FAST_MULTI && op < OP_UNARY_OP_MULTI) {
        op = OP_STORE_FAST_N;
        a = in->op - OP_STORE_FAST_MULTI;
    } else if (op >= OP_UNARY_OP_MULTI && op < OP_BINARY_OP_MULTI) {
        return pop_n(c, in, s, 1) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
    } else if (op >= OP_BINARY_OP_MULTI) {
        return pop_n(c, in, s, 2) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
    }
    if (in->fmt == FMT_QSTR && a >= c->fn->n_qstr) {
        FAIL(VRF_RULE_DECODE, "qstr index out of range");
    }
    switch (op) {
        case OP_LOAD_NAME: case OP_LOAD_GLOBAL:
        case OP_LOAD_CONST_SMALL_INT: case OP_LOAD_CONST_FALSE: case OP_LOAD_CONST_TRUE:
            return push(c, in, s, K_OBJ);
        case OP_LOAD_CONST_STRING:
            return push(c, in, s, K_QSTR);
        case OP_LOAD_BUILD_CLASS:
            return push(c, in, s, K_BUILDCLASS);
        case OP_LOAD_CONST_NONE:
            return push(c, in, s, K_NONE);
        case OP_LOAD_NULL:
            return push(c, in, s, K_NULL);
        case OP_LOAD_CONST_OBJ:
            if (a >= c->fn->n_obj) {
                FAIL(VRF_RULE_DECODE, "constant index out of range");
            }
        {
            int ok = c->fn->obj_kind ? c->fn->obj_kind(c->fn->ctx, a) : VRF_OBJ_OTHER;
            if (ok == VRF_OBJ_INVALID) {
                FAIL(VRF_RULE_DECODE, "constant slot holds no object");
            }
            int len = ok - VRF_OBJ_TUPLE;
            return push(c, in, s, len >= 0 && len <= VRF_MAX_TUPLE ? K_TUPLE + len : K_OBJ);
        }
        case OP_LOAD_ATTR: case OP_GET_ITER:
            return pop_n(c, in, s, 1) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
        case OP_LOAD_METHOD:
            return pop_n(c, in, s, 1) || push(c, in, s, K_OBJ) || push(c, in, s, K_NULLABLE)
                   ? c->res->rule : 0;
        case OP_LOAD_SUPER_METHOD:
            return pop_n(c, in, s, 3) || push(c, in, s, K_OBJ) || push(c, in, s, K_NULLABLE)
                   ? c->res->rule : 0;
        case OP_POP_TOP:
            // Discarding is always safe, even a raw iterator word (break pops the
            // buffer word by word); a partial buffer can never satisfy FOR_ITER.
            if (s->d < 1 || s->d - 1 < node_base(s->blk)) {
                FAIL(VRF_RULE_STACK, "pops below the stack or its block");
            }
            s->d -= 1;
            kclear_above(s, s->d);
            return 0;
        case OP_STORE_NAME: case OP_STORE_GLOBAL:
            return pop_n(c, in, s, 1);
        case OP_IMPORT_STAR:
            if (s->d < 1 || kget(s, s->d) != K_MODULE) {
                FAIL(VRF_RULE_STACK, "imports * from a slot not made by IMPORT_NAME");
            }
            return pop_n(c, in, s, 1);
        case OP_DELETE_NAME: case OP_DELETE_GLOBAL:
            return 0;
        case OP_STORE_ATTR: case OP_STORE_SUBSCR: {
            // The value (deepest operand) may be NULL: that is how del is compiled.
            uint32_t n = op == OP_STORE_ATTR ? 2 : 3;
            if (s->d < n || !is_object_or_null(kget(s, s->d - n + 1))) {
                FAIL(VRF_RULE_STACK, "stores a raw slot or pops below the stack");
            }
            kset(s, s->d - n + 1, K_OBJ);
            return pop_n(c, in, s, n);
        }
        case OP_LOAD_SUBSCR:
            return pop_n(c, in, s, 2) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
        case OP_IMPORT_NAME:
            return pop_n(c, in, s, 2) || push(c, in, s, K_MODULE) ? c->res->rule : 0;
        case OP_IMPORT_FROM:
            if (s->d < 1 || !is_object_kind(kget(s, s->d))) {
                FAIL(VRF_RULE_STACK, "imports from a missing or raw module slot");
            }
            return push(c, in, s, K_OBJ);
        case OP_LOAD_FAST_N:
            if ((r = use_local(c, in, a))) {
                return r;
            }
            return push(c, in, s, is_cell_local(c, a) ? K_CELL : K_OBJ);
        case OP_STORE_FAST_N: case OP_DELETE_FAST:
            if ((r = use_local(c, in, a))) {
                return r;
            }
            if (is_cell_local(c, a)) {
                FAIL(VRF_RULE_STACK, "overwrites a closure cell with a plain value");
            }
            return op == OP_STORE_FAST_N ? pop_n(c, in, s, 1) : 0;
        case OP_LOAD_DEREF: case OP_STORE_DEREF: case OP_DELETE_DEREF:
            if ((r = use_local(c, in, a))) {
                return r;
            }
            if (!is_cell_local(c, a)) {
                FAIL(VRF_RULE_STACK, "dereferences a local that is not a cell");
            }
            if (op == OP_LOAD_DEREF) {
                return push(c, in, s, K_OBJ);
            }
            return op == OP_STORE_DEREF ? pop_n(c, in, s, 1) : 0;
        case OP_DUP_TOP:
            if (s->d < 1 || is_raw(kget(s, s->d))) {
                FAIL(VRF_RULE_STACK, "duplicates a missing or raw slot");
            }
            return push(c, in, s, kget(s, s->d));
        case OP_DUP_TOP_TWO: {
            if (s->d < 2 || is_raw(kget(s, s->d)) || is_raw(kget(s, s->d - 1))) {
                FAIL(VRF_RULE_STACK, "duplicates missing or raw slots");
            }
            int k1 = kget(s, s->d - 1), k0 = kget(s, s->d);
            return push(c, in, s, k1) || push(c, in, s, k0) ? c->res->rule : 0;
        }
        case OP_ROT_TWO: case OP_ROT_THREE: {
            uint32_t n = op == OP_ROT_TWO ? 2 : 3;
            if (s->d < n || s->d - n < node_base(s->blk)) {
                FAIL(VRF_RULE_STACK, "rotates slots below the stack or its block");
            }
            int k[3];
            for (uint32_t i = 0; i < n; i++) {
                k[i] = kget(s, s->d - n + 1 + i);
                if (is_raw(k[i])) {
                    FAIL(VRF_RULE_STACK, "rotates a raw slot");
                }
            }
            // ROT_TWO: (a, b) -> (b, a); ROT_THREE: (a, b, c) -> (c, a, b).
            for (uint32_t i = 0; i < n; i++) {
                kset(s, s->d - n + 1 + i, k[(i + n - 1) % n]);
            }
            return 0;
        }
        case OP_BUILD_TUPLE: case OP_BUILD_LIST: case OP_BUILD_SET:
            if (a > VRF_MAX_DEPTH) {
                FAIL(VRF_RULE_STACK, "builds from more slots than the stack holds");
            }
            return pop_n(c, in, s, a)
                   || push(c, in, s, op == OP_BUILD_LIST ? K_LIST : op == OP_BUILD_SET ? K_SET
                                     : a <= VRF_MAX_TUPLE ? K_TUPLE + (int)a : K_OBJ)
                   ? c->res->rule : 0;
        case OP_BUILD_MAP:
            return push(c, in, s, K_MAP);
        case OP_BUILD_SLICE:
            if (a != 2 && a != 3) {
                FAIL(VRF_RULE_DECODE, "slice of neither 2 nor 3 items");
            }
            return pop_n(c, in, s, a) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
        case OP_STORE_MAP:
            if ((r = pop_n(c, in, s, 2))) {
                return r;
            }
            if (s->d < 1 || kget(s, s->d) != K_MAP) {
                FAIL(VRF_RULE_STACK, "stores into a slot not made by BUILD_MAP");
            }
            return 0;
        case OP_STORE_COMP: {
            uint32_t idx = a >> 2, kind = a & 3;
            int want = kind == 0 ? K_LIST : kind == 1 ? K_MAP : K_SET;
            if (idx >= s->d || kget(s, s->d - idx) != want) {
                FAIL(VRF_RULE_STACK, "comprehension target is not the collection it needs");
            }
            return pop_n(c, in, s, kind == 1 ? 2 : 1);
        }
        case OP_UNPACK_SEQUENCE:
            if (a > VRF_MAX_DEPTH || (r = pop_n(c, in, s, 1))) {
                return r ? r : vrf_fail(c->res, VRF_RULE_LIMIT, in->off, in->op, "unpacks too many", "");
            }
            for (uint32_t i = 0; i < a; i++) {
                if ((r = push(c, in, s, K_OBJ))) {
                    return r;
                }
            }
            return 0;
        case OP_UNPACK_EX: {
            uint32_t n = (a & 0xff) + ((a >> 8) & 0xff) + 1;
            if (a > 0xffff) {
                FAIL(VRF_RULE_DECODE, "unpack counts out of range");
            }
            if ((r = pop_n(c, in, s, 1))) {
                return r;
            }
            for (uint32_t i = 0; i < n; i++) {
                if ((r = push(c, in, s, K_OBJ))) {
                    return r;
                }
            }
            return 0;
        }
        case OP_MAKE_FUNCTION: case OP_MAKE_FUNCTION_DEFARGS:
        case OP_MAKE_CLOSURE: case OP_MAKE_CLOSURE_DEFARGS: {
            if (a >= c->fn->n_children) {
                FAIL(VRF_RULE_DECODE, "child index out of range");
            }
            if (a >= VRF_MAX_CHILDREN) {
                FAIL(VRF_RULE_LIMIT, "more children than the verifier tracks");
            }
            int closure = op == OP_MAKE_CLOSURE || op == OP_MAKE_CLOSURE_DEFARGS;
            uint32_t n_closed = closure ? in->extra : 0;
            if (closure) {
                if (n_closed > s->d) {
                    FAIL(VRF_RULE_STACK, "closes over more cells than are on the stack");
                }
                for (uint32_t i = 0; i < n_closed; i++) {
                    if (kget(s, s->d - i) != K_CELL) {
                        FAIL(VRF_RULE_STACK, "closes over a slot that is not a cell");
                    }
                }
                if (s->d - n_closed < node_base(s->blk)) {
                    FAIL(VRF_RULE_BLOCK, "pops below the base of its exception block");
                }
                s->d -= n_closed;
                kclear_above(s, s->d);
            }
            vrf_child_t how = { (int16_t)n_closed, 0, 0, 0 };
            if (op == OP_MAKE_FUNCTION_DEFARGS || op == OP_MAKE_CLOSURE_DEFARGS) {
                // (defaults tuple or NULL, keyword-defaults dict or NULL): the VM only
                // asserts their types, and the child's prelude says how many to read.
                int kt = kget(s, s->d - 1), kd = kget(s, s->d);
                int tuple = kt >= K_TUPLE && kt <= K_TUPLE + VRF_MAX_TUPLE;
                if (s->d < 2 || (kt != K_NULL && !tuple) || (kd != K_NULL && kd != K_MAP)) {
                    FAIL(VRF_RULE_STACK, "default arguments are not a tuple and a dict");
                }
                how.n_defaults = (int16_t)(tuple ? kt - K_TUPLE : 0);
                how.kw_defaults = kd == K_MAP;
                kset(s, s->d - 1, K_OBJ);
                kset(s, s->d, K_OBJ);
                if ((r = pop_n(c, in, s, 2))) {
                    return r;
                }
            }
            how.class_body = kget(s, s->d) == K_BUILDCLASS;
            if (!s_child_made[a]) {
                s_child[a] = how;
                s_child_made[a] = 1;
            } else if (memcmp(&s_child[a], &how, sizeof(how)) != 0) {
                s_child_made[a] = 2;
            }
            return push(c, in, s, how.class_body ? K_CLASSBODY : K_OBJ);
        }
        case OP_CALL_FUNCTION: case OP_CALL_FUNCTION_VAR_KW:
            return call_pops(c, in, s, 0, op == OP_CALL_FUNCTION_VAR_KW);
        case OP_CALL_METHOD: case OP_CALL_METHOD_VAR_KW:
            return call_pops(c, in, s, 1, op == OP_CALL_METHOD_VAR_KW);
        case OP_RETURN_VALUE:
            if (c->fn->class_body && kget(s, s->d) != K_NONE && kget(s, s->d) != K_CELL) {
                FAIL(VRF_RULE_STACK, "returns from a class body something but None or a cell");
            }
            // The VM's unwind cancels each active finally by looking just below the
            // value it carries down (CANCEL_ACTIVE_FINALLY): every such cause must be
            // where the handler started, so those looks stay inside the stack.
            for (uint32_t b = s->blk; b; b = s_nparent[b - 1]) {
                if (node_op(c, b) != OP_SETUP_EXCEPT && node_active(b, in->off)
                    && (s->d < node_base(b) + 2 || !is_cause(kget(s, node_base(b) + 1)))) {
                    FAIL(VRF_RULE_BLOCK, "returns from a finally handler whose cause is gone");
                }
            }
            *falls = 0;
            return pop_n(c, in, s, 1);
        case OP_RAISE_OBJ:
            *falls = 0;
            return pop_n(c, in, s, 1);
        case OP_RAISE_FROM:
            *falls = 0;
            return pop_n(c, in, s, 2);
        case OP_RAISE_LAST:
            *falls = 0;
            return 0;
        case OP_YIELD_VALUE: case OP_YIELD_FROM:
            if (!c->generator) {
                FAIL(VRF_RULE_PRELUDE, "yields in a function not flagged as a generator");
            }
            if (op == OP_YIELD_VALUE) {
                return pop_n(c, in, s, 1) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
            }
            return pop_n(c, in, s, 2) || push(c, in, s, K_OBJ) ? c->res->rule : 0;
        case OP_JUMP:
            *falls = 0;
            return flow_to(c, in, in->target, s);
        case OP_POP_JUMP_IF_TRUE: case OP_POP_JUMP_IF_FALSE:
            return pop_n(c, in, s, 1) || flow_to(c, in, in->target, s) ? c->res->rule : 0;
        case OP_JUMP_IF_TRUE_OR_POP: case OP_JUMP_IF_FALSE_OR_POP:
            if (s->d < 1 || !is_object_kind(kget(s, s->d))) {
                FAIL(VRF_RULE_STACK, "tests a missing or raw slot");
            }
            return flow_to(c, in, in->target, s) || pop_n(c, in, s, 1) ? c->res->rule : 0;
        case OP_SETUP_WITH: {
            // (ctx) -> (__exit__, self) as the block's base, then the __enter__ result;
            // mp_load_method writes two slots beyond the new top while doing so.
            if ((r = pop_n(c, in, s, 1))) {
                return r;
            }
            if (s->d + 4 > c->max_need) {
                c->max_need = s->d + 4;
            }
            if (push(c, in, s, K_OBJ) || push(c, in, s, K_OBJ)
                || setup_block(c, in, s, s->d)) {
                return c->res->rule;
            }
            return push(c, in, s, K_OBJ);
        }
        case OP_SETUP_EXCEPT: case OP_SETUP_FINALLY:
            return setup_block(c, in, s, s->d);
        case OP_POP_EXCEPT_JUMP:
            *falls = 0;
            if (node_op(c, s->blk) != OP_SETUP_EXCEPT) {
                FAIL(VRF_RULE_BLOCK, "pops an exception block that is not an except");
            }
            if (s->d != node_base(s->blk)) {
                FAIL(VRF_RULE_BLOCK, "leaves an except block with the stack off its base");
            }
            s->blk = s_nparent[s->blk - 1];
            return flow_to(c, in, in->target, s);
        case OP_WITH_CLEANUP: {
            uint32_t b = node_base(s->blk);
            if (node_op(c, s->blk) != OP_SETUP_WITH || !node_active(s->blk, in->off)
                || s->d != b + 1 || !is_cause(kget(s, s->d)) || b < 2) {
                FAIL(VRF_RULE_BLOCK, "is not at the start of its with-handler");
            }
            // Writes two slots above its cause; in an unwind (cause one higher) it
            // writes one: base + 3 either way.
            if (b + 3 > c->max_need) {
                c->max_need = b + 3;
            }
            s->d = b - 1;
            kclear_above(s, s->d);
            kset(s, s->d, K_CAUSE);
            return 0;
        }
        case OP_END_FINALLY: {
            int bop = node_op(c, s->blk);
            uint32_t b = node_base(s->blk);
            if (bop < 0 || !node_active(s->blk, in->off) || !is_cause(kget(s, s->d))
                || s->d != (bop == OP_SETUP_WITH ? b - 1 : b + 1)) {
                FAIL(VRF_RULE_BLOCK, "does not end an active handler with its cause on top");
            }
            s->blk = s_nparent[s->blk - 1];
            s->d -= 1;
            kclear_above(s, s->d);
            if (s->d < node_base(s->blk)) {
                FAIL(VRF_RULE_BLOCK, "ends below the base of the enclosing block");
            }
            return 0;
        }
        case OP_GET_ITER_STACK:
            if ((r = pop_n(c, in, s, 1))) {
                return r;
            }
            for (uint32_t i = 0; i < VRF_ITER_NSLOTS; i++) {
                if ((r = push(c, in, s, K_RAW + (int)i))) {
                    return r;
                }
            }
            return 0;
        case OP_FOR_ITER: {
            if (s->d < VRF_ITER_NSLOTS || s->d - VRF_ITER_NSLOTS < node_base(s->blk)) {
                FAIL(VRF_RULE_STACK, "iterates without an iterator buffer");
            }
            if (!is_iter_buf(s, s->d)) {
                FAIL(VRF_RULE_STACK, "iterates over slots that are not an iterator buffer");
            }
            st_t done = *s;
            done.d -= VRF_ITER_NSLOTS;
            kclear_above(&done, done.d);
            if ((r = flow_to(c, in, in->target, &done))) {
                return r;
            }
            return push(c, in, s, K_OBJ);
        }
        case OP_UNWIND_JUMP:
            *falls = 0;
            if (s->d + 2 > c->max_need) {
                c->max_need = s->d + 2;
            }
            return unwind_jump(c, in, s);
        default:
            FAIL(VRF_RULE_DECODE, "opcode not handled");
    }
}

static int decode_one(ctx_t *c, uint32_t off, vrf_insn_t *out);

// The linear sweep: every byte in exactly one instruction, trailing zeros excepted.
static int sweep(ctx_t *c) {
    const vrf_fn_t *fn = c->fn;
    size_t end = fn->len;
    while (end > c->pr.code_off && fn->code[end - 1] == 0) {
        end--;
    }
    c->end = (uint32_t)end;
    c->res->end = c->end;
    if (end == c->pr.code_off) {
        return vrf_fail(c->res, VRF_RULE_FLOW, c->pr.code_off, -1, "function has no opcodes", "");
    }
    for (size_t off = c->pr.code_off; off < end;) {
        vrf_insn_t in;
        int r = decode_one(c, (uint32_t)off, &in);
        if (r) {
            return r;
        }
        off += in.size;
    }
    return 0;
}

// Decodes the instruction at off, checks its profile and marks its bytes: an opcode
// byte may not be another instruction's operand, nor an operand a jump target.
static int decode_one(ctx_t *c, uint32_t off, vrf_insn_t *out) {
    const vrf_fn_t *fn = c->fn;
    vrf_insn_t in;
    const char *why = vrf_decode_insn(fn->code, c->end, off, &in);
    if (why) {
        return vrf_fail(c->res, VRF_RULE_DECODE, off, off < c->end ? fn->code[off] : -1, why, "");
    }
    for (uint32_t i = 1; i < in.size; i++) {
        if (s_flags[off + i] & (F_START | F_SEEN)) {
            return vrf_fail(c->res, VRF_RULE_FLOW, off, in.op,
                "has an operand byte that is also an instruction or a jump target", "");
        }
    }
    {
        char detail[64];
        const char *deny = vrf_profile_check(fn, c->prof, &in, detail, sizeof(detail));
        if (deny) {
            char what[96] = "";
            vrf_strlcat(what, deny, sizeof(what));
            size_t dl = strlen(deny);
            if (dl >= 10 && memcmp(deny + dl - 10, "by profile", 10) == 0) {
                vrf_strlcat(what, " '", sizeof(what));
                vrf_strlcat(what, c->prof->name ? c->prof->name : "?", sizeof(what));
                vrf_strlcat(what, "'", sizeof(what));
            }
            return vrf_fail(c->res, VRF_RULE_PROFILE, off, in.op, what, detail);
        }
    }
    if (off + in.size > s_dirty) {
        s_dirty = off + in.size;
    }
    s_flags[off] |= F_START;
    for (uint32_t i = 1; i < in.size; i++) {
        s_flags[off + i] |= F_INNER;
    }
    c->res->n_insns++;
    c->res->n_bytes += in.size;
    *out = in;
    return 0;
}

static int check_prelude(ctx_t *c) {
    uint32_t bad;
    const char *why = vrf_parse_prelude(c->fn, &c->pr, &bad);
    if (why) {
        return vrf_fail(c->res, VRF_RULE_PRELUDE, bad, -1, why, "");
    }
    vrf_prelude_t *p = &c->pr;
    c->res->n_state = p->n_state;
    c->res->n_exc_stack = p->n_exc_stack;
    c->res->code_offset = p->code_off;
    c->res->n_bytes = p->code_off;
    c->generator = (p->scope_flags & VRF_SCOPE_GENERATOR) != 0;
    if (c->generator && c->fn->class_body) {
        return vrf_fail(c->res, VRF_RULE_PRELUDE, 0, -1, "class body flagged as a generator", "");
    }
    if ((c->fn->n_defaults >= 0 && p->n_def_pos_args != (uint32_t)c->fn->n_defaults)
        || (c->fn->kw_defaults >= 0
            && ((p->scope_flags & VRF_SCOPE_DEFKWARGS) != 0) != (c->fn->kw_defaults != 0))) {
        return vrf_fail(c->res, VRF_RULE_PRELUDE, 0, -1,
            "default-argument counts differ from what the parent passes", "");
    }
    uint32_t n_args = p->n_pos_args + p->n_kwonly_args
                      + ((p->scope_flags & VRF_SCOPE_VARARGS) ? 1 : 0)
                      + ((p->scope_flags & VRF_SCOPE_VARKEYWORDS) ? 1 : 0);
    c->max_local = n_args;
    if (c->fn->n_free > p->n_pos_args) {
        return vrf_fail(c->res, VRF_RULE_PRELUDE, 0, -1,
            "closure passes more cells than the function has positional arguments", "");
    }
    memset(s_cells, 0, sizeof(s_cells));
    for (uint32_t i = 0; i < p->n_cell; i++) {
        uint8_t l = c->fn->code[p->cell_off + i];
        s_cells[l >> 3] |= (uint8_t)(1u << (l & 7));
        if (l + 1u > c->max_local) {
            c->max_local = l + 1u;
        }
    }
    if (c->max_local > p->n_state) {
        return vrf_fail(c->res, VRF_RULE_PRELUDE, 0, -1,
            "n_state does not cover the arguments and cells", "");
    }
    return 0;
}

int vrf_verify_fn(const vrf_fn_t *fn, const vrf_profile_t *profile, vrf_result_t *res) {
    memset(res, 0, sizeof(*res));
    res->opcode = -1;
    if (fn->code == NULL || fn->len > VRF_MAX_CODE) {
        return vrf_fail(res, VRF_RULE_LIMIT, 0, -1, "code larger than the verifier's limit", "");
    }
    ctx_t ctx = { .fn = fn, .prof = profile ? profile : &vrf_profile_trusted, .res = res };
    ctx_t *c = &ctx;
    memset(s_flags, 0, s_dirty);
    s_dirty = 0;
    memset(s_child_made, 0, sizeof(s_child_made));
    int r = check_prelude(c);
    if (r) {
        return r;
    }
    if (fn->len_is_bound) {
        c->end = (uint32_t)fn->len;
        res->end = c->end;
    } else if ((r = sweep(c))) {
        return r;
    }
    // Entry: empty stack, no blocks.
    uint32_t start = c->pr.code_off;
    if (start >= c->end) {
        return vrf_fail(res, VRF_RULE_FLOW, start, -1, "function has no opcodes", "");
    }
    if (start + 1 > s_dirty) {
        s_dirty = start + 1;
    }
    s_flags[start] |= F_SEEN | F_QUEUED;
    s_depth[start] = 0;
    s_block[start] = 0;
    memset(s_kind[start], 0, VRF_MASK_SLOTS);
    s_work[c->nwork++] = (uint16_t)start;
    uint32_t budget = VRF_STEP_FACTOR * (uint32_t)fn->len + 16;
    while (c->nwork) {
        uint32_t off = s_work[--c->nwork];
        s_flags[off] &= (uint8_t)~F_QUEUED;
        if (++res->steps > budget) {
            return vrf_fail(res, VRF_RULE_LIMIT, off, fn->code[off], "step budget exhausted", "");
        }
        vrf_insn_t in;
        if (!(s_flags[off] & F_START)) {
            if ((r = decode_one(c, off, &in))) {  // bound mode: decode on first visit
                return r;
            }
        } else {
            vrf_decode_insn(fn->code, c->end, off, &in);  // decoded before: cannot fail
        }
        st_t s = { s_depth[off], s_block[off], { 0 } };
        memcpy(s.k, s_kind[off], VRF_MASK_SLOTS);
        uint32_t need = s.d + unwind_shift(c, s.blk, off);
        if (need > c->max_need) {
            c->max_need = need;
        }
        int falls;
        if ((r = step(c, &in, &s, &falls))) {
            return r;
        }
        if (s.d > res->max_depth) {
            res->max_depth = s.d;
        }
        need = s.d + unwind_shift(c, s.blk, off);
        if (need > c->max_need) {
            c->max_need = need;
        }
        if (falls) {
            if (off + in.size >= c->end) {
                return vrf_fail(res, VRF_RULE_FLOW, off, in.op, "falls through past the end", "");
            }
            if ((r = flow_to(c, &in, off + in.size, &s))) {
                return r;
            }
        }
    }
    if (c->max_need > res->max_depth) {
        res->max_depth = c->max_need;
    }
    res->n_locals = c->max_local;
    if ((uint64_t)res->n_locals + res->max_depth > c->pr.n_state) {
        char d[48] = "needs ";
        vrf_append_dec(d, res->n_locals + res->max_depth, sizeof(d));
        return vrf_fail(res, VRF_RULE_STACK, 0, -1,
            "n_state does not cover the locals plus the deepest stack", d);
    }
    if (res->max_blocks > c->pr.n_exc_stack) {
        return vrf_fail(res, VRF_RULE_BLOCK, 0, -1,
            "n_exc_stack does not cover the deepest block nesting", "");
    }
    return VRF_OK;
}

int vrf_child(uint32_t child, vrf_child_t *out) {
    if (child >= VRF_MAX_CHILDREN || !s_child_made[child]) {
        return -1;
    }
    *out = s_child[child];
    return s_child_made[child] == 1 ? 0 : -2;
}
