// SPDX-License-Identifier: MIT
// The rewriter's opcode numbers (LOCIOS_BC_*, issue 7) and the undo map back to the one
// original MicroPython 1.25.0 byte each replaced. Plain C, no MicroPython headers, so the
// VM, the rewriter, the verifier and host builds all share this one definition.
#ifndef LOCIOS_VM_REWRITE_RW_OPCODES_H
#define LOCIOS_VM_REWRITE_RW_OPCODES_H

#include <stddef.h>
#include <stdint.h>

// ---- Format 0 (no operand) ------------------------------------------------------------
// Fused compare-and-branch: head BINARY_OP op (0xd7 + op), tail POP_JUMP_IF_TRUE/FALSE.
#define LOCIOS_BC_CMPJ_LT         (0x02)
#define LOCIOS_BC_CMPJ_GT         (0x03)
#define LOCIOS_BC_CMPJ_EQ         (0x04)
#define LOCIOS_BC_CMPJ_LE         (0x05)
#define LOCIOS_BC_CMPJ_GE         (0x06)
#define LOCIOS_BC_CMPJ_NE         (0x07)
// Small-int arithmetic, head only (replaces BINARY_OP).
#define LOCIOS_BC_ADD_SI          (0x08)
#define LOCIOS_BC_SUB_SI          (0x09)
#define LOCIOS_BC_MUL_SI          (0x0a)
#define LOCIOS_BC_FLOORDIV_SI     (0x0b)
#define LOCIOS_BC_MOD_SI          (0x0c)
#define LOCIOS_BC_AND_SI          (0x0d)
#define LOCIOS_BC_OR_SI           (0x0e)
#define LOCIOS_BC_XOR_SI          (0x0f)
#define LOCIOS_BC_IADD_SI         (0x6a)
#define LOCIOS_BC_ISUB_SI         (0x6b)
#define LOCIOS_BC_RSHIFT_SI       (0x6c)
#define LOCIOS_BC_LSHIFT_SI       (0x6d)
// list/tuple subscript and list store with a small-int index (replace LOAD/STORE_SUBSCR).
#define LOCIOS_BC_SUBSCR_SI       (0x6e)
#define LOCIOS_BC_STORE_SUBSCR_SI (0x6f)
// `for i in range(a, b)` loop test: head DUP_TOP_TWO, tail ROT_TWO, BINARY_OP LESS or
// MORE, POP_JUMP_IF_TRUE + label.
#define LOCIOS_BC_FORRANGE_SI     (0xd4)
// `x += k` / `x -= k` on local n: head LOAD_FAST_MULTI n, tail LOAD_CONST_SMALL_INT_MULTI k,
// BINARY_OP INPLACE_ADD/SUBTRACT, STORE_FAST_MULTI n.
#define LOCIOS_BC_INCR_FAST       (0xd5)
// LOAD_CONST_NONE; RETURN_VALUE.
#define LOCIOS_BC_RETURN_NONE     (0xd6)

// ---- Format 1 (qstr operand; phase 2: per-site caches, rw_cache.h) -----------------------
// The VM implements all three, which LOCIOS_BC_CACHE_IN_VM tells the planner and the
// verifier (before it, they treated 0x1d..0x1f as bytes no VM runs). A build may
// still pass -DLOCIOS_BC_CACHE_IN_VM=0/1 to test the other setting.
#ifndef LOCIOS_BC_CACHE_IN_VM
#define LOCIOS_BC_CACHE_IN_VM (1)
#endif
#define LOCIOS_BC_LOAD_GLOBAL_C (0x1d)
#define LOCIOS_BC_LOAD_ATTR_C   (0x1e)
#define LOCIOS_BC_LOAD_METHOD_C (0x1f)

// ---- The original MicroPython 1.25.0 bytes the patterns are made of -------------------
#define LOCIOS_BC_ORIG_BINARY_OP         (0xd7)  // + MicroPython binary-op number
#define LOCIOS_BC_ORIG_LOAD_CONST_NONE   (0x51)
#define LOCIOS_BC_ORIG_LOAD_SUBSCR       (0x55)
#define LOCIOS_BC_ORIG_STORE_SUBSCR      (0x56)
#define LOCIOS_BC_ORIG_DUP_TOP_TWO       (0x58)
#define LOCIOS_BC_ORIG_ROT_TWO           (0x5a)
#define LOCIOS_BC_ORIG_RETURN_VALUE      (0x63)
#define LOCIOS_BC_ORIG_POP_JUMP_IF_TRUE  (0x43)
#define LOCIOS_BC_ORIG_POP_JUMP_IF_FALSE (0x44)
#define LOCIOS_BC_ORIG_SMALL_INT_MULTI   (0x70)  // 0x70..0xaf push -16..47
#define LOCIOS_BC_ORIG_SMALL_INT_EXCESS  (16)
#define LOCIOS_BC_ORIG_LOAD_FAST_MULTI   (0xb0)  // 0xb0..0xbf
#define LOCIOS_BC_ORIG_STORE_FAST_MULTI  (0xc0)  // 0xc0..0xcf
#define LOCIOS_BC_ORIG_LOAD_GLOBAL       (0x12)
#define LOCIOS_BC_ORIG_LOAD_ATTR         (0x13)
#define LOCIOS_BC_ORIG_LOAD_METHOD       (0x14)

// MicroPython binary-op numbers (py/runtime0.h) that the new opcodes stand for.
#define LOCIOS_BINOP_LESS             (0)
#define LOCIOS_BINOP_MORE             (1)
#define LOCIOS_BINOP_INPLACE_ADD      (14)
#define LOCIOS_BINOP_INPLACE_SUBTRACT (15)

// The binary-op number behind each arithmetic opcode, indexed by byte - LOCIOS_BC_ADD_SI
// (0x08..0x0f) and by byte - LOCIOS_BC_IADD_SI (0x6a..0x6d).
static const uint8_t locios_bc_arith_lo_binop[8] = { 27, 28, 29, 31, 33, 24, 22, 23 };
static const uint8_t locios_bc_arith_hi_binop[4] = { 14, 15, 26, 25 };

// 1 if b is one of the new opcodes of the design (all are in the VM).
static inline int locios_bc_is_new(uint8_t b) {
    return (b >= 0x02 && b <= 0x0f) || (b >= 0x6a && b <= 0x6f) || (b >= 0xd4 && b <= 0xd6) ||
           (b >= 0x1d && b <= 0x1f);
}

// The original byte at code[off]: itself if it is not a new opcode, else the byte the
// rewrite replaced. INCR_FAST finds its local in the tail's STORE_FAST_MULTI at off + 3;
// -1 if that byte is missing (off + 3 >= len) or is not a STORE_FAST_MULTI.
static inline int locios_bc_undo(const uint8_t *code, size_t len, size_t off) {
    uint8_t b = code[off];
    if (b >= 0x02 && b <= 0x07) {
        return LOCIOS_BC_ORIG_BINARY_OP + (b - 0x02);
    }
    if (b >= 0x08 && b <= 0x0f) {
        return LOCIOS_BC_ORIG_BINARY_OP + locios_bc_arith_lo_binop[b - 0x08];
    }
    if (b >= 0x6a && b <= 0x6d) {
        return LOCIOS_BC_ORIG_BINARY_OP + locios_bc_arith_hi_binop[b - 0x6a];
    }
    switch (b) {
        case LOCIOS_BC_SUBSCR_SI:
            return LOCIOS_BC_ORIG_LOAD_SUBSCR;
        case LOCIOS_BC_STORE_SUBSCR_SI:
            return LOCIOS_BC_ORIG_STORE_SUBSCR;
        case LOCIOS_BC_FORRANGE_SI:
            return LOCIOS_BC_ORIG_DUP_TOP_TWO;
        case LOCIOS_BC_RETURN_NONE:
            return LOCIOS_BC_ORIG_LOAD_CONST_NONE;
        case LOCIOS_BC_LOAD_GLOBAL_C:
            return LOCIOS_BC_ORIG_LOAD_GLOBAL;
        case LOCIOS_BC_LOAD_ATTR_C:
            return LOCIOS_BC_ORIG_LOAD_ATTR;
        case LOCIOS_BC_LOAD_METHOD_C:
            return LOCIOS_BC_ORIG_LOAD_METHOD;
        case LOCIOS_BC_INCR_FAST: {
            if (off + 3 >= len) {
                return -1;
            }
            uint8_t st = code[off + 3];
            if (st < LOCIOS_BC_ORIG_STORE_FAST_MULTI ||
                st >= LOCIOS_BC_ORIG_STORE_FAST_MULTI + 16) {
                return -1;
            }
            return LOCIOS_BC_ORIG_LOAD_FAST_MULTI + (st - LOCIOS_BC_ORIG_STORE_FAST_MULTI);
        }
        default:
            return b;
    }
}

#endif
