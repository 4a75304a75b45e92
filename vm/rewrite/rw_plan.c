// SPDX-License-Identifier: MIT
// The rewriter's planner and undo (issue 7): decodes MicroPython 1.25.0 opcodes
// exactly as py/vm.c does and plans one-byte head rewrites; no MicroPython headers.
#include <string.h>

#include "rw_opcodes.h"
#include "rw_plan.h"

// Original opcodes the patterns are made of, besides rw_opcodes.h's (py/bc0.h).
#define BC_N_FAST_MULTI   (16)
#define BC_SMALL_INT_LAST (LOCIOS_BC_ORIG_SMALL_INT_MULTI + 63)
#define BC_BINARY_OP(op)  (LOCIOS_BC_ORIG_BINARY_OP + (op))
#define BC_LOAD_NULL      (0x53)
#define BC_ROT_THREE      (0x5b)

// The opcode format of each row of 16 opcodes and the extra-byte rule (py/bc0.h:
// MP_BC_FORMAT, MP_BC_MASK_EXTRA_BYTE).
#define FMT_BYTE              (0)
#define FMT_QSTR              (1)
#define FMT_VAR_UINT          (2)
#define FMT_OFFSET            (3)
#define BC_FORMAT(op)         ((0x000003a4u >> (2 * ((op) >> 4))) & 3)
#define BC_HAS_EXTRA_BYTE(op) (((op) & 0x9e) == 0)

// Per new opcode: 1 + its family and the instructions of its pattern after the head.
// The byte each one replaces is rw_opcodes.h's undo map (locios_bc_undo).
typedef struct {
    uint8_t kind1;  // 1 + enum rw_kind, 0: not a new opcode
    uint8_t tail;
} new_op_t;

#define NEW(op, kind, t) [op] = { 1 + (kind), (t) }
static const new_op_t s_new[256] = {
    NEW(LOCIOS_BC_CMPJ_LT, RW_KIND_CMPJ, 1),
    NEW(LOCIOS_BC_CMPJ_GT, RW_KIND_CMPJ, 1),
    NEW(LOCIOS_BC_CMPJ_EQ, RW_KIND_CMPJ, 1),
    NEW(LOCIOS_BC_CMPJ_LE, RW_KIND_CMPJ, 1),
    NEW(LOCIOS_BC_CMPJ_GE, RW_KIND_CMPJ, 1),
    NEW(LOCIOS_BC_CMPJ_NE, RW_KIND_CMPJ, 1),
    NEW(LOCIOS_BC_ADD_SI, RW_KIND_ARITH_SI, 0),
    NEW(LOCIOS_BC_SUB_SI, RW_KIND_ARITH_SI, 0),
    NEW(LOCIOS_BC_MUL_SI, RW_KIND_ARITH_SI, 0),
    NEW(LOCIOS_BC_FLOORDIV_SI, RW_KIND_ARITH_SI, 0),
    NEW(LOCIOS_BC_MOD_SI, RW_KIND_ARITH_SI, 0),
    NEW(LOCIOS_BC_AND_SI, RW_KIND_ARITH_SI, 0),
    NEW(LOCIOS_BC_OR_SI, RW_KIND_ARITH_SI, 0),
    NEW(LOCIOS_BC_XOR_SI, RW_KIND_ARITH_SI, 0),
    NEW(LOCIOS_BC_IADD_SI, RW_KIND_ARITH_SI, 0),
    NEW(LOCIOS_BC_ISUB_SI, RW_KIND_ARITH_SI, 0),
    NEW(LOCIOS_BC_RSHIFT_SI, RW_KIND_ARITH_SI, 0),
    NEW(LOCIOS_BC_LSHIFT_SI, RW_KIND_ARITH_SI, 0),
    NEW(LOCIOS_BC_SUBSCR_SI, RW_KIND_SUBSCR_SI, 0),
    NEW(LOCIOS_BC_STORE_SUBSCR_SI, RW_KIND_SUBSCR_SI, 0),
    NEW(LOCIOS_BC_FORRANGE_SI, RW_KIND_FORRANGE, 3),
    NEW(LOCIOS_BC_INCR_FAST, RW_KIND_INCR_FAST, 3),
    NEW(LOCIOS_BC_RETURN_NONE, RW_KIND_RETURN_NONE, 1),
    NEW(LOCIOS_BC_LOAD_GLOBAL_C, RW_KIND_CACHE, 0),
    NEW(LOCIOS_BC_LOAD_ATTR_C, RW_KIND_CACHE, 0),
    NEW(LOCIOS_BC_LOAD_METHOD_C, RW_KIND_CACHE, 0),
};
#undef NEW

// The new opcode each original head becomes (0: none; the planner checks tails
// separately), inverted from s_new on first use so the two never disagree.
static uint8_t s_head[256];
static uint8_t s_head_built;

static uint8_t head_to_new(uint8_t op) {
    if (!s_head_built) {
        for (unsigned b = 0; b < 256; b++) {
            for (unsigned n = 0; s_new[b].kind1 && n < BC_N_FAST_MULTI; n++) {
                // INCR_FAST undoes to LOAD_FAST_MULTI n by its tail's STORE_FAST n.
                const uint8_t pat[4] = { (uint8_t)b, 0, 0,
                                         (uint8_t)(LOCIOS_BC_ORIG_STORE_FAST_MULTI + n) };
                s_head[locios_bc_undo(pat, sizeof(pat), 0)] = (uint8_t)b;
            }
        }
        s_head_built = 1;
    }
    return s_head[op];
}

const uint32_t rw_kinds_all = RW_KINDS_ALL;
const uint32_t rw_kinds_vm = RW_KINDS_VM;

static const char *const s_kind_names[RW_KIND_N] = {
    "cmpj", "arith_si", "subscr_si", "forrange", "incr_fast", "return_none", "cache",
};

const char *rw_kind_name(int kind) {
    return kind >= 0 && kind < RW_KIND_N ? s_kind_names[kind] : NULL;
}

int rw_kind_of(uint8_t op) {
    return (int)s_new[op].kind1 - 1;
}

unsigned rw_tail_insns(uint8_t new_op) {
    return s_new[new_op].tail;
}

size_t rw_insn_size(const uint8_t *code, size_t len, size_t off) {
    if (off >= len || code[off] == 0) {
        return 0;
    }
    uint8_t op = code[off];
    size_t p = off + 1;
    switch (BC_FORMAT(op)) {
        case FMT_QSTR:
        case FMT_VAR_UINT:
            // Var-uint: 7 bits a byte, bit 7 set on every byte but the last.
            while (p < len && (code[p] & 0x80)) {
                p++;
            }
            if (p >= len) {
                return 0;
            }
            p++;
            break;
        case FMT_OFFSET:
            // Jump label: one byte, or two when bit 7 of the first is set.
            if (p >= len) {
                return 0;
            }
            p += (code[p] & 0x80) ? 2 : 1;
            break;
        default:
            break;
    }
    if (BC_HAS_EXTRA_BYTE(op)) {
        p++;  // MAKE_CLOSURE*, UNWIND_JUMP: the closed-over count or the unwind depth
    }
    return p <= len ? p - off : 0;
}

size_t rw_code_end(const uint8_t *code, size_t len) {
    size_t off = 0, n;
    while ((n = rw_insn_size(code, len, off)) != 0) {
        off += n;
    }
    return off;
}

// The instructions at off and after: up to 4 starts (0 past the end).
typedef struct {
    size_t at[4];
    uint8_t op[4];
    unsigned n;
} window_t;

static void window(const uint8_t *code, size_t len, size_t off, window_t *w) {
    w->n = 0;
    while (w->n < 4) {
        size_t sz = rw_insn_size(code, len, off);
        if (sz == 0) {
            break;
        }
        w->at[w->n] = off;
        w->op[w->n] = code[off];
        w->n++;
        off += sz;
    }
}

// The new byte for the pattern headed at w->at[0] if kinds allow it, else 0; *tail gets
// the instructions its pattern covers after the head. prev: the two instructions
// before it (0: none).
static uint8_t match(const window_t *w, const uint8_t prev[2], uint32_t kinds, unsigned *tail) {
    uint8_t op = w->op[0];
    uint8_t nb = head_to_new(op);
    *tail = 0;
    if (nb == 0 || !(kinds & RW_K(rw_kind_of(nb)))) {
        return 0;
    }
    switch (rw_kind_of(nb)) {
        case RW_KIND_CMPJ:
            if (w->n < 2 || (w->op[1] != LOCIOS_BC_ORIG_POP_JUMP_IF_TRUE &&
                             w->op[1] != LOCIOS_BC_ORIG_POP_JUMP_IF_FALSE)) {
                return 0;
            }
            break;
        case RW_KIND_FORRANGE:
            if (w->n < 4 || w->op[1] != LOCIOS_BC_ORIG_ROT_TWO ||
                (w->op[2] != BC_BINARY_OP(LOCIOS_BINOP_LESS) &&
                 w->op[2] != BC_BINARY_OP(LOCIOS_BINOP_MORE)) ||
                w->op[3] != LOCIOS_BC_ORIG_POP_JUMP_IF_TRUE) {
                return 0;
            }
            break;
        case RW_KIND_INCR_FAST:
            if (w->n < 4 || w->op[1] < LOCIOS_BC_ORIG_SMALL_INT_MULTI ||
                w->op[1] > BC_SMALL_INT_LAST ||
                (w->op[2] != BC_BINARY_OP(LOCIOS_BINOP_INPLACE_ADD) &&
                 w->op[2] != BC_BINARY_OP(LOCIOS_BINOP_INPLACE_SUBTRACT)) ||
                w->op[3] !=
                    LOCIOS_BC_ORIG_STORE_FAST_MULTI + (op - LOCIOS_BC_ORIG_LOAD_FAST_MULTI)) {
                return 0;
            }
            break;
        case RW_KIND_RETURN_NONE:
            if (w->n < 2 || w->op[1] != LOCIOS_BC_ORIG_RETURN_VALUE) {
                return 0;
            }
            break;
        case RW_KIND_SUBSCR_SI:
            // `del x[i]` is LOAD_NULL; ROT_THREE; STORE_SUBSCR: the value stored is NULL,
            // which a list item must never hold, so it stays the generic op (the
            // verifier refuses STORE_SUBSCR_SI wherever the value may be NULL).
            if (op == LOCIOS_BC_ORIG_STORE_SUBSCR && prev[0] == BC_ROT_THREE &&
                prev[1] == BC_LOAD_NULL) {
                return 0;
            }
            break;
        default:
            break;
    }
    *tail = s_new[nb].tail;
    return nb;
}

size_t rw_plan(const uint8_t *code, size_t len, rw_edit_t *out, size_t max, uint32_t kinds) {
    size_t n = 0, off = 0, sz;
    unsigned covered = 0;        // instructions still to skip: the tail of the last pattern
    uint8_t prev[2] = { 0, 0 };  // the last two opcodes, latest first
    window_t w;
    for (; (sz = rw_insn_size(code, len, off)) != 0; off += sz) {
        uint8_t op = code[off];
        if (covered) {
            covered--;
        } else if (rw_kind_of(op) >= 0) {
            covered = rw_tail_insns(op);  // rewritten before: its tail stays original
        } else {
            window(code, len, off, &w);
            unsigned tail;
            uint8_t nb = match(&w, prev, kinds, &tail);
            if (nb) {
                if (n < max) {
                    out[n] = (rw_edit_t){ (uint32_t)off, op, nb, (uint8_t)rw_kind_of(nb) };
                }
                n++;
                covered = tail;
            }
        }
        prev[1] = prev[0];
        prev[0] = op;
    }
    return n;
}

size_t rw_apply(uint8_t *code, size_t len, const rw_edit_t *edits, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (edits[i].offset >= len || code[edits[i].offset] != edits[i].old_byte) {
            return i + 1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        code[edits[i].offset] = edits[i].new_byte;
    }
    return 0;
}

long rw_undo(const uint8_t *code, size_t len, uint8_t *out) {
    if (out != code) {
        memmove(out, code, len);
    }
    long changed = 0;
    size_t off = 0, sz;
    // Only head bytes change and each keeps its operand format, so decoding code while
    // out (possibly the same bytes) is rewritten sees the same instruction starts.
    while ((sz = rw_insn_size(code, len, off)) != 0) {
        if (rw_kind_of(code[off]) >= 0) {
            int orig = locios_bc_undo(code, len, off);
            if (orig < 0) {
                return -1;
            }
            out[off] = (uint8_t)orig;
            changed++;
        }
        off += sz;
    }
    return changed;
}
