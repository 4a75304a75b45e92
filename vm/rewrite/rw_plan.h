// SPDX-License-Identifier: MIT
// The rewriter's planner: finds head-byte, length-preserving rewrites in MicroPython
// 1.25.0 opcodes (issue 7) and undoes them. Pure C: bytes in, edits out.
#ifndef LOCIOS_VM_REWRITE_RW_PLAN_H
#define LOCIOS_VM_REWRITE_RW_PLAN_H

#include <stddef.h>
#include <stdint.h>

// Families of rewrites; rw_plan takes a mask of RW_K(kind).
enum rw_kind {
    RW_KIND_CMPJ,         // BINARY_OP <cmp>; POP_JUMP_IF_*           -> CMPJ_*
    RW_KIND_ARITH_SI,     // BINARY_OP + - * // % & | ^ += -= >> <<   -> *_SI
    RW_KIND_SUBSCR_SI,    // LOAD_SUBSCR, STORE_SUBSCR                -> (STORE_)SUBSCR_SI
    RW_KIND_FORRANGE,     // DUP_TOP_TWO; ROT_TWO; BINARY_OP </>; POP_JUMP_IF_TRUE
    RW_KIND_INCR_FAST,    // LOAD_FAST n; small int; += / -=; STORE_FAST n
    RW_KIND_RETURN_NONE,  // LOAD_CONST_NONE; RETURN_VALUE
    RW_KIND_CACHE,        // LOAD_GLOBAL, LOAD_ATTR, LOAD_METHOD      -> *_C (phase 2)
    RW_KIND_N
};
#define RW_K(kind) (1u << (kind))
// Every family the VM implements (RW_KIND_CACHE only once rw_opcodes.h says the VM has
// its opcodes): the kinds a mask may select.
#if defined(LOCIOS_BC_CACHE_IN_VM) && LOCIOS_BC_CACHE_IN_VM
#define RW_KINDS_VM (RW_K(RW_KIND_N) - 1)
#else
#define RW_KINDS_VM ((RW_K(RW_KIND_N) - 1) & ~RW_K(RW_KIND_CACHE))
#endif
// Families the VM runs but the default set leaves out (selectable by name or mask);
// a family goes here when vm/rewrite/bench/bench_ops.py does not show it as a win.
#ifndef RW_KINDS_NOT_DEFAULT
#define RW_KINDS_NOT_DEFAULT (0u)
#endif
// The default set (`_rw.plan(fn)`, aggressive mode). rw_kinds_all / rw_kinds_vm are the
// same masks for callers without a preprocessor (cffi).
#define RW_KINDS_ALL (RW_KINDS_VM & ~(uint32_t)(RW_KINDS_NOT_DEFAULT))
extern const uint32_t rw_kinds_all;
extern const uint32_t rw_kinds_vm;

// One planned rewrite: the byte at offset (an instruction start, from the first
// opcode) goes from old_byte (an original opcode) to new_byte.
typedef struct rw_edit {
    uint32_t offset;
    uint8_t old_byte;
    uint8_t new_byte;
    uint8_t kind;  // enum rw_kind
} rw_edit_t;

// Size of the instruction at code[off] as the VM decodes it (py/bc0.h formats), or 0
// when code[off] is 0x00 (the end of the opcodes, as MicroPython's own .mpy saver
// finds it) or the instruction does not fit in len.
size_t rw_insn_size(const uint8_t *code, size_t len, size_t off);

// One past the last instruction: where decoding from 0 stops (rw_insn_size == 0).
size_t rw_code_end(const uint8_t *code, size_t len);

// Plans the rewrites of kinds in the opcodes code[0..len): matches only original
// opcodes, never a byte that is already a new opcode, and never a byte in the tail of
// a pattern (planned now or rewritten before). Writes at most max edits to out, in
// offset order; returns how many there are (more than max: out holds the first max).
size_t rw_plan(const uint8_t *code, size_t len, rw_edit_t *out, size_t max, uint32_t kinds);

// Checks every edit's old byte, then writes them all. Returns 0, or 1 + the index of
// the first edit whose offset is out of range or whose byte is not old_byte (nothing
// written then).
size_t rw_apply(uint8_t *code, size_t len, const rw_edit_t *edits, size_t n);

// The canonical original of code[0..len) in out (out may be code): every new opcode at
// an instruction start mapped back by the undo map. Returns how many bytes differ, or
// -1 if a new opcode's pattern tail is not there to undo it by (then out is unchanged
// from that instruction on).
long rw_undo(const uint8_t *code, size_t len, uint8_t *out);

// For a byte at an instruction start: its enum rw_kind if it is one of the new
// opcodes, else -1.
int rw_kind_of(uint8_t op);

// Instructions after a new opcode that belong to its pattern (its tail): 0..3.
unsigned rw_tail_insns(uint8_t new_op);

// "cmpj", "arith_si", ... or NULL for a kind out of range.
const char *rw_kind_name(int kind);

#endif
