// SPDX-License-Identifier: MIT
// Private declarations shared by the verifier's files: the opcode numbering of
// MicroPython 1.25.0 (py/bc0.h), one decoded instruction, the prelude, messages.
#ifndef LOCIOS_VM_VERIFIER_VRF_INTERNAL_H
#define LOCIOS_VM_VERIFIER_VRF_INTERNAL_H

#include "verify.h"
// The rewriter's opcode numbers and undo map (one definition for VM, rewriter, verifier).
#include "../rewrite/rw_opcodes.h"

// Opcode numbers, restated from the 1.25.0 format (py/bc0.h) in our own names.
enum {
    OP_LOAD_CONST_STRING = 0x10,
    OP_LOAD_NAME,
    OP_LOAD_GLOBAL,
    OP_LOAD_ATTR,
    OP_LOAD_METHOD,
    OP_LOAD_SUPER_METHOD,
    OP_STORE_NAME,
    OP_STORE_GLOBAL,
    OP_STORE_ATTR,
    OP_DELETE_NAME,
    OP_DELETE_GLOBAL,
    OP_IMPORT_NAME,
    OP_IMPORT_FROM,
    OP_MAKE_CLOSURE = 0x20,
    OP_MAKE_CLOSURE_DEFARGS,
    OP_LOAD_CONST_SMALL_INT,
    OP_LOAD_CONST_OBJ,
    OP_LOAD_FAST_N,
    OP_LOAD_DEREF,
    OP_STORE_FAST_N,
    OP_STORE_DEREF,
    OP_DELETE_FAST,
    OP_DELETE_DEREF,
    OP_BUILD_TUPLE,
    OP_BUILD_LIST,
    OP_BUILD_MAP,
    OP_BUILD_SET,
    OP_BUILD_SLICE,
    OP_STORE_COMP,
    OP_UNPACK_SEQUENCE = 0x30,
    OP_UNPACK_EX,
    OP_MAKE_FUNCTION,
    OP_MAKE_FUNCTION_DEFARGS,
    OP_CALL_FUNCTION,
    OP_CALL_FUNCTION_VAR_KW,
    OP_CALL_METHOD,
    OP_CALL_METHOD_VAR_KW,
    OP_UNWIND_JUMP = 0x40,
    OP_JUMP = 0x42,
    OP_POP_JUMP_IF_TRUE,
    OP_POP_JUMP_IF_FALSE,
    OP_JUMP_IF_TRUE_OR_POP,
    OP_JUMP_IF_FALSE_OR_POP,
    OP_SETUP_WITH,
    OP_SETUP_EXCEPT,
    OP_SETUP_FINALLY,
    OP_POP_EXCEPT_JUMP,
    OP_FOR_ITER,
    OP_LOAD_CONST_FALSE = 0x50,
    OP_LOAD_CONST_NONE,
    OP_LOAD_CONST_TRUE,
    OP_LOAD_NULL,
    OP_LOAD_BUILD_CLASS,
    OP_LOAD_SUBSCR,
    OP_STORE_SUBSCR,
    OP_DUP_TOP,
    OP_DUP_TOP_TWO,
    OP_POP_TOP,
    OP_ROT_TWO,
    OP_ROT_THREE,
    OP_WITH_CLEANUP,
    OP_END_FINALLY,
    OP_GET_ITER,
    OP_GET_ITER_STACK,
    OP_STORE_MAP = 0x62,
    OP_RETURN_VALUE,
    OP_RAISE_LAST,
    OP_RAISE_OBJ,
    OP_RAISE_FROM,
    OP_YIELD_VALUE,
    OP_YIELD_FROM,
    OP_IMPORT_STAR,
    OP_SMALL_INT_MULTI = 0x70,   // 64 of them: -16..47
    OP_LOAD_FAST_MULTI = 0xb0,   // 16
    OP_STORE_FAST_MULTI = 0xc0,  // 16
    OP_UNARY_OP_MULTI = 0xd0,    // 4: positive, negative, invert, not
    OP_BINARY_OP_MULTI = 0xd7,   // 35: less .. power
};
#define OP_UNARY_OP_NUM  (4)
#define OP_BINARY_OP_NUM (35)

enum {
    FMT_BYTE,
    FMT_QSTR,
    FMT_VAR_UINT,
    FMT_OFFSET
};

// Scope flags in the prelude signature (py/runtime0.h).
#define VRF_SCOPE_GENERATOR   (0x01)
#define VRF_SCOPE_VARKEYWORDS (0x02)
#define VRF_SCOPE_VARARGS     (0x04)
#define VRF_SCOPE_DEFKWARGS   (0x08)

typedef struct vrf_insn {
    uint32_t off;   // of the opcode byte
    uint32_t size;  // opcode plus operands
    uint8_t op;
    uint8_t fmt;
    uint8_t has_extra;
    uint8_t extra;
    uint32_t arg;    // var-uint / qstr operand (LOAD_CONST_SMALL_INT: low 32 bits)
    int64_t target;  // FMT_OFFSET: absolute target offset (may be out of range)
} vrf_insn_t;

typedef struct vrf_prelude {
    uint32_t n_state, n_exc_stack, scope_flags, n_pos_args, n_kwonly_args, n_def_pos_args;
    uint32_t n_info, n_cell;
    uint32_t info_off;  // start of the source-info section (simple name)
    uint32_t cell_off;  // start of the closure (cell index) section
    uint32_t code_off;  // first opcode
    uint32_t name;      // simple-name qstr
} vrf_prelude_t;

// Decoding (vrf_decode.c). Returns 0 or a static reason string.
const char *vrf_decode_insn(const uint8_t *code, size_t len, size_t off, vrf_insn_t *out);
int vrf_opcode_valid(int op);
int vrf_op_polls(int op);

// The rewriter's head opcodes (vm/rewrite/rw_opcodes.h; the table: vm/rewrite/README.md)
// that the verifier accepts in a replacement check. The format-1 caches only once the VM
// implements them (LOCIOS_BC_CACHE_IN_VM); until then they stay unknown bytes.
#if defined(LOCIOS_BC_CACHE_IN_VM) && LOCIOS_BC_CACHE_IN_VM
#define VRF_RW_CACHE (1)
#else
#define VRF_RW_CACHE (0)
#endif
static inline int vrf_rw_op(int op) {
    return (op >= LOCIOS_BC_CMPJ_LT && op <= LOCIOS_BC_XOR_SI) ||
           (op >= LOCIOS_BC_IADD_SI && op <= LOCIOS_BC_STORE_SUBSCR_SI) ||
           (op >= LOCIOS_BC_FORRANGE_SI && op <= LOCIOS_BC_RETURN_NONE) ||
           (VRF_RW_CACHE && op >= LOCIOS_BC_LOAD_GLOBAL_C && op <= LOCIOS_BC_LOAD_METHOD_C);
}
// Rewrite opcodes (vrf_rewrite.c): name, pattern contract, canonical (undone) opcode.
const char *vrf_rw_name(int op);
const char *vrf_rw_contract(const uint8_t *code, size_t end, uint32_t off);
int vrf_rw_canon(const uint8_t *code, size_t end, uint32_t off);
const char *vrf_parse_prelude(const vrf_fn_t *fn, vrf_prelude_t *p, uint32_t *bad_off);

// Profile checks on one instruction (vrf_profile.c): 0, or a reason string.
const char *vrf_profile_check(const vrf_fn_t *fn, const vrf_profile_t *prof, const vrf_insn_t *in,
                              char *detail, size_t cap);

// Messages (vrf_msg.c).
int vrf_fail(vrf_result_t *res, int rule, uint32_t off, int op, const char *what,
             const char *detail);
size_t vrf_strlcat(char *dst, const char *src, size_t cap);
size_t vrf_strlcat_n(char *dst, const char *src, size_t n, size_t cap);
void vrf_append_hex(char *dst, uint32_t v, size_t cap);
void vrf_append_dec(char *dst, uint32_t v, size_t cap);
int vrf_streq_n(const char *a, const char *b, size_t blen);

#endif
