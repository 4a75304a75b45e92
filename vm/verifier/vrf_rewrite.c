// SPDX-License-Identifier: MIT
// The rewriter's head opcodes (vm/rewrite/rw_opcodes.h) in the verifier: their names,
// the pattern each must head (rule 1) and both paths of each through the abstract state.
#include "vrf_flow.h"

const char *vrf_rw_name(int op) {
    static const char *const cmpj[] = {
        "CMPJ_LT", "CMPJ_GT", "CMPJ_EQ",     "CMPJ_LE", "CMPJ_GE", "CMPJ_NE", "ADD_SI",
        "SUB_SI",  "MUL_SI",  "FLOORDIV_SI", "MOD_SI",  "AND_SI",  "OR_SI",   "XOR_SI",
    };
    static const char *const hi[] = {
        "IADD_SI", "ISUB_SI", "RSHIFT_SI", "LSHIFT_SI", "SUBSCR_SI", "STORE_SUBSCR_SI",
    };
    if (!vrf_rw_op(op)) {
        return "?";
    }
    if (op <= LOCIOS_BC_XOR_SI) {
        return cmpj[op - LOCIOS_BC_CMPJ_LT];
    }
    if (op >= LOCIOS_BC_IADD_SI && op <= LOCIOS_BC_STORE_SUBSCR_SI) {
        return hi[op - LOCIOS_BC_IADD_SI];
    }
    switch (op) {
        case LOCIOS_BC_FORRANGE_SI:
            return "FORRANGE_SI";
        case LOCIOS_BC_INCR_FAST:
            return "INCR_FAST";
        case LOCIOS_BC_RETURN_NONE:
            return "RETURN_NONE";
        case LOCIOS_BC_LOAD_GLOBAL_C:
            return "LOAD_GLOBAL_C";
        case LOCIOS_BC_LOAD_ATTR_C:
            return "LOAD_ATTR_C";
        default:
            return "LOAD_METHOD_C";
    }
}

static int is_cmpj(int op) {
    return op >= LOCIOS_BC_CMPJ_LT && op <= LOCIOS_BC_CMPJ_NE;
}

// The tail byte at code[at] (an opcode of the pattern): 0 past the end, else the byte.
static int tail(const uint8_t *code, size_t end, size_t at) {
    return at < end ? code[at] : 0;
}

// The pattern contract: the instructions after a head are exactly the original ones of
// its pattern (vm/rewrite/rw_opcodes.h), none of them itself a rewrite opcode, since the head's
// fast path reads them (CMPJ, FORRANGE: the jump's label; INCR_FAST: k, the op, n) and
// its slow path falls into them. Returns 0 or the reason.
const char *vrf_rw_contract(const uint8_t *code, size_t end, uint32_t off) {
    int op = code[off];
    int t[3] = { tail(code, end, off + 1), tail(code, end, off + 2), tail(code, end, off + 3) };
    int n = is_cmpj(op) || op == LOCIOS_BC_RETURN_NONE                 ? 1
            : op == LOCIOS_BC_FORRANGE_SI || op == LOCIOS_BC_INCR_FAST ? 3
                                                                       : 0;
    for (int i = 0; i < n; i++) {
        if (t[i] && locios_bc_is_new((uint8_t)t[i])) {
            return "heads a pattern whose tail holds a rewrite opcode";
        }
    }
    if (is_cmpj(op)) {
        if (t[0] != LOCIOS_BC_ORIG_POP_JUMP_IF_TRUE && t[0] != LOCIOS_BC_ORIG_POP_JUMP_IF_FALSE) {
            return "not followed by POP_JUMP_IF_TRUE or POP_JUMP_IF_FALSE";
        }
    } else if (op == LOCIOS_BC_FORRANGE_SI) {
        if (t[0] != LOCIOS_BC_ORIG_ROT_TWO ||
            (t[1] != LOCIOS_BC_ORIG_BINARY_OP + LOCIOS_BINOP_LESS &&
             t[1] != LOCIOS_BC_ORIG_BINARY_OP + LOCIOS_BINOP_MORE) ||
            t[2] != LOCIOS_BC_ORIG_POP_JUMP_IF_TRUE) {
            return "not followed by ROT_TWO, BINARY_OP LESS or MORE, POP_JUMP_IF_TRUE";
        }
    } else if (op == LOCIOS_BC_INCR_FAST) {
        if (t[0] < LOCIOS_BC_ORIG_SMALL_INT_MULTI || t[0] >= LOCIOS_BC_ORIG_LOAD_FAST_MULTI ||
            (t[1] != LOCIOS_BC_ORIG_BINARY_OP + LOCIOS_BINOP_INPLACE_ADD &&
             t[1] != LOCIOS_BC_ORIG_BINARY_OP + LOCIOS_BINOP_INPLACE_SUBTRACT) ||
            t[2] < LOCIOS_BC_ORIG_STORE_FAST_MULTI ||
            t[2] >= LOCIOS_BC_ORIG_STORE_FAST_MULTI + 16) {
            return "not followed by LOAD_CONST_SMALL_INT, BINARY_OP INPLACE_ADD or "
                   "INPLACE_SUBTRACT, STORE_FAST";
        }
    } else if (op == LOCIOS_BC_RETURN_NONE) {
        if (t[0] != LOCIOS_BC_ORIG_RETURN_VALUE) {
            return "not followed by RETURN_VALUE";
        }
    }
    return 0;
}

int vrf_rw_canon(const uint8_t *code, size_t end, uint32_t off) {
    return locios_bc_undo(code, end, off);
}

// The head's own jump, the POP_JUMP_IF_* that ends its pattern, n instructions on.
static const char *tail_jump(ctx_t *c, const vrf_insn_t *in, uint32_t n, vrf_insn_t *j) {
    return vrf_decode_insn(c->fn->code, c->end, in->off + n, j);
}

// A rewrite head: its fast path's successors here, then its slow path, which is the
// original head instruction exactly (the canonical opcode, same operands) falling into
// the tail. Heads whose fast path has the original's stack effect and successor (the
// *_SI arithmetic and subscripts, the caches, RETURN_NONE, which only saves a
// dispatch into its RETURN_VALUE) need only the slow path.
int vrf_rw_step(ctx_t *c, const vrf_insn_t *in, st_t *s, int *falls) {
    vrf_insn_t slow = *in, j;
    slow.op = (uint8_t)vrf_rw_canon(c->fn->code, c->end, in->off);
    int r, op = in->op;
    if (is_cmpj(op)) {
        // Both small ints: pop both, then the POP_JUMP's two successors; it polls
        // pending exceptions like the POP_JUMP it stands for (vrf_op_polls).
        st_t f = *s;
        if (tail_jump(c, in, 1, &j)) {
            FAIL(VRF_RULE_DECODE, "tail jump does not decode");
        }
        if ((r = pop_n(c, in, &f, 2)) || (r = flow_to(c, in, j.target, &f)) ||
            (r = flow_to(c, in, j.off + j.size, &f))) {
            return r;
        }
    } else if (op == LOCIOS_BC_FORRANGE_SI) {
        // Compares end and i in place: no push, the POP_JUMP's two successors.
        if (s->d < 2 || !is_object_kind(kget(s, s->d)) || !is_object_kind(kget(s, s->d - 1))) {
            FAIL(VRF_RULE_STACK, "compares a missing, raw or NULL slot");
        }
        if (tail_jump(c, in, 3, &j)) {
            FAIL(VRF_RULE_DECODE, "tail jump does not decode");
        }
        if ((r = flow_to(c, in, j.target, s)) || (r = flow_to(c, in, j.off + j.size, s))) {
            return r;
        }
    } else if (op == LOCIOS_BC_INCR_FAST) {
        // Adds to local n in place and continues after the tail's STORE_FAST n.
        uint32_t n = (uint32_t)slow.op - OP_LOAD_FAST_MULTI;
        if ((r = vrf_use_local(c, in, n))) {
            return r;
        }
        if (vrf_is_cell_local(c, n)) {
            FAIL(VRF_RULE_STACK, "adds to a closure cell as a plain value");
        }
        if ((r = flow_to(c, in, in->off + 4, s))) {
            return r;
        }
    } else if (op == LOCIOS_BC_STORE_SUBSCR_SI) {
        // Its fast path stores the value as a list item: never MP_OBJ_NULL (`del x[i]`
        // is LOAD_NULL; ROT_THREE; STORE_SUBSCR, and stays the generic op).
        if (s->d < 3 || !is_object_kind(kget(s, s->d - 2))) {
            FAIL(VRF_RULE_STACK, "may store NULL (a del) into a list item");
        }
    }
    return vrf_step(c, &slow, s, falls);
}
